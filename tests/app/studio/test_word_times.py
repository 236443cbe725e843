"""*Takes ▾ → Find word times* in the studio: the rendered takes without word times aligned on a thread with
progress and Stop, stored on the GUI thread, the project busy meanwhile; then the line being heard follows them."""

from __future__ import annotations

import threading

from core.narration import TakePolicy
from tests import aligner_fakes as fakes
from tests.app.studio.support import new_project, render
from tests.app_support import make_window
from tests.narration.test_take_words import FakeAligner


def test_find_word_times_aligns_the_takes_without_them_with_progress_and_stop(qtbot, tmp_path, bundles, monkeypatch):
    window = make_window(qtbot, tmp_path, bundles["original"])
    studio = window.studio_panel
    monkeypatch.setattr(studio.takes, "policy", lambda: TakePolicy(words=False))  # rendered as before word times
    project = new_project(window, tmp_path)
    render(qtbot, window)
    assert all(project.chosen_take(s).alignment is None for s in project.segments)
    gate = threading.Event()
    fake = FakeAligner(gate=gate)
    fakes.share(monkeypatch, fake)
    action = studio.takes.words_action
    assert action.isEnabled() and action.text() == "Find &word times"
    action.trigger()
    assert studio.aligning and studio.busy and not studio.render_button.isEnabled()
    assert action.text() == "Stop finding &word times" and action.isEnabled()
    assert studio.progress.format() == "Word times: 0 of 4 takes"
    with qtbot.waitSignal(studio.word_times.finished, timeout=10000):
        gate.set()
    assert not studio.aligning and studio.status.text() == "Word times found for 4 take(s)."
    assert all(project.chosen_take(s).alignment["words"] for s in project.segments)
    assert studio.takes.words_action.text() == "Find &word times"
    action.trigger()
    assert "Every rendered take has its word times (4)" in studio.status.text()

    for segment in project.segments:  # again, stopped after the first take
        project.chosen_take(segment).alignment = None
    gate.clear()
    action.trigger()
    with qtbot.waitSignal(studio.word_times.finished, timeout=10000):
        action.trigger()  # Stop
        gate.set()
    assert "stopped early" in studio.status.text()
    aligned = [s for s in project.segments if project.chosen_take(s).alignment is not None]
    assert 1 <= len(aligned) < 4
    window.close()
