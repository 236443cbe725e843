"""Errors in OpenAI's shape: ``{"error": {"message", "type", "param", "code"}}`` with the HTTP status that fits.

A malformed request (a field missing, of the wrong type or out of range, a body that is not JSON, a recording that
cannot be used) is answered 400 ``invalid_request_error`` naming the field in ``param``, as OpenAI answers it (its
SDKs raise ``BadRequestError``); ``param`` is ``null`` where no one field is at fault.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi.responses import JSONResponse

BAD_REQUEST = 400
"""A malformed request's status: OpenAI's (this API answered 422 before version 0.1.0)."""


class ApiError(Exception):
    """Raised by a route: answered as :func:`error_response` with this status, message, code and param."""

    def __init__(
        self,
        status: int,
        message: str,
        code: str,
        kind: str = "invalid_request_error",
        headers: Mapping[str, str] | None = None,
        param: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.kind, self.param = status, message, code, kind, param
        self.headers = dict(headers or {})


def bad_request(message: str, code: str, param: str | None = None) -> ApiError:
    """A malformed request: 400 ``invalid_request_error``, ``param`` naming the field at fault."""
    return ApiError(BAD_REQUEST, message, code, param=param)


def error_response(
    status: int,
    message: str,
    code: str,
    kind: str = "invalid_request_error",
    headers: Mapping[str, str] | None = None,
    param: str | None = None,
) -> JSONResponse:
    body = {"error": {"message": message, "type": kind, "param": param, "code": code}}
    return JSONResponse(body, status_code=status, headers=dict(headers) if headers else None)
