"""The two places a voice is chosen, pinned side by side: the Voice tab's library list (with its Default voice and
Choose file… buttons) and the Re-voice tab's "Into voice" drop-down. Both show the same choice, follow the library
(saved, removed, restored, renamed by gender) and each other, and a model without a built-in voice offers none."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.settings import Key


def combo(panel) -> list[tuple[str, str]]:
    choice = panel.voice_choice
    return [(choice.itemText(i), choice.itemData(i)) for i in range(choice.count())]


def listed(voices) -> list[str]:
    return [voices.library.item(r).text() for r in range(voices.library.count())]


def highlighted(voices) -> str | None:
    item = voices.library.currentItem()
    return item.text() if item is not None and item.isSelected() else None


def test_both_pickers_show_the_library_and_the_voice_in_use(qtbot, window, voice_wav, other_voice_wav):
    voices, panel = window.voice_panel, window.revoice_panel
    choice = panel.voice_choice
    assert combo(panel) == [("Default voice", "default:"), ("Choose a recording…", "choose:")]
    assert choice.currentText() == "Default voice" and listed(voices) == [] and highlighted(voices) is None
    assert voices.select_file(voice_wav)  # a recording outside the library
    assert combo(panel) == [
        ("Default voice", "default:"),
        ("voice.wav", f"file:{voice_wav}"),
        ("Choose a recording…", "choose:"),
    ]
    assert choice.currentText() == "voice.wav" and highlighted(voices) is None
    voices.save_voice("Ada")
    assert voices.select_file(other_voice_wav)
    voices.save_voice("Bruno")
    assert listed(voices) == ["Ada", "Bruno"] and highlighted(voices) == "Bruno"
    assert combo(panel) == [
        ("Default voice", "default:"),
        ("Ada", "library:Ada"),
        ("Bruno", "library:Bruno"),
        ("Choose a recording…", "choose:"),
    ]
    assert choice.currentText() == "Bruno"
    assert voices.library.item(0).toolTip() == "Ada: whose voice is not said (right-click to change)"
    assert voices.remove.isEnabled()
    voices.use_default_voice()
    assert choice.currentText() == "Default voice" and highlighted(voices) is None
    assert not voices.remove.isEnabled() and voices.library.currentItem() is None


def test_a_choice_in_either_picker_is_the_others_too(qtbot, window, voice_wav, other_voice_wav):
    voices, panel = window.voice_panel, window.revoice_panel
    choice = panel.voice_choice
    for name, path in (("Ada", voice_wav), ("Bruno", other_voice_wav)):
        assert voices.select_file(path)
        voices.save_voice(name)
    voices.library.itemClicked.emit(voices.library.item(0))  # a click in the Voice tab's list
    assert voices.voice_name == "Ada" and choice.currentText() == "Ada" and highlighted(voices) == "Ada"
    choice.activated.emit(choice.findData("library:Bruno"))  # chosen in the Re-voice tab
    assert voices.voice_name == "Bruno" and highlighted(voices) == "Bruno" and voices.name.text() == "Bruno"
    assert window.settings.get(Key.VOICE) == "Bruno"
    choice.activated.emit(choice.findData("default:"))
    assert voices.voice is None and highlighted(voices) is None and voices.name.text() == "Default voice"
    assert choice.currentText() == "Default voice"


def test_choose_a_recording_asks_for_a_file_and_a_cancel_keeps_the_voice(qtbot, window, voice_wav, monkeypatch):
    voices, panel = window.voice_panel, window.revoice_panel
    choice = panel.voice_choice
    asked: list[str] = []

    def ask(parent, title, folder, filters, answer=""):
        asked.append(title)
        return answer, ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", ask)
    choice.activated.emit(choice.findData("choose:"))
    assert asked == ["Choose a reference recording"] and choice.currentText() == "Default voice"
    assert voices.voice is None
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(voice_wav), ""))
    choice.activated.emit(choice.findData("choose:"))
    assert voices.voice is not None and Path(voices.voice.source) == voice_wav
    assert choice.currentText() == "voice.wav" and voices.name.text() == "voice.wav"
    voices.choose.click()  # the Voice tab's own button asks the same
    assert choice.currentText() == "voice.wav"


def test_a_removed_library_voice_leaves_both_pickers_and_undo_brings_it_back(
    qtbot, window, voice_wav, other_voice_wav, monkeypatch
):
    voices, panel = window.voice_panel, window.revoice_panel
    choice = panel.voice_choice
    for name, path in (("Ada", voice_wav), ("Bruno", other_voice_wav)):
        assert voices.select_file(path)
        voices.save_voice(name)
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Yes)
    voices.remove.click()  # the voice in use, Bruno
    assert listed(voices) == ["Ada"] and choice.findData("library:Bruno") == -1
    assert choice.currentText() == "Default voice" and voices.voice is None and highlighted(voices) is None
    assert voices.removed_label.text() == "Removed “Bruno”." and voices.undo.isVisibleTo(voices)
    voices.undo.click()
    assert listed(voices) == ["Ada", "Bruno"] and choice.currentText() == "Bruno" and highlighted(voices) == "Bruno"
    assert not voices.undo.isVisibleTo(voices)
    window.library.remove("Ada")  # gone behind the tab's back: choosing it says so and refreshes both
    choice.activated.emit(choice.findData("library:Ada"))
    assert "no longer in the library" in window.message.text()
    assert listed(voices) == ["Bruno"] and choice.findData("library:Ada") == -1 and choice.currentText() == "Bruno"


def test_whose_voice_shows_in_the_list_not_in_the_drop_down(qtbot, window, voice_wav):
    voices, panel = window.voice_panel, window.revoice_panel
    assert voices.select_file(voice_wav)
    voices.save_voice("Clara")
    assert voices.set_gender("Clara", "f")
    assert listed(voices) == ["Clara  (woman)"] and highlighted(voices) == "Clara  (woman)"
    assert voices.library.item(0).toolTip() == "Clara: a woman's voice (right-click to change)"
    assert ("Clara", "library:Clara") in combo(panel) and panel.voice_choice.currentText() == "Clara"


@pytest.fixture
def turbo_window(qtbot, tmp_path, bundles):
    from tests.app_support import make_window

    w = make_window(qtbot, tmp_path, bundles["turbo"])
    yield w
    w.close()


def test_a_model_without_a_built_in_voice_offers_none_in_either_picker(qtbot, turbo_window, voice_wav):
    voices, panel = turbo_window.voice_panel, turbo_window.revoice_panel
    assert not voices.use_default.isVisibleTo(voices) and voices.name.text() == "No voice"
    assert combo(panel) == [("No voice chosen", "none:"), ("Choose a recording…", "choose:")]
    assert panel.voice_choice.currentText() == "No voice chosen"
    assert voices.select_file(voice_wav)
    assert combo(panel) == [("voice.wav", f"file:{voice_wav}"), ("Choose a recording…", "choose:")]
    voices.save_voice("Ada")
    assert combo(panel) == [("Ada", "library:Ada"), ("Choose a recording…", "choose:")]
    assert panel.voice_choice.currentText() == "Ada" and highlighted(voices) == "Ada"
