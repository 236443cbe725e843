"""The History tab, the voice library's Remove/Undo and save prompt, what the window remembers across restarts, and
the message of a download without a connection (headless; dialogs are answered by monkeypatching)."""

from __future__ import annotations

import errno
import json
import socket

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QInputDialog, QMessageBox

from app.history import History
from app.panels.history_panel import LINES_ROLE
from app.settings import Key, Settings
from tests.app_support import drop, make_window, speak_and_wait

LONG = " ".join(f"This is sentence number {i} of a long narration that is stopped early." for i in range(1, 25))
Yes, Cancel = QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.Cancel


def answer(monkeypatch, reply) -> list:
    """Answer every ``QMessageBox.question`` with ``reply``; returns the questions asked."""
    asked = []

    def question(parent, title, text, *args, **kwargs):
        asked.append((title, text))
        return reply

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    return asked


def add_entry(window, text: str, seed: int = 1, **fields):
    tone = (0.2 * np.sin(np.arange(12000) / 10)).astype(np.float32)
    entry = window.history.add(
        tone, 24000, text=text, voice=fields.pop("voice", "default"), variant="original", seed=seed, **fields
    )
    window.history_panel.refresh()
    return entry


def reread(tmp_path) -> Settings:
    return Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


# --- 6. history ----------------------------------------------------------------------------------------------------
def test_history_rows_show_date_voice_model_and_seed_without_scrolling_sideways(qtbot, window):
    window.settings.set(Key.RANDOM_SEED, False)
    window.settings.set(Key.SEED, 4242)
    window.splitter.setSizes([1000, 280])  # a narrow side panel
    window.tabs.setCurrentIndex(window.tabs.indexOf(window.history_panel))
    speak_and_wait(qtbot, window, "Hello there, this is a test of a history row that is far too long to fit. " * 3)
    entry = window.history.entries[0]
    header, text, details = window.history_panel.list.item(0).data(LINES_ROLE)
    assert entry.when in header and f"{entry.seconds:.1f} s" in header
    assert text.startswith("Hello there, this is a test")
    assert details == "default · Original fp32 · seed 4242"
    assert (entry.model, entry.precision, entry.voice_source, entry.partial) == ("original", "fp32", "", False)
    tooltip = window.history_panel.list.item(0).toolTip()
    assert "4242" in tooltip and "too long to fit" in tooltip and "Original fp32" in tooltip
    qtbot.wait(50)
    assert window.history_panel.list.horizontalScrollBar().maximum() == 0
    assert window.history_panel.list.visualItemRect(window.history_panel.list.item(0)).width() <= (
        window.history_panel.list.viewport().width()
    )
    saved = json.loads((window.paths.history / "history.json").read_text(encoding="utf-8"))[0]
    assert saved["seed"] == 4242 and saved["model"] == "original" and saved["precision"] == "fp32"
    assert "editor/text" not in saved["settings"] and "sampling/seed" in saved["settings"]


def test_history_entries_written_before_the_new_fields_still_load(tmp_path):
    folder = tmp_path / "history"
    folder.mkdir()
    sf.write(folder / "old.flac", np.zeros(2400, np.float32), 24000)
    old = {
        "id": "old",
        "created": 1.7e9,
        "text": "Old entry.",
        "voice": "Narrator",
        "variant": "turbo",
        "seed": 7,
        "settings": {},
        "timings": {},
        "audio_file": "old.flac",
        "seconds": 0.1,
        "from_the_future": True,
    }
    tampered = dict(old, id="tampered", text=["not", "text"])
    (folder / "history.json").write_text(json.dumps([old, {"id": "broken"}, tampered, "junk"]), encoding="utf-8")
    entries = History(folder).entries
    assert [e.id for e in entries] == ["old"]
    assert entries[0].details == "Narrator · Turbo · seed 7" and not entries[0].partial


def test_delete_key_and_clear_all_with_confirmation(qtbot, window, monkeypatch):
    first = add_entry(window, "First result.")
    second = add_entry(window, "Second result.")
    assert first.id != second.id and window.history_panel.list.count() == 2
    window.history_panel.list.setCurrentRow(0)  # newest first
    qtbot.keyClick(window.history_panel.list, Qt.Key.Key_Delete)
    assert [e.id for e in window.history.entries] == [first.id] and window.history_panel.list.count() == 1
    assert not (window.paths.history / second.audio_file).exists()
    assert [e.id for e in History(window.paths.history).entries] == [first.id]

    asked = answer(monkeypatch, Cancel)
    window.history_panel.clear_button.click()
    assert asked and window.history_panel.list.count() == 1
    answer(monkeypatch, Yes)
    window.history_panel.clear_button.click()
    assert window.history.entries == [] and window.history_panel.list.count() == 0
    assert not list(window.paths.history.glob("*.flac")) and History(window.paths.history).entries == []
    assert not window.history_panel.clear_button.isEnabled()


def test_load_text_back_brings_the_text_voice_and_seed(qtbot, window, voice_wav):
    drop(window, voice_wav)
    window.voice_panel.save_voice("Narrator")
    add_entry(
        window, "Once upon a time [pause:0.5s] there was a voice.", seed=1234, voice="Narrator", voice_source="Narrator"
    )
    window.voice_panel.use_default_voice()
    window.speak_panel.text.set_text("")
    window.history_panel.list.setCurrentRow(0)
    window.history_panel.load_button.click()
    assert window.speak_panel.text.text == "Once upon a time [pause:0.5s] there was a voice."
    assert window.voice_panel.voice_name == "Narrator" and window.voice_panel.voice is not None
    assert window.settings.get(Key.SEED) == 1234 and window.settings.get(Key.RANDOM_SEED) is False
    assert window.settings_panel.value(Key.SEED) == 1234 and not window.settings_panel.value(Key.RANDOM_SEED)


def test_a_stopped_request_is_kept_in_the_history_as_partial(qtbot, window):
    window.speak_panel.text.set_text(LONG)
    window.speak_panel.speak_button.click()
    qtbot.waitUntil(lambda: len(window.speak_panel.controller.chunks) >= 2, timeout=30000)
    assert window.bridge.busy
    qtbot.keyClick(window.speak_panel.text.editor, Qt.Key.Key_Escape)
    assert len(window.history.entries) == 1
    entry = window.history.entries[0]
    assert entry.partial and entry.text == LONG and entry.seed > 0 and entry.seconds > 0
    assert entry.seconds * 24000 == pytest.approx(window.speak_panel.last_audio.size)
    assert "stopped (partial)" in window.history_panel.list.item(0).data(LINES_ROLE)[0]
    qtbot.wait(300)
    assert len(window.history.entries) == 1  # the cancelled request adds nothing more
    assert History(window.paths.history).entries[0].partial


# --- 7. voice library ----------------------------------------------------------------------------------------------
def test_removing_a_voice_asks_first_and_can_be_undone_until_the_app_closes(
    qtbot, tmp_path, bundles, voice_wav, monkeypatch
):
    w = make_window(qtbot, tmp_path, bundles["original"], load=False)
    drop(w, voice_wav)
    w.voice_panel.save_voice("Narrator")
    recording = w.library.get("Narrator").path
    panel = w.voice_panel
    assert panel.library.currentItem().text() == "Narrator"

    asked = answer(monkeypatch, Cancel)
    panel.remove.click()
    assert asked and "Narrator" in asked[0][1] and w.library.get("Narrator") is not None

    answer(monkeypatch, Yes)
    panel.remove.click()
    assert w.library.get("Narrator") is None and not recording.exists() and w.voice_panel.voice is None
    assert panel.undo.isVisibleTo(panel) and "Narrator" in panel.removed_label.text()
    panel.undo.click()
    restored = w.library.get("Narrator")
    assert restored is not None and restored.path.is_file() and w.voice_panel.voice_name == "Narrator"
    assert panel.library.currentItem().text() == "Narrator" and not panel.undo.isVisibleTo(panel)

    panel.remove.click()  # removed again, then the app closes: the recording is deleted for good
    w.close()
    assert not any(p.suffix == ".wav" for p in w.paths.voices.rglob("*"))


def test_the_save_prompt_offers_the_name_without_the_extension(qtbot, window, voice_wav, monkeypatch):
    offered = []

    def get_text(parent, title, label, *args, text="", **kwargs):
        offered.append(text)
        return text, True

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(get_text))
    drop(window, voice_wav)
    window.voice_panel.save.click()
    assert offered == [voice_wav.stem]
    assert [v.name for v in window.library.voices()] == [voice_wav.stem]
    assert window.voice_panel.voice_name == voice_wav.stem


def test_the_current_voice_is_selected_again_after_a_restart(qtbot, tmp_path, bundles, voice_wav, other_voice_wav):
    w = make_window(qtbot, tmp_path, bundles["original"], load=False)
    drop(w, other_voice_wav)
    w.voice_panel.save_voice("Villain")
    drop(w, voice_wav)
    w.voice_panel.save_voice("Narrator")
    w.voice_panel.select_library_voice("Villain")
    w.close()
    again = make_window(qtbot, tmp_path, bundles["original"], load=False)
    try:
        assert again.voice_panel.voice_name == "Villain"
        assert again.voice_panel.library.currentItem().text() == "Villain"
        assert [i.text() for i in again.voice_panel.library.selectedItems()] == ["Villain"]
        drop(again, voice_wav)  # a file outside the library: no library voice is highlighted
        assert again.voice_panel.library.currentItem() is None
    finally:
        again.close()


# --- 8. remembered across restarts ---------------------------------------------------------------------------------
def test_the_typed_text_and_the_selected_tabs_survive_a_restart(qtbot, tmp_path, bundles):
    w = make_window(qtbot, tmp_path, bundles["original"], load=False)
    w.speak_panel.text.set_text("Typed, not yet spoken.\nSecond line, with a comma.")
    text = w.speak_panel.text
    qtbot.waitUntil(lambda: reread(tmp_path).get(Key.TEXT) == text.text, timeout=5000)  # saved while typing
    w.tabs.setCurrentIndex(w.tabs.indexOf(w.history_panel))
    w.speak_panel.text.set_text("Changed just before closing.")
    w.close()
    again = make_window(qtbot, tmp_path, bundles["original"], load=False)
    try:
        assert again.speak_panel.text.text == "Changed just before closing."
        assert again.tabs.currentWidget() is again.history_panel
    finally:
        again.close()


# --- 12. downloads without a connection ----------------------------------------------------------------------------
class OfflineHub:
    """The hub as seen without a connection: every call raises ``error``."""

    def __init__(self, error: BaseException):
        self.error = error

    def HfApi(self):  # the hub's own name
        return self

    def model_info(self, *args, **kwargs):
        raise self.error


def wrapped_like_the_hub() -> BaseException:
    """huggingface_hub's LocalEntryNotFoundError raised from an httpx ConnectError raised from a gaierror."""
    from huggingface_hub.errors import LocalEntryNotFoundError

    class ConnectError(Exception):
        pass

    try:
        try:
            try:
                raise socket.gaierror(-2, "Name or service not known")
            except OSError as exc:
                raise ConnectError("[Errno -2] Name or service not known") from exc
        except ConnectError as exc:
            raise LocalEntryNotFoundError("An error happened while trying to locate the file on the Hub") from exc
    except LocalEntryNotFoundError as exc:
        return exc


OFFLINE_ERRORS = {
    "dns": lambda: socket.gaierror(-2, "Name or service not known"),
    "dns-again": lambda: OSError(-3, "Temporary failure in name resolution"),
    "unreachable": lambda: OSError(errno.ENETUNREACH, "Network is unreachable"),
    "refused": lambda: ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"),
    "hub": wrapped_like_the_hub,
}


@pytest.mark.parametrize("kind", sorted(OFFLINE_ERRORS))
def test_a_download_without_a_connection_says_what_to_do_instead(tmp_path, kind):
    from core.engine.model.hub_download import HUB_MODELS, OFFLINE_MESSAGE, Downloader

    d = Downloader(HUB_MODELS[0], tmp_path / "models", hub=OfflineHub(OFFLINE_ERRORS[kind]()))
    d.start()
    d.join(30)
    assert d.finished and d.offline and d.error == OFFLINE_MESSAGE
    assert "Errno" not in d.error and "folder" in d.error and "test model" in d.error


def test_other_download_failures_keep_their_own_message(tmp_path):
    import ssl

    from core.engine.model.hub_download import HUB_MODELS, Downloader, is_offline_error

    assert not is_offline_error(ssl.SSLCertVerificationError(1, "certificate verify failed"))
    d = Downloader(HUB_MODELS[0], tmp_path / "models", hub=OfflineHub(RuntimeError("HTTP 500 from the hub")))
    d.start()
    d.join(30)
    assert not d.offline and d.error == "Download failed: HTTP 500 from the hub"


def test_the_model_dialog_shows_the_offline_message(qtbot, tmp_path, monkeypatch):
    from app.widgets.model_dialog import ModelDialog
    from core.engine.model.hub_download import OFFLINE_MESSAGE

    warnings = []
    monkeypatch.setattr(
        QMessageBox, "warning", staticmethod(lambda parent, title, text, *a: warnings.append((title, text)))
    )
    dialog = ModelDialog(tmp_path / "models", hub=OfflineHub(socket.gaierror(-2, "Name or service not known")))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.download_button.click()
    dialog.downloader.join(30)
    qtbot.waitUntil(lambda: bool(warnings), timeout=10000)
    assert warnings == [("No internet connection", OFFLINE_MESSAGE)]
    assert dialog.status.text() == OFFLINE_MESSAGE and dialog.open_button.isDefault()
    assert dialog.download_button.isEnabled() and dialog.chosen is None
