"""Typed errors that carry a neutral ``code`` and ``data``, never a sentence for a person.

Each error names what went wrong with a stable code (``"voice.too_short"``, ``"bundle.file_missing"``…) and the facts
in ``data`` (paths, seconds, fields, limits). The front ends (the window, the CLI, the HTTP API) choose the words a
person reads from the code with :func:`core.wording.describe`; ``str(exc)`` is a technical line for logs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_CODE = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)+")


def is_code(text: str) -> bool:
    """Whether ``text`` has the shape of an error code (dotted, lower case: ``"voice.too_short"``)."""
    return bool(_CODE.fullmatch(text))


class ChatterboxError(Exception):
    """Base class for errors caused by the user's input, files or machine (CLI exit code 2).

    ``code`` says what went wrong, ``data`` holds the facts (JSON-friendly values: text, numbers, lists)."""

    def __init__(self, code: str, /, **data: Any) -> None:
        if not is_code(code):
            raise ValueError(f"not an error code: {code!r}")
        super().__init__(code)
        self.code = code
        self.data: dict[str, Any] = data

    def __str__(self) -> str:
        return technical_line(self.code, self.data)

    def __reduce__(self) -> tuple[Any, ...]:  # keeps code and data across pickling (process pools)
        return (_rebuild, (type(self), self.code, self.data))


def _rebuild(kind: type[ChatterboxError], code: str, data: dict[str, Any]) -> ChatterboxError:
    error = kind.__new__(kind)  # not through __init__: subclasses may take other arguments (and set the code)
    Exception.__init__(error, code)
    error.code, error.data = code, dict(data)
    return error


def technical_line(code: str, data: dict[str, Any]) -> str:
    """``code: key=value, …`` on one line, for logs and for people who read them."""
    if not data:
        return code
    return f"{code}: " + ", ".join(f"{key}={value!r}" for key, value in data.items())


@dataclass(frozen=True)
class Notice:
    """Something a person should know that is not an error (the model runs on the CPU, and why): a code and data,
    worded by the front ends like an error's."""

    code: str
    data: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return technical_line(self.code, self.data)


class BundleError(ChatterboxError):
    """The model folder cannot be used."""


class ModelFilesMissing(BundleError):
    """A graph, its ``.onnx_data`` sidecar or ``tokenizer.json`` is not in the bundle."""


class ModelSignatureError(BundleError):
    """A graph's inputs or outputs do not match the Chatterbox ONNX contract (or the graphs do not belong together)."""


class ModelLoadError(BundleError):
    """onnxruntime could not read a graph (corrupt, truncated, or needs a newer onnxruntime)."""


class VoiceReferenceError(ChatterboxError):
    """The reference recording cannot be used to clone a voice."""


class TextInputError(ChatterboxError):
    """The text cannot be spoken (empty, nothing pronounceable, unsupported language)."""


class InvalidOptions(ChatterboxError, ValueError):
    """A synthesis or runtime option is out of range."""


class SynthesisCancelled(ChatterboxError):
    """The request was cancelled between decode steps."""

    def __init__(self, code: str = "synthesis.cancelled", /, **data: Any) -> None:
        super().__init__(code, **data)


def first_line(text: str, limit: int = 300, default: str = "") -> str:
    """The first line of an error text, cut to ``limit`` characters (``default`` when there is none)."""
    line = text.strip().splitlines()[0] if text.strip() else default
    return line if len(line) <= limit else line[:limit] + "…"
