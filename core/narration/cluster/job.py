"""A project rendered on a Ray cluster as a background job for the engine's inference worker.

It reports the same events as :class:`~core.narration.rendering.job.RenderJob` (:class:`RenderStep` with ``segment`` /
``failed`` progress, then :class:`RenderDone` or ``Cancelled``), so a front end treats both alike. The owner — this
process, holding the project and its lock — computes the voice conditioning on the worker's current pipeline, sends
work units to Ray actors that load the same model folder, and stores each take as it arrives
(:mod:`core.narration.cluster.render`). A cluster that cannot be reached, or Ray missing, fails the job with its
:class:`~core.narration.cluster.connect.ClusterError`. Between two arrivals the job yields, so that interactive
requests (Speak, the API) run on this computer meanwhile.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from core.engine import Cancelled, EventSink, JobContext, Pipeline, Priority, RuntimeOptions
from core.narration.cluster.render import ClusterStats, cluster_steps
from core.narration.projects.project import Project
from core.narration.rendering.job import RenderDone, RenderStep
from core.narration.rendering.render import RenderProgress
from core.narration.rendering.take_choice import ONE_TAKE, TakePolicy


@dataclass(frozen=True)
class ClusterRenderJob:
    """Render a project's pending segments (or only ``numbers`` among them) on Ray actors at ``address``
    (``None``: a local Ray instance on this computer; ``"auto"``, ``"HOST:6379"`` or ``"ray://HOST:10001"``: a
    cluster). The actors load the worker's current pipeline's model folder, with this job's runtime."""

    request_id: int
    project: Project
    address: str | None
    numbers: tuple[int, ...] | None = None
    runtime: RuntimeOptions | None = None
    sink: EventSink | None = None
    priority: Priority = Priority.BACKGROUND
    kind: str = "render"
    actors: int | None = None
    """How many actors (``None``: one per GPU, else one per few CPU cores)."""
    stats: ClusterStats | None = None
    """Filled as the render goes (address, nodes, actors, re-queued units, Ray's start-up seconds)."""
    policy: TakePolicy = ONE_TAKE
    """Re-takes of flagged takes and candidates, made by the actors (speech recognition is not run on them)."""

    @property
    def label(self) -> str:
        return self.project.title

    def steps(self, context: JobContext) -> Generator[None, None, object]:
        rid = self.request_id

        def progress(step: RenderProgress) -> None:
            context.emit(RenderStep(rid, step))

        def pipeline() -> Pipeline:  # the worker's current pipeline, on this job's runtime, at every step
            return context.pipeline

        numbers = list(self.numbers) if self.numbers is not None else None
        summary = yield from cluster_steps(
            self.project,
            pipeline,
            self.address,
            progress,
            context.cancelled,
            numbers,
            self.actors,
            self.stats,
            connect_aside=True,  # Speak and the API go on while Ray starts (10-16 s)
            policy=self.policy,
        )
        return Cancelled(rid) if summary.cancelled else RenderDone(rid, summary)
