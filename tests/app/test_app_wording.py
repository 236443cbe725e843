"""The window words the worker's failures with the catalog's window variant, and shows each one once."""

from __future__ import annotations

from pathlib import Path

from core.engine import Failed, ModelFailed
from core.wording import describe


def test_a_failed_request_is_shown_once_in_the_windows_words(window, monkeypatch):
    shown = []
    real = window.message.show_message
    monkeypatch.setattr(window.message, "show_message", lambda text, *a, **k: shown.append(text) or real(text, *a, **k))
    window.bridge.current = 7
    window.speak_panel.controller.begin(7, {})  # a Speak request of the window's own
    window.bridge._dispatch(Failed(7, "worker.gpu_failed", {"reason": "CUDA error 700"}))
    expected = describe("worker.gpu_failed", {"reason": "CUDA error 700"}, "window")
    assert shown == [expected] and "press Speak" in expected
    assert window.message.isVisible() and window.message.text() == expected


def test_a_model_that_fails_to_load_is_worded_for_the_window(window):
    window.bridge._dispatch(ModelFailed(Path("/nope"), "bundle.not_a_folder", {"path": "/nope"}))
    text = window.message.text()
    assert text.startswith("Model folder /nope does not exist") and "Models menu" in text
    assert "make-standin" not in text and "bundle.not_a_folder" not in text
