"""What the Speak and the Re-voice tabs say and offer about their result, pinned side by side: the status words while
they work, play, pause, stop or fail; the speed words; when Export is offered; the action button's words; one
"cannot be played" note per request; the model's load turning the action button off and on."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from core.engine import SAMPLE_RATE, load_voice
from core.standin import synthetic_voice

CANNOT_PLAY = "Audio cannot be played on this computer."
TIMING = re.compile(r"^RTF \d+\.\d\d · first audio \d+\.\d\d s$")


@pytest.fixture(scope="module")
def speech(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("pin") / "talk.wav"
    sf.write(path, synthetic_voice(3.0, seed=31, pitch_hz=140), SAMPLE_RATE)
    return path


class Heard:
    """Everything a panel says through its five signals, in order."""

    def __init__(self, panel) -> None:
        self.events: list[tuple[str, object]] = []
        for name in ("playback_status", "timing_status", "export_available", "request_done"):
            getattr(panel, name).connect(lambda value, n=name: self.events.append((n, value)))
        panel.playback_finished.connect(lambda: self.events.append(("playback_finished", None)))

    def of(self, name: str) -> list:
        return [value for n, value in self.events if n == name]


def load(qtbot, panel, path: Path) -> None:
    with qtbot.waitSignal(panel.loader.loaded, timeout=30000):
        panel.open_source(path)


def counted_messages(monkeypatch, window) -> list[tuple[str, bool]]:
    shown: list[tuple[str, bool]] = []
    show = window.messages.show

    def record(text, error=True, key=""):
        shown.append((text, error))
        show(text, error, key)

    monkeypatch.setattr(window.messages, "show", record)
    return shown


def test_speak_says_what_it_does_from_generating_to_finished(qtbot, window):
    speak = window.speak_panel
    heard = Heard(speak)
    assert speak.speak_button.text() == "Spea&k" and speak.speak_button.toolTip() == "Speak the text (Ctrl+Enter)"
    assert not speak.export_button.isEnabled()
    speak.text.set_text("Hello there, this is a test.")
    with qtbot.waitSignal(speak.playback_finished, timeout=60000):
        speak.speak()
        assert speak.speak_button.text() == "Speaking…"
        assert speak.speak_button.toolTip() == "Speaking: press again to start over, Stop (Esc) to stop"
    status = heard.of("playback_status")
    assert status[0] == "generating…" and re.fullmatch(r"finished · played \d+\.\d s", status[-1])
    assert all(
        re.fullmatch(
            r"(generating… · played|playing ·|finished · played) \d+\.\d s|starting smoothly in .*|buffering.*", s
        )
        for s in status[1:]
    ), status
    assert len(heard.of("timing_status")) == 1 and TIMING.match(heard.of("timing_status")[0])
    assert heard.of("export_available") == [True] and heard.of("request_done") == [True]
    assert heard.of("playback_finished") == [None] and not speak._play_timer.isActive()
    assert [n for n, _ in heard.events].index("request_done") < [n for n, _ in heard.events].index("playback_finished")
    assert speak.speak_button.text() == "Spea&k" and speak.export_button.isEnabled()
    assert window.rtf_label.text() == heard.of("timing_status")[0]


def test_re_voice_says_what_it_does_from_re_voicing_to_finished(qtbot, window, speech):
    panel = window.revoice_panel
    window.modes.setCurrentWidget(panel)
    assert panel.revoice_button.text() == "R&e-voice"
    assert panel.revoice_button.toolTip() == "Speak the recording again in the chosen voice (Ctrl+Enter)"
    load(qtbot, panel, speech)
    heard = Heard(panel)
    with qtbot.waitSignal(panel.playback_finished, timeout=60000):
        panel.revoice()
        assert panel.revoice_button.text() == "Re-voicing…"
        assert panel.revoice_button.toolTip() == "Re-voicing: press again to start over, Stop (Esc) to stop"
        assert not panel.export_button.isEnabled() and panel.busy
    status = heard.of("playback_status")
    assert status[0] == "re-voicing…" and status[-1] == "finished · played 3.0 s"
    assert all(re.fullmatch(r"re-voicing… · played \d+\.\d s|buffering.*|playing · .*", s) for s in status[1:-1])
    assert len(heard.of("timing_status")) == 1 and TIMING.match(heard.of("timing_status")[0])
    assert heard.of("export_available") == [False, True] and heard.of("request_done") == [True]
    assert heard.of("playback_finished") == [None] and not panel._play_timer.isActive()
    assert panel.revoice_button.text() == "R&e-voice" and not panel.converted_button.isChecked()
    assert window.export_action.isEnabled() and window.rtf_label.text() == heard.of("timing_status")[0]


def test_speak_and_re_voice_say_stopped_and_offer_what_arrived(qtbot, window, speech):
    speak, panel = window.speak_panel, window.revoice_panel
    heard = Heard(speak)
    speak.stop()  # nothing ran: nothing to export
    assert heard.of("playback_status") == ["stopped"] and heard.of("export_available") == []
    speak.text.set_text("Hello there, this is a test. " * 8)
    speak.speak()
    qtbot.waitUntil(lambda: speak.controller.chunks != [], timeout=30000)
    speak.stop()
    assert heard.of("playback_status")[-1] == "stopped" and heard.of("export_available") == [True]
    assert speak.speak_button.text() == "Spea&k" and speak.export_button.isEnabled()
    assert heard.of("request_done") == []

    window.modes.setCurrentWidget(panel)
    load(qtbot, panel, speech)
    heard = Heard(panel)
    panel.stop()  # nothing ran
    assert heard.of("playback_status") == ["stopped"] and heard.of("export_available") == []
    qtbot.waitUntil(lambda: not window.bridge.busy, timeout=30000)


def test_a_failed_request_says_failed_in_both_tabs(qtbot, window, speech, monkeypatch):
    speak = window.speak_panel
    heard = Heard(speak)
    speak.text.set_text("?!... --- !!! …")  # nothing to say: the worker fails it
    with qtbot.waitSignal(speak.request_done, timeout=60000):
        speak.speak()
    assert heard.of("request_done") == [False] and heard.of("playback_status")[:2] == ["generating…", "failed"]
    assert "nothing to say" in window.message.text() and speak.speak_button.text() == "Spea&k"
    assert heard.of("export_available") == [] and heard.of("timing_status") == []

    panel = window.revoice_panel
    window.modes.setCurrentWidget(panel)
    load(qtbot, panel, speech)
    worker = window.bridge.worker
    convert = worker.convert
    missing = speech.parent / "gone.wav"  # as if the recording went away: the worker fails to read it
    monkeypatch.setattr(
        worker, "convert", lambda request, runtime=None: convert(replace(request, source=missing), runtime)
    )
    heard = Heard(panel)
    with qtbot.waitSignal(panel.request_done, timeout=60000):
        panel.revoice()
    assert heard.of("request_done") == [False] and "failed" in heard.of("playback_status")
    assert heard.of("export_available") == [False] and heard.of("timing_status") == []
    assert panel.revoice_button.text() == "R&e-voice" and window.message.isVisible()


def test_space_pauses_and_resumes_with_the_same_words_in_both_tabs(qtbot, window, speech):
    speak, panel = window.speak_panel, window.revoice_panel
    assert speak.toggle_playback() == "nothing"
    assert window.statusBar().currentMessage() == "Nothing to play yet: speak some text first."
    speak.text.set_text("Hello there, this is a test.")
    with qtbot.waitSignal(speak.playback_finished, timeout=60000):
        speak.speak()
    window.player.sd.speed = 1.0  # real time: it still plays while it is paused
    heard = Heard(speak)
    assert speak.toggle_playback() == "played" and window.player.playing  # the last result again
    assert speak.toggle_playback() == "paused" and window.player.paused
    assert speak.toggle_playback() == "resumed" and not window.player.paused
    assert heard.of("playback_status")[-2:] == ["paused — Space resumes", "playing"]
    speak.stop()

    window.modes.setCurrentWidget(panel)
    load(qtbot, panel, speech)
    assert panel.play("converted") == "nothing"
    assert window.statusBar().currentMessage() == "Nothing to play yet: re-voice the recording first."
    heard = Heard(panel)
    assert panel.toggle_playback() == "played" and panel.original_button.isChecked()  # the original, nothing else
    assert panel.toggle_playback() == "paused" and window.player.paused
    assert panel.toggle_playback() == "resumed" and not window.player.paused
    assert heard.of("playback_status")[-2:] == ["paused — Space resumes", "playing"]
    assert panel.play("original") == "stopped" and heard.of("playback_status")[-1] == "stopped"


def test_audio_that_cannot_be_played_is_said_once_per_request(qtbot, window, speech, monkeypatch):
    shown = counted_messages(monkeypatch, window)
    monkeypatch.setattr(window.player, "feed", lambda samples: False)
    speak, panel = window.speak_panel, window.revoice_panel
    speak.text.set_text("Hello there, this is a test. And a second sentence.")
    with qtbot.waitSignal(speak.request_done, timeout=60000):
        speak.speak()
    assert shown.count((CANNOT_PLAY, False)) == 1
    speak.toggle_playback()  # the last result again: it says nothing more
    assert shown.count((CANNOT_PLAY, False)) == 1
    speak.play_reference(load_voice(speech))  # the reference says it
    assert shown.count((CANNOT_PLAY, False)) == 2
    speak.stop()

    window.modes.setCurrentWidget(panel)
    load(qtbot, panel, speech)
    with qtbot.waitSignal(panel.request_done, timeout=60000):
        panel.revoice()
    assert shown.count((CANNOT_PLAY, False)) == 3
    assert panel.play("original") == "played"  # A and B say it each time
    assert shown.count((CANNOT_PLAY, False)) == 4


def test_a_lost_output_is_said_by_the_tab_that_plays(qtbot, window, speech, monkeypatch):
    shown = counted_messages(monkeypatch, window)
    speak, panel = window.speak_panel, window.revoice_panel
    lost = iter(["The audio output was lost."])
    monkeypatch.setattr(window.player, "check", lambda: next(lost, None))
    speak.text.set_text("Hello there.")
    with qtbot.waitSignal(speak.playback_finished, timeout=60000):
        speak.speak()
    assert ("The audio output was lost.", False) in shown

    lost = iter(["The audio output was lost again."])
    window.modes.setCurrentWidget(panel)
    load(qtbot, panel, speech)
    with qtbot.waitSignal(panel.playback_finished, timeout=60000):
        panel.revoice()
    assert ("The audio output was lost again.", False) in shown


def test_the_model_turns_the_action_buttons_off_and_on(window):
    speak, panel = window.speak_panel, window.revoice_panel
    for tab, button in ((speak, speak.speak_button), (panel, panel.revoice_button)):
        tab.model_loading()
        assert not button.isEnabled()
        tab.model_failed()  # the model loaded before stays
        assert button.isEnabled()
        tab.model_loading()
        tab.model_loaded(window.bridge.model.capabilities)
        assert button.isEnabled()


def test_export_offers_each_tabs_own_result_under_its_own_name(qtbot, window, speech, monkeypatch):
    exported: list[tuple[int, str]] = []
    monkeypatch.setattr(
        window.exporter, "export", lambda audio, default_name: exported.append((audio.size, default_name)) or True
    )
    speak, panel = window.speak_panel, window.revoice_panel
    speak.export_last()  # nothing yet: nothing asked
    assert exported == []
    speak.text.set_text("Hello there.")
    with qtbot.waitSignal(speak.request_done, timeout=60000):
        speak.speak()
    speak.export_last()
    assert exported == [(speak.last_audio.size, exported[0][1])] and exported[0][1].startswith("Hello")

    window.modes.setCurrentWidget(panel)
    assert not panel.export_button.isEnabled()  # nothing re-voiced yet: the button says so, as Speak's does
    load(qtbot, panel, speech)
    assert panel.export_converted() is False and len(exported) == 1 and not panel.export_button.isEnabled()
    with qtbot.waitSignal(panel.request_done, timeout=60000):
        panel.revoice()
    assert panel.export_button.isEnabled() and panel.export_converted() is True
    assert exported[1] == (3 * SAMPLE_RATE, "talk-as-Default-voice.wav")
    assert np.isclose(panel.converted.size / SAMPLE_RATE, 3.0)
