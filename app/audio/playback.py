"""Live playback through sounddevice: chunks go into a ring buffer, the output stream's callback plays them.

Playback starts with the first chunk (or, for "play smoothly", not before the planned start: :meth:`Player.hold_until`),
Stop silences at once, :attr:`Player.paused` holds it (the device gets
silence, the queued audio waits), underruns are counted. The ``sounddevice`` module is
injectable (tests pass a fake), and a machine without an audio device only loses playback: :attr:`Player.error`
says why, and everything else keeps working. A device that disappears or errors during playback is noticed
(:meth:`Player.check`): the stream is dropped for the rest of the request, synthesis goes on, and the next request
tries the (possibly new) default device again.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from core.engine import SAMPLE_RATE, ChatterboxError
from core.wording import describe_error

from .device_errors import device_error, portaudio_missing
from .ring_buffer import RingBuffer

log = logging.getLogger(__name__)


def load_sounddevice():
    """Import sounddevice, or return ``(None, sentence)`` when PortAudio is missing."""
    try:
        import sounddevice

        return sounddevice, None
    except OSError as exc:  # the PortAudio library could not be loaded
        return None, describe_error(portaudio_missing(exc))


class Player:
    STALL_SECONDS = 2.0
    """Queued audio that the device has not taken for this long means the device is gone."""

    def __init__(self, sd=None, sample_rate: int = SAMPLE_RATE, blocksize: int = 1024, device=None):
        self.error: str | None = None
        self.lost = False
        """The device failed during this request: no more playback until the next :meth:`begin`."""
        if sd is None:
            sd, self.error = load_sounddevice()
        self.sd = sd
        self.sample_rate, self.blocksize, self.device = sample_rate, blocksize, device
        self.ring = RingBuffer()
        self.stream = None
        self.underruns = 0
        self.played = 0
        self.queued = 0
        self._input_done = False
        self._started_playing = False
        self._stopping = False
        self._stream_ended = False
        self._progress = (0, time.monotonic())
        self.paused = False
        """Playback is held: the callback plays silence and leaves the queued audio where it is."""
        self.hold = 0.0
        """``time.monotonic()`` before which the request's first audio is not played (a smooth start)."""

    # --- GUI thread --------------------------------------------------------------------------------------------
    def begin(self) -> None:
        """A new request: forget the previous one's audio and counters."""
        self.stop()
        self.underruns = self.played = self.queued = 0
        self._input_done = False
        self._started_playing = False
        self.paused = False
        self.hold = 0.0
        if self.lost:
            self.lost, self.error = False, None

    def feed(self, samples: np.ndarray) -> bool:
        """Queue samples; opens and starts the stream on the first call. ``False`` if playback is unavailable."""
        if samples.size == 0:
            return self.stream is not None
        if self.lost:
            return False
        self.ring.write(samples)
        self.queued += samples.size
        if self.stream is None and not self._open():
            self.ring.clear()
            return False
        return True

    def hold_until(self, when: float) -> None:
        """Do not start playing before ``when`` (``time.monotonic()``); the latest plan wins (a forecast made again
        may move it either way, and a finished request releases it), never once playback has started."""
        if not self._started_playing:
            self.hold = when
            self._progress = (self.played, time.monotonic())  # waiting on purpose is not a stalled device

    @property
    def holding_s(self) -> float:
        """Seconds until a held start (0 when not held)."""
        return 0.0 if self._started_playing else max(0.0, self.hold - time.monotonic())

    def end_of_input(self) -> None:
        self._input_done = True

    @property
    def playing(self) -> bool:
        """The stream is open and audio of the current request is still to be played (or held by a pause)."""
        return self.stream is not None and not self.finished

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        self._progress = (self.played, time.monotonic())  # a pause is not a stalled device

    def toggle_pause(self) -> bool:
        """Pause or resume; returns whether playback is now paused."""
        self.set_paused(not self.paused)
        return self.paused

    @property
    def finished(self) -> bool:
        """All queued audio has been played (or there is nothing to play)."""
        return self._input_done and self.ring.available == 0

    def stop(self) -> None:
        """Silence now: drop queued audio and abort the stream (no fade, no drain)."""
        self.ring.clear()
        self.paused = False
        stream, self.stream = self.stream, None
        if stream is not None:
            self._stopping = True
            try:
                stream.abort()
                stream.close()
            except Exception as exc:  # noqa: BLE001 - a device that vanished must not break Stop
                log.warning("closing the audio stream failed: %s", exc)
            finally:
                self._stopping = False

    def check(self) -> str | None:
        """Called on a GUI timer: if the device stopped or stalled, drop the stream and return why (once)."""
        stream = self.stream
        if stream is None:
            return None
        now = time.monotonic()
        if self.played != self._progress[0] or self.ring.available == 0 or self.paused or self.holding_s > 0:
            self._progress = (self.played, now)
        # A device may take a moment to start (Bluetooth): allow it three times longer before its first block.
        limit = self.STALL_SECONDS if self._started_playing else 3 * self.STALL_SECONDS
        stalled = now - self._progress[1] > limit
        if not (self._stream_ended or not getattr(stream, "active", True) or stalled):
            return None
        self.stop()
        self.lost = True
        self.error = describe_error(ChatterboxError("sound.output_lost"))
        log.warning("%s", self.error)
        return self.error

    def _open(self) -> bool:
        if self.sd is None:
            return False
        try:
            stream = self.sd.OutputStream(
                samplerate=self.sample_rate,
                channels=1,
                dtype="float32",
                blocksize=self.blocksize,
                device=self.device,
                callback=self._callback,
                finished_callback=self._finished,
            )
            self._stream_ended = False
            self._progress = (self.played, time.monotonic())
            stream.start()
        except Exception as exc:  # noqa: BLE001 - PortAudio raises its own error types for every device problem
            self.error = describe_error(device_error(exc, "output"))
            log.warning("cannot open the sound output: %s", exc)
            return False
        self.error = None
        self.stream = stream
        return True

    # --- PortAudio thread: no allocation, no logging, no signals ----------------------------------------------
    def _finished(self) -> None:
        """The stream became inactive: expected after Stop, a device failure otherwise."""
        if not self._stopping:
            self._stream_ended = True

    def _callback(self, outdata, frames, time_info, status) -> None:
        out = outdata[:, 0]
        if self.paused or (not self._started_playing and self.hold and time.monotonic() < self.hold):
            out[:] = 0.0
            return
        n = self.ring.read_into(out)
        if n < frames:
            out[n:] = 0.0
            if not self._input_done and self._started_playing:
                self.underruns += 1
        if n:
            self._started_playing = True
        self.played += n
