"""What the inference thread reports: model loading, and each request's start, audio, end, failure or cancel."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.engine.errors import Notice
from core.engine.model.model_parts import Capabilities
from core.engine.streaming.synthesis import AudioChunk, RequestReport


@dataclass(frozen=True)
class ModelLoaded:
    bundle: Path
    capabilities: Capabilities
    notice: Notice | None
    """The provider notice, or why the worker moved to the CPU after a GPU failure (a code and data)."""

    @property
    def variant(self) -> str:
        return self.capabilities.variant


@dataclass(frozen=True)
class LoadProgress:
    """A graph of the bundle being loaded started (``seconds`` is ``None``) or finished loading."""

    bundle: Path
    graph: str
    seconds: float | None


@dataclass(frozen=True)
class ModelFailed:
    """The bundle could not be loaded: ``code`` and ``data`` say why (:mod:`core.wording` words them)."""

    bundle: Path
    code: str
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Started:
    request_id: int


@dataclass(frozen=True)
class Chunk:
    request_id: int
    chunk: AudioChunk


@dataclass(frozen=True)
class Finished:
    request_id: int
    report: RequestReport


@dataclass(frozen=True)
class Failed:
    """A request failed: ``code`` and ``data`` say why; ``internal`` marks a bug or a device failure (not the input)."""

    request_id: int
    code: str
    data: dict[str, Any] = field(default_factory=dict)
    internal: bool = False


@dataclass(frozen=True)
class Cancelled:
    request_id: int
