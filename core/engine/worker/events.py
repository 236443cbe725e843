"""What the inference thread reports: model loading, and each request's start, audio, end, failure or cancel."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.engine.model.model_parts import Capabilities
from core.engine.streaming.synthesis import AudioChunk, RequestReport


@dataclass(frozen=True)
class ModelLoaded:
    bundle: Path
    capabilities: Capabilities
    notice: str | None
    """The provider notice, or why the worker moved to the CPU after a GPU failure."""

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
    bundle: Path
    message: str


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
    request_id: int
    message: str
    internal: bool = False


@dataclass(frozen=True)
class Cancelled:
    request_id: int
