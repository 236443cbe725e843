"""A clocked stand-in for ``sounddevice`` with no hardware behind it.

Its ``OutputStream`` calls the callback from its own thread at the pace of the sample rate (times ``speed``), like
a sound card would, so the real playback path (ring buffer, callback, underrun counting, end of playback) runs on
machines without audio: tests and the self-test in CI.
"""

from __future__ import annotations

import threading
import time

import numpy as np


class VirtualSoundDevice:
    def __init__(self, speed: float = 1.0):
        self.speed = speed
        self.streams: list[VirtualOutputStream] = []
        self.played = 0
        self.unplugged = False

    def OutputStream(self, **kwargs):
        if self.unplugged:
            raise OSError("Error querying device -1 (no default output device)")
        stream = VirtualOutputStream(self, **kwargs)
        self.streams.append(stream)
        return stream


class VirtualOutputStream:
    def __init__(
        self,
        owner: VirtualSoundDevice,
        samplerate,
        channels,
        dtype,
        blocksize,
        callback,
        finished_callback=None,
        **_ignored,
    ):
        self.owner = owner
        self.samplerate, self.channels, self.blocksize, self.callback = samplerate, channels, blocksize, callback
        self.finished_callback = finished_callback
        self._failed = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.active = False

    def start(self) -> None:
        self.active = True
        self._thread = threading.Thread(target=self._run, name="virtual-audio", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        out = np.zeros((self.blocksize, self.channels), dtype=np.float32)
        period = self.blocksize / self.samplerate / self.owner.speed
        next_at = time.perf_counter()
        while not self._stop.is_set():
            self.callback(out, self.blocksize, None, None)
            self.owner.played += self.blocksize
            next_at += period
            delay = next_at - time.perf_counter()
            if delay > 0:
                self._stop.wait(delay)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(1.0)
        was_active, self.active = self.active, False
        if self._failed:
            raise OSError("Error closing stream: device unavailable [PaErrorCode -9996]")
        if was_active and self.finished_callback is not None:
            self.finished_callback()

    def unplug(self, notify: bool = True) -> None:
        """Simulate the device vanishing: the callback stops; PortAudio may or may not report it."""
        self.owner.unplugged = True
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        self._failed = True
        if notify:
            self.active = False
            if self.finished_callback is not None:
                self.finished_callback()

    abort = stop

    def close(self) -> None:
        self.stop()
