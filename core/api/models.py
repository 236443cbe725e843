"""What the local speech API accepts: the speech request's fields (OpenAI's plus ours), the speech-to-speech
request's (ElevenLabs'), and the model names."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

OPENAI_MODELS = ("tts-1", "tts-1-hd", "gpt-4o-mini-tts")
"""OpenAI's speech model ids: accepted as aliases of the loaded model, so existing clients work unchanged."""


class _Speaking(BaseModel):
    """What every speech request here takes: the text, a voice, the audio format, the pace, and the Chatterbox
    controls other Chatterbox servers take (``exaggeration``, ``cfg_weight``, ``temperature``, ``seed``) and
    ``language``. Unknown fields are ignored."""

    model_config = ConfigDict(extra="ignore")

    input: str
    voice: str | None = None
    """A voice-library name (any case); ``default``, empty or an OpenAI name (``alloy`` …): the model's own voice.
    Newer SDKs send ``{"id": "..."}``: taken as the id."""
    response_format: Literal["mp3", "opus", "aac", "flac", "wav", "pcm"] = "mp3"
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

    @field_validator("response_format", "stream_format", mode="before", check_fields=False)
    @classmethod
    def _lower(cls, value: object) -> object:
        return value.strip().lower() if isinstance(value, str) else value


class SpeechParams(_Speaking):
    """``POST /v1/audio/speech``: OpenAI's fields, the Chatterbox controls, ``language`` and ``timestamps``."""

    model: str = "tts-1"
    stream_format: Literal["audio", "sse"] = "audio"
    instructions: str | None = None
    """Accepted and not followed: Chatterbox has no instruction-following voice (the response says so)."""
    timestamps: bool | Literal["sentence", "word"] = False
    """Our extension: each sentence's start and end in the audio (SSE events, and a JSON companion); ``"word"``: each
    sentence's words too. ``true`` is taken as ``"sentence"``."""

    @field_validator("timestamps", mode="before")
    @classmethod
    def _timestamps(cls, value: object) -> object:
        return timestamps_choice(value)

    @property
    def words(self) -> bool:
        """Whether each sentence's words are asked for (``"timestamps": "word"``)."""
        return self.timestamps == "word"


TIMESTAMPS_ACCEPTED = 'true, false, "sentence" or "word"'
_TIMESTAMPS_ON = {
    "sentence": "sentence",
    "word": "word",
    **dict.fromkeys(("true", "1", "on", "yes", "y", "t"), "sentence"),
}
_TIMESTAMPS_OFF = ("false", "0", "off", "no", "n", "f", "")


def timestamps_choice(value: object) -> bool | str:
    """``timestamps`` as given (JSON, or a multipart form's text; what a boolean took before stays accepted):
    ``False``, ``"sentence"`` or ``"word"``; a readable error for anything else."""
    if isinstance(value, bool):
        return "sentence" if value else False
    if value is None:
        return False
    if isinstance(value, (int, float)) and value in (0, 1):
        return "sentence" if value else False
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _TIMESTAMPS_OFF:
            return False
        if key in _TIMESTAMPS_ON:
            return _TIMESTAMPS_ON[key]
    raise PydanticCustomError("timestamps", f"must be {TIMESTAMPS_ACCEPTED}")


KOKORO_LANGUAGES = {"a": "en", "b": "en", "e": "es", "f": "fr", "h": "hi", "i": "it", "j": "ja", "p": "pt", "z": "zh"}
"""Kokoro's one-letter ``lang_code`` (American and British English, Spanish, French, Hindi, Italian, Japanese,
Brazilian Portuguese, Mandarin) as a language code."""
KOKORO_CONTENT_TYPES = {
    "mp3": "audio/mpeg",
    "opus": "audio/opus",
    "aac": "audio/aac",
    "flac": "audio/flac",
    "wav": "audio/wav",
    "pcm": "audio/pcm",
}
"""What Kokoro-FastAPI says in ``audio_format`` for each ``response_format`` (its ``Content-Type`` names)."""


class CaptionedParams(_Speaking):
    """``POST /dev/captioned_speech``: Kokoro-FastAPI's captioned speech request (speech with each word's start and
    end), plus the Chatterbox controls ``/v1/audio/speech`` takes. ``voice`` is as ``/v1/audio/speech`` takes it
    (Kokoro's own voice names, ``af_heart`` …, are not voices here). ``return_download_link``, ``download_format``
    and ``normalization_options`` are accepted and not honoured (named in ``X-Ignored-Fields``); other fields are
    ignored too."""

    model: str = "kokoro"
    """``kokoro`` (what Kokoro clients send), the loaded model's names or OpenAI's: all the loaded model."""
    stream: bool = True
    """Kokoro's default: newline-delimited JSON, one object per piece of audio as it is generated."""
    return_timestamps: bool = True
    lang_code: str | None = None
    """Kokoro's one-letter codes (``a``, ``b``: English; ``f``: French …) or a language code (``fr``); ``language``
    (ours) wins over it."""
    volume_multiplier: float | None = Field(1.0, ge=0.0, le=10.0)

    def speech(self) -> SpeechParams:
        """The same request as ``/v1/audio/speech`` takes it (word timestamps when they are asked for)."""
        model = self.model.strip()
        language = self.language or self.lang_code
        if language and not self.language:
            language = KOKORO_LANGUAGES.get(language.strip().lower(), language)
        fields: dict[str, Any] = {
            **{name: getattr(self, name) for name in _Speaking.model_fields},
            "model": "chatterbox" if model.lower().startswith("kokoro") or not model else model,
            "timestamps": "word" if self.return_timestamps else False,
            "language": language,
        }
        return SpeechParams.model_validate(fields)


CAPTIONED_IGNORED = ("return_download_link", "download_format", "normalization_options")
"""Kokoro's fields that are accepted and not honoured here."""


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
