"""``narrate … --ray`` and ``project DIR --render --ray`` end to end, in a subprocess as a user runs them: a local Ray
instance started by the command, exit 0, the ``cluster`` object in ``--json``; a cluster that does not answer and
Ray missing are worded errors with exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[2]
BOOK = "Once there was a fox. It ran far away. The hens slept.\n\nMorning came. The farmer counted the hens."


def run(*argv, timeout=180):
    proc = subprocess.run(
        [sys.executable, "-m", "core", *map(str, argv)], capture_output=True, text=True, cwd=ROOT, timeout=timeout
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_narrate_and_project_render_on_a_local_ray_instance(bundles, voice_wav, tmp_path):
    book = tmp_path / "book.txt"
    book.write_text(BOOK, encoding="utf-8")
    project = tmp_path / "Fox"
    args = ("--bundle", bundles["turbo"], "--voice", voice_wav, "--seed", 4)
    code, out, err = run("narrate", book, "--project", project, *args, "--ray", "--actors", "2", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["render"]["rendered"] == 5 and report["counts"]["rendered"] == 5
    cluster = report["cluster"]
    assert cluster["address"] == "local" and cluster["nodes"] == 1 and cluster["actors"] == 1  # one unit: one actor
    assert cluster["units"] == 1 and cluster["requeued_units"] == 0 and cluster["startup_s"] > 0
    assert "Traceback" not in err

    # Two segments made pending again (edited): project --render --ray renders just those, with the progress bar.
    for number in (2, 4):
        assert run("project", project, "--edit", number, "--text", f"Sentence {number} was changed.")[0] == 0
    code, out, err = run("project", project, "--render", "--ray", "--segments", "1-4")
    assert code == 0, err
    assert "ray (local): 1 actor(s) on 1 node(s), 1 unit(s), 0 re-queued" in err
    code, out, err = run("project", project, "--list", "--json")
    assert [s["status"] for s in json.loads(out)["segments"]] == ["rendered"] * 5


def test_an_unreachable_cluster_or_missing_ray_is_exit_2_with_a_sentence(bundles, voice_wav, tmp_path):
    book = tmp_path / "book.txt"
    book.write_text(BOOK, encoding="utf-8")
    args = ("--bundle", bundles["turbo"], "--voice", voice_wav)
    code, out, err = run("narrate", book, "--project", tmp_path / "P", *args, "--ray", "ray://127.0.0.1:9")
    assert code == 2 and "Traceback" not in err
    assert "The Ray cluster at ray://127.0.0.1:9 cannot be reached" in err

    code, out, err = run("project", tmp_path / "P", "--list", "--ray")
    assert code == 2 and "--ray goes with --render" in err
