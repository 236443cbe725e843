"""``narrate … --ray`` and ``project DIR --render --ray`` end to end, in a subprocess as a user runs them: a local Ray
instance started by the command, exit 0, the ``cluster`` object in ``--json``; a cluster that does not answer and
Ray missing are worded errors with exit 2; the local instance's raylet killed in the middle is a worded error with
exit 2 that says what is kept, and the same command continues; Ray's notices never reach ``--json``'s stdout."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
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


def test_nothing_imports_ray_until_a_render_asks_for_it():
    """The frozen desktop build leaves Ray out: importing the core and the command line must not need it."""
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "import core.narration, core.cli.main, core.bench, core.narration.cluster.render, core.narration.cluster.job\n"
        "from core.cli.main import main\n"
        "assert main(['project', '--help']) == 0\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "--ray" in proc.stdout


def _process_tree(root: int) -> list[tuple[int, str]]:
    """(pid, command line) of every process below ``root`` (Linux: read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # ended meanwhile
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [root]
    while todo:
        for pid in children.get(todo.pop(), []):
            try:
                command = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            found.append((pid, command))
            todo.append(pid)
    return found


def _run_killing(argv, folder: Path, after: int, victim: str, timeout=240):
    """Run the command; once its progress shows ``after`` segments stored, SIGKILL the first process below it whose
    command line has ``victim``. Its exit status, stdout and stderr, and whether a process was killed."""
    folder.mkdir()
    out_file, err_file = folder / "out.txt", folder / "err.txt"
    with open(out_file, "w", encoding="utf-8") as out, open(err_file, "w", encoding="utf-8") as err:
        proc = subprocess.Popen([sys.executable, "-m", "core", *map(str, argv)], stdout=out, stderr=err, cwd=ROOT)
        killed, deadline = False, time.monotonic() + timeout
        try:
            while proc.poll() is None and time.monotonic() < deadline:
                if not killed and f"segment {after + 1}/" in err_file.read_text(encoding="utf-8"):
                    for pid, command in _process_tree(proc.pid):
                        if victim in command:
                            os.kill(pid, signal.SIGKILL)
                            killed = True
                            break
                time.sleep(0.05)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    return proc.returncode, out_file.read_text(encoding="utf-8"), err_file.read_text(encoding="utf-8"), killed


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds Ray's processes in /proc (Linux)")
def test_the_local_ray_going_away_is_worded_and_the_same_command_continues(bundles, voice_wav, tmp_path):
    """The local instance's raylet killed in the middle: Ray ends the process that drives the render (its core
    worker exits with status 1), so the command's watcher says what happened and what is kept, with exit 2 and no
    traceback; the same command again renders the pending rest. There an actor is killed: Ray's notice of the dead
    worker goes to stderr, and stdout is still one JSON object."""
    book = tmp_path / "book.txt"
    book.write_text(" ".join(f"Sentence {i} says {'a little more ' * (i % 4)}here." for i in range(18)))
    project = tmp_path / "Book"
    argv = ("narrate", book, "--project", project, "--bundle", bundles["turbo"], "--voice", voice_wav, "--seed", 4)
    argv += ("--ray", "--actors", "2", "--json")

    code, out, err, killed = _run_killing(argv, tmp_path.joinpath("1"), 3, "/raylet/raylet ")
    assert killed and code == 2, err
    assert out == "" and "Traceback" not in err
    said = re.search(
        r"error: The Ray instance on this computer went away during the render \(Ray ended the render's "
        r"process: exit status 1\)\. (\d+) segment\(s\) of the render were stored before that and are "
        r"kept; (\d+) are still pending: run the same command again to continue with them\.",
        err,
    )
    assert said, err
    kept, left = int(said[1]), int(said[2])
    listed = json.loads(run("project", project, "--list", "--json")[1])
    assert listed["counts"]["rendered"] == kept >= 3 and listed["counts"]["pending"] == left == 18 - kept

    code, out, err, killed = _run_killing(argv, tmp_path.joinpath("2"), 1, "ray::SegmentRenderer")
    assert killed and code == 0, err
    report = json.loads(out)  # one object: Ray's notice went to stderr
    assert "(raylet)" in err and "A worker died or was killed" in err
    assert report["render"]["rendered"] == left and report["counts"]["rendered"] == 18
    assert report["cluster"]["requeued_units"] == 1
    assert all(s["takes"] == 1 for s in report["segments"])
