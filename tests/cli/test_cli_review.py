"""The take screen on the command line: ``project DIR --check-takes`` (exit 3 when a take is flagged, its JSON),
``--accept N``, ``--screen NAME=VALUE``, ``--render --retakes N``, ``narrate --candidates K`` and ``--strict``."""

from __future__ import annotations

from core.narration import open_project
from tests.export_support import run_cli
from tests.narration_support import put_a_hole_in


def test_check_takes_exits_3_and_lists_the_flagged_take(book_copy):
    folder = book_copy.folder
    code, out, _ = run_cli("project", folder, "--check-takes", "--json")
    assert code == 0 and out["flagged"] == [] and out["checked"] == len(book_copy.segments)
    put_a_hole_in(book_copy, 2)
    code, out, _ = run_cli("project", folder, "--check-takes", "--json")
    assert code == 3
    [flagged] = out["flagged"]
    assert flagged["segment"] == 2 and flagged["take"] == 1 and flagged["score"] < 80
    assert "long_silence" in {r["code"] for r in flagged["reasons"]}
    assert "A silence of 3.0 s inside the speech" in flagged["words"]
    assert flagged["text"] == book_copy.segment(2).text
    assert out["thresholds"]["silence_s"] == 1.5
    code, text, _ = run_cli("project", folder, "--check-takes")
    assert code == 3 and "1 of" in text and "flagged for review" in text and "A silence of 3.0 s" in text
    code, out, _ = run_cli("project", folder, "--list", "--json")  # the list says it too
    assert [s["number"] for s in out["segments"] if s["flagged"]] == [2]
    code, text, _ = run_cli("project", folder, "--list")
    assert [line.split()[0] for line in text.splitlines() if "(needs review)" in line] == ["2"]


def test_check_takes_follows_chapters_and_thresholds(book_copy):
    folder = book_copy.folder
    put_a_hole_in(book_copy, 2)  # chapter 1
    code, out, _ = run_cli("project", folder, "--check-takes", "--chapters", "2-3", "--json")
    assert code == 0 and out["checked"] < len(book_copy.segments)
    code, _, err = run_cli("project", folder, "--screen", "silence_s=x", "--list")
    assert code == 2 and "silence_s needs a number" in err
    code, _, err = run_cli("project", folder, "--screen", "nonsense=1", "--list")
    assert code == 2 and "NAME one of" in err
    run_cli("project", folder, "--check-takes")
    code, out, _ = run_cli("project", folder, "--screen", "silence_s=5", "--screen", "long_ratio=3", "--list", "--json")
    assert code == 0 and not any(s["flagged"] for s in out["segments"])  # judged again against the new thresholds
    assert open_project(folder).screening == {"silence_s": 5.0, "long_ratio": 3.0}


def test_accept_clears_the_mark_and_strict_export_refuses_until_then(book_copy, tmp_path):
    folder = book_copy.folder
    put_a_hole_in(book_copy, 3)
    assert run_cli("project", folder, "--check-takes")[0] == 3
    out_file = tmp_path / "book.wav"
    code, _, err = run_cli("project", folder, "--export", "--out", out_file, "--strict")
    assert code == 2 and "flagged for review (3)" in err and not out_file.exists()
    code, out, _ = run_cli("project", folder, "--export", "--out", out_file, "--json")  # without --strict: said
    assert code == 0 and out["export"]["flagged"] == [3] and out_file.exists()
    assert run_cli("project", folder, "--accept", "3")[0] == 0
    assert run_cli("project", folder, "--check-takes")[0] == 0
    code, _, _ = run_cli("project", folder, "--export", "--out", out_file, "--strict")
    assert code == 0
    code, _, err = run_cli("project", folder, "--accept", "3")
    assert code == 0 and "nothing to accept" in err


def test_render_with_retakes_makes_flagged_takes_again(book_copy, bundles):
    folder = book_copy.folder
    put_a_hole_in(book_copy, 2)
    run_cli("project", folder, "--check-takes")
    code, out, _ = run_cli("project", folder, "--render", "--retakes", "2", "--bundle", bundles["original"], "--json")
    assert code == 0 and out["render"]["rendered"] == 1 and out["render"]["flagged"] == 0
    segment = next(s for s in out["segments"] if s["number"] == 2)
    assert segment["takes"] == 2 and segment["chosen"] == 2 and not segment["flagged"]


def test_retake_and_candidate_counts_are_checked_before_the_model_loads(book_copy, tmp_path):
    code, _, err = run_cli("project", book_copy.folder, "--render", "--retakes", "50", "--bundle", tmp_path)
    assert code == 2 and "--retakes must be between 0 and 10" in err
    code, _, err = run_cli("project", book_copy.folder, "--render", "--candidates", "0", "--bundle", tmp_path)
    assert code == 2 and "--candidates must be between 1 and 10" in err


def test_narrate_with_candidates_keeps_the_best_of_k(tmp_path, bundles):
    text = tmp_path / "story.txt"
    text.write_text("The lamp was lit. The door was closed.", encoding="utf-8")
    code, out, _ = run_cli(
        "narrate", text, "--project", tmp_path / "p", "--bundle", bundles["original"], "--candidates", "2", "--json"
    )
    assert code == 0 and out["render"]["extra_takes"] == 2
    assert [s["takes"] for s in out["segments"]] == [2, 2]
    assert all(s["score"] is not None for s in out["segments"])
