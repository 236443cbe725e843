"""A speech request's response: the audio in the asked format, streamed as it is generated (raw, or as OpenAI's
server-sent events), with the sentences' timestamps (and words) when asked; a re-voiced recording's, the audio only
(:func:`respond_audio`); Kokoro-FastAPI's captioned speech, base64 audio and each word's times in JSON
(:func:`respond_captioned`).

Errors before the first chunk are still answered as JSON; a request whose client goes away is cancelled at once.
A text with nothing to say is answered with a short silence in the asked format (:func:`silent_response`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

import numpy as np
from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from core.api.audio import MEDIA_TYPES, Pace, encoder, silence
from core.api.errors import error_response
from core.api.jobs import Job, JobFailed
from core.api.models import KOKORO_CONTENT_TYPES, SpeechParams
from core.api.timestamps import Timestamps
from core.engine import AudioChunk, StreamEncoder
from core.wording import describe

SSE_TYPE = "text/event-stream"
JSON_TYPE = "application/json"


async def respond(
    job: Job, params: SpeechParams, request: Request, headers: dict[str, str], marks: Timestamps | None
) -> Response:
    """Wait for the first chunk (errors until then are JSON), then stream the audio as it comes."""
    started = await _first_chunk(job, request)
    if isinstance(started, Response):
        return started
    first, chunks = started
    headers = {**headers, "X-Request-Id": str(job.request_id)}
    audio = _audio(first, chunks, encoder(params.response_format), Pace(params.speed), marks)
    if params.stream_format == "sse":
        body = _events(audio, params, job, marks)
        return _JobResponse(job, body, media_type=SSE_TYPE, headers={**headers, "Cache-Control": "no-cache"})
    return _JobResponse(job, audio, media_type=MEDIA_TYPES[params.response_format], headers=headers)


async def respond_audio(
    job: Job, output: StreamEncoder, media_type: str, request: Request, headers: dict[str, str]
) -> Response:
    """A re-voiced recording: as :func:`respond`, the audio only, encoded by ``output`` (its format, rate, bitrate)."""
    started = await _first_chunk(job, request)
    if isinstance(started, Response):
        return started
    first, chunks = started
    headers = {**headers, "X-Request-Id": str(job.request_id)}
    return _JobResponse(job, _audio(first, chunks, output, Pace(1.0), None), media_type=media_type, headers=headers)


async def _first_chunk(job: Job, request: Request) -> tuple[AudioChunk | None, AsyncIterator[AudioChunk]] | Response:
    """The job's first chunk (``None``: it finished without audio) and the rest; a failure until then as JSON."""
    chunks = job.chunks(request.is_disconnected)
    try:
        first = await anext(chunks, None)
    except JobFailed as exc:
        job.close()
        return _failure(exc)
    except BaseException:
        job.close()
        raise
    return first, chunks


async def respond_captioned(
    job: Job,
    params: SpeechParams,
    stream: bool,
    volume: float,
    request: Request,
    headers: dict[str, str],
    marks: Timestamps | None,
) -> Response:
    """Kokoro-FastAPI's ``POST /dev/captioned_speech``: ``{"audio": base64, "audio_format", "timestamps": [{"word",
    "start_time", "end_time"}]}``. ``stream``: one such object per line as the audio is generated (each line's
    audio the next bytes of one file, its ``timestamps`` the words found since the line before); else one object
    once all the audio and its words are there."""
    started = await _first_chunk(job, request)
    if isinstance(started, Response):
        return started
    first, chunks = started
    fmt = params.response_format
    headers = {**headers, **_captioned_headers(fmt), "X-Request-Id": str(job.request_id)}
    audio = _audio(first, chunks, encoder(fmt), Pace(params.speed), marks, volume)
    if stream:
        return _JobResponse(job, _caption_lines(audio, fmt, marks), media_type=JSON_TYPE, headers=headers)
    try:
        data = b"".join([part async for part in audio])
    except JobFailed as exc:
        return _failure(exc)
    finally:
        job.close()
    words: list[dict[str, Any]] = []
    if marks is not None:
        async for sentence in marks.rest(0):
            words += _kokoro_words(sentence)
    return Response(_caption(data, fmt, words), media_type=JSON_TYPE, headers=headers)


def silent_captioned(params: SpeechParams, headers: dict[str, str], marks: Timestamps | None) -> Response:
    """A text with nothing to say: a short silence without words, as :func:`respond_captioned` answers."""
    if marks is not None:
        marks.finish()
    body = _caption(_silence(params.response_format), params.response_format, [])
    return Response(body, media_type=JSON_TYPE, headers={**headers, **_captioned_headers(params.response_format)})


def _captioned_headers(response_format: str) -> dict[str, str]:
    """Kokoro-FastAPI's."""
    return {"Content-Disposition": f"attachment; filename=speech.{response_format}", "Cache-Control": "no-cache"}


async def _caption_lines(
    audio: AsyncIterator[bytes], response_format: str, marks: Timestamps | None
) -> AsyncIterator[bytes]:
    """One JSON object per line for each part of the audio as it leaves, with the words found since the line before;
    after the audio, the words still being found (in a last line whose ``audio`` is empty, when there are any)."""
    told = 0
    async for data in audio:
        words: list[dict[str, Any]] = []
        if marks is not None:
            ready = marks.ready()
            for index in range(told, ready):
                words += _kokoro_words(marks.sentence(index))
            told = max(told, ready)
        yield _caption(data, response_format, words)
    rest: list[dict[str, Any]] = []
    if marks is not None:
        async for sentence in marks.rest(told):
            rest += _kokoro_words(sentence)
    if rest:
        yield _caption(b"", response_format, rest)


def _kokoro_words(sentence: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"word": w["word"], "start_time": w["start"], "end_time": w["end"]} for w in sentence.get("words", ())]


def _caption(data: bytes, response_format: str, words: list[dict[str, Any]]) -> bytes:
    """One captioned-speech object, as Kokoro-FastAPI writes it (compact, one line)."""
    found: dict[str, Any] = {
        "audio": base64.b64encode(data).decode(),
        "audio_format": KOKORO_CONTENT_TYPES[response_format],
        "timestamps": words,
    }
    return (json.dumps(found, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def silent_response(params: SpeechParams, headers: dict[str, str], marks: Timestamps | None) -> Response:
    """A text with nothing to say (Home Assistant tests a server with "."): a short silence, not an error."""
    data = _silence(params.response_format)
    if marks is not None:
        marks.finish()
    if params.stream_format == "sse":
        usage = {"input_tokens": len(params.input), "output_tokens": 0, "total_tokens": len(params.input)}
        events = _event({"type": "speech.audio.delta", "audio": base64.b64encode(data).decode()})
        events += _event(_done(usage, [] if marks is not None else None))
        return Response(events, media_type=SSE_TYPE, headers=headers)
    return Response(data, media_type=MEDIA_TYPES[params.response_format], headers=headers)


def _silence(response_format: str) -> bytes:
    enc = encoder(response_format)
    return enc.encode(silence()) + enc.finish()


def _failure(exc: JobFailed) -> Response:
    message = describe(exc.code, exc.data, "api")
    if exc.internal:
        return error_response(500, message, "internal_error", "server_error")
    return error_response(499 if exc.cancelled else 422, message, "cancelled" if exc.cancelled else "synthesis_failed")


async def _audio(
    first: AudioChunk | None,
    chunks: AsyncIterator[AudioChunk],
    enc: StreamEncoder,
    pace: Pace,
    marks: Timestamps | None,
    volume: float = 1.0,
) -> AsyncIterator[bytes]:
    """The encoded audio, each part as soon as the encoder has it (paced per sentence when ``speed`` is not 1; its
    level times ``volume``)."""

    def take(chunk: AudioChunk) -> bytes:
        samples = pace.add(chunk)
        if samples is None or not samples.size:
            return b""
        if marks is not None:
            marks.add(chunk.sentence, samples.size, samples)
        return enc.encode(samples if volume == 1.0 else np.clip(samples * volume, -1.0, 1.0))

    if first is not None:
        if data := take(first):
            yield data
        try:
            async for chunk in chunks:
                if data := take(chunk):
                    yield data
        except JobFailed as exc:
            if exc.cancelled:
                return
            raise  # the response is cut short: the client sees an incomplete transfer, not silently short audio
    rest = pace.flush()
    tail = enc.encode(rest) if rest is not None and rest.size else b""
    if marks is not None:
        marks.finish()
    if data := tail + enc.finish():
        yield data


async def _events(
    audio: AsyncIterator[bytes], params: SpeechParams, job: Job, marks: Timestamps | None
) -> AsyncIterator[bytes]:
    """OpenAI's ``stream_format: "sse"``: ``speech.audio.delta`` events (base64 audio), then ``speech.audio.done``
    with the usage; with ``timestamps``, a ``speech.audio.sentence`` event as each sentence's audio is complete (with
    ``"word"``: once its words are found too, which never holds up the audio)."""
    told: list[dict[str, Any]] = []
    try:
        async for data in audio:
            yield _event({"type": "speech.audio.delta", "audio": base64.b64encode(data).decode()})
            if marks is not None:
                for index in range(len(told), marks.ready()):
                    told.append(marks.sentence(index))
                    yield _event({"type": "speech.audio.sentence", **told[-1]})
    except JobFailed as exc:
        message = describe(exc.code, exc.data, "api")
        yield _event({"type": "error", "error": {"message": message, "type": "server_error", "code": exc.code}})
        return
    if marks is not None:
        async for sentence in marks.rest(len(told)):
            told.append(sentence)
            yield _event({"type": "speech.audio.sentence", **sentence})
    tokens = len(job.report.speech_tokens) if job.report is not None else 0
    usage = {"input_tokens": len(params.input), "output_tokens": tokens, "total_tokens": len(params.input) + tokens}
    yield _event(_done(usage, told if marks is not None else None))


def _done(usage: dict[str, int], sentences: list[dict[str, Any]] | None) -> dict[str, Any]:
    done: dict[str, Any] = {"type": "speech.audio.done", "usage": usage}
    if sentences is not None:
        done["sentences"] = sentences
    return done


def _event(data: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class _JobResponse(StreamingResponse):
    """A streamed response that cancels its worker request the moment it ends for any reason (client gone)."""

    def __init__(self, job: Job, content: AsyncIterator[bytes], **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.job = job

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.job.close()
