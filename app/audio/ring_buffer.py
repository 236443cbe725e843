"""A single-producer, single-consumer float32 ring buffer for the audio callback.

The producer (GUI thread) may grow it; the consumer (PortAudio callback) only copies out under a short lock and
never allocates, logs or signals.
"""

from __future__ import annotations

import threading

import numpy as np

from core.engine import SAMPLE_RATE


class RingBuffer:
    def __init__(self, capacity: int = SAMPLE_RATE * 30):
        self._buf = np.zeros(capacity, dtype=np.float32)
        self._read = 0
        self._size = 0
        self._lock = threading.Lock()

    @property
    def available(self) -> int:
        return self._size

    def write(self, samples: np.ndarray) -> None:
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        with self._lock:
            if self._size + samples.size > self._buf.size:
                self._grow(self._size + samples.size)
            cap = self._buf.size
            start = (self._read + self._size) % cap
            first = min(samples.size, cap - start)
            self._buf[start : start + first] = samples[:first]
            self._buf[: samples.size - first] = samples[first:]
            self._size += samples.size

    def _grow(self, needed: int) -> None:
        cap = self._buf.size
        bigger = np.zeros(max(needed, 2 * cap), dtype=np.float32)
        first = min(self._size, cap - self._read)
        bigger[:first] = self._buf[self._read : self._read + first]
        bigger[first : self._size] = self._buf[: self._size - first]
        self._buf, self._read = bigger, 0

    def read_into(self, out: np.ndarray) -> int:
        """Copy up to ``len(out)`` samples into ``out``; returns how many were copied."""
        with self._lock:
            n = min(out.size, self._size)
            cap = self._buf.size
            first = min(n, cap - self._read)
            out[:first] = self._buf[self._read : self._read + first]
            out[first:n] = self._buf[: n - first]
            self._read = (self._read + n) % cap
            self._size -= n
            return n

    def clear(self) -> None:
        with self._lock:
            self._read = 0
            self._size = 0
