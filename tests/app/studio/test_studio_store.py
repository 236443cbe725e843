"""The studio and the project store: the undo history survives closing the project (and the app), and a project
that another process is rendering opens read-only and its list follows the takes as they are stored."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager

import numpy as np
import pytest

from core.narration import open_project
from core.narration.rendering.render import store_take
from tests.app.studio.support import segment_rows
from tests.app.studio.test_studio_book_scale import book, scroll_to_middle
from tests.app_support import make_window
from tests.security_support import ROOT

HOLD_LOCK = """
import sys
from core.narration import ProjectLock
with ProjectLock(sys.argv[1], "render"):
    print("held", flush=True)
    sys.stdin.read()
"""


@contextmanager
def rendering_elsewhere(folder):
    """Another process holds the project's render lock (as the command line does while it renders) until the block
    ends."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(folder)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        yield
    finally:
        holder.communicate("", timeout=30)


@pytest.fixture
def window(qtbot, tmp_path):
    window = make_window(qtbot, tmp_path, None, load=False)
    window.modes.setCurrentWidget(window.studio_panel)
    yield window
    window.close()


def test_undo_survives_closing_the_project(qtbot, window, tmp_path):
    studio = window.studio_panel
    made = book(tmp_path / "Moby.cbproj")
    made.save()
    made.close()
    studio.set_project(open_project(tmp_path / "Moby.cbproj"))
    first, second = studio.project.segments[0].text, studio.project.segments[1].text
    assert studio.delete_segment(1) and studio.merge_next(1)
    assert studio.save()
    studio.set_project(None)
    studio.set_project(open_project(tmp_path / "Moby.cbproj"))  # as after a restart: from the store
    assert studio.undo_stack.count() == 2 and studio.undo_action.isEnabled()
    assert "merge segments 1 and 2" in studio.undo_action.toolTip()
    studio.undo()
    studio.undo()
    assert [s.text for s in studio.project.segments[:2]] == [first, second]
    assert studio.save()
    again = open_project(tmp_path / "Moby.cbproj")
    assert [s.text for s in again.segments[:2]] == [first, second] and len(again.segments) == 10_000


def test_a_project_rendered_elsewhere_opens_read_only_and_follows_the_render(qtbot, window, tmp_path):
    studio = window.studio_panel
    folder = tmp_path / "Moby.cbproj"
    made = book(folder)
    made.save()
    with rendering_elsewhere(folder):
        studio.set_project(open_project(folder))
        assert studio.controller.read_only and studio.follow_timer.isActive()
        scrolled = scroll_to_middle(studio, 5_000)
        writer = open_project(folder)  # the render in the other process, as far as the store can tell
        for number in (5_001, 9_999):
            store_take(writer, writer.segments[number - 1], np.zeros(2400, np.float32), 3, [1, 2], {})
        qtbot.waitUntil(lambda: segment_rows(studio)[9_999][1] == "● rendered", timeout=5000)
        assert segment_rows(studio)[5_001][1] == "● rendered"
        assert studio.segments.selected_numbers() == (5_000,)
        assert studio.segments.verticalScrollBar().value() == scrolled
        assert studio.project.segments[9_998].takes[0].tokens == [1, 2]
