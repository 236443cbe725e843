"""What the local speech API accepts: the speech request's fields (OpenAI's plus ours), the speech-to-speech
request's (ElevenLabs'), and the model names."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

OPENAI_MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts")
"""OpenAI's speech model ids: accepted as aliases of the loaded model, so existing clients work unchanged."""


class SpeechParams(BaseModel):
    """``POST /v1/audio/speech``: OpenAI's fields, the Chatterbox controls other Chatterbox servers take
    (``exaggeration``, ``cfg_weight``, ``temperature``, ``seed``), ``language`` and ``timestamps``. Unknown fields are
    ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = "tts-1"
    input: str
    voice: str | None = None
    """A voice-library name (any case); ``default``, empty or an OpenAI name (``alloy`` …): the model's own voice.
    Newer SDKs send ``{"id": "..."}``: taken as the id."""
    response_format: Literal["mp3", "opus", "aac", "flac", "wav", "pcm"] = "mp3"
    stream_format: Literal["audio", "sse"] = "audio"
    instructions: str | None = None
    """Accepted and not followed: Chatterbox has no instruction-following voice (the response says so)."""
    timestamps: bool = False
    """Our extension: each sentence's start and end in the audio (SSE events, and a JSON companion)."""
    speed: float = Field(1.0, ge=0.25, le=4.0)
    seed: int | None = Field(None, ge=0, lt=2**31)
    exaggeration: float | None = None
    cfg_weight: float | None = None
    temperature: float | None = None
    language: str | None = None

    @field_validator("voice", mode="before")
    @classmethod
    def _voice_id(cls, value: object) -> object:
        if isinstance(value, dict):
            return value.get("id", value.get("name"))
        return value

    @field_validator("response_format", "stream_format", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class ConversionParams(BaseModel):
    """``POST /v1/speech-to-speech/{voice_id}``: the fields of ElevenLabs' speech-to-speech request that mean something
    here (the recording itself is the multipart file ``audio``), plus OpenAI's ``response_format``. Other fields
    (``voice_settings``, ``remove_background_noise``, ``enable_logging``, ``optimize_streaming_latency`` …) are
    ignored, and named in the response's ``X-Ignored-Fields``."""

    model_config = ConfigDict(extra="ignore")

    model_id: str | None = None
    """ElevenLabs' speech-to-speech ids (``eleven_english_sts_v2`` …) or the loaded model's names: all answered by the
    loaded model's voice conversion."""
    seed: int | None = Field(None, ge=0, le=2**32 - 1)
    """ElevenLabs' range; the same seed gives the same audio."""
    output_format: str | None = None
    """ElevenLabs' ``codec_rate[_kbps]`` (``mp3_44100_128``, ``pcm_16000``, ``opus_48000_64``) or one of our formats;
    taken from the query (as ElevenLabs sends it) or the form."""
    response_format: Literal["mp3", "opus", "aac", "flac", "wav", "pcm"] | None = None
    file_format: Literal["other", "pcm_s16le_16"] = "other"
    """``pcm_s16le_16``: the upload is raw 16-bit little-endian mono PCM at 16 kHz."""

    @field_validator("response_format", "file_format", "output_format", mode="before")
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("model_id", "seed", mode="before")
    @classmethod
    def _blank(cls, value: object) -> object:
        """A form field sent empty means "not given" (as a web form sends an unfilled input)."""
        return None if isinstance(value, str) and not value.strip() else value


CONVERSION_FIELDS = frozenset(ConversionParams.model_fields) | {"audio"}
"""The fields and query parameters the speech-to-speech route honours."""


def is_conversion_model(model: str, variant: str) -> bool:
    """Whether ``model`` names a model that re-voices here: the loaded model's names, OpenAI's aliases, or any of
    ElevenLabs' speech-to-speech models (``eleven_english_sts_v2``, ``eleven_multilingual_sts_v2``)."""
    name = model.strip().lower()
    return is_accepted(name, variant) or (name.startswith("eleven_") and "_sts" in name)


def accepted_models(variant: str) -> tuple[str, ...]:
    return (f"chatterbox-{variant}", "chatterbox", *OPENAI_MODELS)


def is_accepted(model: str, variant: str) -> bool:
    """Whether ``model`` names the loaded model: its own names or OpenAI's speech models (any case, dated too:
    ``gpt-4o-mini-tts-2025-03-20``)."""
    name = model.strip().lower()
    return name in accepted_models(variant) or name.startswith(OPENAI_MODELS)


def model_object(model_id: str, variant: str) -> dict:
    """One model as OpenAI lists it; an alias says which loaded model answers it (``alias_of``)."""
    found = {"id": model_id, "object": "model", "created": 0, "owned_by": "chatterbox-desk"}
    if model_id != f"chatterbox-{variant}":
        found["alias_of"] = f"chatterbox-{variant}"
    return found


def model_list(variant: str | None) -> dict:
    """OpenAI's list format: the loaded model first, then the aliases it answers to (empty without a model)."""
    ids = accepted_models(variant) if variant else ()
    return {"object": "list", "data": [model_object(i, variant or "") for i in ids]}


_SOURCES = ("body", "path", "query", "header", "cookie")
"""Where FastAPI says a parameter came from: not part of the field's name."""


def first_param(errors) -> str | None:
    """The field at fault in pydantic's first error (``speed``, ``voice.id``), as OpenAI's ``param``; ``None`` when
    the request as a whole is at fault."""
    if not errors:
        return None
    loc = [str(p) for p in errors[0].get("loc", ())]
    if loc and loc[0] in _SOURCES:
        loc = loc[1:]
    return ".".join(loc) or None


def first_problem(errors) -> str:
    """One readable line from pydantic's errors, naming the field: ``Invalid 'speed': Input should be less than or
    equal to 4 (got 10.0).``, ``'input' is required.``"""
    if not errors:
        return "The request is not valid."
    error = errors[0]
    where = first_param(errors)
    message = str(error.get("msg", "is not valid"))
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    if where is None:
        return f"{message}{more}."
    if error.get("type") == "missing":
        return f"'{where}' is required{more}."
    value = error.get("input")
    got = f" (got {value!r})" if isinstance(value, (str, int, float, bool)) and len(repr(value)) <= 40 else ""
    return f"Invalid '{where}': {message}{got}{more}."
