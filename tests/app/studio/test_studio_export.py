"""The studio's export as a user meets it: on its own thread with progress and Cancel while the window stays
responsive, the dialog's choices (format, bit rate, chapters, credits, ACX) remembered across restarts, problems
with the destination said before any work, the store check's report, rendering a range of chapters, and a project
that another process holds opened read-only."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import av
from PySide6.QtCore import QTimer

from app.studio.check_report import CheckReport, failure_sentences, figures, report_text
from app.studio.export_choices import ExportChoices
from app.studio.export_dialog import ExportDialog
from core.narration import ExportRequest, ProjectLock, open_project
from tests.app.studio.support import new_project, render
from tests.narration_support import stored_state

CHAPTERS = (
    "[chapter: Morning]\nThe first sentence is here. A second one follows!\n\n"
    "[chapter: Evening]\nA new paragraph starts. And it ends.\n\n"
    "[chapter: Night]\nThe night is short. The end."
)


HOLD_LOCK = """
import sys
from core.narration import ProjectLock
with ProjectLock(sys.argv[1], "render"):
    print("held", flush=True)
    sys.stdin.read()
"""


def _gated_export(studio, gate: threading.Event, seen: dict):
    """The real export, which waits for ``gate`` at its first progress report (and notes its thread)."""
    real = studio.export_runner.export

    def export(project, request, progress, cancelled):
        def report(step):
            seen.setdefault("thread", threading.current_thread())
            if not gate.is_set():
                seen["waiting"] = True
                assert gate.wait(30), "the GUI never opened the gate: the export blocked the event loop?"
            progress(step)

        return real(project, request, progress=report, cancelled=cancelled)

    studio.export_runner.export = export


def test_export_runs_on_its_own_thread_with_progress_while_the_window_stays_responsive(qtbot, studio_window, tmp_path):
    window = studio_window
    new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    gate, seen, ticks = threading.Event(), {}, []
    _gated_export(studio, gate, seen)
    timer = QTimer()
    timer.setInterval(10)

    def tick():  # the event loop turns while the export waits; after a few turns it may go on
        ticks.append(1)
        if len(ticks) == 5:
            gate.set()

    timer.timeout.connect(tick)
    timer.start()
    out = tmp_path / "book.m4b"
    with qtbot.waitSignal(studio.export_finished, timeout=60000) as finished:
        assert studio.export(ExportRequest(out=out))
        assert studio.exporting and studio.cancel_export_button.isVisible()
        assert not studio.render_button.isEnabled() and not studio.export_button.isEnabled()
        assert not studio.edit_text(1, "Changed while exporting.")  # the export has the project
    timer.stop()
    assert len(ticks) >= 5 and seen["thread"] is not threading.main_thread()
    assert out.is_file() and finished.args[0].seconds > 0
    assert studio.status.text().startswith("Exported") and str(out) in studio.status.text()
    assert not studio.exporting and not studio.cancel_export_button.isVisible() and studio.export_button.isEnabled()
    with av.open(str(out)) as container:
        assert len(container.chapters()) == 1


def test_progress_shows_the_stage_and_the_time_left(qtbot, studio_window, tmp_path):
    window = studio_window
    new_project(window, tmp_path, CHAPTERS)
    render(qtbot, window)
    studio = window.studio_panel
    shown = []
    studio.export_runner.progress.connect(lambda p: shown.append(studio.progress.format()))
    with qtbot.waitSignal(studio.export_finished, timeout=60000):
        studio.export(ExportRequest(per_chapter=tmp_path / "chapters", chapter_format=".mp3"))
    assert shown and any("%" in text for text in shown)
    assert any(text.split(" · ")[0] in ("Finishing", "Encoding", "Checking") for text in shown)
    assert any(text.endswith(" left") for text in shown)
    assert sorted(p.name for p in (tmp_path / "chapters").glob("*.mp3")) == [
        "01 - Morning.mp3",
        "02 - Evening.mp3",
        "03 - Night.mp3",
    ]


def test_cancel_leaves_no_file_under_the_final_name_and_the_project_unchanged(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path)
    render(qtbot, window)
    studio = window.studio_panel
    assert studio.save()
    before = stored_state(project.folder)
    gate, seen = threading.Event(), {}
    _gated_export(studio, gate, seen)
    out = tmp_path / "export" / "book.mp3"
    out.parent.mkdir()
    with qtbot.waitSignal(studio.export_ended, timeout=60000):
        assert studio.export(ExportRequest(out=out))
        qtbot.waitUntil(lambda: seen.get("waiting", False), timeout=30000)
        studio.cancel_export_button.click()  # the export is under way, between two reports
        gate.set()
    assert studio.status.text() == "Export cancelled: no file was written."
    assert not out.exists() and list(out.parent.iterdir()) == []
    assert stored_state(project.folder) == before
    assert studio.export_button.isEnabled() and studio.render_button.isEnabled()


def test_a_failed_export_is_said_and_the_studio_is_usable_again(qtbot, studio_window, tmp_path):
    window = studio_window
    new_project(window, tmp_path)  # nothing rendered yet
    studio = window.studio_panel
    messages = []
    studio.message.connect(lambda text, error: messages.append((text, error)))
    with qtbot.waitSignal(studio.export_ended, timeout=30000):
        assert studio.export(ExportRequest(out=tmp_path / "book.wav"))
    assert studio.status.text().startswith("Export stopped: ") and messages and messages[-1][1]
    assert not (tmp_path / "book.wav").exists() and studio.export_button.isEnabled()


def test_the_dialog_builds_the_request_and_remembers_its_choices_across_restarts(qtbot, studio_window, tmp_path):
    from app.settings import Key

    window = studio_window
    project = new_project(window, tmp_path, CHAPTERS)
    dialog = ExportDialog(project, tmp_path, None, (2, 3), window)
    qtbot.addWidget(dialog)
    dialog.format.setCurrentIndex(dialog.format.findData(".mp3"))
    assert dialog.path.text().endswith("Story.mp3")
    dialog.bitrate.setCurrentIndex(dialog.bitrate.findData(256))
    dialog.sample_rate.setCurrentIndex(dialog.sample_rate.findData(48000))
    dialog.vbr.setCurrentIndex(dialog.vbr.findData(True))
    dialog.scope.setCurrentIndex(dialog.scope.findData("chapters"))
    dialog.first.setCurrentIndex(1)
    dialog.last.setCurrentIndex(2)
    dialog.author.setText("Ann Author")
    dialog.narrator.setText("Ned Narrator")
    dialog.year.setText("2024")
    request = dialog.request()
    assert request.out == tmp_path / "Story.mp3" and request.chapters == (2, 3) and request.segments is None
    assert (request.encoding.bitrate, request.encoding.sample_rate, request.encoding.vbr) == (256_000, 48000, True)
    assert (request.book.author, request.book.narrator, request.book.year) == ("Ann Author", "Ned Narrator", "2024")
    dialog.scope.setCurrentIndex(dialog.scope.findData("segments"))
    assert dialog.request().segments == (2, 3)
    dialog.per_chapter.setChecked(True)
    request = dialog.request()
    assert request.out is None and request.per_chapter == tmp_path / "Story" and request.chapter_format == ".mp3"
    window.settings.set(Key.EXPORT_CHOICES, dialog.choices().to_json())  # what Export does

    settings = type(window.settings)(type(window.settings.q)(window.settings.q.fileName(), window.settings.q.format()))
    again = ExportChoices.from_json(settings.get(Key.EXPORT_CHOICES))  # a new settings object: after a restart
    assert again == dialog.choices()
    other = ExportDialog(project, tmp_path, again, (), window)
    qtbot.addWidget(other)
    assert other.choices() == ExportChoices(**{**again.__dict__, "scope": "book"})  # nothing selected this time
    assert other.author.text() == "Ann Author" and other.per_chapter.isChecked()


def test_choices_from_an_odd_settings_file_fall_back_to_the_defaults():
    default = ExportChoices()
    assert ExportChoices.from_json("not json") == default
    assert ExportChoices.from_json("[1, 2]") == default
    odd = ExportChoices.from_json('{"format": ".exe", "bitrate": "fast", "vbr": 1, "scope": "all", "loudness": -19}')
    assert odd == ExportChoices(loudness=-19)
    assert ExportChoices.from_json('{"per_chapter": true, "subtitles": ".vtt"}').per_chapter


def test_master_for_acx_chooses_what_acx_takes(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path, CHAPTERS)
    dialog = ExportDialog(project, tmp_path, ExportChoices(format=".m4b", bitrate=64, vbr=True), (), window)
    qtbot.addWidget(dialog)
    dialog.master_acx.setChecked(True)
    request = dialog.request()
    assert request.master == "acx" and request.check == "acx" and request.loudness is None
    assert request.per_chapter is not None and request.chapter_format == ".mp3"
    assert (request.encoding.bitrate, request.encoding.sample_rate, request.encoding.vbr) == (192_000, 44100, False)
    assert not dialog.loudness.isEnabled()


def test_a_read_along_book_is_chosen_and_written_from_the_dialog(qtbot, studio_window, tmp_path):
    import zipfile

    window = studio_window
    project = new_project(window, tmp_path, CHAPTERS)
    render(qtbot, window)
    studio = window.studio_panel
    dialog = ExportDialog(project, tmp_path, ExportChoices(per_chapter=True, check_acx=True), (), window)
    qtbot.addWidget(dialog)
    dialog.path.setText(str(tmp_path / "book.m4b"))
    dialog.format.setCurrentIndex(dialog.format.findData(".epub"))
    assert dialog.path.text() == str(tmp_path / "book.epub")
    assert not dialog.per_chapter.isEnabled() and not dialog.check_acx.isEnabled() and dialog.bitrate.isEnabled()
    request = dialog.request()
    assert request.out == tmp_path / "book.epub" and request.per_chapter is None and request.check is None
    assert request.chapter_format == ".mp3"
    with qtbot.waitSignal(studio.export_finished, timeout=60000):
        assert studio.export(request)
    with zipfile.ZipFile(tmp_path / "book.epub") as book:
        names = book.namelist()
    assert names[0] == "mimetype" and any(n.endswith(".smil") for n in names) and any(n.endswith(".mp3") for n in names)


def test_word_timing_is_offered_for_subtitles_and_the_read_along_book(qtbot, studio_window, tmp_path):
    from app.settings import Key

    window = studio_window
    project = new_project(window, tmp_path, CHAPTERS)
    dialog = ExportDialog(project, tmp_path, ExportChoices(format=".mp3"), (), window)
    qtbot.addWidget(dialog)
    assert not dialog.word_timing.isEnabled()  # no subtitles: nothing to time
    dialog.subtitles.setCurrentIndex(dialog.subtitles.findText("WebVTT (.vtt)"))
    assert dialog.word_timing.isEnabled()
    assert dialog.request().subtitle_words is None
    dialog.word_timing.setChecked(True)
    request = dialog.request()
    assert request.subtitles == tmp_path / "Story.vtt" and request.subtitle_words == 1
    assert request.highlight == "sentence"
    dialog.per_chapter.setChecked(True)
    request = dialog.request()
    assert request.chapter_subtitles == ".vtt" and request.subtitle_words == 1
    dialog.format.setCurrentIndex(dialog.format.findData(".epub"))
    assert dialog.word_timing.isEnabled() and not dialog.subtitles.isEnabled()
    request = dialog.request()
    assert request.highlight == "word" and request.subtitle_words is None and request.subtitles is None
    window.settings.set(Key.EXPORT_CHOICES, dialog.choices().to_json())
    assert ExportChoices.from_json(window.settings.get(Key.EXPORT_CHOICES)).word_timing
    dialog.word_timing.setChecked(False)
    assert dialog.request().highlight == "sentence"
    dialog.format.setCurrentIndex(dialog.format.findData(".mp3"))
    dialog.subtitles.setCurrentIndex(dialog.subtitles.findText("None"))
    dialog.word_timing.setChecked(True)  # remembered, but without subtitles it asks for nothing
    assert not dialog.word_timing.isEnabled() and dialog.request().subtitle_words is None


def test_destination_problems_are_said_while_choosing_not_after_the_work(qtbot, studio_window, tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    window = studio_window
    project = new_project(window, tmp_path)
    render(qtbot, window)
    dialog = ExportDialog(project, tmp_path, ExportChoices(format=".wav"), (), window)
    qtbot.addWidget(dialog)
    assert dialog.note.text() == "" and dialog.export_button.isEnabled()
    dialog.path.setText(str(tmp_path / "missing" / "book.wav"))
    assert "missing" in dialog.note.text() and not dialog.export_button.isEnabled()
    dialog.accept()
    assert dialog.result() == 0  # Export waits until the problem is fixed
    for unnamed in ("", "/", f"{tmp_path}/", str(tmp_path / ".wav")):  # what typing a path goes through
        dialog.path.setText(unnamed)
        assert dialog.note.text() == "Choose a file name." and not dialog.export_button.isEnabled()
    dialog.path.setText(str(tmp_path / "book.wav"))
    assert dialog.export_button.isEnabled()
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: usage(10**6, 10**6 - 100, 100))
    dialog.format.setCurrentIndex(dialog.format.findData(".flac"))  # any change checks again
    assert dialog.note.text() and not dialog.export_button.isEnabled()
    monkeypatch.undo()
    dialog.cover.setCurrentIndex(dialog.cover.findData("file"))
    assert "cover" in dialog.note.text().lower() and not dialog.export_button.isEnabled()
    dialog.cover_file.setText(str(tmp_path / "Story.cbproj" / "project.json"))  # not an image
    assert dialog.note.text() and not dialog.export_button.isEnabled()
    dialog.cover.setCurrentIndex(dialog.cover.findData("book"))
    dialog.scope.setCurrentIndex(dialog.scope.findData("segments"))  # none selected
    assert "select" in dialog.note.text().lower() or dialog.scope.currentData() == "book"


def test_segments_not_rendered_are_said_in_the_dialog(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path, CHAPTERS)
    studio = window.studio_panel
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        studio.render_chapters(2, 2)
    dialog = ExportDialog(project, tmp_path, ExportChoices(format=".wav"), (), window)
    qtbot.addWidget(dialog)
    assert "not rendered yet" in dialog.note.text() and not dialog.export_button.isEnabled()
    dialog.scope.setCurrentIndex(dialog.scope.findData("chapters"))
    dialog.first.setCurrentIndex(1)
    dialog.last.setCurrentIndex(1)
    assert dialog.note.text() == "" and dialog.export_button.isEnabled()  # chapter 2 alone is rendered
    dialog.last.setCurrentIndex(2)
    assert "not rendered yet" in dialog.note.text()


def test_the_dialog_fits_a_small_screen(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path, CHAPTERS)
    dialog = ExportDialog(project, tmp_path, ExportChoices(scope="chapters"), (1,), window)
    qtbot.addWidget(dialog)
    dialog.show()
    hint = dialog.sizeHint()
    assert hint.width() <= 1024 and hint.height() <= 600
    dialog.grab().save(str(tmp_path / "export-dialog.png"))


def test_an_export_with_the_store_check_shows_its_report(qtbot, studio_window, tmp_path):
    window = studio_window
    new_project(window, tmp_path, CHAPTERS)
    render(qtbot, window)
    studio = window.studio_panel
    request = ExportRequest(per_chapter=tmp_path / "acx", chapter_format=".mp3", check="acx")
    with qtbot.waitSignal(studio.export_finished, timeout=60000) as finished:
        studio.export(request)
    checks = finished.args[0].checks
    assert len(checks) == 3
    report = studio.check_report
    assert isinstance(report, CheckReport) and report.isVisible()
    assert report.table.rowCount() == 3
    assert report.table.item(0, 0).text() == "01 - Morning.mp3"
    assert report.table.item(0, 7).text() in ("✓ passes", "✗ fails")
    if not all(c["passed"] for c in checks):  # a stand-in's takes are not mastered: the reasons are in words
        assert "fail" in studio.status.text() and "ACX" in report.summary.text()
        failing = next(c for c in checks if not c["passed"])
        assert all("acx." not in s for s in failure_sentences(failing))


def test_the_report_words_each_failure_with_the_catalog():
    check = {
        "path": "/books/01 - Morning.mp3",
        "rules": "acx",
        "passed": False,
        "rms_db": -30.04,
        "peak_db": -1.0,
        "noise_floor_db": None,
        "head_s": 0.2,
        "tail_s": 2.0,
        "sample_rate": 44100,
        "bitrate": 192000,
        "cbr": True,
        "failures": ["acx.rms_low"],
        "problems": [{"code": "acx.rms_low", "rms_db": -30.0, "low": -23.0, "high": -18.0}],
    }
    row = figures(check)
    assert row[0] == "01 - Morning.mp3" and row[1] == "-30.0 dB" and row[3] == "–"
    assert row[6] == "44.1 kHz · 192 kb/s · CBR" and row[7] == "✗ fails"
    assert failure_sentences(check) == ["RMS -30.0 dBFS is too quiet: ACX wants -23.0 to -18.0 dBFS."]
    text = report_text([check, {**check, "path": "02.mp3", "passed": True, "problems": [], "failures": []}])
    assert text.startswith("1 of 2 file(s) fail ACX's rules") and "01 - Morning.mp3:" in text and "02.mp3" not in text


def test_a_range_of_chapters_renders_only_those_chapters(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path, CHAPTERS)
    studio = window.studio_panel
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        studio.render_chapters(2, 3)
    done = {n for n, s in enumerate(project.segments, 1) if project.status(s) == "rendered"}
    chapters = {project.segments[n - 1].chapter for n in done}
    assert chapters == {1, 2} and all(project.status(s) == "pending" for s in project.segments if s.chapter == 0)
    studio.segments.select(1)  # a segment of chapter 1
    with qtbot.waitSignal(window.bridge.render_done, timeout=60000):
        studio.render_chapter_action.trigger()
    assert not project.pending()
    studio.render_chapters(1, 1)  # nothing left there: said, nothing started
    assert studio.rendering is None and "every segment is rendered" in studio.status.text()


def test_a_project_another_process_holds_opens_read_only(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path)
    render(qtbot, window)
    assert window.studio_panel.save()
    window.studio_panel.set_project(None)  # the window lets go of it
    holder = subprocess.Popen(  # another Chatterbox Desk renders it
        [sys.executable, "-c", HOLD_LOCK, str(project.folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        opened = window.project_files.open(project.folder)
        studio = window.studio_panel
        assert opened is not None and studio.controller.read_only
        assert f"process {holder.pid}" in studio.status.text() and "read-only" in studio.status.text()
        assert "read-only" in studio.title.text()
        assert not studio.render_button.isEnabled() and not studio.render_more.isEnabled()
        assert not studio.pace.isEnabled() and studio.export_button.isEnabled() and studio.play_button.isEnabled()
        assert not studio.edit_text(1, "Changed.") and not studio.delete_segment(1)
        assert not studio.segments.editable
        studio.render_pending()
        assert studio.rendering is None
        assert open_project(project.folder).segments[0].text == project.segments[0].text
    finally:
        holder.communicate("", timeout=30)  # it lets go and ends
    window.project_files.open(project.folder)  # free again: it is ours
    assert window.studio_panel.controller.read_only is None and window.studio_panel.render_button.isEnabled()
    assert ProjectLock(project.folder).holder().pid == os.getpid()


def test_importing_into_a_project_another_process_holds_is_refused(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path)
    assert window.studio_panel.save()
    window.studio_panel.set_project(None)
    before = stored_state(project.folder)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(project.folder)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        window.speak_panel.text.set_text("Other words entirely. Nothing like the first.")
        assert window.project_files.new_from_text(window.speak_panel.text.text, project.folder) is None
        assert f"process {holder.pid}" in window.message.text()
        assert stored_state(project.folder) == before
    finally:
        holder.communicate("", timeout=30)


def test_closing_the_window_cancels_the_export_and_gives_the_lock_back(qtbot, studio_window, tmp_path):
    window = studio_window
    project = new_project(window, tmp_path)
    render(qtbot, window)
    assert window.studio_panel.save()
    studio = window.studio_panel
    gate, seen = threading.Event(), {}
    _gated_export(studio, gate, seen)
    out = tmp_path / "closing.wav"
    assert studio.export(ExportRequest(out=out))
    qtbot.waitUntil(lambda: seen.get("waiting", False), timeout=30000)
    threading.Timer(0.2, gate.set).start()  # the export goes on while the window waits for it, and sees the cancel
    window.close()
    assert not studio.exporting and not out.exists()
    assert ProjectLock(project.folder).holder() is None  # nobody holds it any more
