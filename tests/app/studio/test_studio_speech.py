"""The studio's lexicon dialog and a segment's spoken form: the tooltip shows what is said, the dialogs change the
project, and only the segments whose spoken form changed become pending."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog

from app.studio.lexicon_dialog import LexiconDialog, SpokenDialog
from core.narration.projects.opening import open_project
from tests.app.studio.support import cell, new_project, render, segment_rows

TEXT = "Hermione had 42 cats. The cats were calm.\n\nNobody else came."


def pending(studio) -> list[int]:
    return [n for n, (_text, status) in segment_rows(studio).items() if status == "○ pending"]


def test_the_tooltip_shows_the_spoken_form(qtbot, studio_window, tmp_path):
    new_project(studio_window, tmp_path, TEXT)
    tip = cell(studio_window.studio_panel, 1, 0, Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("Hermione had 42 cats.\nSays: Hermione had forty-two cats.")
    assert "Says:" not in cell(studio_window.studio_panel, 2, 0, Qt.ItemDataRole.ToolTipRole)


def test_the_lexicon_dialog_makes_only_the_affected_segments_pending(qtbot, studio_window, tmp_path, monkeypatch):
    window = studio_window
    project = new_project(window, tmp_path, TEXT)
    render(qtbot, window)
    studio = window.studio_panel
    assert pending(studio) == [] and studio.lexicon_button.isEnabled()
    shown = []

    def run(dialog):
        shown.append(dialog)
        dialog.add_row("hermione", "Her-my-oh-nee", False)
        dialog.accept()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(LexiconDialog, "exec", run)
    studio.lexicon_button.click()
    assert shown and [s.text for s in shown[0].changed] == ["Hermione had 42 cats."]
    assert pending(studio) == [1]
    assert "Says: Her-my-oh-nee had forty-two cats." in cell(studio, 1, 0, Qt.ItemDataRole.ToolTipRole)
    assert window.windowTitle().startswith("Story *")
    assert studio.save()
    assert "hermione" in open_project(project.folder).lexicon


def test_a_refused_entry_leaves_the_lexicon_as_it_was(qtbot, studio_window, tmp_path):
    project = new_project(studio_window, tmp_path, TEXT)
    dialog = LexiconDialog(project, studio_window)
    dialog.add_row("cats", "", False)  # no spoken form
    dialog.accept()
    assert dialog.error.text() and project.lexicon == {} and dialog.result() != QDialog.DialogCode.Accepted


def test_edit_spoken_form_from_the_segment_menu(qtbot, studio_window, tmp_path, monkeypatch):
    window = studio_window
    project = new_project(window, tmp_path, TEXT)
    render(qtbot, window)
    studio = window.studio_panel

    def run(dialog):
        assert dialog.editor.toPlainText() == "The cats were calm."
        dialog.editor.setPlainText("The two cats were calm.")
        dialog.accept()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(SpokenDialog, "exec", run)
    menu = studio.segments.menu_for(2)
    action = next(a for a in menu.actions() if a.text() == "Edit &spoken form…")
    action.trigger()
    assert pending(studio) == [2]
    assert project.segments[1].spoken == "The two cats were calm." and project.segments[1].text == "The cats were calm."

    def automatic(dialog):
        dialog.automatic.click()
        dialog.accept()
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(SpokenDialog, "exec", automatic)
    next(a for a in studio.segments.menu_for(2).actions() if a.text() == "Edit &spoken form…").trigger()
    assert project.segments[1].spoken is None and pending(studio) == []
