"""A new user's first hour: notices, settings help, the keyboard, and the text box's messages.

Each test covers a defect found when a new user tried the app: the CUDA notice on machines without a GPU (3),
settings without explanations and bare language codes (9), keyboard use (10), and the text's wording and tags (11).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pytest
import soundfile as sf
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QFileDialog

import core.engine.model.gpu as gpu
from app.settings import Key, Settings
from app.usability import toggle_playback
from app.widgets.message_bar import ERROR_COLORS, WARNING_COLORS, contrast_ratio
from app.widgets.text_entry import count_text
from core.engine.audio.voice_reference import load_voice
from core.engine.errors import Notice, VoiceReferenceError
from core.engine.model.sessions import SessionFactory
from core.engine.options import RuntimeOptions
from core.engine.pipeline import Pipeline
from core.engine.text import unknown_tags
from core.standin import synthetic_voice
from core.wording import describe_error, describe_notice
from tests.app_support import make_window, speak_and_wait

CUDA_NOTICE = Notice("provider.cpu_fallback", {"reason": "the CUDA libraries libcublasLt.so.13 could not be loaded"})
CUDA_NOTICE_TEXT = "Running on CPU: the CUDA libraries libcublasLt.so.13 could not be loaded."


# --- 3: the CUDA notice ------------------------------------------------------------------------------------------
@pytest.fixture
def no_gpu_markers(monkeypatch):
    """A machine with no NVIDIA driver: no nvidia-smi, no device files, no driver DLLs."""
    monkeypatch.setattr(gpu.shutil, "which", lambda name: None)
    monkeypatch.setattr(gpu.os.path, "exists", lambda path: False)
    monkeypatch.setattr(gpu.Path, "is_file", lambda self: False)


def test_gpu_detection_needs_no_cuda_library(monkeypatch, no_gpu_markers):
    for platform in ("linux", "win32", "darwin"):
        assert not gpu.detect_nvidia_gpu(platform)
    monkeypatch.setattr(gpu.os.path, "exists", lambda path: path == "/proc/driver/nvidia/version")
    assert gpu.detect_nvidia_gpu("linux")
    assert not gpu.detect_nvidia_gpu("darwin")
    monkeypatch.setattr(gpu.os.path, "exists", lambda path: path == "/dev/nvidia0")
    assert gpu.detect_nvidia_gpu("linux")
    monkeypatch.setattr(gpu.os.path, "exists", lambda path: False)
    monkeypatch.setattr(gpu.Path, "is_file", lambda self: self.name.lower() == "nvml.dll")
    assert gpu.detect_nvidia_gpu("win32") and not gpu.detect_nvidia_gpu("linux")
    monkeypatch.setattr(gpu.Path, "is_file", lambda self: False)
    monkeypatch.setattr(gpu.shutil, "which", lambda name: "/usr/bin/nvidia-smi" if name == "nvidia-smi" else None)
    assert gpu.detect_nvidia_gpu("linux") and gpu.detect_nvidia_gpu("win32")


def test_gpu_detection_is_asked_once_and_survives_os_errors(monkeypatch):
    calls = []

    def detect():
        calls.append(1)
        raise OSError("no /proc here")

    monkeypatch.setattr(gpu, "detect_nvidia_gpu", detect)
    gpu.nvidia_gpu_present.cache_clear()
    try:
        assert gpu.nvidia_gpu_present() is False and gpu.nvidia_gpu_present() is False
        assert len(calls) == 1
    finally:
        gpu.nvidia_gpu_present.cache_clear()


@pytest.mark.parametrize(
    ("provider", "has_gpu", "expected"),
    [
        ("auto", False, None),  # the usual laptop: the CPU is normal, nothing to say
        ("auto", True, "Running on CPU: libcublasLt.so.13 missing."),  # worded by core.wording
        ("cuda", False, "CUDA was requested but is not usable"),  # asked for explicitly: always say why not
        ("cuda", True, "CUDA was requested but is not usable"),
    ],
)
def test_the_cuda_notice_is_given_only_where_a_gpu_exists_or_cuda_was_asked_for(
    monkeypatch, provider, has_gpu, expected
):
    monkeypatch.setattr(gpu, "nvidia_gpu_present", lambda: has_gpu)
    factory = SessionFactory(RuntimeOptions(provider=provider))
    factory._give_up_cuda("libcublasLt.so.13 missing")
    assert factory._cuda_ok is False  # the CPU is used either way
    if expected is None:
        assert factory.notice is None
    else:
        assert factory.notice.code in ("provider.cpu_fallback", "provider.cuda_unusable")
        assert factory.notice.data == {"reason": "libcublasLt.so.13 missing"}
        assert expected in describe_notice(factory.notice)


def test_a_model_on_a_machine_without_gpu_loads_without_a_notice(monkeypatch, bundles, tmp_path):
    monkeypatch.setattr(gpu, "nvidia_gpu_present", lambda: False)
    pipe = Pipeline.from_bundle(bundles["original"], RuntimeOptions(provider="auto", cache_dir=tmp_path))
    assert pipe.provider_notice is None and pipe.capabilities.provider_notice is None


def _loaded_with_notice(window, notice=CUDA_NOTICE):
    event = window.bridge.model
    caps = replace(event.capabilities, provider_notice=notice)
    return replace(event, capabilities=caps, notice=notice)


def test_the_cuda_notice_is_dismissable_shown_once_and_does_not_push_the_editor_down(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["original"])
    try:
        editor_before = window.speak_panel.text.geometry()
        window._on_model_loaded(_loaded_with_notice(window))
        bar = window.message
        assert bar.isVisible() and "libcublasLt" in bar.text()
        assert window.speak_panel.text.geometry() == editor_before  # laid over the window, not into the column
        assert window.centralWidget().geometry().contains(bar.geometry())
        assert "libcublasLt" in window.provider_label.toolTip()  # still there to read after it is closed
        qtbot.mouseClick(bar.close_button, Qt.MouseButton.LeftButton)
        assert not bar.isVisible()
        assert window.settings.get(Key.DISMISSED_NOTICE) == CUDA_NOTICE_TEXT
        window._on_model_loaded(_loaded_with_notice(window))  # the next load: the same notice is not repeated
        assert not bar.isVisible()
        another = Notice("provider.cpu_fallback", {"reason": "another reason"})
        window._on_model_loaded(_loaded_with_notice(window, another))
        assert bar.isVisible() and "another reason" in bar.text()  # a new reason is worth saying
        window.settings.sync()
    finally:
        window.close()
    # The next start (same settings file): still not shown.
    again = make_window(qtbot, tmp_path, bundles["original"])
    try:
        again._on_model_loaded(_loaded_with_notice(again))
        assert not again.message.isVisible()
        again.show_message("A real error.")  # errors still show, and close the same way
        assert again.message.isVisible()
        again.message.dismiss()
        assert not again.message.isVisible()
        assert (
            Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)).get(Key.DISMISSED_NOTICE)
            == CUDA_NOTICE_TEXT
        )
    finally:
        again.close()


def test_messages_lie_over_the_window_and_never_move_the_editor(qtbot, window):
    entry = window.speak_panel.text
    editor = entry.editor.geometry(), entry.mapTo(window, entry.rect().topLeft())
    window.show_message("The reference is not readable. " * 12)
    qtbot.waitUntil(window.message.isVisible)
    QApplication.processEvents()
    assert (entry.editor.geometry(), entry.mapTo(window, entry.rect().topLeft())) == editor
    bar, central = window.message.geometry(), window.centralWidget().geometry()
    assert central.contains(bar) and bar.height() < central.height() // 2 + 1
    assert window.message.close_button.isVisible()


# --- 9: settings explained ---------------------------------------------------------------------------------------
def test_every_setting_explains_what_it_does_and_costs(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["original"])  # loaded: variant-specific tips are in place
    try:
        controls = window.settings_panel.controls
        required = (
            Key.KV_CHAINING,
            Key.CONDITIONING_CACHE,
            Key.PREFIX_CACHE,
            Key.STREAM,
            Key.STREAM_PLAN,
            Key.PLAYBACK_POLICY,
            Key.DECODER_THREAD,
            Key.DECODER_PROMPT,
            Key.Q4_COMPUTE,
            Key.PRECISION,
            Key.PROVIDER,
            Key.THREADS,
            Key.TEMPERATURE,
            Key.TOP_K,
            Key.TOP_P,
            Key.MIN_P,
            Key.REPETITION_PENALTY,
            Key.CFG_WEIGHT,
            Key.EXAGGERATION,
            Key.SEED,
            Key.LANGUAGE,
            Key.LM_BATCH,
            Key.JOINED_DECODING,
        )
        for key in required:
            assert len(controls[key].toolTip()) > 60, key
        tip = {key: controls[key].toolTip().lower() for key in controls}
        assert "gpu" in tip[Key.KV_CHAINING] and "copy" in tip[Key.KV_CHAINING]
        assert "twice" in tip[Key.CFG_WEIGHT] and "guidance" in tip[Key.CFG_WEIGHT]
        assert "expressive" in tip[Key.EXAGGERATION]
        assert "most likely" in tip[Key.MIN_P] and "speed" in tip[Key.MIN_P]
        assert "reloads the model" in tip[Key.PROVIDER] and "reloads the model" in tip[Key.THREADS]
        assert "memory" in tip[Key.PREFIX_CACHE] and "disk" in tip[Key.CONDITIONING_CACHE]
    finally:
        window.close()
    turbo = make_window(qtbot, tmp_path / "t", bundles["turbo"])
    try:  # a control the model lacks says why, and still what it would do
        cfg = turbo.settings_panel.controls[Key.CFG_WEIGHT]
        assert not cfg.isEnabled() and "Turbo has no" in cfg.toolTip() and "guidance" in cfg.toolTip()
    finally:
        turbo.close()


def test_languages_are_shown_by_name_with_their_code(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["multilingual"])
    try:
        combo = window.settings_panel.controls[Key.LANGUAGE]
        items = [combo.itemText(i) for i in range(combo.count())]
        assert combo.count() == 23 and "French (fr)" in items and "English (en)" in items
        assert "Chinese (zh)" in items and "Swahili (sw)" in items and "fr" not in items
        assert combo.currentText() == "English (en)"
        combo.setCurrentIndex(items.index("French (fr)"))
        assert window.settings.get(Key.LANGUAGE) == "fr"  # the core still gets the code
        assert window.settings.synthesis_options("multilingual").language == "fr"
        window.settings_panel.load()
        assert combo.currentText() == "French (fr)"
    finally:
        window.close()


# --- 10: the keyboard --------------------------------------------------------------------------------------------
def _activate(qtbot, window):
    window.activateWindow()
    window.raise_()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)


def _tab_sequence(qtbot, window, start, steps):
    start.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is start)
    seen = []
    for _ in range(steps):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.append(QApplication.focusWidget())
    return seen


def test_plots_take_no_focus_and_tab_goes_text_speak_stop_export_then_the_tabs(qtbot, window):
    plots = window.findChildren(pg.GraphicsView)
    assert plots and all(p.focusPolicy() == Qt.FocusPolicy.NoFocus for p in plots)
    speak_and_wait(qtbot, window, "Hello.")  # Export becomes available
    _activate(qtbot, window)
    seen = _tab_sequence(qtbot, window, window.speak_panel.text.editor, 30)
    assert not any(isinstance(w, pg.GraphicsView) or isinstance(w.parentWidget(), pg.GraphicsView) for w in seen)
    speak = window.speak_panel
    assert seen[:3] == [speak.speak_button, speak.stop_button, speak.export_button]  # Insert tag: off (Original)
    side = seen.index(window.tabs.tabBar())
    assert side < 6  # the side tabs right after the buttons and the plot's own selector, not last
    assert all(not window.voice_panel.isAncestorOf(w) for w in seen[:side])
    assert window.voice_panel.choose in seen[side:]
    assert window.speak_panel.text.editor in seen  # and round again to the text
    assert seen.index(window.speak_panel.text.editor) > seen.index(window.voice_panel.choose)


def test_buttons_menus_and_tabs_have_mnemonics(qtbot, window):
    speak = window.speak_panel
    for text in (speak.speak_button.text(), speak.stop_button.text(), speak.export_button.text()):
        assert "&" in text
    assert (
        len(
            {
                t.split("&")[1][0].lower()
                for t in (speak.speak_button.text(), speak.stop_button.text(), speak.export_button.text())
            }
        )
        == 3
    )
    menus = [a.text() for a in window.menuBar().actions()]
    assert {"&File", "&Models", "&Help"} <= set(menus)
    assert all("&" in window.tabs.tabText(i) for i in range(window.tabs.count()))
    _activate(qtbot, window)
    window.speak_panel.text.set_text("Hello.")
    with qtbot.waitSignal(window.speak_panel.request_done, timeout=30000):
        qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.AltModifier)  # Alt+K: Spea&k


def test_space_pauses_resumes_and_plays_again_but_types_in_the_editor(qtbot, window):
    speak_and_wait(qtbot, window, "Hello there, this is a test of the space bar.")
    player = window.player
    _activate(qtbot, window)
    window.speak_panel.text.editor.setFocus()
    qtbot.waitUntil(window.speak_panel.text.editor.hasFocus)
    before = window.speak_panel.text.text
    qtbot.keyClick(window.speak_panel.text.editor, Qt.Key.Key_Space)
    assert sorted(window.speak_panel.text.text) == sorted(before + " ") and not player.playing  # typing is typing

    window.tabs.tabBar().setFocus()  # the editor lets go: Space is play / pause
    qtbot.waitUntil(window.tabs.tabBar().hasFocus)
    qtbot.keyClick(window.tabs.tabBar(), Qt.Key.Key_Space)
    assert player.playing and not player.paused  # nothing was playing: the last result plays again
    qtbot.keyClick(window.tabs.tabBar(), Qt.Key.Key_Space)
    assert player.paused and "paused" in window.playback_label.text()
    held = player.played
    time.sleep(0.15)
    QApplication.processEvents()
    assert player.played == held and player.playing and not player.lost  # held, not lost, not stalled
    qtbot.keyClick(window.tabs.tabBar(), Qt.Key.Key_Space)
    assert not player.paused
    qtbot.waitUntil(lambda: player.finished, timeout=10000)
    assert player.played >= window.speak_panel.last_audio.size


def test_clicking_a_plot_takes_the_focus_from_the_editor_so_space_plays(qtbot, window):
    speak_and_wait(qtbot, window, "Hello.")
    _activate(qtbot, window)
    window.speak_panel.text.editor.setFocus()
    qtbot.waitUntil(window.speak_panel.text.editor.hasFocus)
    qtbot.mouseClick(window.speak_panel.waveform.viewport(), Qt.MouseButton.LeftButton)
    assert not window.speak_panel.text.editor.hasFocus()
    qtbot.keyClick(QApplication.focusWidget() or window, Qt.Key.Key_Space)
    assert window.player.playing


def test_space_with_nothing_to_play_says_so(qtbot, window):
    assert toggle_playback(window) == "nothing" and not window.player.playing


def test_ctrl_o_opens_a_voice_recording_and_ctrl_e_exports(qtbot, window, voice_wav, tmp_path, monkeypatch):
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(voice_wav), ""))
    _activate(qtbot, window)
    window.tabs.setCurrentIndex(1)
    qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)
    assert window.voice_panel.voice is not None and Path(window.voice_panel.voice.source) == voice_wav
    assert window.tabs.currentWidget() is window.voice_panel
    speak_and_wait(qtbot, window, "Hello.")
    out = tmp_path / "by-keyboard.wav"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(out), "WAV (*.wav)"))
    _activate(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    assert out.is_file() and sf.info(out).frames == window.speak_panel.last_audio.size


def test_help_lists_the_keyboard_shortcuts(qtbot, window):
    assert window.shortcuts_action.shortcut().toString() == "F1"
    assert window.shortcuts_action in window.help_menu.actions()
    window.shortcuts_action.trigger()
    dialog = window.shortcuts_dialog
    assert dialog is not None and dialog.isVisible()
    rows = dialog.rows()
    keys = " | ".join(k for k, _ in rows)
    for expected in ("Space", "Ctrl+O", "Ctrl+E", "Esc", "F1", "Tab"):
        assert expected in keys, (expected, keys)
    assert any("Speak" in action for _, action in rows) and any("voice" in action.lower() for _, action in rows)
    dialog.close()


def test_help_opens_the_guide_with_its_pictures_offline(qtbot, window, tmp_path):
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QTextDocument

    from app.widgets.guide_dialog import GuideDialog

    assert window.help_menu.actions()[0] is window.guide_action
    window.guide_action.trigger()
    dialog = window.guide_dialog
    assert dialog is not None and dialog.isVisible()
    text = dialog.browser.toPlainText()
    for step in ("Pick a model", "Clone a voice", "Narrate a book", "Review", "Fix one sentence", "Export"):
        assert step in text, step
    assert "![" not in text and "## " not in text  # read as Markdown, not shown as its source
    for image in ("images/first-start.png", "images/speak.png", "images/export.png"):
        loaded = dialog.browser.loadResource(QTextDocument.ResourceType.ImageResource, QUrl(image))
        assert loaded is not None and not loaded.isNull(), image  # found beside the page, not on the web
    dialog.close()
    elsewhere = GuideDialog(tmp_path / "GUIDE.md")  # a build without its copy says so instead of a blank page
    qtbot.addWidget(elsewhere)
    assert "not here" in elsewhere.missing.text() and elsewhere.browser.isHidden()


# --- 11: the text's wording and tags ------------------------------------------------------------------------------
def test_the_character_count_uses_the_singular(qtbot, window):
    assert count_text(0) == "0 characters" and count_text(1) == "1 character" and count_text(1234) == "1,234 characters"
    window.speak_panel.text.set_text("a")
    assert window.speak_panel.text.count.text() == "1 character"
    window.speak_panel.text.set_text("ab")
    assert window.speak_panel.text.count.text() == "2 characters"


def test_voice_errors_have_no_doubled_punctuation(qtbot, window, tmp_path):
    bad = tmp_path / "corrupt.wav"
    bad.write_bytes(b"RIFF\x00\x00garbage" * 10)
    with pytest.raises(VoiceReferenceError) as caught:
        load_voice(bad)
    assert caught.value.code == "voice.unreadable" and not caught.value.data["reason"].endswith(".")
    text = describe_error(caught.value)
    assert "not a readable audio file (" in text and ".)." not in text and ").." not in text
    window.voice_panel.select_file(bad)
    assert window.message.isVisible() and window.message.text() == text


def test_the_short_reference_warning_is_readable(qtbot, window, tmp_path):
    short = tmp_path / "short.wav"
    sf.write(short, synthetic_voice(3.0, seed=5, pitch_hz=150), 24000)
    assert window.voice_panel.select_file(short)
    warning = window.voice_panel.warning
    assert warning.isVisible() and "short" in warning.text()
    style = warning.styleSheet().lower()
    assert WARNING_COLORS[0] in style and WARNING_COLORS[1] in style and "#f0ad4e" not in style
    assert contrast_ratio(WARNING_COLORS[0], WARNING_COLORS[1]) >= 7.0  # WCAG AAA for body text
    assert contrast_ratio(ERROR_COLORS[0], ERROR_COLORS[1]) >= 7.0
    assert contrast_ratio("#f0ad4e", "#efefef") < 2.0  # what it was: light orange on grey


def test_unknown_tags_are_found_before_synthesis():
    known = ("[laugh]", "[sigh]")
    text = "Hi [laugh] there [whisper], [pause:0.5s] ok [PAUSE] [whisper] [clear throat]"
    assert unknown_tags(text, known) == ["[whisper]", "[clear throat]"]
    assert unknown_tags("No tags at all.", ()) == []


def test_turbo_offers_its_tags_and_flags_unknown_ones_while_typing(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["turbo"])
    try:
        entry = window.speak_panel.text
        assert entry.tag_button.isEnabled()
        names = [a.text() for a in entry.tag_menu.actions()]
        assert "[laugh]" in names and "[sigh]" in names and "[clear throat]" in names
        entry.set_text("That was funny.")
        cursor = entry.editor.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        entry.editor.setTextCursor(cursor)
        next(a for a in entry.tag_menu.actions() if a.text() == "[laugh]").trigger()
        assert entry.text == "That was funny. [laugh] "
        assert not entry.tag_note.isVisible()
        entry.editor.insertPlainText("And [whisper] now.")
        qtbot.waitUntil(entry.tag_note.isVisible, timeout=2000)  # while typing: nothing was synthesised
        assert window.speak_panel.last_report is None and not window.bridge.busy
        note = entry.tag_note.text()
        assert "[whisper]" in note and "skipped" in note and "[laugh]" not in note
        entry.set_text("All good [sigh].")
        qtbot.waitUntil(lambda: not entry.tag_note.isVisible(), timeout=2000)
    finally:
        window.close()


def test_models_without_tags_disable_the_inserter_and_flag_every_tag(qtbot, window):
    entry = window.speak_panel.text
    assert not entry.tag_button.isEnabled() and "[pause" in entry.tag_button.toolTip()
    entry.set_text("Hello [laugh] there [pause:0.8s] friend.")
    entry.check_tags()
    assert (
        entry.tag_note.isVisible()
        and "[laugh]" in entry.tag_note.text()
        and "[pause" not in entry.tag_note.text().split("only")[0]
    )
    assert WARNING_COLORS[0] in entry.tag_note.styleSheet()


def test_no_tag_is_flagged_before_a_model_is_loaded(qtbot, tmp_path, bundles):
    window = make_window(qtbot, tmp_path, bundles["original"], load=False)
    try:
        window.speak_panel.text.set_text("Hello [laugh].")
        window.speak_panel.text.check_tags()
        assert not window.speak_panel.text.tag_note.isVisible() and not window.speak_panel.text.tag_button.isEnabled()
    finally:
        window.close()


def test_the_player_pause_holds_queued_audio(qtbot):
    from app.audio.playback import Player
    from app.audio.virtual_device import VirtualSoundDevice

    player = Player(VirtualSoundDevice(speed=40))
    try:
        player.begin()
        player.feed(np.full(24000, 0.1, np.float32))
        player.end_of_input()
        assert player.toggle_pause() and player.paused
        held = player.played
        time.sleep(0.05)
        assert player.played == held and player.check() is None and player.playing
        assert not player.toggle_pause()
        qtbot.waitUntil(lambda: player.finished, timeout=5000)
        assert player.underruns == 0
    finally:
        player.stop()


def test_the_settings_tab_needs_no_sideways_scrolling(qtbot, window):
    """Every setting's label and control fit the side panel's width (a long check-box label used to push the
    controls past the edge, behind a horizontal scroll bar)."""
    window.resize(1280, 800)
    window.show()
    window.tabs.setCurrentWidget(window.settings_scroll)
    qtbot.waitUntil(lambda: window.settings_scroll.viewport().width() > 100)
    QApplication.processEvents()
    assert window.settings_scroll.horizontalScrollBar().maximum() == 0
