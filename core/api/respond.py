"""A speech request's response: the audio in the asked format, streamed as it is generated (raw, or as OpenAI's
server-sent events), with the sentences' timestamps when asked; a re-voiced recording's, the audio only
(:func:`respond_audio`).

Errors before the first chunk are still answered as JSON; a request whose client goes away is cancelled at once.
A text with nothing to say is answered with a short silence in the asked format (:func:`silent_response`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from core.api.audio import MEDIA_TYPES, Pace, encoder, silence
from core.api.errors import error_response
from core.api.jobs import Job, JobFailed
from core.api.models import SpeechParams
from core.api.timestamps import Timestamps
from core.engine import AudioChunk, StreamEncoder
from core.wording import describe

SSE_TYPE = "text/event-stream"


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


def silent_response(params: SpeechParams, headers: dict[str, str], marks: Timestamps | None) -> Response:
    """A text with nothing to say (Home Assistant tests a server with "."): a short silence, not an error."""
    enc = encoder(params.response_format)
    data = enc.encode(silence()) + enc.finish()
    if marks is not None:
        marks.done = True
    if params.stream_format == "sse":
        usage = {"input_tokens": len(params.input), "output_tokens": 0, "total_tokens": len(params.input)}
        events = _event({"type": "speech.audio.delta", "audio": base64.b64encode(data).decode()})
        events += _event(_done(usage, marks))
        return Response(events, media_type=SSE_TYPE, headers=headers)
    return Response(data, media_type=MEDIA_TYPES[params.response_format], headers=headers)


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
) -> AsyncIterator[bytes]:
    """The encoded audio, each part as soon as the encoder has it (paced per sentence when ``speed`` is not 1)."""

    def take(chunk: AudioChunk) -> bytes:
        samples = pace.add(chunk)
        if samples is None or not samples.size:
            return b""
        if marks is not None:
            marks.add(chunk.sentence, samples.size)
        return enc.encode(samples)

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
        marks.done = True
    if data := tail + enc.finish():
        yield data


async def _events(
    audio: AsyncIterator[bytes], params: SpeechParams, job: Job, marks: Timestamps | None
) -> AsyncIterator[bytes]:
    """OpenAI's ``stream_format: "sse"``: ``speech.audio.delta`` events (base64 audio), then ``speech.audio.done``
    with the usage; with ``timestamps``, a ``speech.audio.sentence`` event as each sentence's audio is complete."""
    told = 0
    try:
        async for data in audio:
            yield _event({"type": "speech.audio.delta", "audio": base64.b64encode(data).decode()})
            if marks is not None:
                for mark in marks.sentences[told : marks.complete]:
                    yield _event({"type": "speech.audio.sentence", **mark})
                told = marks.complete
    except JobFailed as exc:
        message = describe(exc.code, exc.data, "api")
        yield _event({"type": "error", "error": {"message": message, "type": "server_error", "code": exc.code}})
        return
    if marks is not None:
        for mark in marks.sentences[told:]:
            yield _event({"type": "speech.audio.sentence", **mark})
    tokens = len(job.report.speech_tokens) if job.report is not None else 0
    usage = {"input_tokens": len(params.input), "output_tokens": tokens, "total_tokens": len(params.input) + tokens}
    yield _event(_done(usage, marks))


def _done(usage: dict[str, int], marks: Timestamps | None) -> dict[str, Any]:
    done: dict[str, Any] = {"type": "speech.audio.done", "usage": usage}
    if marks is not None:
        done["sentences"] = marks.sentences
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
