"""Models → Language files: the 23 languages with their steps, what is missing and what the optional parts add;
Chinese's files downloaded (from stand-ins of the hub and of the segmenter's URL: no network) with progress, cancel and
errors in words; Russian's download off, with the reason, while stressonnx is not installed."""

from __future__ import annotations

import errno
import hashlib
import io
import shutil
import threading
import zipfile

import pytest
from PySide6.QtWidgets import QPushButton

import core.engine.reading.language_files as language_files
from app.widgets import language_files_dialog
from app.widgets.language_files_dialog import ADDS, STATE, STEPS, LanguageFilesDialog
from tests.app_support import make_window
from tests.security.test_security_downloads import FakeHub

pytestmark = pytest.mark.qt


class FakeResponse:
    """What ``urlopen`` returns: headers and ``read``; ``gate`` (when given) holds each read until it is set."""

    def __init__(self, data: bytes, gate: threading.Event | None = None):
        self.data, self.gate, self.at = data, gate, 0
        self.headers = {"Content-Length": str(len(data))}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def read(self, n: int) -> bytes:
        if self.gate is not None:
            self.gate.wait(10)
        chunk = self.data[self.at : self.at + min(n, 4096)]
        self.at += len(chunk)
        return chunk


def segmenter_zip() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("spacy_ontonotes/features.msgpack", b"\x80" * 3000)
        zf.writestr("spacy_ontonotes/weights.npz", b"\x00" * 9000)
    return out.getvalue()


@pytest.fixture
def chinese_setup(bundles, tmp_path, monkeypatch):
    """A Multilingual model folder without its Cangjie table, an empty models folder, and stand-ins of the hub (the
    table) and of the segmenter's URL (its zip, pinned to the stand-in's hash)."""
    bundle = shutil.copytree(bundles["multilingual"], tmp_path / "multilingual")
    table = (bundle / "Cangjie5_TC.json").read_bytes()
    (bundle / "Cangjie5_TC.json").unlink()
    archive = segmenter_zip()
    spec = language_files.UrlFile(
        language_files.PKUSEG_URL, hashlib.sha256(archive).hexdigest(), "pkuseg/spacy_ontonotes"
    )
    monkeypatch.setattr(language_files, "PKUSEG", spec)
    return bundle, tmp_path / "models", FakeHub({"Cangjie5_TC.json": table}), archive


def open_dialog(qtbot, bundle, models_dir, hub=None, opener=None) -> LanguageFilesDialog:
    dialog = LanguageFilesDialog(bundle, models_dir, hub=hub, opener=opener)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def test_the_dialog_lists_the_23_languages_with_steps_files_and_what_optional_parts_add(qtbot, bundles, tmp_path):
    dialog = open_dialog(qtbot, bundles["multilingual"], tmp_path)
    assert dialog.table.rowCount() == 23
    names = [dialog.table.item(row, 0).text() for row in range(23)]
    assert names == sorted(names) and "Japanese (ja)" in names and "Chinese (zh)" in names
    assert "pykakasi" in dialog.cell("ja", STEPS) and dialog.cell("fr", STEPS) == "—"
    assert dialog.cell("fr", STATE) == "✓ Ready"
    assert "word segmenter" in dialog.cell("zh", ADDS) and "optional, not installed" in dialog.cell("zh", STATE)
    assert "stress" in dialog.cell("ru", ADDS)


def test_a_chinese_download_fetches_the_table_and_the_segmenter_and_refreshes_the_row(
    qtbot, chinese_setup, monkeypatch
):
    bundle, models, hub, archive = chinese_setup
    opened = []
    dialog = open_dialog(qtbot, bundle, models, hub, lambda url, timeout: opened.append(url) or FakeResponse(archive))
    assert dialog.cell("zh", STATE).startswith("✗ Needs Cangjie5_TC.json")
    assert bundle.name in dialog.notes["zh"].text() and dialog.buttons["zh"].isEnabled()
    with qtbot.waitSignal(dialog.download_finished, timeout=30000) as finished:
        dialog.buttons["zh"].click()
        assert dialog.progress.isVisible() and dialog.cancel_button.isVisible()
        assert not dialog.buttons["zh"].isEnabled()  # one download at a time
    assert finished.args == ["zh", ""]
    assert (bundle / "Cangjie5_TC.json").read_bytes() == hub.files["Cangjie5_TC.json"]
    assert (models / "language-data" / "pkuseg" / "spacy_ontonotes" / "weights.npz").is_file()
    assert opened == [language_files.PKUSEG_URL]
    assert dialog.cell("zh", STATE) == "✓ Ready" and dialog.row("zh").ready
    assert "installed" in dialog.status.text() and not dialog.progress.isVisible()
    assert not dialog.buttons["zh"].isEnabled() and "Installed" in dialog.notes["zh"].text()


def test_without_a_multilingual_model_the_table_goes_to_the_language_data_folder(qtbot, chinese_setup):
    _bundle, models, hub, archive = chinese_setup
    dialog = open_dialog(qtbot, None, models, hub, lambda url, timeout: FakeResponse(archive))
    assert "for every Multilingual model" in dialog.notes["zh"].text()
    with qtbot.waitSignal(dialog.download_finished, timeout=30000) as finished:
        dialog.download("zh")
    assert finished.args == ["zh", ""]
    assert (models / "language-data" / "Cangjie5_TC.json").is_file() and dialog.row("zh").ready


def test_a_failed_download_is_said_in_words_and_the_dialog_stays_usable(qtbot, chinese_setup):
    bundle, models, hub, _archive = chinese_setup

    def offline(url, timeout):
        raise OSError(errno.ENETUNREACH, "Network is unreachable")

    dialog = open_dialog(qtbot, bundle, models, hub, offline)
    with qtbot.waitSignal(dialog.download_finished, timeout=30000) as finished:
        dialog.download("zh")
    code, message = finished.args
    assert code == "zh" and message.startswith("No internet connection")
    assert "Word segmenter: No internet connection" in dialog.status.text()
    assert dialog.row("zh").ready  # the table came first and stays
    assert "optional, not installed" in dialog.cell("zh", STATE)
    assert dialog.buttons["zh"].isEnabled()  # try again

    def corrupt(url, timeout):
        return FakeResponse(b"not the pinned zip")

    dialog.opener = corrupt
    with qtbot.waitSignal(dialog.download_finished, timeout=30000) as finished:
        dialog.download("zh")
    assert "does not match its pinned SHA-256" in finished.args[1]
    assert not (models / "language-data" / "pkuseg" / "spacy_ontonotes").exists()


def test_a_download_can_be_cancelled(qtbot, chinese_setup):
    bundle, models, hub, archive = chinese_setup
    gate, reading = threading.Event(), threading.Event()

    def held(url, timeout):
        reading.set()
        return FakeResponse(archive, gate)

    dialog = open_dialog(qtbot, bundle, models, hub, held)
    dialog.download("zh")
    qtbot.waitUntil(reading.is_set, timeout=30000)  # the table is in; the segmenter's download has begun
    with qtbot.waitSignal(dialog.download_finished, timeout=30000) as finished:
        dialog.cancel_button.click()
        gate.set()
    assert finished.args == ["zh", "Download cancelled."]
    assert dialog.status.text() == "Download cancelled." and not dialog.cancel_button.isVisible()
    assert not (models / "language-data" / "pkuseg" / "spacy_ontonotes").exists()


def test_russian_is_off_with_the_reason_while_stressonnx_is_missing(qtbot, bundles, tmp_path, monkeypatch):
    def missing(*args, **kwargs):
        raise ImportError("No module named 'stressonnx'")

    monkeypatch.setattr(language_files_dialog, "stress_downloader", missing)
    dialog = open_dialog(qtbot, bundles["multilingual"], tmp_path)
    assert not dialog.buttons["ru"].isEnabled()
    assert "pip install --no-deps stressonnx" in dialog.notes["ru"].text()
    assert not dialog.download("ru") and "stressonnx" in dialog.status.text()


def test_the_models_menu_opens_it_for_the_open_multilingual_model(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["multilingual"])
    action = next(a for a in window.menuBar().actions() if a.text() == "&Models").menu().actions()
    entry = next(a for a in action if a.text() == "&Language files…")
    entry.trigger()
    dialog = window.findChild(LanguageFilesDialog)
    assert dialog is not None and dialog.isVisible()
    assert dialog.bundle == bundles["multilingual"] and dialog.models_dir == window.paths.models
    assert dialog.table.rowCount() == 23
    close = dialog.close_buttons.findChildren(QPushButton)[0]
    close.click()
    assert not dialog.isVisible()
    window.close()
