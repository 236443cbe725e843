"""The narration studio in the window: a project rendered with progress, heard with the segment highlighted, one
segment regenerated, paused and sought, exported with pace, format and subtitles, reopened after a restart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from core.engine.constants import SAMPLE_RATE
from core.narration.projects.opening import open_project
from tests.app.studio.support import export, new_project, render, segment_rows
from tests.app_support import drop, make_window


def test_a_new_project_shows_its_segments_and_renders_with_progress(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path)
    studio = window.studio_panel
    assert window.modes.currentWidget() is studio
    assert len(segment_rows(studio)) == len(project.segments) == 4
    assert all(segment_rows(studio)[n][1] == "○ pending" for n in range(1, 5))  # pending
    highlighted = []  # every segment the list marks as heard, as it marks it (a short one is heard between events)
    mark = studio.segments.highlight
    studio.segments.highlight = lambda number: highlighted.append(number) or mark(number)
    assert studio.render_button.text() == "&Render"
    assert not studio.progress.isVisible()  # nothing to show yet: no empty bar under the buttons
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        studio.render_button.click()
        assert studio.render_button.text() == "Rendering…" and not studio.render_button.isEnabled()
        assert studio.progress.isVisible()
        assert studio.status.text() == "Generating…"
    assert studio.progress.value() == studio.progress.maximum() == 4
    assert studio.progress.format().startswith("Segment 4 of 4") and studio.progress.isVisible()
    # The highlight follows what is heard: the last segment is highlighted once its audio plays.
    qtbot.waitUntil(lambda: 4 in highlighted, timeout=30000)
    assert studio.progress_events > 4 and set(highlighted) >= {1, 2, 3, 4}
    assert all(segment_rows(studio)[n][1] == "● rendered" for n in range(1, 5))
    assert studio.status.text().startswith("Rendered 4 segment(s)")  # stays until something else happens
    assert open_project(project.folder).counts()["rendered"] == 4  # autosaved


def test_playback_highlights_the_segment_heard_pauses_resumes_and_seeks(qtbot, tmp_path, bundles):
    from app.audio.virtual_device import VirtualSoundDevice

    window = make_window(qtbot, tmp_path, bundles["original"], sd=VirtualSoundDevice(speed=4))
    new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    studio.play_from(1)
    assert studio.play_button.text() == "&Pause" and studio.segments.current == 1
    qtbot.waitUntil(lambda: studio.segments.current == 2, timeout=10000)  # the highlight follows playback
    second = studio._placements[1]
    assert studio.position() >= second.start - 0.1
    studio.pause()
    paused = studio._paused_at
    assert paused is not None and studio.play_button.text() == "&Resume" and studio.status.text().startswith("Paused")
    qtbot.wait(300)
    assert studio.position() == pytest.approx(paused, abs=0.3)  # nothing plays while paused
    studio.toggle_play()  # resume where it paused
    assert studio._offset == pytest.approx(paused, abs=1e-6) and studio.play_button.text() == "&Pause"
    fourth = studio._placements[3]
    studio.seek(fourth.start + 0.01)  # what a click on the waveform does
    qtbot.waitUntil(lambda: studio.segments.current == 4, timeout=5000)
    qtbot.waitUntil(lambda: studio.status.text() == "Finished playing", timeout=20000)
    assert studio.position() <= studio._audio.size / SAMPLE_RATE  # the playhead never runs past the end
    window.close()


def test_regenerating_one_segment_changes_only_that_segment_in_the_export(qtbot, studio_window, tmp_path):
    window = studio_window
    new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    from core.narration.exporting.export import ExportRequest

    before = export(qtbot, studio, ExportRequest(out=tmp_path / "before.wav"))
    menu = studio.segments.menu_for(2)
    regenerate = next(a for a in menu.actions() if a.text().startswith("&Regenerate"))
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        regenerate.trigger()
    assert len(studio.project.segments[1].takes) == 2
    after = export(qtbot, studio, ExportRequest(out=tmp_path / "after.wav"))
    a, _ = sf.read(tmp_path / "before.wav", dtype="float32")
    b, _ = sf.read(tmp_path / "after.wav", dtype="float32")
    for number in (1, 3, 4):
        pa, pb = before.timeline[number], after.timeline[number]
        seg_a = a[round(pa.start * SAMPLE_RATE) : round(pa.end * SAMPLE_RATE)]
        seg_b = b[round(pb.start * SAMPLE_RATE) : round(pb.end * SAMPLE_RATE)]
        np.testing.assert_array_equal(seg_a, seg_b)
    takes = studio.segments.menu_for(2).actions()
    choose = next(a for a in takes if a.text() == "Choose &take").menu().actions()
    assert [a.isChecked() for a in choose] == [False, True]
    choose[0].trigger()  # A/B: back to the first take, heard at once
    assert studio.project.segments[1].chosen == 0 and studio.dirty


def test_editing_a_segment_makes_only_it_pending_and_closing_asks_about_unsaved_changes(
    qtbot, studio_window, tmp_path, monkeypatch
):
    window = studio_window
    project = new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    assert studio.edit_text(3, "A different paragraph starts here.")
    assert [n for n in range(1, 5) if segment_rows(studio)[n][1] == "○ pending"] == [3]
    assert window.windowTitle().startswith("Story *")
    asked = []
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: asked.append(a) or QMessageBox.StandardButton.Cancel)
    window.close()
    assert asked and window.isVisible()  # Cancel keeps the window open
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Save)
    render(qtbot, window)  # rendering saves the edit too
    assert open_project(project.folder).segments[2].text == "A different paragraph starts here."


def test_export_dialog_typed_extension_picks_the_format_and_pace_shortens_the_audio(qtbot, studio_window, tmp_path):
    from app.studio.export_dialog import ExportDialog

    window = studio_window
    new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    dialog = ExportDialog(studio.project, tmp_path, parent=window)
    qtbot.addWidget(dialog)
    dialog.path.clear()
    qtbot.keyClicks(dialog.path, str(tmp_path / "normal.flac"))
    assert dialog.format.currentData() == ".flac"
    dialog.subtitles.setCurrentIndex(1)  # SRT
    normal = export(qtbot, studio, dialog.request())
    assert (tmp_path / "normal.srt").is_file()
    studio.pace.setValue(125)
    assert studio.project.finishing["speed"] == 1.25 and studio.dirty
    dialog.path.setText(str(tmp_path / "fast"))
    dialog.format.setCurrentIndex(dialog.format.findData(".mp3"))
    request = dialog.request()
    assert request.out.name == "fast.mp3"
    fast = export(qtbot, studio, request)
    assert fast.seconds / normal.seconds == pytest.approx(0.8, abs=0.02)
    assert sf.info(tmp_path / "fast.mp3").duration == pytest.approx(fast.seconds, abs=0.05)
    assert (tmp_path / "fast.srt").read_text().count("-->") == 4


def test_the_project_reopens_after_a_restart_with_its_takes_voice_and_pace(qtbot, tmp_path, bundles, voice_wav):
    window = make_window(qtbot, tmp_path, bundles["original"])
    window.voice_panel.select_file(voice_wav)
    project = new_project(window, tmp_path)
    render(qtbot, window)
    window.studio_panel.pace.setValue(90)
    assert window.studio_panel.save()
    window.close()
    again = make_window(qtbot, tmp_path, bundles["original"])
    studio = again.studio_panel
    assert studio.project is not None and studio.project.folder == project.folder
    assert studio.project.counts()["rendered"] == 4
    assert studio.pace.value() == 90
    assert set(studio.project.voices) == {"voice"} and studio.project.segments[0].voice == "voice"
    assert again.project_files.recent_menu.actions()[0].toolTip() == str(project.folder.resolve())
    again.close()


def test_the_speak_button_shows_work_running_and_stopped_stays_visible(qtbot, studio_window):
    window = studio_window
    window.speak_panel.text.set_text("A sentence long enough to be stopped. And another one after it.")
    window.speak_panel.speak_button.click()
    assert window.speak_panel.speak_button.text() == "Speaking…"
    window.speak_panel.stop_button.click()
    assert window.speak_panel.speak_button.text() == "Spea&k"
    window.speak_panel._on_play_tick()
    qtbot.wait(200)
    assert window.playback_label.text().startswith("stopped")
    with qtbot.waitSignal(window.speak_panel.request_done, timeout=30000):
        window.speak_panel.speak_button.click()
    assert window.speak_panel.speak_button.text() == "Spea&k"
    qtbot.waitUntil(lambda: window.playback_label.text().startswith("finished"), timeout=30000)


def test_export_last_result_starts_in_a_sensible_folder_named_after_the_text_and_keeps_mp3(
    qtbot, studio_window, tmp_path, monkeypatch
):
    from PySide6.QtWidgets import QFileDialog

    from app.settings import Key

    window = studio_window
    window.speak_panel.text.set_text("Hello there, this is the text of the export.")
    with qtbot.waitSignal(window.speak_panel.request_done, timeout=30000):
        window.speak_panel.speak_button.click()
    asked = []
    target = tmp_path / "out" / "x.mp3"
    target.parent.mkdir()
    monkeypatch.setattr(
        QFileDialog, "getSaveFileName", lambda *a, **k: asked.append(a[2]) or (str(target), "WAV (*.wav)")
    )
    window.speak_panel.export_button.click()
    start = Path(asked[0])
    assert start.name == "Hello there this is the text.wav" and start.parent != Path.cwd()
    assert sf.info(target).format == "MP3" and not target.with_suffix(".wav").exists()
    assert oct(target.stat().st_mode & 0o777) != oct(0o600)
    window.speak_panel.export_button.click()  # the next export starts where the last one went
    assert Path(asked[1]).parent == target.parent and window.settings.get(Key.EXPORT_FOLDER) == str(target.parent)


@pytest.mark.parametrize(("width", "height"), [(1024, 600), (853, 480)])  # 1280×720 at 150 % is 853×480 logical
def test_the_window_fits_small_screens_in_every_view(qtbot, studio_window, tmp_path, width, height):
    window = studio_window
    new_project(window, tmp_path)
    for view in range(window.modes.count()):  # Speak, Project, Re-voice
        window.modes.setCurrentIndex(view)
        hint = window.minimumSizeHint()
        assert hint.width() <= width and hint.height() <= height, (view, hint)
    window.resize(width, height)
    qtbot.wait(50)
    assert window.width() <= width and window.height() <= height
    assert window.speak_panel.latency.height() >= 100 and window.statusBar().isVisible()


def test_rendering_without_listening_decodes_each_segment_in_one_call(qtbot, studio_window, tmp_path):
    window = studio_window
    new_project(window, tmp_path)
    window.studio_panel.listen.setChecked(False)
    speech = {}
    window.bridge.render_step.connect(
        lambda step: (
            speech.update({step.number: speech.get(step.number, 0) + 1})
            if step.kind == "chunk" and step.chunk.kind == "speech"
            else None
        )
    )
    statuses = []
    window.bridge.render_step.connect(lambda step: statuses.append(window.studio_panel.status.text()))
    render(qtbot, window)
    assert speech == {1: 1, 2: 1, 3: 1, 4: 1}  # streaming would cut a segment into several decoder windows
    assert statuses and "Finished playing" not in statuses  # nothing plays: the status says it generates
    from core.cli.main import build_parser
    from core.cli.project_render import render_runtime

    args = build_parser().parse_args(["narrate", "b.txt", "--project", "P", "--bundle", "B"])
    assert render_runtime(args).stream is False  # the command line has no listener either


def test_a_turbo_render_without_listening_generates_segments_in_batches(
    qtbot, tmp_path, bundles, voice_wav, monkeypatch
):
    from core.engine import Pipeline

    batches = []
    real = Pipeline.generate_rows
    monkeypatch.setattr(Pipeline, "generate_rows", lambda *args: batches.append(len(args[3])) or real(*args))
    window = make_window(qtbot, tmp_path, bundles["turbo"])
    try:
        drop(window, voice_wav)
        project = new_project(window, tmp_path)
        window.studio_panel.listen.setChecked(False)
        render(qtbot, window)
        assert batches == [4]  # the four segments' sentences in one language-model batch (the default batch)
        assert project.counts()["rendered"] == 4
    finally:
        window.close()


def test_a_long_project_plays_a_window_at_a_time_and_goes_on_without_a_stop(qtbot, tmp_path, bundles):
    """Playing from a segment prepares about a minute of finished audio, not the rest of the book (which froze the
    window and held the whole book in memory); the next window is prepared meanwhile and playback goes on."""
    from app.audio.virtual_device import VirtualSoundDevice
    from core.narration.exporting.export import preview

    window = make_window(qtbot, tmp_path, bundles["original"], sd=VirtualSoundDevice(speed=4))
    project = new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    first_segment = project.chosen_take(project.segments[0]).seconds
    audio, placements = preview(project, 1, max_seconds=first_segment / 2)
    assert [p.number for p in placements] == [1]  # stops after the segment that reaches the limit
    studio._windows.window_s = first_segment / 2  # every window one segment long
    heard, windows = [], []
    studio.segments.highlight = lambda number, real=studio.segments.highlight: (heard.append(number), real(number))
    show = studio._show_window
    studio._show_window = lambda audio, placements: (
        windows.append([p.number for p in placements]),
        show(audio, placements),
    )
    studio.play_from(1)
    qtbot.waitUntil(lambda: studio.status.text() == "Finished playing", timeout=30000)
    assert windows == [[1], [2], [3], [4]]
    assert [n for i, n in enumerate(heard) if n is not None and (i == 0 or heard[i - 1] != n)][-4:] == [1, 2, 3, 4]
    studio._windows.join()
    window.close()


def test_a_render_that_fails_is_reported_once_and_is_not_a_failed_speak_request(
    qtbot, studio_window, tmp_path, monkeypatch
):
    """The Speak panel used to take every failure on the bridge for its own: a failed render showed its message
    twice (studio and Speak), ended a Speak request that never started and said "failed" in the playback status."""
    from core.narration import Project, ProjectError
    from core.wording import describe

    window = studio_window
    new_project(window, tmp_path)
    shown, ended = [], []
    show = window.message.show_message
    monkeypatch.setattr(window.message, "show_message", lambda text, *a, **k: (shown.append(text), show(text, *a, **k)))
    window.speak_panel.request_done.connect(ended.append)
    reason = describe("project.save_failed", {"folder": "Story.cbproj", "reason": "No space left on device"})

    def full_disk(self):
        raise ProjectError("project.save_failed", folder="Story.cbproj", reason="No space left on device")

    monkeypatch.setattr(Project, "save", full_disk)
    with qtbot.waitSignal(window.bridge.request_failed, timeout=60000):
        window.studio_panel.render_button.click()
    qtbot.wait(50)
    assert shown == [reason] and window.message.text() == reason
    assert ended == [] and "failed" not in window.playback_label.text()
    studio = window.studio_panel
    assert studio.rendering is None and studio.status.text() == "Rendering stopped: " + reason
    assert studio.render_button.isEnabled() and window.speak_panel.speak_button.text() == "Spea&k"


def test_speak_during_a_render_runs_between_its_segments_and_the_render_goes_on(qtbot, studio_window, tmp_path):
    """Speak used to cancel a studio render; now the worker runs it between two segments, the render hands the
    player over (it was being listened to) and finishes every segment."""
    window = studio_window
    book = "\n\n".join(f"Paragraph {n} has a sentence. It has a second one too." for n in range(1, 16))
    project = new_project(window, tmp_path, book)
    studio, bridge = window.studio_panel, window.bridge
    assert studio.listen.isChecked()
    done_segments, finished = [], []
    bridge.render_step.connect(lambda step: done_segments.append(step.number) if step.kind == "segment" else None)
    bridge.render_done.connect(lambda rid, summary: finished.append(summary))
    with qtbot.waitSignal(bridge.render_step, timeout=60000, check_params_cb=lambda step: step.kind == "segment"):
        studio.render_button.click()
    render_id = bridge.rendering
    window.speak_panel.text.set_text("Hello there, this is a test.")
    with qtbot.waitSignal(bridge.request_finished, timeout=60000):
        qtbot.mouseClick(window.speak_panel.speak_button, Qt.MouseButton.LeftButton)
        assert "Speak is playing" in studio.status.text()  # the render stopped feeding the player
    assert bridge.rendering == render_id and studio.rendering is not None and not finished  # still rendering
    assert len(done_segments) < len(project.segments)
    qtbot.waitUntil(lambda: bool(finished), timeout=120000)
    assert finished[0].rendered == len(project.segments) and not finished[0].cancelled
    assert sorted(set(done_segments)) == list(range(1, len(project.segments) + 1))
    assert open_project(project.folder).counts()["rendered"] == len(project.segments)
