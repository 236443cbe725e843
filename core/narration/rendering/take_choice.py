"""Which takes a render makes and keeps: re-takes of flagged takes and candidates (:class:`TakePolicy`), the segments a
render takes up, the best take chosen, and a render's screens settled at its end against the whole book."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.narration.projects.project import Project, Segment, Take
from core.narration.screening import Screener, best_take, is_flagged, segment_flagged

MAX_EXTRA_TAKES = 10
"""The most re-takes, and candidates, a render makes of one segment."""


@dataclass(frozen=True)
class TakePolicy:
    """How many takes a render makes of each segment, and how they are screened."""

    retakes: int = 0
    """A take the screen flags is rendered again with a new seed, up to this many more times; the best-scoring
    take is chosen and every take is kept."""
    candidates: int = 1
    """Takes of every segment (each with its own seed); the best-scoring one is chosen."""
    recogniser: Any = None
    """Speech recognition for every take (:class:`core.narration.screening.recognition.Recogniser`; ``None``: the
    screen listens without it)."""
    words: bool = True
    """Align each chosen take's words (:mod:`core.narration.rendering.take_words`) on a thread beside the render."""

    def __post_init__(self) -> None:
        if not 0 <= self.retakes <= MAX_EXTRA_TAKES or not 1 <= self.candidates <= MAX_EXTRA_TAKES:
            raise ValueError(f"re-takes 0-{MAX_EXTRA_TAKES}, candidates 1-{MAX_EXTRA_TAKES}")


ONE_TAKE = TakePolicy()


def render_todo(project: Project, numbers: list[int] | None, policy: TakePolicy = ONE_TAKE) -> list[Segment]:
    """What a render does: the pending (and failed) segments, or those ``numbers`` among them; with re-takes also
    the rendered segments whose chosen take is flagged (rendered again with a new seed), unless a person performed
    that take (:mod:`core.narration.rendering.perform`): the model does not take a performance over, a person
    reviews it."""
    wanted = set(numbers) if numbers is not None else None
    return [
        s
        for n, s in enumerate(project.segments, 1)
        if (wanted is None or n in wanted)
        and (project.status(s) not in ("rendered", "skipped") or (policy.retakes > 0 and _retaken(project, s)))
    ]


def _retaken(project: Project, segment: Segment) -> bool:
    take = project.chosen_take(segment)
    return take is not None and not take.is_performed and segment_flagged(project, segment)


def settle_screens(project: Project, screener: Screener, todo: list[Segment], policy: TakePolicy) -> int:
    """The end of a render: its takes judged again against the whole book (the first ones were judged before their
    voice's rate or the book's loudness was known), the best take chosen again where there was a choice, stored in
    one transaction. How many of ``todo`` are flagged."""
    changed = {s.id: s for s in screener.settle()}
    if policy.candidates > 1 or policy.retakes:
        for segment in todo:
            best = best_take(project, segment) if len(segment.takes) > 1 and not segment.error else None
            if best is not None and best != segment.chosen:
                segment.chosen = best
                changed[segment.id] = segment
    if changed:
        project.save(list(changed.values()))
    return sum(1 for s in todo if not s.error and is_flagged(project.chosen_take(s)))


def choose_best(project: Project, segment: Segment) -> Take:
    """The best-scoring current take of ``segment`` chosen (and stored, when that changes the choice)."""
    best = best_take(project, segment)
    if best is not None and best != segment.chosen:
        segment.chosen = best
        project.save([segment])
    chosen = project.chosen_take(segment)
    assert chosen is not None
    return chosen
