"""Recordings uploaded to be re-voiced (``POST /v1/speech-to-speech/{voice_id}``), decoded from their bytes.

An upload is staged in the voice library's staging folder as an uploaded reference is (:meth:`ApiVoices.staged`) and
read by the engine's own loader, :func:`core.engine.load_source` (libsndfile: WAV, FLAC, Ogg Vorbis or Opus, MP3 and
more, recognised by their content, so a browser's ``blob`` without a suffix is read too). What libsndfile cannot
read — a browser's MediaRecorder output (WebM/Opus from Chrome, MP4/AAC from Safari) — is decoded with FFmpeg's
decoders through PyAV, mixed to mono and resampled to 24 kHz as it is read, and checked by
:func:`core.engine.source_from_array`: the same error codes for the same faults either way. ElevenLabs'
``file_format=pcm_s16le_16`` (raw 16-bit little-endian mono PCM at 16 kHz, no header) is taken as it is.

Decoding runs on a thread of its own (:func:`in_thread`), so a long recording never holds up the event loop that
streams other requests' audio.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from core.api.voices import ApiVoices
from core.engine import (
    MAX_SOURCE_SECONDS,
    SAMPLE_RATE,
    SourceRecording,
    VoiceReferenceError,
    load_source,
    source_from_array,
)
from core.voices import safe_stem

RAW_PCM = "pcm_s16le_16"
FILE_FORMATS = ("other", RAW_PCM)
"""ElevenLabs' ``file_format``: ``other`` (any encoded file, the default) or raw PCM16 mono at 16 kHz."""
RAW_PCM_RATE = 16000

T = TypeVar("T")


def staging_name(filename: str | None) -> str:
    """A safe name to stage an upload under: its stem's letters and digits, and its suffix when it looks like one."""
    path = Path(Path(filename or "").name)
    suffix = path.suffix.lower() if path.suffix[1:].isalnum() and len(path.suffix) <= 6 else ""
    return safe_stem(path.stem if suffix else path.name, "recording")[:60] + suffix


def decode_source(voices: ApiVoices, filename: str | None, data: bytes, file_format: str = "other") -> SourceRecording:
    """The uploaded recording, checked (:class:`VoiceReferenceError`: ``voice.unreadable``, ``voice.empty``,
    ``voice.silent``, ``voice.invalid_samples``, ``source.too_long``, ``source.too_short``)."""
    name = staging_name(filename)
    if file_format == RAW_PCM:
        samples = np.frombuffer(data[: len(data) // 2 * 2], dtype="<i2").astype(np.float32) / 32768.0
        return source_from_array(samples, RAW_PCM_RATE, source=name)
    with voices.staged(name, data) as path:
        try:
            return load_source(path)
        except VoiceReferenceError as exc:
            if exc.code != "voice.unreadable":
                raise
            decoded = _decode_with_ffmpeg(path, name)
            if decoded is None:  # FFmpeg cannot read it either: libsndfile's reason stands
                raise
            return decoded


def _decode_with_ffmpeg(path: Path, name: str) -> SourceRecording | None:
    """What libsndfile cannot read (WebM, MP4…), through PyAV; ``None`` when FFmpeg finds no audio to decode."""
    import av

    limit = int(MAX_SOURCE_SECONDS * SAMPLE_RATE)
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                return None
            if container.duration is not None and container.duration / 1e6 > MAX_SOURCE_SECONDS:
                raise _too_long(name, container.duration / 1e6)
            stream = container.streams.audio[0]
            resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
            parts: list[np.ndarray] = []
            total = 0
            for frame in container.decode(stream):
                for out in resampler.resample(frame):
                    block = out.to_ndarray().reshape(-1)
                    parts.append(block)
                    total += block.size
                if total > limit:  # no duration in the header (a MediaRecorder stream): stop at the limit
                    raise _too_long(name, total / SAMPLE_RATE)
            parts += [out.to_ndarray().reshape(-1) for out in resampler.resample(None)]
    except (av.FFmpegError, OSError, ValueError):
        return None
    samples = np.concatenate(parts).astype(np.float32, copy=False) if parts else np.zeros(0, np.float32)
    return source_from_array(samples, SAMPLE_RATE, source=name)


def _too_long(name: str, seconds: float) -> VoiceReferenceError:
    """As :func:`core.engine.load_source` says it of a file it reads."""
    return VoiceReferenceError(
        "source.too_long",
        name=name,
        seconds=round(seconds, 1),
        minutes=int(-(-seconds // 60)),
        maximum_minutes=int(MAX_SOURCE_SECONDS // 60),
    )


async def in_thread(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` on a thread of its own (it ends with the work: no pool left behind), awaited here."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(result: Any, error: BaseException | None) -> None:
        if future.done():  # the request was cancelled meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    def run() -> None:
        result: Any = None
        error: BaseException | None = None
        try:
            result = work(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for it
            loop.call_soon_threadsafe(settle, result, error)

    threading.Thread(target=run, name="api-decode", daemon=True).start()
    return await future
