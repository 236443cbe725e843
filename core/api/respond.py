"""A speech request's response: the whole audio encoded (mp3, opus, flac), or PCM/WAV streamed as it is generated.

Errors before the first chunk are still answered as JSON; a request whose client goes away is cancelled at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import numpy as np
from fastapi import Request
from fastapi.responses import Response, StreamingResponse

from core.api.audio import MEDIA_TYPES, STREAMED, Pace, encode, pcm16, wav_stream_header
from core.api.errors import error_response
from core.api.jobs import Job, JobFailed
from core.api.models import SpeechParams
from core.engine import SAMPLE_RATE, AudioChunk
from core.wording import describe


async def respond(job: Job, params: SpeechParams, request: Request) -> Response:
    """Wait for the first chunk (errors until then are JSON), then stream (wav, pcm) or encode the whole audio."""
    chunks = job.chunks(request.is_disconnected)
    headers = {"X-Request-Id": str(job.request_id)}
    fmt = params.response_format
    try:
        first = await anext(chunks, None)
        if fmt not in STREAMED:
            pace = Pace(params.speed)
            parts = [p for c in ([first] if first else []) if (p := pace.add(c)) is not None]
            async for chunk in chunks:
                if (samples := pace.add(chunk)) is not None:
                    parts.append(samples)
            if (rest := pace.flush()) is not None:
                parts.append(rest)
            audio = np.concatenate(parts) if parts else np.zeros(0, np.float32)
            return Response(encode(audio, fmt), media_type=MEDIA_TYPES[fmt], headers=headers)
    except JobFailed as exc:
        job.close()
        message = describe(exc.code, exc.data, "api")
        if exc.internal:
            return error_response(500, message, "internal_error", "server_error")
        return error_response(
            499 if exc.cancelled else 422, message, "cancelled" if exc.cancelled else "synthesis_failed"
        )
    except BaseException:
        job.close()
        raise
    return _JobResponse(
        job, _stream(first, chunks, Pace(params.speed), fmt), media_type=MEDIA_TYPES[fmt], headers=headers
    )


async def _stream(
    first: AudioChunk | None, chunks: AsyncIterator[AudioChunk], pace: Pace, fmt: str
) -> AsyncIterator[bytes]:
    if fmt == "wav":
        yield wav_stream_header(SAMPLE_RATE)
    if first is not None:
        if (samples := pace.add(first)) is not None and samples.size:
            yield pcm16(samples)
        try:
            async for chunk in chunks:
                if (samples := pace.add(chunk)) is not None and samples.size:
                    yield pcm16(samples)
        except JobFailed as exc:
            if exc.cancelled:
                return
            raise  # the response is cut short: the client sees an incomplete transfer, not silently short audio
    if (rest := pace.flush()) is not None and rest.size:
        yield pcm16(rest)


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
