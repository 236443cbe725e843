"""What the local speech API accepts: the speech request's fields (OpenAI's plus ours) and the model names."""

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


def first_problem(errors) -> str:
    """One readable line from pydantic's errors: ``speed: Input should be less than or equal to 4``."""
    if not errors:
        return "The request is not valid."
    error = errors[0]
    where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
    message = error.get("msg", "is not valid")
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"
