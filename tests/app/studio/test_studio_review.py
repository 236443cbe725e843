"""The studio's review of the takes the take screen flagged: the mark and its words in the list, Needs review beside
the search (with the search, and at a novel's size), Review from the keyboard (next and previous, play, the other
take, accept and its store, regenerate, the spoken text), Takes ▾ in the render job, and the export dialog's count,
list and refusal.

Flagged takes are made by writing a take's screen into a rendered copy of the three-chapter book (segments 2, 5 and
9 flagged); a render that must flag its new take has the screen's verdict replaced."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.settings import Key
from app.studio.export_choices import ExportChoices
from app.studio.export_dialog import ExportDialog
from app.studio.segment_model import STATUS, TEXT
from app.studio.take_settings import TakeSettings
from core.narration import ONE_TAKE, ExportRequest, RenderJob, TakePolicy, flagged_numbers, open_project
from core.narration.projects.project import Take
from core.narration.screening.judge import Verdict
from tests.app.studio.support import cell, segment_rows
from tests.app.studio.test_studio_book_scale import book, take
from tests.app_support import make_window
from tests.narration_support import put_a_hole_in

SILENCE = {"code": "long_silence", "seconds": 3.1, "at": 1.0, "limit": 1.5}
LOOP = {"code": "loop", "period_s": 0.4, "share": 0.5, "at": 2.2}
SILENCE_WORDS = "A silence of 3.1 s inside the speech at 1.0 s"
LOOP_WORDS = "Repeats itself: a 0.4 s pattern loops from 2.2 s"
FLAGGED = (2, 5, 9)
# The book: 1 "Arrival", 2 The train came in late., 3 Nobody was waiting…, 4 "The Middle", 5 She walked into town.,
# 6 The shops…, 7 A dog…, 8 "Departure", 9 In the morning she left., 10 The road was empty and bright.


def screen(reasons=(SILENCE,), score=70.0, accepted=False) -> dict:
    return {"version": 1, "score": score, "reasons": list(reasons), "measures": {}, "accepted": accepted}


def flag(project, number, reasons=(SILENCE,), score=70.0) -> None:
    segment = project.segments[number - 1]
    project.chosen_take(segment).screen = screen(reasons, score)
    project.save([segment])


def second_take(project, number, score=100.0) -> None:
    """A clean second take of segment ``number`` (a copy of its audio), not chosen."""
    segment = project.segments[number - 1]
    first = project.chosen_take(segment)
    file = first.file.replace(".flac", "-b.flac") if first.file.endswith(".flac") else first.file + "-b.wav"
    shutil.copy(project.path(first.file), project.path(file))
    reasons = [] if score >= 100 else [SILENCE]
    segment.takes.append(
        Take(file, first.seed + 1, list(first.tokens), first.seconds, first.key, screen=screen(reasons, score))
    )
    project.save([segment])


@pytest.fixture
def flagged_book(book_copy):
    flag(book_copy, 2)
    flag(book_copy, 5, (SILENCE, LOOP), 40.0)
    flag(book_copy, 9)
    return book_copy.folder


def open_in(window, folder):
    assert window.project_files.open(folder) is not None
    window.modes.setCurrentWidget(window.studio_panel)
    return window.studio_panel


@pytest.fixture
def studio(qtbot, tmp_path, flagged_book):
    """The studio on the flagged book, no model loaded (nothing renders)."""
    window = make_window(qtbot, tmp_path, None, load=False)
    yield open_in(window, flagged_book)
    window.close()


@pytest.fixture
def loaded(qtbot, tmp_path, bundles, flagged_book):
    """The studio on the flagged book with the tiny Original stand-in loaded (Regenerate renders)."""
    window = make_window(qtbot, tmp_path, bundles["original"])
    yield open_in(window, flagged_book)
    window.close()


def key(studio, name, modifier=Qt.KeyboardModifier.NoModifier):
    """A key pressed where the review's keys are meant for: the segment list."""
    studio.window().activateWindow()
    studio.segments.setFocus()
    QTest.keyClick(studio.segments, getattr(Qt.Key, f"Key_{name}"), modifier)


# --- the mark and the filter -----------------------------------------------------------------------------------------
def test_flagged_segments_are_marked_in_the_status_column_with_their_reasons_in_words(studio):
    assert [n for n in range(1, 11) if cell(studio, n, STATUS) == "needs review"] == list(FLAGGED)
    assert cell(studio, 3, STATUS) == "● rendered"
    assert cell(studio, 2, STATUS, Qt.ItemDataRole.DecorationRole) is not None  # a mark, not only a colour
    assert cell(studio, 3, STATUS, Qt.ItemDataRole.DecorationRole) is None
    tip = cell(studio, 5, STATUS, Qt.ItemDataRole.ToolTipRole)
    assert "Needs review (take 1, score 40 of 100):" in tip and SILENCE_WORDS in tip and LOOP_WORDS in tip
    assert SILENCE_WORDS in cell(studio, 2, TEXT, Qt.ItemDataRole.ToolTipRole)
    assert "Needs review" not in cell(studio, 3, STATUS, Qt.ItemDataRole.ToolTipRole)
    project = studio.project
    project.chosen_take(project.segments[1]).screen["accepted"] = True  # what accepting does to the take
    studio._edited(2)
    assert cell(studio, 2, STATUS) == "● rendered" and cell(studio, 2, STATUS, Qt.ItemDataRole.DecorationRole) is None
    assert studio.review_filter.text() == "Needs review (2)"


def test_needs_review_shows_only_flagged_segments_and_combines_with_the_search(studio):
    assert studio.review_filter.text() == "Needs review (3)" and studio.review_filter.isEnabled()
    studio.review_filter.click()
    assert sorted(segment_rows(studio)) == list(FLAGGED)
    studio.search.setText("town")
    studio.apply_search()
    assert sorted(segment_rows(studio)) == [5] and studio.found.text() == "1 found"
    studio.search.setText("")
    studio.apply_search()
    project = studio.project
    project.chosen_take(project.segments[2]).screen = screen()  # a take flagged while the filter is on: shown
    studio._edited(3)
    assert sorted(segment_rows(studio)) == [2, 3, 5, 9] and studio.review_filter.text() == "Needs review (4)"
    studio.review_filter.click()
    assert len(segment_rows(studio)) == 10


def test_needs_review_at_a_novels_size_reads_only_the_rows_seen(qtbot, tmp_path, monkeypatch):
    from app.studio import segment_model

    window = make_window(qtbot, tmp_path, None, load=False)
    project = book(tmp_path / "Moby.cbproj")  # segments 5, 15, 25 … rendered; of them 5, 105, 205 … flagged
    for segment in project.segments[4::100]:
        project.chosen_take(segment).screen = screen()
    studio = window.studio_panel
    studio.set_project(project)
    assert studio.review_filter.text() == "Needs review (100)"
    read = []
    takes_text = segment_model.takes_text
    monkeypatch.setattr(segment_model, "takes_text", lambda p, s: read.append(s.id) or takes_text(p, s))
    studio.review_filter.click()
    studio.segments.viewport().repaint()
    assert sorted(segment_rows(studio)) == list(range(5, 10_000, 100))
    assert 0 < len(read) < 200  # the rows on screen, not the book
    take(project, project.segments[6])  # a take arriving (segment 7, not flagged): its row only, no new layout
    resets = []
    studio.segments.model().modelReset.connect(lambda: resets.append(1))
    studio.segments.segments_changed([7])
    assert resets == []
    window.close()


# --- the review ------------------------------------------------------------------------------------------------------
def test_review_moves_through_the_flagged_segments_from_the_keyboard(studio):
    bar = studio.review_bar
    assert not bar.isVisible()
    key(studio, "F7")
    assert studio.reviewing and bar.isVisible() and studio.review_number() == 2
    assert "Segment 2 · 1 of 3 to review" in bar.header.text() and "score 70 of 100" in bar.header.text()
    assert bar.text.text() == "“The train came in late.”" and SILENCE_WORDS in bar.reasons.text()
    key(studio, "J")
    assert studio.review_number() == 5 and studio.segments.selected_number() == 5
    assert LOOP_WORDS in bar.reasons.text() and "2 of 3" in bar.header.text()
    key(studio, "N")
    assert studio.review_number() == 9
    key(studio, "J")  # round to the first
    assert studio.review_number() == 2
    key(studio, "K")
    assert studio.review_number() == 9
    key(studio, "P")
    assert studio.review_number() == 5
    studio.segments.select(3)  # a segment chosen in the list is the one reviewed
    assert studio.review_number() == 3 and "no longer flagged" in bar.header.text()
    assert not bar.buttons["accept"].isEnabled()
    for name in ("previous", "next", "play", "other", "accept", "regenerate", "spoken"):
        assert "(" in bar.buttons[name].toolTip()  # its keys
    assert "(Y or Return)" in bar.buttons["accept"].toolTip() or "(Y or Enter)" in bar.buttons["accept"].toolTip()
    key(studio, "F7")
    assert not studio.reviewing and not bar.isVisible()
    key(studio, "J")  # the keys rest with the review closed
    assert studio.segments.selected_number() == 3


def test_accepting_clears_the_mark_stores_it_and_goes_on_to_the_next(studio):
    folder = studio.project.folder
    studio.review_filter.click()
    studio.toggle_review(True)
    key(studio, "Y")
    assert studio.review_number() == 5 and studio.status.text() == "Segment 2: take accepted."
    assert sorted(segment_rows(studio)) == [5, 9] and studio.review_filter.text() == "Needs review (2)"
    assert flagged_numbers(open_project(folder)) == [5, 9]  # stored at once
    assert not studio.dirty
    key(studio, "Return")
    assert studio.review_number() == 9
    studio.review_bar.buttons["accept"].click()
    assert studio.review_number() is None
    assert studio.review_bar.header.text() == "<b>No takes need review.</b>"
    assert not studio.review_bar.buttons["play"].isVisible()
    reopened = open_project(folder)
    assert flagged_numbers(reopened) == []
    take = reopened.chosen_take(reopened.segments[4])
    assert take.screen["accepted"] and take.screen["reasons"] == [SILENCE, LOOP]  # the reasons stay, for the record


def test_enter_in_the_search_searches_and_accepts_nothing(studio):
    studio.toggle_review(True)
    studio.search.setFocus()
    QTest.keyClicks(studio.search, "town")  # letters are typed, not review keys
    QTest.keyClick(studio.search, Qt.Key.Key_Return)
    assert studio.search.text() == "town" and studio.review_filter.text() == "Needs review (3)"


def test_play_and_the_other_take(studio, qtbot):
    project = studio.project
    second_take(project, 5)
    studio.toggle_review(True)
    bar = studio.review_bar
    assert "no other take" in bar.header.text()  # segment 2
    key(studio, "A")
    assert studio.status.text() == ("Segment 2 has no other take of its current text: Regenerate (R) renders one.")
    assert project.segments[1].chosen == 0
    key(studio, "Space")  # segment 2's take alone
    assert studio._play_only == 2 and studio.status.text() == "Playing"
    qtbot.waitUntil(lambda: studio.status.text() == "Finished playing", timeout=10000)
    assert studio.segments.current == 2  # stopped before the next segment
    key(studio, "J")
    assert studio.review_number() == 5 and "other take: 2 (A)" in bar.header.text()
    key(studio, "A")  # the clean take 2, chosen and heard
    assert project.segments[4].chosen == 1 and studio._play_only == 5
    assert studio.status.text() == "Playing take 2 of segment 5 (A again: back to take 1)."
    assert cell(studio, 5, STATUS) == "● rendered" and "no longer flagged" in bar.header.text()
    assert studio.dirty  # a choice of take, saved with the project
    key(studio, "A")  # back
    assert project.segments[4].chosen == 0 and cell(studio, 5, STATUS) == "needs review"
    studio.stop()


def test_space_in_the_window_plays_the_reviewed_take(studio):
    studio.toggle_review(True)
    studio.window().setFocus()
    assert studio.window().toggle_playback() == "studio"
    assert studio._play_only == 2
    studio.stop()


def test_regenerate_keeps_the_review_on_a_segment_still_flagged(qtbot, loaded, monkeypatch):
    studio = loaded
    studio.toggle_review(True)
    monkeypatch.setattr(
        "core.narration.screening.screen.judge", lambda *a, **k: Verdict(55.0, [dict(SILENCE)])
    )  # the new take is flagged too
    with qtbot.waitSignal(studio.bridge.render_done, timeout=60000):
        key(studio, "R")
        assert not studio.review_bar.buttons["accept"].isEnabled()  # while it renders
    segment = studio.project.segments[1]
    assert len(segment.takes) == 2 and segment.chosen == 1  # the new take is the chosen one
    assert studio.review_number() == 2 and studio.review_bar.isVisible()
    header = studio.review_bar.header.text()
    assert "Segment 2 · 1 of 3 to review" in header and "Take 2 of 2" in header and "score 55 of 100" in header
    assert "other take: 1 (A)" in header and studio.review_bar.buttons["accept"].isEnabled()
    monkeypatch.undo()  # a clean take this time: the segment leaves the review's count, the bar stays on it
    with qtbot.waitSignal(studio.bridge.render_done, timeout=60000):
        studio.review_bar.buttons["regenerate"].click()
    assert studio.review_number() == 2 and "no longer flagged · 2 to review" in studio.review_bar.header.text()
    assert flagged_numbers(open_project(studio.project.folder)) == [5, 9]


def test_e_edits_the_spoken_text_of_the_reviewed_segment(studio, monkeypatch):
    from app.studio import take_review

    asked = []
    monkeypatch.setattr(take_review, "edit_spoken", lambda panel, number: asked.append(number))
    studio.toggle_review(True)
    key(studio, "J")
    key(studio, "E")
    assert asked == [5]


def test_with_nothing_flagged_the_review_says_so(qtbot, tmp_path, book_copy):
    window = make_window(qtbot, tmp_path, None, load=False)
    studio = open_in(window, book_copy.folder)
    assert studio.review_filter.text() == "Needs review (0)" and not studio.review_filter.isEnabled()
    studio.review_action.trigger()
    assert studio.review_bar.header.text() == "<b>No takes need review.</b>"
    assert studio.review_bar.hint.isVisible() and not studio.review_bar.text.isVisible()
    window.close()


# --- Takes ▾ ---------------------------------------------------------------------------------------------------------
def test_render_gets_the_takes_policy_and_remembers_it(qtbot, loaded, monkeypatch):
    studio = loaded
    worker, jobs = studio.bridge.worker, []
    submit = worker.submit
    monkeypatch.setattr(worker, "submit", lambda job: jobs.append(job) or submit(job))
    assert studio.takes.retakes.value() == 0 and studio.takes.candidates.value() == 1  # as before: one take
    studio.takes.retakes.setValue(1)
    studio.takes.candidates.setValue(2)
    assert studio.settings.get(Key.RETAKES) == 1 and studio.settings.get(Key.CANDIDATES) == 2
    assert "up to 1 time(s)" in studio.takes.toolTip()
    again = TakeSettings(studio.settings)
    assert (again.retakes.value(), again.candidates.value()) == (1, 2)  # remembered
    studio.takes.candidates.setValue(1)
    with qtbot.waitSignal(studio.bridge.render_done, timeout=60000):
        studio.render_button.click()  # nothing pending, but three takes need review: taken again
    (job,) = jobs
    assert isinstance(job, RenderJob) and job.policy == TakePolicy(retakes=1, candidates=1)
    assert studio.progress.maximum() == 3
    project = studio.project
    assert [len(project.segments[n - 1].takes) for n in FLAGGED] == [2, 2, 2]
    assert flagged_numbers(project) == [] and studio.review_filter.text() == "Needs review (0)"
    with qtbot.waitSignal(studio.bridge.render_done, timeout=60000):
        studio.regenerate(3)
    assert jobs[-1].policy == ONE_TAKE  # Regenerate: one new take


def test_a_cluster_render_gets_the_takes_policy_too(studio, monkeypatch):
    from app.controllers.render_on import RenderTarget

    jobs = []
    monkeypatch.setattr(studio.bridge.worker, "submit", jobs.append)
    policy = TakePolicy(retakes=2, candidates=3)
    studio.bridge.render(studio.project, None, target=RenderTarget(True, "ray://gpu1:10001"), policy=policy)
    studio.bridge.rendering = None  # nothing was started
    assert jobs[0].policy == policy and jobs[0].address == "ray://gpu1:10001"


# --- the export dialog -----------------------------------------------------------------------------------------------
def test_the_export_dialog_lists_the_takes_that_need_review_and_refuses_when_asked(qtbot, studio, tmp_path):
    dialog = ExportDialog(studio.project, tmp_path, ExportChoices(format=".wav"), (), studio)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.flagged_note.text().startswith("3 takes among what will be exported need review")
    items = [dialog.flagged.item(row).text() for row in range(dialog.flagged.count())]
    assert items == [
        f"2 · The train came in late. — {SILENCE_WORDS}",
        f"5 · She walked into town. — {SILENCE_WORDS}; {LOOP_WORDS}",
        f"9 · In the morning she left. — {SILENCE_WORDS}",
    ]
    assert dialog.flagged.isVisible() and dialog.sizeHint().height() <= 600
    assert dialog.export_button.isEnabled() and not dialog.request().strict
    dialog.strict.setChecked(True)
    assert not dialog.export_button.isEnabled()
    assert dialog.note.text().startswith("3 takes to export need review: accept or regenerate each")
    dialog.scope.setCurrentIndex(dialog.scope.findData("chapters"))
    dialog.first.setCurrentIndex(1)
    dialog.last.setCurrentIndex(1)  # The Middle: segment 5 alone
    assert dialog.flagged_note.text().startswith("1 take among what will be exported needs review")
    studio.project.chosen_take(studio.project.segments[4]).screen["accepted"] = True
    dialog.last.setCurrentIndex(2)
    dialog.last.setCurrentIndex(1)
    assert dialog.flagged_note.text() == "" and not dialog.flagged.isVisible()
    assert dialog.export_button.isEnabled() and dialog.request().strict  # the checkbox reaches the request
    assert ExportChoices.from_json(dialog.choices().to_json()).strict  # remembered with the other choices


def test_the_list_shows_at_most_200_takes_and_says_how_many_more(qtbot, tmp_path):
    project = book(tmp_path / "Moby.cbproj")
    for segment in project.segments[4:3004:10]:  # 300 rendered segments flagged
        project.chosen_take(segment).screen = screen()
    dialog = ExportDialog(project, tmp_path, ExportChoices(format=".wav"))
    qtbot.addWidget(dialog)
    assert dialog.flagged_note.text().startswith("300 takes among what will be exported")
    assert dialog.flagged.count() == 201 and dialog.flagged.item(200).text() == "… and 100 more"


def test_a_strict_export_with_takes_that_need_review_says_why_and_writes_nothing(qtbot, studio, tmp_path):
    out = tmp_path / "book.wav"
    with qtbot.waitSignal(studio.export_ended, timeout=30000):
        assert studio.export(ExportRequest(out=out, strict=True))
    assert studio.status.text().startswith("Export stopped: 3 segment(s) to export have takes flagged for review")
    assert "Needs review" in studio.status.text() and not out.exists()


def test_the_books_thresholds_are_set_from_takes_and_judge_every_take_again(qtbot, tmp_path, book_copy, monkeypatch):
    from app.studio import screen_thresholds

    window = make_window(qtbot, tmp_path, None, load=False)
    panel = open_in(window, book_copy.folder)
    assert panel.segments.flagged() == []  # the rendered book's own screens: nothing to review
    wanted = {"rate_takes": 1.0, "duration_margin_s": 0.0, "short_ratio": 0.99, "long_ratio": 1.1}

    def choose(dialog):
        assert dialog.spins["silence_s"].value() == 1.5  # the defaults, as the book has none of its own
        for name, value in wanted.items():
            dialog.spins[name].setValue(value)
        return 1

    monkeypatch.setattr(screen_thresholds.ThresholdsDialog, "exec", choose)
    panel.takes.thresholds_action.trigger()
    flagged = panel.segments.flagged()
    assert flagged and "Thresholds stored" in panel.status.text()  # lengths judged tightly: several need review
    reopened = open_project(book_copy.folder)
    assert reopened.screening == wanted and flagged_numbers(reopened) == flagged
    reopened.close()

    def defaults(dialog):
        dialog.restore_defaults()
        return 1

    monkeypatch.setattr(screen_thresholds.ThresholdsDialog, "exec", defaults)
    panel.takes.thresholds_action.trigger()
    assert panel.segments.flagged() == [] and panel.controller.project.screening == {}
    window.close()


def test_screening_again_reads_the_takes_on_a_thread_and_marks_what_it_finds(qtbot, tmp_path, book_copy):
    put_a_hole_in(book_copy, 3)  # the take changed on disk since it was screened
    window = make_window(qtbot, tmp_path, None, load=False)
    panel = open_in(window, book_copy.folder)
    assert panel.segments.flagged() == []
    panel.takes.check_action.trigger()
    assert panel.checking and panel.busy and not panel.render_button.isEnabled()
    assert panel.takes.check_action.text() == "&Stop screening"
    qtbot.waitUntil(lambda: not panel.checking, timeout=30000)
    assert panel.segments.flagged() == [3] and "Screened 10 take(s): 1 need review" in panel.status.text()
    assert panel.render_button.isEnabled() and panel.takes.check_action.text() == "&Screen the rendered takes again"
    reopened = open_project(book_copy.folder)
    assert flagged_numbers(reopened) == [3]
    reopened.close()
    window.close()


def test_screening_again_can_be_stopped_and_keeps_what_it_measured(qtbot, tmp_path, book_copy, monkeypatch):
    import core.narration.screening.check as check

    measure = check.measure_take
    window = make_window(qtbot, tmp_path, None, load=False)
    panel = open_in(window, book_copy.folder)

    def slow(*args, **kwargs):
        panel.take_check.cancel()  # Stop, while the first take is measured
        return measure(*args, **kwargs)

    monkeypatch.setattr(check, "measure_take", slow)
    panel.takes.check_action.trigger()
    qtbot.waitUntil(lambda: not panel.checking, timeout=30000)
    assert "Screened 1 take(s) (stopped early" in panel.status.text()
    window.close()


def test_screening_again_with_speech_recognition_stores_what_was_heard(qtbot, tmp_path, book_copy):
    pytest.importorskip("pocketsphinx")
    window = make_window(qtbot, tmp_path, None, load=False)
    panel = open_in(window, book_copy.folder)
    panel.takes.listen_action.trigger()
    qtbot.waitUntil(lambda: not panel.checking, timeout=60000)
    project = panel.controller.project
    heard = [project.chosen_take(s).screen.get("asr") for s in project.segments]
    assert all(h is not None and h["recogniser"] == "pocketsphinx" for h in heard)
    # the stand-in's takes say no words: what the recogniser heard is nothing like the text
    assert panel.segments.flagged() and "need review" in panel.status.text()
    window.close()
