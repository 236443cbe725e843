"""What the model reads: the dialog shows each sentence prepared (Japanese as kana, Chinese as Cangjie codes), its
tokens and ids, reads off the GUI thread, says errors in words and stays usable; it opens from the Speak tab and from
a segment of a project (its spoken text, in the project's language)."""

from __future__ import annotations

import json
import shutil
import threading

import pytest
from PySide6.QtCore import QUrl
from PySide6.QtGui import QGuiApplication

from app.settings import Key
from app.widgets import model_reading_dialog
from app.widgets.model_reading_dialog import (
    ModelReadingDialog,
    ReadingRequest,
    read_for_window,
    token_kind,
    token_label,
)
from tests.app.studio.support import new_project
from tests.app_support import make_window

pytestmark = pytest.mark.qt


def open_dialog(qtbot, bundle, text, language, models_dir=None, source=""):
    dialog = ModelReadingDialog(bundle, text, language, models_dir, source)
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.shown, timeout=30000):
        dialog.show()
    return dialog


def shown_text(dialog) -> str:
    return dialog.view.toPlainText()


def test_japanese_is_shown_as_the_kana_the_model_reads(qtbot, bundles, tmp_path):
    dialog = open_dialog(qtbot, bundles["multilingual"], "私は東京へ行きました。", "ja", tmp_path)
    reading = dialog.reading.readings[0]
    assert reading.prepared == "[ja]わたしはとうきょうへいきました。"
    assert "わたしはとうきょうへいきました" in shown_text(dialog)  # the prepared text, as kana
    assert " ".join(map(str, reading.ids)) in shown_text(dialog)
    assert dialog.language.currentData() == "ja" and dialog.language.count() == 23
    assert not dialog.error.isVisible() and dialog.copy_button.isEnabled()
    assert "Japanese (ja)" in dialog.summary.text() and f"{len(reading.tokens)} tokens" in dialog.summary.text()


def test_chinese_shows_its_cangjie_tokens_and_marks_unknown_ones(qtbot, bundles, tmp_path):
    dialog = open_dialog(qtbot, bundles["multilingual"], "你好！我们去北京吧。", "zh", tmp_path)
    first, second = dialog.reading.readings
    assert [t for t in first.tokens if t.startswith("[cj_")] and "[cj_" in shown_text(dialog)
    assert "[UNK]" in second.tokens  # the stand-in's table lacks these characters
    html = dialog.view.toHtml()
    assert "#c62828" in html  # the [UNK] chips are red
    assert "unknown ([UNK])" in dialog.summary.text()
    # without the segmenter in this models folder, Chinese is read without word boundaries: said, in the window's words
    assert dialog.warnings.isVisible() and "Models → Language files" in dialog.warnings.text()


def test_reading_runs_off_the_gui_thread(qtbot, bundles, tmp_path, monkeypatch):
    threads = []
    real = model_reading_dialog.read_text

    def recording(*args, **kwargs):
        threads.append(threading.current_thread())
        return real(*args, **kwargs)

    monkeypatch.setattr(model_reading_dialog, "read_text", recording)
    dialog = ModelReadingDialog(bundles["multilingual"], "Hello there.", "en", tmp_path)
    qtbot.addWidget(dialog)
    assert dialog.busy  # the constructor returned while the reading runs
    with qtbot.waitSignal(dialog.shown, timeout=30000):
        dialog.show()
    assert threads and all(t is not threading.main_thread() for t in threads)


def test_a_missing_cangjie_table_is_said_in_words_and_the_dialog_stays_usable(qtbot, bundles, tmp_path):
    bundle = shutil.copytree(bundles["multilingual"], tmp_path / "multilingual")
    (bundle / "Cangjie5_TC.json").unlink()
    dialog = open_dialog(qtbot, bundle, "你好！", "zh", tmp_path / "models")
    assert dialog.error.isVisible()
    assert "Chinese (zh) text needs Cangjie5_TC.json" in dialog.error.text()
    assert "Models → Language files" in dialog.error.text()  # where to get it, in the window's words
    assert not dialog.copy_button.isEnabled() and not shown_text(dialog).strip()
    with qtbot.waitSignal(dialog.shown, timeout=30000):
        dialog.language.setCurrentIndex(dialog.language.findData("ja"))  # another language reads at once
    assert not dialog.error.isVisible() and dialog.reading.language == "ja"
    with qtbot.waitSignal(dialog.shown, timeout=30000):  # and editing the text reads it again
        dialog.editor.setPlainText("東京。")
    assert dialog.reading.readings[0].prepared == "[ja]とうきょう。"


def test_no_model_an_empty_text_and_an_unsupported_language_are_said_in_words(bundles, tmp_path):
    assert "Choose a model first" in read_for_window(ReadingRequest(None, "Hello.", "en")).error
    assert "Type some text" in read_for_window(ReadingRequest(bundles["multilingual"], "  ", "en")).error
    nothing = read_for_window(ReadingRequest(bundles["multilingual"], "...", "en", tmp_path))
    assert nothing.error and "nothing to say" in nothing.error
    unsupported = read_for_window(ReadingRequest(bundles["multilingual"], "Hallo.", "xx", tmp_path))
    assert unsupported.error and "'xx' is not supported" in unsupported.error


def test_english_only_models_read_in_english_with_the_language_choice_off(qtbot, bundles, tmp_path):
    dialog = open_dialog(qtbot, bundles["turbo"], "Hello there [laugh].", "fr", tmp_path)
    assert dialog.reading.language is None and dialog.reading.readings
    assert not dialog.language.isEnabled() and dialog.language.currentData() == "en"
    assert dialog.error.isHidden()


def test_hovering_a_token_names_its_id_and_copy_gives_json(qtbot, bundles, tmp_path):
    dialog = open_dialog(qtbot, bundles["multilingual"], "Bonjour à tous.", "fr", tmp_path)
    reading = dialog.reading.readings[0]
    dialog.view.highlighted.emit(QUrl("tok:1:3"))
    assert f"{reading.tokens[3]} → id {reading.ids[3]}" in dialog.hover.text()
    dialog.copy_button.click()
    data = json.loads(QGuiApplication.clipboard().text())
    assert data["language"] == "fr"
    assert data["sentences"][0]["tokens"] == reading.tokens and data["ids"] == reading.ids


def test_tokens_are_drawn_so_that_a_person_can_see_them():
    assert token_kind("[UNK]") == "unknown" and token_kind("[cj_h]") == "cangjie"
    assert token_kind("[START]") == "marker" and token_kind("わ") == "word"
    assert token_label("[SPACE]") == "␣"
    assert token_label("\u0301") == "◌\u0301"  # NFKD's lone accent stays visible


def test_the_speak_tab_opens_it_on_the_text_in_the_chosen_language(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["multilingual"])
    window.settings.set(Key.LANGUAGE, "ja")
    window.speak_panel.text.set_text("東京へ行きました。")
    window.speak_panel.text.reading_button.click()
    dialog = window.speak_panel._model_reading_dialog
    qtbot.waitUntil(lambda: dialog.reading is not None, timeout=30000)
    assert dialog.isVisible() and dialog.reading.request.bundle == bundles["multilingual"]
    assert dialog.reading.readings[0].prepared.startswith("[ja]とうきょう")
    assert "the Speak tab" in dialog.windowTitle()
    window.speak_panel.text.set_text("Hello.")
    window.settings.set(Key.LANGUAGE, "en")
    with qtbot.waitSignal(dialog.shown, timeout=30000):
        window.speak_panel.text.reading_button.click()  # the same dialog, brought up to date
    assert window.speak_panel._model_reading_dialog is dialog and dialog.reading.language == "en"
    dialog.close()
    window.close()


def test_a_segment_opens_it_on_its_spoken_text_in_the_projects_language(qtbot, tmp_path, bundles, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    window = make_window(qtbot, tmp_path, bundles["multilingual"])
    project = new_project(window, tmp_path, "Il y a 3 chats. Ils dorment.")
    project.set_language("fr")
    studio = window.studio_panel
    action = next(a for a in studio.segments.menu_for(1).actions() if a.text() == "&What the model reads…")
    assert action.isEnabled()
    action.trigger()
    dialog = studio._model_reading_dialog
    qtbot.waitUntil(lambda: dialog.reading is not None, timeout=30000)
    assert dialog.text == project.spoken_text(project.segments[0]) == "Il y a trois chats."
    assert dialog.reading.language == "fr" and dialog.reading.readings[0].prepared == "[fr]il y a trois chats."
    assert "segment 1" in dialog.windowTitle()
    dialog.close()
    window.close()
