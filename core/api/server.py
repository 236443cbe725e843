"""The local speech API: an OpenAI-compatible FastAPI app on the one inference worker, and its uvicorn server.

``create_app(worker, library, config)`` builds the app: the routes of :mod:`core.api.routes` (``POST
/v1/audio/speech``, ``POST /v1/speech-to-speech/{voice_id}``, ``GET /v1/models``, ``/v1/audio/voices`` …,
``GET /health``) behind the guard of
:mod:`core.api.guard` (which also answers the same paths without ``/v1``), with CORS for the origins asked for;
:class:`ApiServer` serves it on a socket it binds itself, in a thread (the window) or in the calling thread
(``python -m core serve``). Errors, 404 and 405 included, use OpenAI's shape:
``{"error": {"message", "type", "param", "code"}}``; a malformed request is 400, as OpenAI answers it.
"""

from __future__ import annotations

import ipaddress
import logging
import threading
import time
from dataclasses import dataclass

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from core.api.errors import BAD_REQUEST, ApiError, error_response
from core.api.guard import RequestGuard
from core.api.jobs import JobQueue
from core.api.listening import listening_socket
from core.api.models import first_param, first_problem
from core.api.routes import ApiState, router
from core.api.timestamps import TimestampStore
from core.api.voices import ApiVoices
from core.engine import ChatterboxError, InferenceWorker, InvalidOptions
from core.voices import VoiceLibrary

log = logging.getLogger(__name__)
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765


@dataclass(frozen=True)
class ApiConfig:
    api_key: str | None = None
    cors: tuple[str, ...] = ()
    """Origins allowed to call the API from a browser (none: no CORS headers at all)."""
    max_input_chars: int = 100_000
    max_upload_bytes: int = 20 * 1024 * 1024
    """The largest reference recording (``voice_file``, a new library voice)."""
    max_source_bytes: int = 100 * 1024 * 1024
    """The largest recording to re-voice (speech-to-speech): a 30-minute 24 kHz mono WAV fits, as any compressed one."""
    max_waiting: int = 16
    """API requests allowed to wait for the worker; one more is answered 429 with Retry-After."""


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, port: int, api_key: str | None) -> None:
    """Refuse a host other than loopback without an API key, and a port out of range (:class:`InvalidOptions`)."""
    if not 0 <= port <= 65535:
        raise InvalidOptions("api.port_range", port=port)
    if not is_loopback(host) and not api_key:
        raise InvalidOptions("api.open_host", host=host)


EXPOSED_HEADERS = ("X-Request-Id", "X-Timestamps-Url", "X-Instructions", "X-Ignored-Fields", "Retry-After")
"""Response headers a web page may read."""
FORM_SLACK = 256 * 1024
"""What a multipart body may hold beyond its recording (the other fields, the parts' headers)."""


# --- the app -----------------------------------------------------------------------------------------------------
def create_app(worker: InferenceWorker, library: VoiceLibrary, config: ApiConfig | None = None) -> FastAPI:
    """The API's FastAPI app: the routes (:mod:`core.api.routes`) over ``worker``, behind the key and size guard."""
    config = config or ApiConfig()
    app = FastAPI(title="Chatterbox Desk local speech API", docs_url=None, redoc_url=None, openapi_url=None)
    jobs = JobQueue(worker, config.max_waiting)
    app.state.api = ApiState(
        worker,
        jobs,
        ApiVoices(library),
        library,
        config.max_input_chars,
        config.max_upload_bytes,
        TimestampStore(),
        config.max_source_bytes,
    )
    app.add_middleware(
        RequestGuard,
        api_key=config.api_key,
        body_limit=config.max_upload_bytes + FORM_SLACK,
        source_limit=config.max_source_bytes + FORM_SLACK,
    )
    if config.cors:  # added last: outside the guard, so a browser's preflight (sent without the key) is answered
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors),
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=["*"],  # echoes what the browser asks for: the JS SDK's x-stainless-* headers included
            expose_headers=list(EXPOSED_HEADERS),
            max_age=600,
        )
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.include_router(router)
    return app


async def _api_error(_request: Request, exc: Exception) -> Response:
    if not isinstance(exc, ApiError):  # registered for ApiError only
        raise exc
    return error_response(exc.status, exc.message, exc.code, exc.kind, exc.headers, exc.param)


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own 404 and 405, in OpenAI's shape."""
    if not isinstance(exc, HTTPException):  # registered for HTTPException only
        raise exc
    if exc.status_code == 404:
        path = request.url.path
        message = f"There is no route {request.method} {path} here; the API is at /v1 (POST /v1/audio/speech)."
        return error_response(404, message, "not_found")
    if exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}."
        return error_response(405, message, "method_not_allowed", headers=exc.headers)
    return error_response(exc.status_code, str(exc.detail), "http_error", headers=exc.headers)


async def _validation_error(_request: Request, exc: Exception) -> Response:
    if not isinstance(exc, RequestValidationError):  # registered for RequestValidationError only
        raise exc
    errors = exc.errors()
    return error_response(BAD_REQUEST, first_problem(errors), "invalid_value", param=first_param(errors))


# --- the server --------------------------------------------------------------------------------------------------
class ApiServer:
    """uvicorn on a socket bound here (so a port in use is a clear error), in a thread or the calling thread."""

    def __init__(self, app: FastAPI, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
        import uvicorn

        self.app, self.host = app, host
        self.socket = listening_socket(host, port)
        self.port = self.socket.getsockname()[1]
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off", timeout_graceful_shutdown=2)
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"

    @property
    def jobs(self) -> JobQueue:
        jobs: JobQueue = self.app.state.api.jobs
        return jobs

    def serve(self) -> None:
        """Serve in this thread until Ctrl-C / SIGTERM (uvicorn's handlers) or :meth:`stop` from another thread."""
        try:
            self.server.run(sockets=[self.socket])
        finally:
            self.jobs.cancel_all()
            self.socket.close()
            self.app.state.api.timestamps.close()

    def start(self, timeout: float = 10.0) -> None:
        """Serve in a background thread; returns once it accepts connections."""
        self._thread = threading.Thread(target=self.serve, name="api-server", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started and self._thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self.server.started:
            self.stop()
            raise ChatterboxError("api.not_started")

    def stop(self, timeout: float = 5.0) -> None:
        self.jobs.cancel_all()
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
        self.socket.close()
        self.app.state.api.timestamps.close()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
