"""The guard in front of every route (pure ASGI): the API key on ``/v1`` and a cap on the request body's size."""

from __future__ import annotations

import hmac

from core.api.errors import ApiError, error_response

UNVERSIONED = ("/audio/", "/models", "/voices", "/speech-to-speech/", "/dev/")
"""Paths answered without ``/v1`` as well, for clients whose base URL is the bare host (Kokoro-FastAPI's clients call
``/dev/captioned_speech`` so)."""
SOURCE_PATHS = "/v1/speech-to-speech/"
"""Routes that take a recording to re-voice: their bodies may be as large as ``source_limit``."""
KEY_MESSAGE = "Missing or wrong API key: send the header 'Authorization: Bearer KEY' (or 'xi-api-key: KEY')."


class RequestGuard:
    """Pure ASGI: the API key on ``/v1`` (``Authorization: Bearer KEY``, or ElevenLabs' ``xi-api-key: KEY``; not on a
    browser's CORS preflight), a cap on the request body's size (``source_limit`` on the speech-to-speech routes,
    ``body_limit`` elsewhere), and the API's paths without ``/v1`` (``/audio/speech``) taken as with it."""

    def __init__(self, app, api_key: str | None, body_limit: int, source_limit: int | None = None):
        self.app, self.key, self.limit = app, (api_key or "").encode(), body_limit
        self.source_limit = body_limit if source_limit is None else source_limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["path"].startswith(UNVERSIONED):
            scope = {**scope, "path": "/v1" + scope["path"], "raw_path": b"/v1" + scope.get("raw_path", b"")}
        headers = dict(scope.get("headers") or [])
        if self.key and scope["path"].startswith("/v1") and scope["method"] != "OPTIONS":
            given = headers.get(b"authorization", b"")
            token = given[7:].strip() if given[:7].lower() == b"bearer " else headers.get(b"xi-api-key", b"").strip()
            if not hmac.compare_digest(token, self.key):
                response = error_response(401, KEY_MESSAGE, "invalid_api_key", headers={"WWW-Authenticate": "Bearer"})
                return await response(scope, receive, send)
        limit = self.source_limit if scope["path"].startswith(SOURCE_PATHS) else self.limit
        try:
            length = int(headers.get(b"content-length", b"0"))
        except ValueError:
            length = 0
        if length > limit:
            return await self._too_large(scope, receive, send, limit)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > limit:
                raise ApiError(413, "The request body is too large.", "request_too_large")
            return message

        return await self.app(scope, counted, send)

    async def _too_large(self, scope, receive, send, limit: int):
        limit_mb = limit // (1024 * 1024)
        if scope["path"].startswith(SOURCE_PATHS):
            message = f"The request body is larger than {limit_mb} MB; send a shorter or more compressed recording."
        else:
            message = f"The request body is larger than {limit_mb} MB; send a recording of 5–30 s of speech."
        return await error_response(413, message, "request_too_large")(scope, receive, send)
