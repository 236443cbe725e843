"""Errors in OpenAI's shape: ``{"error": {"message", "type", "code"}}`` with the HTTP status that fits."""

from __future__ import annotations

from collections.abc import Mapping

from fastapi.responses import JSONResponse


class ApiError(Exception):
    """Raised by a route: answered as :func:`error_response` with this status, message and code."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str,
        kind: str = "invalid_request_error",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.kind = status, message, code, kind
        self.headers = dict(headers or {})


def error_response(
    status: int, message: str, code: str, kind: str = "invalid_request_error", headers: Mapping[str, str] | None = None
) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "code": code}}
    return JSONResponse(body, status_code=status, headers=dict(headers) if headers else None)
