"""The local speech API: an OpenAI-compatible FastAPI app on the one inference worker, and its uvicorn server.

``create_app(worker, library, config)`` builds the routes (``POST /v1/audio/speech``, ``GET /v1/models``,
``GET``/``POST /v1/voices``, ``GET /health``); :class:`ApiServer` serves it on a socket it binds itself, in a thread
(the window) or in the calling thread (``python -m core serve``). Errors use OpenAI's shape:
``{"error": {"message", "type", "code"}}``.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import socket
import threading
import time
from dataclasses import dataclass

import numpy as np
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from core.api.audio import MEDIA_TYPES, STREAMED, Pace, encode, pcm16, wav_stream_header
from core.api.jobs import JobFailed, JobQueue, QueueFull
from core.api.models import SpeechParams, accepted_models, first_problem, model_list
from core.api.voices import ApiVoices, UnknownVoice
from core.engine import (
    SAMPLE_RATE,
    ChatterboxError,
    InferenceWorker,
    InvalidOptions,
    JobInfo,
    SynthesisOptions,
    SynthesisRequest,
    VoiceReference,
    WorkerStatus,
)
from core.voices import VoiceLibrary
from core.wording import describe, describe_error, describe_notice

log = logging.getLogger(__name__)
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8765


@dataclass(frozen=True)
class ApiConfig:
    api_key: str | None = None
    cors: tuple[str, ...] = ()
    """Origins allowed to call the API from a browser (none: no CORS headers at all)."""
    max_input_chars: int = 100_000
    max_upload_bytes: int = 20 * 1024 * 1024
    max_waiting: int = 16
    """API requests allowed to wait for the worker; one more is answered 429 with Retry-After."""


class ApiError(Exception):
    def __init__(self, status: int, message: str, code: str, kind: str = "invalid_request_error", headers=None):
        super().__init__(message)
        self.status, self.message, self.code, self.kind, self.headers = status, message, code, kind, headers or {}


def error_response(status: int, message: str, code: str, kind: str = "invalid_request_error", headers=None):
    body = {"error": {"message": message, "type": kind, "code": code}}
    return JSONResponse(body, status_code=status, headers=headers)


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


# --- the app -----------------------------------------------------------------------------------------------------
def create_app(worker: InferenceWorker, library: VoiceLibrary, config: ApiConfig | None = None) -> FastAPI:
    config = config or ApiConfig()
    app = FastAPI(title="Chatterbox Desk local speech API", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.worker = worker
    app.state.jobs = jobs = JobQueue(worker, config.max_waiting)
    app.state.voices = voices = ApiVoices(library)
    app.state.config = config
    app.add_middleware(_Guard, api_key=config.api_key, body_limit=config.max_upload_bytes + 256 * 1024)
    if config.cors:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )

    @app.exception_handler(ApiError)
    async def _api_error(_request, exc: ApiError):
        return error_response(exc.status, exc.message, exc.code, exc.kind, exc.headers)

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request, exc: RequestValidationError):
        return error_response(422, first_problem(exc.errors()), "invalid_value")

    @app.get("/health")
    async def health():
        pipe = worker.pipeline
        return {
            "status": "ok" if worker.alive and pipe is not None else ("no_model" if worker.alive else "stopped"),
            "model_loaded": pipe is not None,
            "variant": pipe.capabilities.variant if pipe is not None else None,
            "worker_alive": worker.alive,
            "queue_depth": worker.queued,
            "running": worker.running is not None,
            "api_active": jobs.active,
            "api_waiting": jobs.waiting,
            "served": jobs.served,
            "worker": _worker_status(worker.status()),
        }

    @app.get("/v1/models")
    async def models():
        pipe = worker.pipeline
        return model_list(pipe.capabilities.variant if pipe is not None else None)

    @app.get("/v1/voices")
    async def list_voices():
        pipe = worker.pipeline
        data = [
            {"object": "voice", "id": v.name, "name": v.name, "seconds": round(v.seconds, 2)} for v in voices.list()
        ]
        default = pipe is not None and pipe.capabilities.has_default_voice
        return {"object": "list", "data": data, "default_voice": default}

    @app.post("/v1/voices", status_code=201)
    async def add_voice(request: Request):
        form = await _form(request)
        try:
            upload = form.get("file")
            if not isinstance(upload, UploadFile):
                raise ApiError(422, "Send the reference recording as the multipart field 'file'.", "missing_file")
            name = " ".join(str(form.get("name") or "").split()) or (upload.filename or "").rsplit(".", 1)[0]
            if not name:
                raise ApiError(422, "Give the voice a name (the multipart field 'name').", "missing_name")
            if len(name) > 60:
                raise ApiError(422, "A voice name has at most 60 characters.", "invalid_value")
            if library.get(name) is not None:
                raise ApiError(409, f"A voice named {name!r} exists already; choose another name.", "voice_exists")
            filename, data = upload.filename, await _read_upload(upload, config.max_upload_bytes)
        finally:
            await form.close()
        try:
            entry, reference = voices.add_upload(name, filename, data)
        except ChatterboxError as exc:
            raise ApiError(422, describe_error(exc, "api"), "invalid_audio") from exc
        except OSError as exc:
            message = f"The voice could not be saved: {exc.strerror or exc}."
            raise ApiError(500, message, "write_failed", "server_error") from None
        return {
            "object": "voice",
            "id": entry.name,
            "name": entry.name,
            "seconds": round(entry.seconds, 2),
            "warnings": [describe_notice(w, "api") for w in reference.warnings],
        }

    @app.post("/v1/audio/speech")
    async def speech(request: Request):
        upload = None
        if request.headers.get("content-type", "").startswith("multipart/form-data"):
            form = await _form(request)
            try:
                fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
                part = form.get("voice_file")
                if isinstance(part, UploadFile):
                    upload = (part.filename, await _read_upload(part, config.max_upload_bytes))
            finally:
                await form.close()
        else:
            try:
                fields = json.loads(await request.body() or b"null")
            except ValueError:
                raise ApiError(422, "The body is not valid JSON.", "invalid_json") from None
            if not isinstance(fields, dict):
                raise ApiError(422, "The body must be a JSON object with 'model', 'input' and 'voice'.", "invalid_json")
        try:
            params = SpeechParams.model_validate(fields)
        except ValidationError as exc:
            raise ApiError(422, first_problem(exc.errors()), "invalid_value") from None
        if len(params.input) > config.max_input_chars:
            raise ApiError(413, f"'input' has {len(params.input):,} characters; at most "
                           f"{config.max_input_chars:,} are accepted per request.", "input_too_long")  # fmt: skip
        if not params.input.strip():
            raise ApiError(422, "'input' is empty: give the text to speak.", "invalid_value")
        pipe = worker.pipeline
        if pipe is None or not worker.alive:
            raise ApiError(503, "No model is loaded yet.", "model_not_loaded", "server_error", {"Retry-After": "5"})
        caps = pipe.capabilities
        if params.model not in accepted_models(caps.variant):
            known = ", ".join(accepted_models(caps.variant))
            raise ApiError(404, f"The model {params.model!r} does not exist here. Use one of: {known}.",
                           "model_not_found")  # fmt: skip
        try:
            voice: VoiceReference | None
            if upload is not None:
                voice = voices.load_upload(*upload)
            else:
                voice = voices.resolve(params.voice, caps.has_default_voice)
        except UnknownVoice as exc:
            raise ApiError(404, describe_error(exc, "api"), "voice_not_found") from None
        except ChatterboxError as exc:
            raise ApiError(422, describe_error(exc, "api"), "invalid_audio") from None
        options = SynthesisOptions(
            temperature=params.temperature,
            cfg_weight=params.cfg_weight,
            exaggeration=params.exaggeration,
            seed=params.seed,
            language=params.language,
        )
        try:
            options.resolve(caps.variant)
        except InvalidOptions as exc:
            raise ApiError(422, describe_error(exc, "api"), "invalid_value") from None
        if params.language and caps.languages and params.language not in caps.languages:
            raise ApiError(422, f"Language {params.language!r} is not one of the model's: "
                           f"{', '.join(caps.languages)}.", "invalid_value")  # fmt: skip
        try:
            job = jobs.submit(SynthesisRequest(params.input, voice, options), asyncio.get_running_loop())
        except QueueFull as exc:
            message = f"{exc.waiting} requests are already waiting; try again in {exc.retry_after} s."
            headers = {"Retry-After": str(exc.retry_after)}
            raise ApiError(429, message, "queue_full", "rate_limit_error", headers) from None
        return await _respond(job, params, request)

    return app


async def _respond(job, params, request: Request) -> Response:
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
        return error_response(499 if exc.cancelled else 422, message, "cancelled" if exc.cancelled else
                              "synthesis_failed")  # fmt: skip
    except BaseException:
        job.close()
        raise
    return _JobResponse(job, _stream(first, chunks, Pace(params.speed), fmt), media_type=MEDIA_TYPES[fmt],
                        headers=headers)  # fmt: skip


async def _stream(first, chunks, pace: Pace, fmt: str):
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

    def __init__(self, job, content, **kwargs):
        super().__init__(content, **kwargs)
        self.job = job

    async def __call__(self, scope, receive, send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.job.close()


async def _form(request: Request):
    try:
        return await request.form(max_files=1, max_fields=20)
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 - starlette / python-multipart parse errors
        raise ApiError(422, f"The multipart body cannot be read: {exc}.", "invalid_multipart") from None


async def _read_upload(upload: UploadFile, limit: int) -> bytes:
    data = await upload.read(limit + 1)
    if len(data) > limit:
        raise ApiError(413, f"The recording is larger than {limit // (1024 * 1024)} MB; send 5–30 s of speech.",
                       "file_too_large")  # fmt: skip
    if not data:
        raise ApiError(422, "The uploaded recording is empty.", "invalid_audio")
    return data


def _worker_status(status: WorkerStatus) -> dict:
    """What the worker runs, pauses and has waiting, by request id, kind and priority (no labels: ``/health`` needs
    no key, and a label may name the window's book)."""

    def info(job: JobInfo | None) -> dict | None:
        return None if job is None else job.as_dict(label=False)

    return {
        "running": info(status.running),
        "paused": info(status.paused),
        "waiting": [info(job) for job in status.waiting],
    }


class _Guard:
    """Pure ASGI: the API key on ``/v1`` (``Authorization: Bearer KEY``), and a cap on the request body's size."""

    def __init__(self, app, api_key: str | None, body_limit: int):
        self.app, self.key, self.limit = app, (api_key or "").encode(), body_limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        if self.key and scope["path"].startswith("/v1"):
            given = headers.get(b"authorization", b"")
            token = given[7:].strip() if given[:7].lower() == b"bearer " else b""
            if not hmac.compare_digest(token, self.key):
                message = "Missing or wrong API key: send the header 'Authorization: Bearer KEY'."
                response = error_response(401, message, "invalid_api_key", headers={"WWW-Authenticate": "Bearer"})
                return await response(scope, receive, send)
        try:
            length = int(headers.get(b"content-length", b"0"))
        except ValueError:
            length = 0
        if length > self.limit:
            return await self._too_large(scope, receive, send)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise ApiError(413, "The request body is too large.", "request_too_large")
            return message

        return await self.app(scope, counted, send)

    async def _too_large(self, scope, receive, send):
        limit_mb = self.limit // (1024 * 1024)
        message = f"The request body is larger than {limit_mb} MB; send a recording of 5–30 s of speech."
        return await error_response(413, message, "request_too_large")(scope, receive, send)


# --- the server --------------------------------------------------------------------------------------------------
class ApiServer:
    """uvicorn on a socket bound here (so a port in use is a clear error), in a thread or the calling thread."""

    def __init__(self, app: FastAPI, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT):
        import uvicorn

        self.app, self.host = app, host
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            self.socket = socket.create_server((host.strip("[]"), port), family=family)
        except OSError as exc:
            raise InvalidOptions("api.cannot_listen", host=host, port=port, reason=str(exc.strerror or exc)) from exc
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
        return self.app.state.jobs

    def serve(self) -> None:
        """Serve in this thread until Ctrl-C / SIGTERM (uvicorn's handlers) or :meth:`stop` from another thread."""
        try:
            self.server.run(sockets=[self.socket])
        finally:
            self.jobs.cancel_all()
            self.socket.close()

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

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()
