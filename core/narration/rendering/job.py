"""A project render as a background job for the engine's inference worker, and the events it reports.

The job runs the same steps as :func:`~core.narration.rendering.render.render_pending` /
:func:`~core.narration.rendering.render.regenerate` (the command line runs them straight through): one step per
segment, so that the worker can run interactive requests (Speak, an API request) between two segments and then go on
with the render, with the takes it would have had. The project belongs to the worker until :class:`RenderDone`,
``Failed`` or ``Cancelled`` arrives: the window reads it on events but does not change it meanwhile.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass

from core.engine import Cancelled, EventSink, JobContext, Pipeline, Priority, RuntimeOptions
from core.narration.projects.project import Project
from core.narration.rendering.render import RenderProgress, RenderSummary, pending_steps, regenerate_steps
from core.narration.rendering.take_choice import ONE_TAKE, TakePolicy


@dataclass(frozen=True)
class RenderStep:
    """A chunk of a segment being rendered, or a segment done / failed (``progress.kind``)."""

    request_id: int
    progress: RenderProgress


@dataclass(frozen=True)
class RenderDone:
    request_id: int
    summary: RenderSummary


@dataclass(frozen=True)
class RenderJob:
    """Render a project's pending segments (or only ``numbers`` among them), or a new take of one segment."""

    request_id: int
    project: Project
    regenerate: int | None = None
    """A segment number: render a new take of it (``seed`` or a new one) instead of the pending segments."""
    seed: int | None = None
    numbers: tuple[int, ...] | None = None
    """Only these pending segments (``None``: all)."""
    runtime: RuntimeOptions | None = None
    sink: EventSink | None = None
    """Where the job's events go (``None``: the worker's own queue)."""
    priority: Priority = Priority.BACKGROUND
    kind: str = "render"
    policy: TakePolicy = ONE_TAKE
    """Re-takes of flagged takes, candidates, speech recognition (:class:`TakePolicy`)."""

    @property
    def label(self) -> str:
        title = self.project.title
        return title if self.regenerate is None else f"{title}, segment {self.regenerate}"

    def steps(self, context: JobContext) -> Generator[None, None, object]:
        rid = self.request_id

        def progress(step: RenderProgress) -> None:
            context.emit(RenderStep(rid, step))

        def pipeline() -> Pipeline:  # the worker's current pipeline, on this job's runtime, at every step
            return context.pipeline

        if self.regenerate is not None:
            steps = regenerate_steps(
                self.project, pipeline, self.regenerate, self.seed, progress, context.cancelled, self.policy
            )
        else:
            numbers = list(self.numbers) if self.numbers is not None else None
            steps = pending_steps(self.project, pipeline, progress, context.cancelled, numbers, self.policy)
        summary = yield from steps
        return Cancelled(rid) if summary.cancelled else RenderDone(rid, summary)
