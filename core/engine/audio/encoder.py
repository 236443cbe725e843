"""Encoding audio as it is produced, to a file or to bytes: FFmpeg's encoders through PyAV, libsndfile for PCM.

Two front doors over one :class:`_Encoder`:

- :class:`AudioEncoder` writes a file block by block under a hidden temporary name in the destination folder and
  renames it into place on :meth:`AudioEncoder.close`; :meth:`AudioEncoder.abort` (or an exception inside a ``with``
  block) removes it, so a cancel, a crash or a full disk never leaves a half file under the final name.
- :class:`StreamEncoder` returns the encoded bytes as they become ready (the API's streamed responses): MP3, AAC
  (ADTS, as OpenAI sends it), Opus (Ogg), FLAC, WAV (header with unknown length) and raw 16-bit PCM.

Input is always float32 mono at the model's 24 kHz; a different output rate is resampled with ``soxr`` (streaming,
high quality). MP3 is LAME, CBR at a bitrate or VBR at a quality; AAC is FFmpeg's native encoder (LC) in ADTS, MP4 or
M4B (chapters with :meth:`AudioEncoder.set_chapters`, written into the MP4 when it is closed).
"""

from __future__ import annotations

import contextlib
import io
import os
import struct
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import Any, cast

import numpy as np

from core.engine.constants import SAMPLE_RATE
from core.engine.errors import ChatterboxError
from core.engine.files.atomic import FILE_MODE, PARTIAL


class EncodeError(ChatterboxError):
    """The audio could not be encoded or written (unknown format, bad setting, disk full, folder gone...)."""


@dataclass(frozen=True)
class Encoding:
    """One output format: how FFmpeg (or libsndfile) writes it and what it allows."""

    name: str
    container: str
    """FFmpeg's muxer name (``""``: written by libsndfile or by hand)."""
    codec: str
    content_type: str
    default_bitrate: int | None
    """Bits per second for lossy codecs (``None``: lossless)."""
    rates: tuple[int, ...]
    """The sample rates the codec accepts (empty: any)."""


_AAC_RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)
_MP3_RATES = (8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000)
_OPUS_RATES = (8000, 12000, 16000, 24000, 48000)

ENCODINGS: dict[str, Encoding] = {
    "mp3": Encoding("MP3", "mp3", "libmp3lame", "audio/mpeg", 128_000, _MP3_RATES),
    "aac": Encoding("AAC", "adts", "aac", "audio/aac", 96_000, _AAC_RATES),
    "m4a": Encoding("AAC in MP4", "ipod", "aac", "audio/mp4", 96_000, _AAC_RATES),
    "m4b": Encoding("Audiobook (M4B)", "ipod", "aac", "audio/mp4", 96_000, _AAC_RATES),
    "opus": Encoding("Opus", "opus", "libopus", "audio/ogg", 48_000, _OPUS_RATES),
    "flac": Encoding("FLAC", "flac", "flac", "audio/flac", None, ()),
    "wav": Encoding("WAV", "", "pcm_s16le", "audio/wav", None, ()),
    "pcm": Encoding("PCM", "", "pcm_s16le", "audio/pcm", None, ()),
}
"""Format name (also the file suffix without its dot) → how it is encoded."""

FILE_SUFFIXES = tuple(f".{name}" for name in ENCODINGS if name not in ("pcm", "aac"))
STREAM_FORMATS = tuple(name for name in ENCODINGS if name not in ("m4a", "m4b"))
"""MP4 needs a seekable file (its index is written last): streamed AAC is ADTS."""

_MP3_VBR_QUALITY = 2
"""LAME ``-V2`` (about 170–210 kb/s for stereo music, less for mono speech): the usual transparent VBR setting."""


@dataclass(frozen=True)
class EncodeSettings:
    sample_rate: int | None = None
    """Output rate in Hz (``None``: the model's 24 kHz)."""
    bitrate: int | None = None
    """Bits per second for lossy formats (``None``: the format's default)."""
    vbr: bool = False
    """MP3 only: variable bitrate at LAME quality V2 instead of a constant ``bitrate``."""


@dataclass(frozen=True)
class Chapter:
    title: str
    start: float
    end: float


def encoding_for(name_or_path: str | Path) -> Encoding:
    """The encoding a format name (``"mp3"``) or a file name (``book.m4b``) asks for."""
    text = str(name_or_path)
    key = Path(text).suffix.lower().lstrip(".") if "." in Path(text).name else text.lower()
    if key not in ENCODINGS:
        raise EncodeError("encode.unknown_format", name=Path(text).name, formats=list(ENCODINGS))
    return ENCODINGS[key]


def parse_bitrate(value: str | int | None) -> int | None:
    """``"128k"``, ``"192000"`` or ``128`` (kb/s) → bits per second; ``None``/``""`` → ``None``."""
    if value is None or value == "":
        return None
    text = str(value).strip().lower().removesuffix("bps").removesuffix("b")
    try:
        number = float(text[:-1]) * 1000 if text.endswith("k") else float(text)
    except ValueError:
        raise EncodeError("encode.bad_bitrate", value=str(value)) from None
    bits = round(number * 1000 if number < 1000 else number)
    if not 8_000 <= bits <= 512_000:
        raise EncodeError("encode.bad_bitrate", value=str(value))
    return bits


def check_settings(encoding: Encoding, settings: EncodeSettings) -> None:
    """Refuse a rate or bitrate the codec cannot write, before any work."""
    rate = settings.sample_rate or SAMPLE_RATE
    if encoding.rates and rate not in encoding.rates:
        raise EncodeError("encode.bad_rate", format=encoding.name, rate=rate, rates=list(encoding.rates))
    if not encoding.rates and not 8000 <= rate <= 192_000:
        raise EncodeError("encode.bad_rate", format=encoding.name, rate=rate, rates=[])


_STREAM_OPTIONS = {"opus": {"page_duration": "100000", "flush_packets": "1"}}
"""Streamed Ogg: a page every 100 ms, flushed at once (FFmpeg's Ogg muxer otherwise holds back about the first
second of pages, and a client waits for its first bytes)."""


class _Sink(io.RawIOBase):
    """A non-seekable byte sink PyAV writes into; :meth:`take` hands over what arrived."""

    def __init__(self) -> None:
        super().__init__()
        self._parts: list[bytes] = []

    def writable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def write(self, data: Any) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def take(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


class _Encoder:
    """Float32 mono blocks at 24 kHz in, the encoded format out to ``target`` (a path or a :class:`_Sink`)."""

    def __init__(self, target: str | _Sink, encoding: Encoding, settings: EncodeSettings, metadata: dict[str, str]):
        import av
        import soxr

        check_settings(encoding, settings)
        self.encoding = encoding
        self.rate = settings.sample_rate or SAMPLE_RATE
        self._resampler = (
            soxr.ResampleStream(SAMPLE_RATE, self.rate, 1, dtype="float32", quality="HQ")
            if self.rate != SAMPLE_RATE
            else None
        )
        self._pts = 0
        self._closed = False
        try:
            options = _STREAM_OPTIONS.get(encoding.container, {}) if isinstance(target, _Sink) else {}
            self._container: Any = av.open(target, "w", format=encoding.container, options=options)
            for key, value in metadata.items():
                if value:
                    self._container.metadata[key] = str(value)
            self._stream: Any = cast(Any, self._container.add_stream(encoding.codec, rate=self.rate, layout="mono"))
            if encoding.codec == "aac":  # the default "twoloop" coder encodes speech at ~25x real time, "fast" ~400x
                self._stream.codec_context.options = {"aac_coder": "fast"}
            if encoding.default_bitrate is not None:
                if settings.vbr and encoding.codec == "libmp3lame":
                    self._stream.codec_context.qscale = True
                    self._stream.codec_context.global_quality = _MP3_VBR_QUALITY * 118  # FF_QP2LAMBDA
                else:
                    self._stream.bit_rate = settings.bitrate or encoding.default_bitrate
        except (OSError, av.FFmpegError, ValueError) as exc:
            raise EncodeError("encode.failed", format=encoding.name, reason=str(exc)) from exc

    def write(self, audio: np.ndarray) -> None:
        block = np.ascontiguousarray(np.asarray(audio, dtype=np.float32).reshape(-1))
        if self._resampler is not None:
            block = self._resampler.resample_chunk(block, last=False)
        self._encode(block)

    def set_chapters(self, chapters: Sequence[Chapter]) -> None:
        """MP4/M4B chapters (written with the index when the file is closed); other containers ignore them here."""
        if self.encoding.container != "ipod":
            return
        self._container.set_chapters(
            [
                {
                    "id": index,
                    "start": round(c.start * 1000),
                    "end": round(c.end * 1000),
                    "time_base": Fraction(1, 1000),
                    "metadata": {"title": c.title},
                }
                for index, c in enumerate(chapters, 1)
            ]
        )

    def close(self) -> None:
        if self._closed:
            return
        if self._resampler is not None:
            self._encode(self._resampler.resample_chunk(np.zeros(0, np.float32), last=True))
        self._mux(None)
        self._closed = True
        self._container.close()

    def abandon(self) -> None:
        if not self._closed:
            self._closed = True
            with contextlib.suppress(Exception):  # the file is being thrown away
                self._container.close()

    def _encode(self, block: np.ndarray) -> None:
        import av

        if block.size == 0:
            return
        frame = av.AudioFrame.from_ndarray(block[None, :], format="flt", layout="mono")
        frame.sample_rate = self.rate
        frame.pts = self._pts
        self._pts += block.size
        self._mux(frame)

    def _mux(self, frame: Any) -> None:
        import av

        try:
            for packet in self._stream.encode(frame):
                self._container.mux(packet)
        except (OSError, av.FFmpegError) as exc:
            raise EncodeError("encode.failed", format=self.encoding.name, reason=str(exc)) from exc


class _PcmWriter:
    """16-bit PCM (raw, or WAV through libsndfile for files)."""

    def __init__(self, target: str | None, rate: int, metadata: dict[str, str]) -> None:
        import soundfile as sf
        import soxr

        self.rate = rate
        self._resampler = (
            soxr.ResampleStream(SAMPLE_RATE, rate, 1, dtype="float32", quality="HQ") if rate != SAMPLE_RATE else None
        )
        self._file: Any = None
        if target is not None:
            self._file = sf.SoundFile(target, "w", rate, 1, format="WAV", subtype="PCM_16")
            for key in ("title", "artist", "album", "comment", "date"):
                if metadata.get(key):
                    setattr(self._file, key, metadata[key])

    def convert(self, audio: np.ndarray, last: bool = False) -> np.ndarray:
        block = np.asarray(audio, dtype=np.float32).reshape(-1)
        if self._resampler is not None:
            block = self._resampler.resample_chunk(block, last=last)
        return block

    def write(self, audio: np.ndarray) -> None:
        self._file.write(self.convert(audio))

    def close(self) -> None:
        self._file.write(self.convert(np.zeros(0, np.float32), last=True))
        self._file.close()

    def abandon(self) -> None:
        self._file.close()


def pcm16(audio: np.ndarray) -> bytes:
    """Float samples as little-endian signed 16-bit PCM (clipped)."""
    return (np.clip(np.asarray(audio, dtype=np.float32), -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def wav_stream_header(rate: int) -> bytes:
    """A WAV header for a stream of unknown length (sizes 0xFFFFFFFF, as streaming servers send; players accept it)."""
    unknown = 0xFFFFFFFF
    return (
        b"RIFF"
        + struct.pack("<I", unknown)
        + b"WAVEfmt "
        + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
        + b"data"
        + struct.pack("<I", unknown)
    )


class StreamEncoder:
    """Encode as audio arrives; each call returns the bytes that are ready (possibly ``b""``)."""

    def __init__(self, fmt: str, sample_rate: int | None = None, bitrate: int | None = None) -> None:
        if fmt not in STREAM_FORMATS:
            raise EncodeError("encode.unknown_format", name=fmt, formats=list(STREAM_FORMATS))
        self.encoding = ENCODINGS[fmt]
        self.content_type = self.encoding.content_type
        settings = EncodeSettings(sample_rate, bitrate)
        self._pcm: _PcmWriter | None = None
        self._encoder: _Encoder | None = None
        self._pending = b""
        if self.encoding.container:
            self._sink = _Sink()
            self._encoder = _Encoder(self._sink, self.encoding, settings, {})
        else:
            check_settings(self.encoding, settings)
            self._pcm = _PcmWriter(None, settings.sample_rate or SAMPLE_RATE, {})
            self._pending = wav_stream_header(self._pcm.rate) if fmt == "wav" else b""

    def encode(self, audio: np.ndarray) -> bytes:
        if self._pcm is not None:
            out, self._pending = self._pending + pcm16(self._pcm.convert(audio)), b""
            return out
        assert self._encoder is not None
        self._encoder.write(audio)
        return self._sink.take()

    def finish(self) -> bytes:
        if self._pcm is not None:
            out, self._pending = self._pending + pcm16(self._pcm.convert(np.zeros(0, np.float32), last=True)), b""
            return out
        assert self._encoder is not None
        self._encoder.close()
        return self._sink.take()


class AudioEncoder:
    """Write ``path`` block by block; it appears under its name only when :meth:`close` succeeds.

    ``metadata`` are container tags (``title``, ``artist``, ``album``, ``album_artist``, ``composer``, ``date``,
    ``genre``, ``comment``, ``track``): FFmpeg writes them as ID3v2 in MP3, iTunes atoms in MP4/M4B and Vorbis comments
    in Ogg/FLAC. ``finish(temporary_path)`` runs on the complete file before the rename (chapter frames, a cover
    written with ``mutagen``).
    """

    def __init__(
        self,
        path: Path | str,
        settings: EncodeSettings | None = None,
        metadata: dict[str, str] | None = None,
    ) -> None:
        self.path = Path(path)
        self.encoding = encoding_for(self.path)
        if self.encoding.name == "PCM" or self.path.suffix.lower() == ".aac":
            raise EncodeError("encode.unknown_format", name=self.path.name, formats=list(FILE_SUFFIXES))
        settings = settings or EncodeSettings()
        folder = self.path.parent if str(self.path.parent) else Path(".")
        if not folder.is_dir():
            raise EncodeError("encode.folder_missing", path=str(self.path), folder=str(folder))
        check_settings(self.encoding, settings)
        try:
            fd, tmp = tempfile.mkstemp(
                prefix=f".{self.path.stem}.", suffix=f"{PARTIAL}{self.path.suffix}", dir=self.path.parent
            )
            os.close(fd)
            os.chmod(tmp, FILE_MODE)  # the mode a plain open() gives (mkstemp makes 0600)
        except OSError as exc:
            raise EncodeError("encode.write_failed", path=str(self.path), reason=str(exc.strerror or exc)) from exc
        self.temporary = Path(tmp)
        self.samples = 0
        self._done = False
        try:
            self._writer: _Encoder | _PcmWriter = (
                _Encoder(str(self.temporary), self.encoding, settings, dict(metadata or {}))
                if self.encoding.container
                else _PcmWriter(str(self.temporary), settings.sample_rate or SAMPLE_RATE, dict(metadata or {}))
            )
        except BaseException:
            self.temporary.unlink(missing_ok=True)
            raise

    @contextlib.contextmanager
    def _or_abort(self) -> Iterator[None]:
        """Any failure throws the temporary file away; an OS error (disk full, folder gone) is said as one."""
        try:
            yield
        except OSError as exc:
            self.abort()
            raise EncodeError("encode.write_failed", path=str(self.path), reason=str(exc.strerror or exc)) from exc
        except BaseException:
            self.abort()
            raise

    def write(self, audio: np.ndarray) -> None:
        with self._or_abort():
            self._writer.write(audio)
        self.samples += np.asarray(audio).size

    @property
    def seconds(self) -> float:
        """Audio written so far, in seconds."""
        return self.samples / SAMPLE_RATE

    def set_chapters(self, chapters: Sequence[Chapter]) -> None:
        if isinstance(self._writer, _Encoder):
            self._writer.set_chapters(chapters)

    def close(self, finish: Callable[[Path], None] | None = None) -> Path:
        """Complete the file, run ``finish(temporary_path)`` if given, and move it into place."""
        if self._done:
            return self.path
        with self._or_abort():
            self._writer.close()
            if finish is not None:
                finish(self.temporary)
            os.replace(self.temporary, self.path)
        self._done = True
        return self.path

    def abort(self) -> None:
        """Throw the temporary file away (nothing appears under the final name)."""
        if self._done:
            return
        self._done = True
        self._writer.abandon()
        self.temporary.unlink(missing_ok=True)

    def __enter__(self) -> AudioEncoder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()
