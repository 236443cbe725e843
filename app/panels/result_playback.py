"""What the Speak and the Re-voice tabs share about the audio they make and play.

Both start a request on the engine bridge, stream its audio to the player, the waveform and the latency plots, and
tell the window how it goes through the same five signals (playback and speed words for the status bar, Export
available, a request done, playback finished). :class:`ResultPlayback` is that common part: the signals, the
player's tick timer, the action button that says work runs (and the model's load turning it off and on), one
"cannot be played" note per request, pause / resume, the words of a failed request and Export. Each tab keeps what
is its own: what it starts, what it plays, and the words of its tick.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QPushButton, QWidget

from core.engine import Capabilities, RuntimeOptions
from core.wording import describe_notice

from ..audio.playback import Player
from ..audio_export import AudioExport
from ..engine_bridge import EngineBridge
from ..messages import Messages
from ..settings import Key, Settings
from ..settings_summary import describe_settings
from ..widgets.latency_plot import LatencyPlot
from ..widgets.waveform_plot import WaveformPlot

CANNOT_PLAY = "Audio cannot be played on this computer."


class ResultPlayback(QWidget):
    """A tab that makes audio and plays it as it arrives. A subclass builds :attr:`action_button`,
    :attr:`export_button`, :attr:`waveform` and :attr:`latency`, and says what a tick of the player shows
    (:meth:`_on_play_tick`)."""

    playback_status = Signal(str)
    """What playback does now, for the status bar ("generating… · played 1.2 s", "stopped", …)."""
    timing_status = Signal(str)
    """The last request's speed for the status bar ("RTF 0.40 · first audio 0.31 s")."""
    export_available = Signal(bool)
    """There is a result to export (the window enables File → Export last result)."""
    request_done = Signal(bool)
    """A request ended: True when it produced its audio, False when it failed."""
    playback_finished = Signal()
    """What was played has been played to the end (or could not be played)."""

    ACTION_TEXT: tuple[str, str] = ("", "")
    """The action button's text when idle and while the tab works."""
    ACTION_TIP: tuple[str, str] = ("", "")
    """Its tooltip when idle and while the tab works."""

    export_button: QPushButton
    waveform: WaveformPlot
    latency: LatencyPlot

    def __init__(
        self,
        bridge: EngineBridge,
        player: Player,
        settings: Settings,
        messages: Messages,
        exporter: AudioExport,
        runtime: Callable[[], RuntimeOptions],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.bridge, self.player, self.settings = bridge, player, settings
        self.messages, self.exporter, self.runtime = messages, exporter, runtime
        self._play_timer = QTimer(self)
        self._play_timer.setInterval(50)
        self._play_timer.timeout.connect(self._on_play_tick)
        self._note_shown = False
        """The running request's "cannot be played" note was said (once per request)."""

    @property
    def action_button(self) -> QPushButton:
        """Speak, Re-voice: the button that starts the tab's request."""
        raise NotImplementedError

    def _on_play_tick(self) -> None:
        raise NotImplementedError

    # --- the model ---------------------------------------------------------------------------------------------
    def model_loading(self) -> None:
        self.action_button.setEnabled(False)

    def model_loaded(self, _caps: Capabilities) -> None:
        self.action_button.setEnabled(True)

    def model_failed(self) -> None:
        self.action_button.setEnabled(self.bridge.model is not None)  # the model loaded before stays

    # --- a request ---------------------------------------------------------------------------------------------
    def _begin_request(self, words: str) -> None:
        """A request starts: the player, the waveform and the latency plot start over; the status bar says
        ``words`` and the action button that work runs."""
        self.player.begin()
        self._note_shown = False
        self.waveform.clear_audio()
        self.latency.start_request(describe_settings({k.value: self.settings.get(k) for k in Key}))
        self.playback_status.emit(words)
        self._show_busy(True)

    def _feed_live(self, samples: np.ndarray) -> None:
        """A chunk of the running request to the player; audio that cannot be played is said once a request."""
        if not self.player.feed(samples) and samples.size and not self._note_shown:
            self._note_shown = True
            self.messages.show(self.player.error or CANNOT_PLAY, error=False)

    def _say_notices(self, warnings: Iterable[Any]) -> None:
        for warning in warnings:
            self.messages.show(describe_notice(warning) or "", error=False)

    def _request_ended(self, ok: bool) -> None:
        self._show_busy(False)
        self.request_done.emit(ok)

    def _request_failed(self, message: str) -> None:
        self.messages.show(message)
        self.playback_status.emit("failed")
        self._request_ended(False)

    def _show_busy(self, busy: bool) -> None:
        """The action button says that work runs; the status line keeps "stopped" / "failed" until the next one."""
        self.action_button.setText(self.ACTION_TEXT[busy])
        self.action_button.setToolTip(self.ACTION_TIP[busy])

    def _set_export_available(self, available: bool) -> None:
        self.export_button.setEnabled(available)
        self.export_available.emit(available)

    def _export(self, audio: np.ndarray | None, default_name: str) -> bool:
        if audio is None or not audio.size:
            return False
        return self.exporter.export(audio, default_name=default_name)

    # --- playing -----------------------------------------------------------------------------------------------
    def _play_all(self, audio: np.ndarray) -> None:
        """Play ``audio`` from the start (saying so when it cannot be played)."""
        self.player.begin()
        if not self.player.feed(audio):
            self.messages.show(self.player.error or CANNOT_PLAY, error=False)
        self.player.end_of_input()

    def _pause_or_resume(self) -> str:
        paused = self.player.toggle_pause()
        self.playback_status.emit("paused — Space resumes" if paused else "playing")
        return "paused" if paused else "resumed"

    def _check_output(self) -> None:
        """A tick: an output device lost is said."""
        lost = self.player.check()
        if lost:
            self.messages.show(lost, error=False)

    def _no_output(self) -> bool:
        return bool(self.player.error) and self.player.stream is None

    def _starved(self) -> bool:
        """The device has played everything it was given (the request is behind playback)."""
        p = self.player
        return p.stream is not None and bool(p.played) and p.ring.available == 0

    def _played_out(self) -> bool:
        return self.player.finished or self.player.stream is None

    def stop_playback_timer(self) -> None:
        self._play_timer.stop()
