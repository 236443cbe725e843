"""The HTTP routes of the local speech API (OpenAI-compatible): ``POST /v1/audio/speech`` (and its timestamps),
Kokoro-FastAPI's ``POST /dev/captioned_speech`` (speech with its words' times, also at ``/v1/dev/…``),
ElevenLabs' ``POST /v1/speech-to-speech/{voice_id}`` (and ``…/stream``), ``GET /v1/models`` and ``/v1/models/{id}``,
``GET /v1/audio/models``, ``GET``/``POST /v1/audio/voices`` (also at ``/v1/voices``), ``DELETE
/v1/audio/voices/{name}`` and ``GET /health``.

Each route reads what it needs from :class:`ApiState` (the app's ``state.api``); the speech routes' checks are small
functions in the order a request meets them: the body, its fields, the model, the voice, the options (and for
speech-to-speech, last and off the event loop, the recording).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import ValidationError
from starlette.datastructures import FormData, UploadFile

from core.api.audio import Output, parse_output_format
from core.api.errors import ApiError, bad_request
from core.api.jobs import Job, JobQueue, Part, QueueFull, plan
from core.api.models import (
    CONVERSION_FIELDS,
    CaptionedParams,
    ConversionParams,
    SpeechParams,
    accepted_models,
    first_param,
    first_problem,
    is_accepted,
    is_conversion_model,
    model_list,
    model_object,
)
from core.api.respond import respond, respond_audio, respond_captioned, silent_captioned, silent_response
from core.api.sources import decode_source, in_thread
from core.api.timestamps import Timestamps, TimestampStore
from core.api.voices import OPENAI_VOICES, ApiVoices, UnknownVoice
from core.engine import (
    Capabilities,
    ChatterboxError,
    ConversionRequest,
    EncodeError,
    InferenceWorker,
    InvalidOptions,
    JobInfo,
    SourceRecording,
    StreamEncoder,
    SynthesisOptions,
    SynthesisRequest,
    TextInputError,
    VoiceReference,
    WorkerStatus,
)
from core.voices import VoiceLibrary
from core.wording import describe_error, describe_notice

router = APIRouter()
DECODERS = 2


@dataclass(frozen=True)
class ApiState:
    """What the routes share: the worker, the API's request queue, the voices and the limits."""

    worker: InferenceWorker
    jobs: JobQueue
    voices: ApiVoices
    library: VoiceLibrary
    max_input_chars: int
    max_upload_bytes: int
    timestamps: TimestampStore
    max_source_bytes: int = 100 * 1024 * 1024
    """The largest recording to re-voice (the guard refuses a larger body before it is read)."""
    decoding: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(DECODERS))
    """Recordings to re-voice decoded at once (each on a thread of its own); more wait their turn."""


def _state(request: Request) -> ApiState:
    state: ApiState = request.app.state.api
    return state


@router.get("/health")
async def health(request: Request) -> dict[str, Any]:
    state = _state(request)
    worker, jobs = state.worker, state.jobs
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
        "api_requests": jobs.requests(),
    }


@router.get("/v1/models")
async def models(request: Request) -> dict[str, Any]:
    pipe = _state(request).worker.pipeline
    return model_list(pipe.capabilities.variant if pipe is not None else None)


@router.get("/v1/models/{model_id}")
async def model(request: Request, model_id: str) -> dict[str, Any]:
    pipe = _state(request).worker.pipeline
    if pipe is None or not is_accepted(model_id, pipe.capabilities.variant):
        raise ApiError(404, f"The model {model_id!r} does not exist here.", "model_not_found", param="model")
    return model_object(model_id, pipe.capabilities.variant)


@router.get("/v1/audio/models")
async def audio_models(request: Request) -> dict[str, Any]:
    """The speech models, for clients that list them (Open WebUI reads ``models``, others ``data``)."""
    found = await models(request)
    found["models"] = [{"id": m["id"], "name": m["id"]} for m in found["data"]]
    return found


@router.get("/v1/voices")
async def list_voices(request: Request) -> dict[str, Any]:
    """The library's voices (``default_voice``: whether the model has its own voice too)."""
    state = _state(request)
    pipe = state.worker.pipeline
    data = [
        {"object": "voice", "id": v.name, "name": v.name, "seconds": round(v.seconds, 2)} for v in state.voices.list()
    ]
    default = pipe is not None and pipe.capabilities.has_default_voice
    return {"object": "list", "data": data, "default_voice": default}


@router.get("/v1/audio/voices")
async def list_audio_voices(request: Request) -> dict[str, Any]:
    """Every voice a request may name: the library's, then (when the model has its own voice) ``default`` and
    OpenAI's names, which speak in it; as ``data`` (OpenAI-style, Home Assistant) and ``voices`` (Open WebUI)."""
    found = await list_voices(request)
    data = found["data"]
    if found["default_voice"]:
        known = {v["id"].casefold() for v in data}
        builtin = [name for name in ("default", *sorted(OPENAI_VOICES)) if name not in known]
        data += [{"object": "voice", "id": n, "name": n, "builtin": True} for n in builtin]
    found["voices"] = [{"id": v["id"], "name": v["name"]} for v in data]
    return found


@router.delete("/v1/voices/{name}")
@router.delete("/v1/audio/voices/{name}")
async def delete_voice(request: Request, name: str) -> dict[str, Any]:
    state = _state(request)
    entry = state.voices.find(name)
    if entry is None:
        raise ApiError(404, f"There is no voice named {name!r}.", "voice_not_found")
    try:
        state.library.remove(entry.name)
    except OSError as exc:
        message = f"The voice could not be removed: {exc.strerror or exc}."
        raise ApiError(500, message, "write_failed", "server_error") from None
    return {"object": "voice.deleted", "id": entry.name, "deleted": True}


@router.post("/v1/voices", status_code=201)
@router.post("/v1/audio/voices", status_code=201)
async def add_voice(request: Request) -> dict[str, Any]:
    state = _state(request)
    name, filename, data = await _voice_upload(request, state)
    try:
        entry, reference = state.voices.add_upload(name, filename, data)
    except ChatterboxError as exc:
        raise bad_request(describe_error(exc, "api"), "invalid_audio", "file") from exc
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


@router.post("/v1/audio/speech")
async def speech(request: Request) -> Response:
    state = _state(request)
    fields, upload = await _speech_fields(request, state.max_upload_bytes)
    params = _speech_params(fields, state.max_input_chars)
    request_to_speak = _synthesis_request(state, params, upload)
    headers = _speech_headers(params)
    job, marks = _submit_speech(state, params, request_to_speak, headers)
    if job is None:  # nothing to say ("." is how Home Assistant tests a server): a short silence
        return silent_response(params, headers, marks)
    return await respond(job, params, request, headers, marks)


@router.post("/v1/dev/captioned_speech")
async def captioned_speech(request: Request) -> Response:
    """Kokoro-FastAPI's captioned speech (``/dev/captioned_speech``, as its clients call it): the audio as base64 in
    JSON with each word's start and end; ``stream`` (Kokoro's default) one JSON object per line as it is generated.
    Voices, checks and turns are ``/v1/audio/speech``'s."""
    state = _state(request)
    fields, _upload = await _speech_fields(request, state.max_upload_bytes, captioned=True)
    captioned = _captioned_params(fields)
    params = _checked_input(_speech_params_of(captioned), state.max_input_chars)
    request_to_speak = _synthesis_request(state, params, None)
    ignored = sorted(n for n in set(fields) - set(CaptionedParams.model_fields) if _HEADER_SAFE.fullmatch(n))[:20]
    headers = {IGNORED_HEADER: ", ".join(ignored)} if ignored else {}
    job, marks = _submit_speech(state, params, request_to_speak, headers)
    if job is None:
        return silent_captioned(params, headers, marks)
    volume = 1.0 if captioned.volume_multiplier is None else captioned.volume_multiplier
    return await respond_captioned(job, params, captioned.stream, volume, request, headers, marks)


@router.get("/v1/audio/speech/{request_id}/timestamps")
async def speech_timestamps(request: Request, request_id: int) -> dict[str, Any]:
    """The sentences' timestamps of a request that asked for them (``"timestamps": true``; with ``"word"``, their
    words)."""
    marks = _state(request).timestamps.get(request_id)
    if marks is None:
        message = f'No timestamps for request {request_id}: ask for them with "timestamps": true.'
        raise ApiError(404, message, "not_found")
    return marks.as_json()


@router.post("/v1/speech-to-speech/{voice_id}")
@router.post("/v1/speech-to-speech/{voice_id}/stream")
async def speech_to_speech(request: Request, voice_id: str) -> Response:
    """ElevenLabs' speech-to-speech (voice changer): the multipart file ``audio`` re-voiced in ``voice_id``, streamed
    as it is converted (both paths stream)."""
    state = _state(request)
    caps = _loaded(state.worker)
    fields, upload = await _conversion_fields(request, state.max_source_bytes)
    params = _conversion_params(fields, request.query_params)
    if params.model_id is not None and not is_conversion_model(params.model_id, caps.variant):
        known = ", ".join((*accepted_models(caps.variant), "eleven_english_sts_v2", "eleven_multilingual_sts_v2"))
        message = f"The model {params.model_id!r} does not exist here. Use one of: {known}."
        raise ApiError(404, message, "model_not_found", param="model_id")
    output = _conversion_output(params)
    enc = _encoder(output)
    voice = _named_voice(state.voices, voice_id, caps)
    try:
        state.jobs.check_room()  # before the decoding, which may take seconds
        async with state.decoding:
            source = await _conversion_source(state.voices, upload, params.file_format)
        job = state.jobs.convert(ConversionRequest(source, voice, params.seed), asyncio.get_running_loop())
    except QueueFull as exc:
        raise _queue_full(exc) from None
    ignored = _ignored_fields(fields, request.query_params)
    headers = {IGNORED_HEADER: ", ".join(ignored)} if ignored else {}
    return await respond_audio(job, enc, output.media_type, request, headers)


# --- the speech request's checks, in order -------------------------------------------------------------------------
Upload = tuple[str | None, bytes]
"""An uploaded recording: its file name and bytes."""


async def _speech_fields(
    request: Request, max_upload: int, captioned: bool = False
) -> tuple[dict[str, Any], Upload | None]:
    """The request's fields (JSON, or multipart with an optional ``voice_file``; ``captioned``: JSON only)."""
    if not captioned and request.headers.get("content-type", "").startswith("multipart/form-data"):
        form = await _form(request)
        try:
            fields: dict[str, Any] = {k: v for k, v in form.multi_items() if isinstance(v, str)}
            part = form.get("voice_file")
            upload = (
                (part.filename, await _read_upload(part, max_upload, "voice_file"))
                if isinstance(part, UploadFile)
                else None
            )
        finally:
            await form.close()
        return fields, upload
    try:
        body = json.loads(await request.body() or b"null")
    except ValueError:
        message = "The body is not valid JSON: send a JSON object with 'model', 'input' and 'voice'."
        raise bad_request(message, "invalid_json") from None
    if not isinstance(body, dict):
        raise bad_request("The body must be a JSON object with 'model', 'input' and 'voice'.", "invalid_json")
    return body, None


def _speech_params(fields: dict[str, Any], max_input_chars: int) -> SpeechParams:
    try:
        params = SpeechParams.model_validate(fields)
    except ValidationError as exc:
        raise _invalid(exc) from None
    return _checked_input(params, max_input_chars)


def _captioned_params(fields: dict[str, Any]) -> CaptionedParams:
    try:
        return CaptionedParams.model_validate(fields)
    except ValidationError as exc:
        raise _invalid(exc) from None


def _speech_params_of(captioned: CaptionedParams) -> SpeechParams:
    """A captioned request as the speech route takes it (its ``lang_code`` as a language)."""
    try:
        return captioned.speech()
    except ValidationError as exc:
        raise _invalid(exc) from None


def _checked_input(params: SpeechParams, max_input_chars: int) -> SpeechParams:
    """The text is not too long and not empty."""
    if len(params.input) > max_input_chars:
        message = f"'input' has {len(params.input):,} characters; at most {max_input_chars:,} are accepted per request."
        raise ApiError(413, message, "input_too_long", param="input")
    if not params.input.strip():
        raise bad_request("'input' is empty: give the text to speak.", "invalid_value", "input")
    return params


def _invalid(exc: ValidationError) -> ApiError:
    """A field of the wrong type, out of range or missing: 400, naming it (OpenAI's ``param``)."""
    errors = exc.errors()
    return bad_request(first_problem(errors), "invalid_value", first_param(errors))


INSTRUCTIONS_HEADER = "X-Instructions"
INSTRUCTIONS_IGNORED = "ignored: Chatterbox does not follow style instructions; use exaggeration and cfg_weight"
"""What ``instructions`` does here, said in a response header (and in docs/API.md)."""


def _speech_headers(params: SpeechParams) -> dict[str, str]:
    return {INSTRUCTIONS_HEADER: INSTRUCTIONS_IGNORED} if params.instructions else {}


def _synthesis_request(state: ApiState, params: SpeechParams, upload: Upload | None) -> SynthesisRequest:
    """What a speech request asks the worker for, checked against the loaded model: its model name, voice (a library
    name or this request's own recording), options and language (an :class:`ApiError` for any it cannot serve)."""
    caps = _loaded_model(state.worker, params.model)
    voice = _speech_voice(state.voices, params, upload, caps)
    options = _speech_options(params, caps)
    _check_language(state.worker, params.language)
    return SynthesisRequest(params.input, voice, options)


def _submit_speech(
    state: ApiState, params: SpeechParams, request: SynthesisRequest, headers: dict[str, str]
) -> tuple[Job | None, Timestamps | None]:
    """Queue ``request`` on the worker (429 when too many wait) with its timestamps where asked; ``(None, marks)`` for
    a text with nothing to say, whose silence the route answers itself (its id in ``headers``)."""
    parts = _speakable(params.input)
    if parts is None:
        rid = state.worker.new_request_id()
        headers["X-Request-Id"] = str(rid)
        return None, _timestamps(state, params, rid, [], headers)
    try:
        job = state.jobs.submit(request, asyncio.get_running_loop(), parts)
    except QueueFull as exc:
        raise _queue_full(exc) from None
    return job, _timestamps(state, params, job.request_id, job.sentences, headers)


def _queue_full(exc: QueueFull) -> ApiError:
    message = f"{exc.waiting} requests are already waiting; try again in {exc.retry_after} s."
    return ApiError(429, message, "queue_full", "rate_limit_error", {"Retry-After": str(exc.retry_after)})


def _speakable(text: str) -> list[Part] | None:
    """The request's sentences and silences, or ``None`` when nothing in it can be spoken."""
    try:
        return plan(text)
    except TextInputError as exc:
        if exc.code == "text.nothing_to_say":
            return None
        raise bad_request(describe_error(exc, "api"), "invalid_value", "input") from None


def _timestamps(
    state: ApiState, params: SpeechParams, request_id: int, texts: list[str], headers: dict[str, str]
) -> Timestamps | None:
    if not params.timestamps:
        return None
    headers["X-Timestamps-Url"] = f"/v1/audio/speech/{request_id}/timestamps"
    return state.timestamps.new(request_id, texts, params.words, params.language)


def _loaded(worker: InferenceWorker) -> Capabilities:
    """What the loaded model can do (503 while none is loaded)."""
    pipe = worker.pipeline
    if pipe is None or not worker.alive:
        raise ApiError(503, "No model is loaded yet.", "model_not_loaded", "server_error", {"Retry-After": "5"})
    return pipe.capabilities


def _loaded_model(worker: InferenceWorker, model: str) -> Capabilities:
    """What the loaded model can do (503 while none is loaded; 404 for a model name it does not answer to)."""
    caps = _loaded(worker)
    if not is_accepted(model, caps.variant):
        known = ", ".join(accepted_models(caps.variant))
        message = f"The model {model!r} does not exist here. Use one of: {known}."
        raise ApiError(404, message, "model_not_found", param="model")
    return caps


def _speech_voice(
    voices: ApiVoices, params: SpeechParams, upload: Upload | None, caps: Capabilities
) -> VoiceReference | None:
    try:
        if upload is not None:
            return voices.load_upload(*upload)
        return voices.resolve(params.voice, caps.has_default_voice)
    except UnknownVoice as exc:
        raise ApiError(404, describe_error(exc, "api"), "voice_not_found", param="voice") from None
    except ChatterboxError as exc:
        field = "voice_file" if upload is not None else "voice"
        raise bad_request(describe_error(exc, "api"), "invalid_audio", field) from None


def _speech_options(params: SpeechParams, caps: Capabilities) -> SynthesisOptions:
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
        field = exc.data.get("field")  # the option out of range (options.out_of_range); top_k has no field here
        raise bad_request(describe_error(exc, "api"), "invalid_value", str(field) if field else None) from None
    language = (params.language or "").lower()
    if language and caps.languages and language not in caps.languages:
        known = ", ".join(caps.languages)
        message = f"Language {params.language!r} is not one of the model's: {known}."
        raise bad_request(message, "invalid_value", "language")
    if language and not caps.languages and language != "en":  # as the engine's tokenizer refuses it, before the queue
        words = describe_error(TextInputError("text.english_only", language=params.language), "api")
        raise bad_request(f"Invalid 'language': {words}", "invalid_value", "language")
    return options


def _check_language(worker: InferenceWorker, language: str | None) -> None:
    """A language whose text cannot be read (Chinese without its table) is refused before the queue, in words."""
    pipe = worker.pipeline
    if not language or pipe is None:
        return
    try:
        pipe.check_language(language)
    except TextInputError as exc:
        raise bad_request(describe_error(exc, "api"), "invalid_value", "language") from None


# --- the speech-to-speech request's checks, in order ----------------------------------------------------------------
IGNORED_HEADER = "X-Ignored-Fields"
"""The fields and query parameters of a speech-to-speech request that were sent and are not honoured here."""


async def _conversion_fields(request: Request, max_source: int) -> tuple[dict[str, str], Upload]:
    """The form's text fields, and the recording (the multipart file ``audio``)."""
    form = await _form(request)
    try:
        fields = {k: v for k, v in form.multi_items() if isinstance(v, str)}
        upload = form.get("audio")
        if not isinstance(upload, UploadFile):
            message = "Send the recording to re-voice as the multipart/form-data file field 'audio'."
            raise bad_request(message, "missing_file", "audio")
        return fields, (upload.filename, await _read_source(upload, max_source))
    finally:
        await form.close()


def _conversion_params(fields: dict[str, str], query: Mapping[str, str]) -> ConversionParams:
    """The form's fields, with ElevenLabs' query parameter ``output_format`` (the query's wins)."""
    given: dict[str, Any] = dict(fields)
    if "output_format" in query:
        given["output_format"] = query["output_format"]
    try:
        return ConversionParams.model_validate(given)
    except ValidationError as exc:
        raise _invalid(exc) from None


def _conversion_output(params: ConversionParams) -> Output:
    if params.output_format:
        try:
            return parse_output_format(params.output_format)
        except ValueError as exc:
            raise bad_request(str(exc), "invalid_value", "output_format") from None
    return Output(params.response_format or "mp3")


def _encoder(output: Output) -> StreamEncoder:
    try:
        return output.encoder()
    except EncodeError as exc:
        raise bad_request(describe_error(exc, "api"), "invalid_value", "output_format") from None


def _named_voice(voices: ApiVoices, name: str, caps: Capabilities) -> VoiceReference | None:
    """A library voice by name (404 when there is none), or ``None`` for the model's own voice."""
    try:
        return voices.resolve(name, caps.has_default_voice)
    except UnknownVoice as exc:
        raise ApiError(404, describe_error(exc, "api"), "voice_not_found", param="voice_id") from None
    except ChatterboxError as exc:
        raise bad_request(describe_error(exc, "api"), "invalid_audio", "voice_id") from None


async def _conversion_source(voices: ApiVoices, upload: Upload, file_format: str) -> SourceRecording:
    """The uploaded recording, decoded and checked off the event loop (400 unusable, 413 longer than the engine
    takes)."""
    filename, data = upload
    try:
        return await in_thread(decode_source, voices, filename, data, file_format)
    except ChatterboxError as exc:
        if exc.code == "source.too_long":
            raise ApiError(413, describe_error(exc, "api"), "audio_too_long", param="audio") from None
        raise bad_request(describe_error(exc, "api"), "invalid_audio", "audio") from None
    except OSError as exc:
        message = f"The recording could not be staged: {exc.strerror or exc}."
        raise ApiError(500, message, "write_failed", "server_error") from None


def _ignored_fields(fields: dict[str, str], query: Mapping[str, str]) -> list[str]:
    """What was sent and is not honoured (names only, and only names a header can carry)."""
    sent = {*fields, *query} - CONVERSION_FIELDS
    return sorted(n for n in sent if _HEADER_SAFE.fullmatch(n))[:20]


_HEADER_SAFE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


# --- uploads -------------------------------------------------------------------------------------------------------
async def _voice_upload(request: Request, state: ApiState) -> tuple[str, str | None, bytes]:
    """``POST /v1/voices``: the new voice's name and its recording (checked: present, named, new, not too large)."""
    form = await _form(request)
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise bad_request("Send the reference recording as the multipart field 'file'.", "missing_file", "file")
        name = " ".join(str(form.get("name") or "").split()) or (upload.filename or "").rsplit(".", 1)[0]
        if not name:
            raise bad_request("Give the voice a name (the multipart field 'name').", "missing_name", "name")
        if len(name) > 60:
            raise bad_request("A voice name has at most 60 characters.", "invalid_value", "name")
        if state.library.get(name) is not None:
            raise ApiError(
                409, f"A voice named {name!r} exists already; choose another name.", "voice_exists", param="name"
            )
        return name, upload.filename, await _read_upload(upload, state.max_upload_bytes, "file")
    finally:
        await form.close()


async def _form(request: Request) -> FormData:
    try:
        return await request.form(max_files=1, max_fields=20)
    except ApiError:
        raise
    except Exception as exc:  # noqa: BLE001 - starlette / python-multipart parse errors
        raise bad_request(f"The multipart body cannot be read: {exc}.", "invalid_multipart") from None


async def _read_upload(upload: UploadFile, limit: int, field: str) -> bytes:
    data = await upload.read(limit + 1)
    if len(data) > limit:
        message = f"The recording is larger than {limit // (1024 * 1024)} MB; send 5–30 s of speech."
        raise ApiError(413, message, "file_too_large")
    if not data:
        raise bad_request("The uploaded recording is empty.", "invalid_audio", field)
    return data


async def _read_source(upload: UploadFile, limit: int) -> bytes:
    data = await upload.read(limit + 1)
    if len(data) > limit:
        message = f"The recording is larger than {limit / 2**20:.3g} MB; send a shorter or compressed one."
        raise ApiError(413, message, "file_too_large")
    if not data:
        raise bad_request("The uploaded recording is empty.", "invalid_audio", "audio")
    return data


def _worker_status(status: WorkerStatus) -> dict[str, Any]:
    """What the worker runs, pauses and has waiting, by request id, kind and priority (no labels: ``/health`` needs
    no key, and a label may name the window's book)."""

    def info(job: JobInfo | None) -> dict[str, Any] | None:
        return None if job is None else job.as_dict(label=False)

    return {
        "running": info(status.running),
        "paused": info(status.paused),
        "waiting": [info(job) for job in status.waiting],
    }
