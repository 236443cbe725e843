"""A project rendered by Ray actors (in progress: the render itself lands in the next commit)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from core.narration.project import Project
from core.narration.render import PipelineSource, Progress, RenderSteps


@dataclass
class ClusterStats:
    """What a cluster render reports beside its summary (the CLI's ``--json`` ``cluster`` object)."""

    address: str = ""
    nodes: int = 0
    actors: int = 0
    requeued_units: int = 0
    startup_s: float = 0.0
    units: int = 0
    per_actor: dict[str, dict] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {
            "address": self.address,
            "nodes": self.nodes,
            "actors": self.actors,
            "units": self.units,
            "requeued_units": self.requeued_units,
            "startup_s": round(self.startup_s, 2),
        }


def cluster_steps(
    project: Project,
    pipeline: PipelineSource,
    address: str | None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    numbers: list[int] | None = None,
    actors: int | None = None,
    stats: ClusterStats | None = None,
) -> RenderSteps:
    raise NotImplementedError("the cluster render lands in the next commit")
    yield
