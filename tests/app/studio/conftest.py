"""What the studio's tests share: a window with a model, the unsaved-changes question answered, and a new project
(the helpers are in ``support.py``)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QMessageBox

from tests.app_support import make_window


@pytest.fixture(autouse=True)
def _discard_unsaved_changes_on_close(monkeypatch):
    """pytest-qt closes the windows before fixtures end: answer the unsaved-changes question (tests that care
    patch it themselves)."""
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)


@pytest.fixture
def studio_window(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["original"])
    yield window
    window.close()
