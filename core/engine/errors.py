"""Typed, actionable errors. Each message says what went wrong, names the file, and says what to do."""

from __future__ import annotations


class ChatterboxError(Exception):
    """Base class for errors caused by the user's input, files or machine (CLI exit code 2)."""


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


def first_line(text: str, limit: int = 300, default: str = "") -> str:
    """The first line of an error text, cut to ``limit`` characters (``default`` when there is none)."""
    line = text.strip().splitlines()[0] if text.strip() else default
    return line if len(line) <= limit else line[:limit] + "…"
