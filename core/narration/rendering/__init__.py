"""Rendering a project on this computer: pending segments through the pipeline into takes, as steps
(``render.py``), the next segments' tokens batched ahead (``lookahead.py``), and the render as a job of the
inference worker (``job.py``); re-takes, candidates and the best take (``take_choice.py``); a take performed by a
person, re-voiced into the segment's voice (``perform.py``); the options every render speaks a segment with, a short
line's own token cap included (``short_lines.py``); each take's words and their times, aligned beside the render
and on demand (``take_words.py``)."""

from core.narration.rendering.job import RenderDone, RenderJob, RenderStep
from core.narration.rendering.perform import (
    Performance,
    load_recording,
    perform_segment,
    performance_source,
    plan_performance,
    store_performance,
)
from core.narration.rendering.render import (
    RenderProgress,
    RenderSummary,
    clock,
    pending_steps,
    regenerate,
    regenerate_steps,
    render_pending,
    run_steps,
    store_take,
)
from core.narration.rendering.take_choice import MAX_EXTRA_TAKES, ONE_TAKE, TakePolicy, render_todo
from core.narration.rendering.take_words import (
    AlignReport,
    align_takes,
    has_words,
    store_alignments,
    take_alignment,
    takes_to_align,
)

__all__ = [
    "AlignReport",
    "align_takes",
    "has_words",
    "take_alignment",
    "store_alignments",
    "takes_to_align",
    "MAX_EXTRA_TAKES",
    "ONE_TAKE",
    "TakePolicy",
    "Performance",
    "load_recording",
    "perform_segment",
    "performance_source",
    "plan_performance",
    "store_performance",
    "RenderDone",
    "RenderJob",
    "RenderProgress",
    "RenderStep",
    "RenderSummary",
    "clock",
    "pending_steps",
    "regenerate",
    "regenerate_steps",
    "render_pending",
    "render_todo",
    "run_steps",
    "store_take",
]
