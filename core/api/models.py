"""What the local speech API accepts: the speech request's fields (OpenAI's plus ours) and the model names."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

OPENAI_MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts")
"""OpenAI's speech model ids: accepted as aliases of the loaded model, so existing clients work unchanged."""


class SpeechParams(BaseModel):
    """``POST /v1/audio/speech``. Unknown fields (OpenAI's ``instructions``, ``stream_format``) are ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = "tts-1"
    input: str
    voice: str | None = None
    """A voice-library name; ``default``, empty or an OpenAI name (``alloy`` …): the model's own voice."""
    response_format: Literal["mp3", "opus", "flac", "wav", "pcm"] = "mp3"
    speed: float = Field(1.0, ge=0.25, le=4.0)
    seed: int | None = Field(None, ge=0, lt=2**31)
    exaggeration: float | None = None
    cfg_weight: float | None = None
    temperature: float | None = None
    language: str | None = None


def accepted_models(variant: str) -> tuple[str, ...]:
    return (f"chatterbox-{variant}", "chatterbox", *OPENAI_MODELS)


def model_list(variant: str | None) -> dict:
    """OpenAI's list format: the loaded model first, then the aliases it answers to (empty without a model)."""
    ids = accepted_models(variant) if variant else ()
    return {
        "object": "list",
        "data": [{"id": i, "object": "model", "created": 0, "owned_by": "chatterbox-desk"} for i in ids],
    }


def first_problem(errors) -> str:
    """One readable line from pydantic's errors: ``speed: Input should be less than or equal to 4``."""
    if not errors:
        return "The request is not valid."
    error = errors[0]
    where = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
    message = error.get("msg", "is not valid")
    more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
    return f"{where}: {message}{more}" if where else f"{message}{more}"
