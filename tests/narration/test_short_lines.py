"""Short lines (issue 51): a one- or two-word segment is spoken with a cap of its own
(:mod:`core.narration.rendering.short_lines`) wherever a render builds its request — one at a time, in the
look-ahead's batches, for a cluster's actors — while every other segment keeps its options, its tokens and its render
key; and ``bench-short-lines`` reports both sides."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.bench.short_lines_bench import bench_short_lines, never_stopping_standin
from core.cli.main import main
from core.engine import Pipeline, RuntimeOptions, SynthesisOptions, SynthesisRequest
from core.narration.cluster.actor import UnitBook
from core.narration.cluster.render import ClusterStats, _ClusterRender
from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.project import create_project
from core.narration.rendering.render import RenderSummary, adopt_model, render_pending
from core.narration.rendering.short_lines import (
    LEAD_TOKENS,
    PACE,
    is_short_line,
    render_options,
    short_line_cap,
    with_short_line_cap,
)
from core.narration.rendering.take_choice import ONE_TAKE, TakePolicy

SHORT = ["Yes.", "Oh!", "No?", "Indeed.", "Oh, really?", "Don't!", "No. No!"]
LONG = [
    "The farmer walked slowly to the distant field with his old dog.",
    "He sat.",  # two words and a full stop: short, though it is narration
    "Birds began to sing in the old oak tree behind the house.",
]
TEXT = """Yes. The farmer walked slowly to the distant field with his old dog. Oh!

He sat. Indeed. Birds began to sing in the old oak tree behind the house. Oh, really?

No? Stars appeared one by one over the quiet hills."""


@pytest.fixture(scope="module")
def never_stops(tmp_path_factory) -> dict:
    """Stand-ins whose language model runs to its cap on every sentence (the worst case of contract §6)."""
    root = tmp_path_factory.mktemp("never")
    return {v: never_stopping_standin(root / v, v) for v in ("turbo", "original")}


def project_of(folder, voice, text=TEXT, seed=5):
    project = create_project(folder, "Short")
    import_document(
        project, parse_text(text, "Short"), str(voice), None, folder.parent, source_identity("s", text, None)
    )
    project.seed = seed
    project.save()
    return project


@pytest.mark.parametrize("text", SHORT + ["He sat.", "[laugh] Yes.", "Yes [pause] no."])
def test_a_line_of_one_or_two_words_is_short(text):
    assert is_short_line(text)


@pytest.mark.parametrize(
    "text",
    [
        "He walked home.",
        "Yes [pause] no, no.",
        LONG[0],
        "[pause]",
        "...",
        "谢谢。",  # Han, kana and Hangul have no spaces to count words by
        "ありがとう。",
        "감사합니다.",
    ],
)
def test_anything_else_is_not(text):
    assert not is_short_line(text)


def test_the_cap_is_the_text_tokens_at_the_models_pace_and_nothing_else_changes(bundles):
    for variant in ("turbo", "original", "multilingual"):
        pipe = Pipeline.from_bundle(bundles[variant])
        plain = SynthesisOptions(seed=3, temperature=0.7)
        for text in SHORT:
            ids = max(r.ids.shape[1] for r in pipe.request_rows(text, plain).values())
            capped = with_short_line_cap(text, plain, pipe)
            assert capped == replace(plain, max_new_tokens=PACE[variant] * ids + LEAD_TOKENS)
            assert capped.max_new_tokens < 64 or variant == "turbo"  # under the engine's floor (Turbo: its 16 a token)
            assert with_short_line_cap(text, capped, pipe) == capped  # the owner's and then an actor's: once
            assert with_short_line_cap(text, replace(plain, max_new_tokens=20), pipe).max_new_tokens == 20
            assert with_short_line_cap(text, replace(plain, max_new_tokens=900), pipe) == capped
        for text in LONG[::2]:
            assert with_short_line_cap(text, plain, pipe) is plain
        assert short_line_cap("", pipe, plain) is None


def test_a_render_speaks_short_segments_with_their_cap_and_the_others_as_before(bundles, voice_wav, tmp_path):
    pipe = Pipeline.from_bundle(bundles["original"])
    project = project_of(tmp_path / "Book.cbproj", voice_wav)
    short = [s for s in project.segments if is_short_line(project.spoken_text(s))]
    assert [project.spoken_text(s) for s in short] == ["Yes.", "Oh!", "He sat.", "Indeed.", "Oh, really?", "No?"]
    for segment in project.segments:
        options = render_options(project, segment, 9, pipe)
        if segment in short:
            assert options.max_new_tokens == short_line_cap(project.spoken_text(segment), pipe, options)
        else:
            assert options == project.synthesis_options(segment, 9)
    adopt_model(project, pipe)  # the model is part of the key; the short lines' cap is not
    keys = [project.render_key(s) for s in project.segments]
    render_pending(project, pipe)
    assert [project.status(s) for s in project.segments] == ["rendered"] * len(keys)
    assert [s.takes[-1].key for s in project.segments] == keys  # nothing in the key: no segment goes pending
    for segment in project.segments:
        take = project.chosen_take(segment)
        assert take.screen["measures"]["stop_reasons"] == ["stop_token"]
        # The same seed, spoken as before the cap existed: the same tokens, short lines included (they say STOP
        # long before their cap: well within bounds).
        text, options = project.spoken_text(segment), project.synthesis_options(segment, take.seed)
        stream = pipe.stream(SynthesisRequest(text, voice_wav, options))
        for _chunk in stream:
            pass
        assert take.tokens == stream.report.speech_tokens
        if segment in short:
            cap = short_line_cap(text, pipe, options)
            assert len(take.tokens) <= cap - 6 and take.seconds < cap / 25


@pytest.mark.parametrize(
    ("variant", "runtime"),
    [
        ("turbo", {"stream": False, "lm_batch": 4}),  # the look-ahead's batches
        ("original", {"stream": False, "lm_batch": 1}),  # generated ahead one at a time, decoded joined
        ("turbo", {"stream": True}),  # someone listens: one segment at a time
    ],
)
def test_a_short_line_that_runs_on_stops_at_its_cap_in_every_render_path(
    never_stops, voice_wav, tmp_path, variant, runtime
):
    pipe = Pipeline.from_bundle(never_stops[variant], RuntimeOptions(**runtime))
    project = project_of(tmp_path / "Book.cbproj", voice_wav)
    render_pending(project, pipe)
    for segment in project.segments:
        take = project.chosen_take(segment)
        text = project.spoken_text(segment)
        rows = pipe.request_rows(text, project.synthesis_options(segment, take.seed))
        assert take.screen["measures"]["stop_reasons"] == ["token_cap"] * len(rows)
        assert "token_cap" in [r["code"] for r in take.screen["reasons"]]
        engine_cap = sum(r.cap for r in rows.values())
        if is_short_line(text):
            cap = short_line_cap(text, pipe, project.synthesis_options(segment, take.seed))
            assert len(take.tokens) == cap * len(rows) < engine_cap
        else:
            assert len(take.tokens) == engine_cap  # as before


def test_candidates_generated_together_are_capped_too(never_stops, voice_wav, tmp_path):
    pipe = Pipeline.from_bundle(never_stops["turbo"], RuntimeOptions(stream=False, lm_batch=4))
    project = project_of(tmp_path / "Book.cbproj", voice_wav, text="Indeed. Oh, really?")
    render_pending(project, pipe, policy=TakePolicy(candidates=3))
    for segment in project.segments:
        text = project.spoken_text(segment)
        assert len(segment.takes) == 3
        for take in segment.takes:
            options = project.synthesis_options(segment, take.seed)
            assert len(take.tokens) == short_line_cap(text, pipe, options)


def test_a_cluster_owner_sends_the_capped_options_and_an_actor_keeps_them(bundles, voice_wav, tmp_path):
    pipe = Pipeline.from_bundle(bundles["turbo"])
    project = project_of(tmp_path / "Book.cbproj", voice_wav)
    owner = _ClusterRender(
        project, pipe, project.segments, None, lambda: False, ClusterStats(), RenderSummary(), ONE_TAKE
    )
    work = [w for unit in owner.units for w in unit.work]
    assert [w.options.max_new_tokens is not None for w in work] == [
        is_short_line(project.spoken_text(s)) for s in project.segments
    ]
    for item in work:
        assert render_options(UnitBook(), item, item.options.seed, pipe) == item.options
        again = replace(item, options=replace(item.options, seed=77))  # an actor's re-take
        assert render_options(UnitBook(), again, 77, pipe) == again.options


def test_the_bench_reports_both_sides_for_short_lines_and_sentences(bundles, tmp_path):
    report = bench_short_lines(bundles["turbo"], lines=3)
    assert report["variant"] == "turbo" and report["lines"] == 3 and report["seeds"] == [1000, 1002]
    assert report["short_line"] == {"words": 2, "pace": 6, "lead_tokens": 12, "short": 3, "normal": 0}
    assert report["same_tokens"] == {"short": 3, "normal": 3}
    assert set(report["sides"]) == {"before", "after"}
    for side in report["sides"].values():
        assert set(side) == {"rate_s_per_letter", "short", "normal"}
        for kind in ("short", "normal"):
            row = side[kind]
            assert set(row) == {
                "takes",
                "flagged",
                "flags",
                "stop_reasons",
                "tokens",
                "cap",
                "at_cap",
                "seconds",
                "excess_s",
                "render_s",
            }
            assert row["takes"] == 3 and row["stop_reasons"] == {"stop_token": 3} and row["at_cap"] == 0
            assert set(row["tokens"]) == set(row["cap"]) == set(row["seconds"]) == {"median", "max"}
    assert report["sides"]["after"]["short"]["cap"]["max"] < report["sides"]["before"]["short"]["cap"]["max"]
    assert report["sides"]["after"]["normal"]["cap"] == report["sides"]["before"]["normal"]["cap"]


def test_the_command_prints_the_table_and_writes_the_json(bundles, tmp_path, capsys):
    out = tmp_path / "short.json"
    assert main(["bench-short-lines", "--bundle", str(bundles["original"]), "--lines", "2", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "short before" in printed and "normal after" in printed and "same tokens before and after" in printed
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["variant"] == "original" and report["lines"] == 2
    assert main(["bench-short-lines", "--bundle", str(bundles["original"]), "--never-stops"]) == 2
    assert main(["bench-short-lines", "--standin", "original", "--lines", "0"]) == 2


def test_the_never_stopping_standin_runs_to_the_engines_cap(never_stops):
    pipe = Pipeline.from_bundle(never_stops["original"])
    stream = pipe.stream(SynthesisRequest("Yes.", None, SynthesisOptions(seed=1)))
    assert sum(c.samples.size for c in stream) > 0
    assert stream.report.stop_reasons == ["token_cap"] and len(stream.report.speech_tokens) == 64
