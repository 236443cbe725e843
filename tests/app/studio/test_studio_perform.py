"""Perform this line in the studio: a recording dropped on a segment's row, chosen from its menu or recorded with the
microphone is re-voiced on the worker and becomes the segment's take, marked performed in the list."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog

from app.studio.segment_model import STATUS, TAKES
from app.widgets.record_dialog import LineRecordDialog
from core.narration.projects.opening import open_project
from core.standin import synthetic_voice
from tests.app.studio.support import cell, new_project, render, segment_rows
from tests.app.test_studio_voice import FakeMicrophone


def line(path, seconds=2.0, rate=44100):
    sf.write(path, synthetic_voice(seconds * rate / 24000, seed=6, pitch_hz=150), rate)
    return path


_MIME: list[QMimeData] = []
"""A drag's data outlives the event made of it (Qt's event does not own it)."""


def drag(studio, number, path, kind=QDropEvent):
    """A drag of ``path`` over segment ``number``'s row, as Qt delivers it to the list."""
    mime = QMimeData()
    _MIME.append(mime)
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    centre = studio.segments.visualRect(studio.segments.segment_index(number)).center()
    action, button, none = Qt.DropAction.CopyAction, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    if kind is QDragEnterEvent:
        return QDragEnterEvent(centre, action, mime, button, none)
    return QDropEvent(QPointF(centre), action, mime, button, none)


def action_named(menu, words):
    for action in menu.actions():
        if action.text().replace("&", "") == words:
            return action
        if action.menu() is not None and (found := action_named(action.menu(), words)) is not None:
            return found
    return None


def test_a_recording_dropped_on_a_segment_becomes_its_performed_take(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    source = line(tmp_path / "my reading.wav", 2.0)
    enter = drag(studio, 2, source, QDragEnterEvent)
    studio.segments.dragEnterEvent(enter)
    assert enter.isAccepted()
    with qtbot.waitSignal(window.bridge.performed, timeout=60000):
        studio.segments.dropEvent(drag(studio, 2, source))
        assert studio.performing and not studio.render_button.isEnabled() and studio.stop_button.isEnabled()
        assert studio.status.text() == "Re-voicing your recording of segment 2 into the model's voice…"
    segment = project.segments[1]
    take = project.chosen_take(segment)
    assert take is not None and take.is_performed and segment.chosen == 1 and len(segment.takes) == 2
    assert take.seconds == pytest.approx(2.0, abs=1 / 24000) and take.tokens == []
    assert take.performed == {"source": "takes/00002-2.source.wav", "name": "my reading.wav"}
    assert not studio.performing and studio.render_button.isEnabled()
    assert segment_rows(studio)[2][1] == "● performed" and segment_rows(studio)[1][1] == "● rendered"
    assert "Performed: your recording" in cell(studio, 2, STATUS, Qt.ItemDataRole.ToolTipRole)
    assert "performed from my reading.wav" in cell(studio, 2, TAKES, Qt.ItemDataRole.ToolTipRole)
    assert studio.status.text().startswith("Segment 2: take 2 performed from my reading.wav (2.0 s")
    takes = action_named(studio.segments.menu_for(2), "Choose take").menu()
    assert [a.text() for a in takes.actions()][1] == "Take 2 · performed · 2.0 s"
    again = open_project(project.folder)  # stored at once
    assert again.chosen_take(again.segments[1]) == take and again.status(again.segments[1]) == "rendered"
    again.close()


def test_perform_from_the_menu_then_again_into_another_voice(qtbot, studio_window, tmp_path, voice_wav, monkeypatch):
    window = studio_window
    project = new_project(window, tmp_path)
    studio = window.studio_panel
    source = line(tmp_path / "line.flac", 1.5)
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(source), ""))
    menu = studio.segments.menu_for(3)
    assert not action_named(menu, "Again from my recording").isEnabled()  # nothing of the user's kept yet
    with qtbot.waitSignal(window.bridge.performed, timeout=60000):
        action_named(menu, "Choose a recording…").trigger()
    first = project.chosen_take(project.segments[2])
    assert first is not None and first.is_performed and project.status(project.segments[2]) == "rendered"
    assert segment_rows(studio)[3][1] == "● performed" and segment_rows(studio)[1][1] == "○ pending"

    from core.narration import resolve_voices

    resolve_voices(project, [str(voice_wav)], None, tmp_path)
    studio.segments.voices = sorted(project.voices)
    studio.set_voice(3, "voice")
    assert segment_rows(studio)[3][1] == "○ pending"  # the performance was for the model's voice
    menu = studio.segments.menu_for(3)
    with qtbot.waitSignal(window.bridge.performed, timeout=60000):
        action_named(menu, "Again from my recording").trigger()
    second = project.chosen_take(project.segments[2])
    assert second is not None and second is not first and second.performed == first.performed  # the same recording
    assert project.status(project.segments[2]) == "rendered"
    assert "in voice" in studio.status.text()


def test_a_bad_recording_is_refused_in_words_and_nothing_starts(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path)
    studio = window.studio_panel
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(24000, np.float32), 24000)
    messages = []
    studio.message.connect(lambda text, error: messages.append((text, error)))
    assert not studio.perform_file(1, silent)
    assert messages == [("silent.wav is silent. Choose a recording in which the speaker can be heard.", True)]
    assert not studio.performing and project.segments[0].takes == []
    assert studio.status.text().startswith("Segment 1 was not performed: silent.wav is silent")
    notes = tmp_path / "notes.txt"
    notes.write_text("not a recording")
    enter = drag(studio, 1, notes, QDragEnterEvent)
    studio.segments.dragEnterEvent(enter)
    assert not enter.isAccepted()  # only a recording can be dropped on a segment


def test_a_line_recorded_with_the_microphone_is_performed(qtbot, studio_window, tmp_path, monkeypatch):
    window = studio_window
    project = new_project(window, tmp_path)
    studio = window.studio_panel
    studio.input_device = FakeMicrophone(speed=20)

    def run(dialog):
        assert "Say the line as it should sound" in dialog.hint.text() and dialog.windowTitle() == "Perform this line"
        assert dialog.start_recording()
        qtbot.waitUntil(lambda: dialog.recorder.seconds >= 12.9, timeout=10000)  # all the microphone says
        dialog.stop_recording()
        dialog._use()
        return dialog.result()

    monkeypatch.setattr(LineRecordDialog, "exec", run)
    with qtbot.waitSignal(window.bridge.performed, timeout=60000):
        studio.record_performance(4)
    take = project.chosen_take(project.segments[3])
    assert take is not None and take.performed == {"source": "takes/00004-1.source.flac", "name": "recording"}
    assert take.seconds == pytest.approx(sf.info(project.path(take.performed["source"])).duration, abs=1e-3)
    assert 10.0 < take.seconds < 13.0  # the leading silence trimmed


def test_stop_cancels_a_performance_and_stores_nothing(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path)
    studio = window.studio_panel
    assert studio.perform_file(1, line(tmp_path / "a.wav", 30.0))
    studio.stop()
    assert not studio.performing and window.bridge.performing is None
    assert studio.status.text() == "Stopped: nothing was stored for segment 1."
    worker = window.bridge.worker
    qtbot.waitUntil(lambda: worker.status().running is None and not worker.status().waiting, timeout=30000)
    assert project.segments[0].takes == [] and studio.render_button.isEnabled()
