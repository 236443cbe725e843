"""Recording a reference from the microphone through sounddevice (injectable, like the player's output)."""

from __future__ import annotations

import logging
import threading

import numpy as np

from core.engine import SAMPLE_RATE
from core.wording import describe_error

from .device_errors import device_error
from .playback import load_sounddevice

log = logging.getLogger(__name__)


class Recorder:
    """``start()`` opens the default input at 24 kHz mono; the PortAudio thread appends blocks; ``stop()`` closes."""

    def __init__(self, sd=None, sample_rate: int = SAMPLE_RATE, max_seconds: float = 10.0, device=None):
        self.error: str | None = None
        if sd is None:
            sd, self.error = load_sounddevice()
        self.sd, self.sample_rate, self.max_seconds, self.device = sd, sample_rate, max_seconds, device
        self.stream = None
        self._blocks: list[np.ndarray] = []
        self._frames = 0
        self._level = 0.0
        self._lock = threading.Lock()

    def start(self) -> bool:
        """Open the microphone; ``False`` (with :attr:`error`) when there is none or it cannot be opened."""
        self.stop()
        with self._lock:
            self._blocks, self._frames, self._level = [], 0, 0.0
        if self.sd is None:
            self.error = self.error or "No audio input is available on this computer."
            return False
        try:
            stream = self.sd.InputStream(
                samplerate=self.sample_rate, channels=1, dtype="float32", device=self.device, callback=self._callback
            )
            stream.start()
        except Exception as exc:  # noqa: BLE001 - PortAudio raises its own error types for every device problem
            self.error = describe_error(device_error(exc, "input"))
            log.warning("cannot open the microphone: %s", exc)
            return False
        self.stream, self.error = stream, None
        return True

    def stop(self) -> None:
        stream, self.stream = self.stream, None
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except Exception as exc:  # noqa: BLE001 - a vanished device must not break Stop
                log.warning("closing the input stream failed: %s", exc)

    @property
    def seconds(self) -> float:
        return self._frames / self.sample_rate

    @property
    def level(self) -> float:
        """RMS of the latest block, 0…1."""
        return self._level

    @property
    def full(self) -> bool:
        return self.seconds >= self.max_seconds

    def samples(self) -> np.ndarray:
        with self._lock:
            audio = np.concatenate(self._blocks) if self._blocks else np.zeros(0, np.float32)
        return audio[: int(self.max_seconds * self.sample_rate)]

    # PortAudio thread
    def _callback(self, indata, frames, time_info, status) -> None:
        block = np.array(indata[:, 0], dtype=np.float32)
        with self._lock:
            if self._frames < self.max_seconds * self.sample_rate:
                self._blocks.append(block)
                self._frames += frames
        self._level = float(np.sqrt(np.mean(block * block))) if frames else 0.0
