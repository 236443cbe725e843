"""Until ``core.engine.StreamEncoder`` lands on main: the same interface, minimal (removed after the merge)."""
# mypy: ignore-errors

from __future__ import annotations

import struct

import av
import numpy as np

_CONTAINERS = {
    "mp3": ("mp3", "libmp3lame"),
    "aac": ("adts", "aac"),
    "opus": ("ogg", "libopus"),
    "flac": ("flac", "flac"),
}
_TYPES = {"mp3": "audio/mpeg", "aac": "audio/aac", "opus": "audio/ogg", "flac": "audio/flac", "wav": "audio/wav"}


class _Sink:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, b) -> int:
        self.data += bytes(b)
        return len(b)

    def take(self) -> bytes:
        out, self.data = bytes(self.data), bytearray()
        return out


class StreamEncoder:
    def __init__(self, fmt: str, sample_rate: int | None = None, bitrate: int | None = None):
        self.fmt, self.rate = fmt, sample_rate or 24000
        self.content_type = _TYPES.get(fmt, "audio/pcm")
        self._header = fmt == "wav"
        if fmt in _CONTAINERS:
            container, codec = _CONTAINERS[fmt]
            self._sink = _Sink()
            self._out = av.open(self._sink, "w", format=container)
            self._stream = self._out.add_stream(codec, rate=self.rate, layout="mono")
            self._pts = 0

    def encode(self, audio: np.ndarray) -> bytes:
        samples = np.asarray(audio, np.float32).reshape(-1)
        if self.fmt in ("wav", "pcm"):
            pcm = np.round(np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes()
            if self._header:
                self._header = False
                fmt = struct.pack("<HHIIHH", 1, 1, self.rate, self.rate * 2, 2, 16)
                head = b"RIFF\xff\xff\xff\xffWAVEfmt " + struct.pack("<I", 16) + fmt + b"data\xff\xff\xff\xff"
                return head + pcm
            return pcm
        if samples.size:
            frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="flt", layout="mono")
            frame.sample_rate, frame.pts = self.rate, self._pts
            self._pts += samples.size
            for packet in self._stream.encode(frame):
                self._out.mux(packet)
        return self._sink.take()

    def finish(self) -> bytes:
        if self.fmt in ("wav", "pcm"):
            return self.encode(np.zeros(0, np.float32)) if self._header else b""
        for packet in self._stream.encode(None):
            self._out.mux(packet)
        self._out.close()
        return self._sink.take()
