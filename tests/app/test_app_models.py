"""The window with real and odd bundles: per-graph load progress, a failed load, renamed and fp16 exports, and the
precisions a bundle holds."""

from __future__ import annotations

import pytest

from app.settings import Key
from tests.app_support import make_window, speak_and_wait


def test_the_window_shows_per_graph_load_progress(qtbot, tmp_path, bundles):

    window = make_window(qtbot, tmp_path, bundles["original"], load=False)
    shown = []
    window.bridge.load_progress.connect(lambda graph, seconds: shown.append(window.load_label.text()))
    with qtbot.waitSignal(window.bridge.model_loaded, timeout=30000):
        window.load_model(bundles["original"])
    graphs = {"speech_encoder", "embed_tokens", "language_model", "conditional_decoder"}  # and the made-once steps
    qtbot.waitUntil(
        lambda: graphs <= set(window._load_times) and None not in window._load_times.values(), timeout=30000
    )
    assert any("decoder …" in text for text in shown) and any("language model ✓" in text for text in shown)
    assert not window.load_label.isVisible() and "decoder ✓" in window.model_label.toolTip()


def test_a_failed_load_leaves_no_progress_line_behind(qtbot, tmp_path, broken):

    window = make_window(qtbot, tmp_path, broken["truncated_data"][0], load=False)
    with qtbot.waitSignal(window.bridge.model_failed, timeout=30000):
        window.load_model(broken["truncated_data"][0])
    assert not window.load_label.isVisible()


@pytest.mark.qt
@pytest.mark.parametrize("kind", ["cond-emb", "positional", "fp16"])
def test_renamed_and_fp16_bundles_speak_in_the_app(qtbot, tmp_path, renamed, voice_wav, kind):
    window = make_window(qtbot, tmp_path, renamed["turbo", kind], load=False)
    if kind == "fp16":
        window.settings.set(Key.PRECISION, "fp16")
    with qtbot.waitSignal(window.bridge.model_loaded, timeout=30000):
        window.load_model(renamed["turbo", kind])
    assert window.voice_panel.select_file(voice_wav)
    speak_and_wait(qtbot, window)
    assert window.speak_panel.last_audio is not None and window.speak_panel.last_audio.size > 24000
    combo = window.settings_panel.controls[Key.PRECISION]
    offered = [combo.itemText(i) for i in range(combo.count())]
    assert offered == (["fp16"] if kind == "fp16" else ["fp32"])  # only what the bundle holds
    if kind == "fp16":
        assert "LM fp16" in window.model_label.text() and combo.currentText() == "fp16"


@pytest.mark.qt
def test_a_precision_the_bundle_lacks_is_not_offered_and_the_used_one_is_said(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["original"], load=False)
    window.settings.set(Key.PRECISION, "q4")  # remembered from another model
    with qtbot.waitSignal(window.bridge.model_loaded, timeout=30000):
        window.load_model(bundles["original"])
    combo = window.settings_panel.controls[Key.PRECISION]
    assert [combo.itemText(i) for i in range(combo.count())] == ["fp32"] and combo.currentText() == "fp32"
    assert "no q4 language model; it runs fp32" in combo.toolTip()
    assert window.settings.get(Key.PRECISION) == "q4"  # the choice is kept for a model that has it
