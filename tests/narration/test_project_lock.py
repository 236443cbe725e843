"""One renderer per project: a second process is told who holds the project; a crashed holder's lock is taken over."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from core.narration import ProjectLock, ProjectLocked
from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.project import HOLDER_FILE, PROJECT_FILE, create_project
from core.wording import describe_error
from tests.narration_support import stored_state

ROOT = Path(__file__).resolve().parents[2]
HOLD = textwrap.dedent(
    """
    import sys
    from core.narration import ProjectLock
    lock = ProjectLock(sys.argv[1], "render").acquire()
    print("held", flush=True)
    sys.stdin.readline()  # until the test says so (or kills this process)
    lock.release()
    print("released", flush=True)
    """
)


class Holder:
    """Another process that holds a project's lock until told to let go, or until it is killed."""

    def __init__(self, folder: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLD, str(folder)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout.readline().strip() == "held"

    def let_go(self) -> None:
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        assert self.process.stdout.readline().strip() == "released"
        self.process.wait(timeout=30)
        self.process.stdin.close()
        self.process.stdout.close()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
        self.process.wait(timeout=30)
        self.process.stdin.close()
        self.process.stdout.close()


def small_project(tmp_path) -> Path:
    text = "One sentence here. Another one there."
    project = create_project(tmp_path / "P.cbproj", "P")
    import_document(project, parse_text(text, "P"), None, None, tmp_path, source_identity("p", text, None))
    project.save()
    return project.folder


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "core", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


def test_a_second_process_is_refused_and_told_who_holds_the_project(tmp_path):
    folder = small_project(tmp_path)
    holder = Holder(folder)
    try:
        with pytest.raises(ProjectLocked) as caught:
            ProjectLock(folder, "edit").acquire()
        data = caught.value.data
        assert caught.value.code == "project.locked"
        assert (data["pid"], data["host"], data["purpose"]) == (holder.process.pid, socket.gethostname(), "render")
        text = describe_error(caught.value, "cli")
        assert f"process {holder.process.pid} on {socket.gethostname()}" in text and "being rendered" in text
        assert "read-only" in describe_error(caught.value, "window")
        info = ProjectLock(folder).holder()
        assert info is not None and info.pid == holder.process.pid and info.purpose == "render"
    finally:
        holder.let_go()
    assert ProjectLock(folder).holder() is None
    with ProjectLock(folder, "edit") as lock:  # let go: free for the next
        assert lock.holder().pid == os.getpid()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path):
    folder = small_project(tmp_path)
    holder = Holder(folder)
    holder.kill()  # kill -9: no release, its holder file stays behind
    assert json.loads((folder / HOLDER_FILE).read_text())["pid"] == holder.process.pid
    assert ProjectLock(folder).holder() is None
    with ProjectLock(folder, "render"):
        assert json.loads((folder / HOLDER_FILE).read_text())["pid"] == os.getpid()
    assert not (folder / HOLDER_FILE).exists()


def test_one_process_shares_its_lock_and_releases_it_with_the_last_share(tmp_path):
    folder = small_project(tmp_path)
    studio = ProjectLock(folder, "studio").acquire()
    with ProjectLock(folder, "render") as render:  # the window's render of the project the studio holds
        assert render.held and render.holder().purpose == "studio"
    assert ProjectLock(folder).holder().pid == os.getpid()  # still held by the studio
    studio.release()
    studio.release()  # twice is harmless
    assert ProjectLock(folder).holder() is None


def test_a_new_project_can_be_made_in_a_folder_that_holds_only_its_lock(tmp_path):
    folder = tmp_path / "New.cbproj"
    with ProjectLock(folder, "narrate"):
        project = create_project(folder, "New")
        project.save()
    assert (folder / PROJECT_FILE).is_file() and not (folder / HOLDER_FILE).exists()
    failed = tmp_path / "Failed.cbproj"
    with pytest.raises(RuntimeError), ProjectLock(failed, "narrate"):
        raise RuntimeError("the book could not be read")
    assert not failed.exists()  # made for the lock alone: gone again
    missing = run_cli("project", str(tmp_path / "Typo.cbproj"), "--render")
    assert missing.returncode == 2 and "not a narration project" in missing.stderr
    assert not (tmp_path / "Typo.cbproj").exists()


def test_the_command_line_exits_2_naming_the_holder_and_a_look_still_works(tmp_path):
    folder = small_project(tmp_path)
    before = stored_state(folder)
    holder = Holder(folder)
    try:
        edit = run_cli("project", str(folder), "--set-pause", "1", "2")
        assert edit.returncode == 2
        assert f"process {holder.process.pid} on {socket.gethostname()}" in edit.stderr
        render = run_cli("project", str(folder), "--render")
        assert render.returncode == 2 and "being rendered" in render.stderr
        narrate = run_cli("narrate", "-", "--project", str(folder), "--bundle", str(tmp_path))
        assert narrate.returncode == 2 and str(holder.process.pid) in narrate.stderr
        look = run_cli("project", str(folder), "--list", "--json")
        assert look.returncode == 0 and len(json.loads(look.stdout)["segments"]) == 2
        assert stored_state(folder) == before  # nothing was written while another held it
    finally:
        holder.kill()
    edit = run_cli("project", str(folder), "--set-pause", "1", "2")
    assert edit.returncode == 0, edit.stderr
    assert not (folder / HOLDER_FILE).exists()
