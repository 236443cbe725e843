"""The studio's review of flagged takes, as data and words: which flagged segment comes next or before, the other
take worth hearing, and what the review bar says about one segment. No widgets.

A take is *flagged* when the take screen found reasons to listen to it and nobody accepted it; a segment when its
chosen take is (:func:`core.narration.segment_flagged`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from typing import Any

from core.narration import Project, best_take, reasons_of
from core.wording import describe_reason

TEXT_CHARS = 320
"""The review bar shows this much of a segment's text (all of it in the tooltip)."""
HEARD_CHARS = 160
NOTHING = "No takes need review."


def step(flagged: list[int], number: int | None, forward: bool = True) -> int | None:
    """The flagged segment after (or before) ``number`` in ``flagged`` (sorted), going round at the end; the first
    (or last) when ``number`` is ``None``; ``None`` when nothing is flagged."""
    if not flagged:
        return None
    if number is None:
        return flagged[0] if forward else flagged[-1]
    if forward:
        at = bisect_right(flagged, number)
        return flagged[at] if at < len(flagged) else flagged[0]
    at = bisect_left(flagged, number)
    return flagged[at - 1] if at > 0 else flagged[-1]


def alternative_take(project: Project, segment: Any) -> int | None:
    """The best-scoring current take of ``segment`` other than the chosen one (1-based; ``None``: it has none).

    Ranked by the core's own :func:`~core.narration.best_take`, asked about the segment without its chosen take
    (a copy: the project is not touched)."""
    others = [(index, take) for index, take in enumerate(segment.takes) if index != segment.chosen]
    if not others:
        return None
    best = best_take(project, replace(segment, takes=[take for _index, take in others], chosen=None))
    return others[best][0] + 1 if best is not None else None


@dataclass(frozen=True)
class ReviewView:
    """What the review bar shows of one segment."""

    number: int
    position: int | None
    """1-based among the flagged segments (``None``: this one is not flagged, or no longer)."""
    count: int
    """How many segments are flagged."""
    text: str
    reasons: tuple[str, ...]
    """The chosen take's reasons, in words."""
    take: int | None
    """The chosen take (1-based; ``None``: none yet)."""
    takes: int
    score: float | None
    accepted: bool
    alternative: int | None
    """The other take :kbd:`A` chooses (1-based)."""
    heard: str | None
    """What speech recognition heard, when it listened."""
    rendered: bool
    performed: bool = False
    """The chosen take is a person's recording, re-voiced (perform this line)."""

    @property
    def header(self) -> str:
        where = (
            f"{self.position} of {self.count} to review"
            if self.position is not None
            else f"no longer flagged · {self.count} to review"
        )
        return f"Segment {self.number} · {where}"

    @property
    def take_line(self) -> str:
        if self.take is None:
            return "No take yet: Regenerate (R) renders one."
        words = [f"Take {self.take} of {self.takes}"]
        if self.performed:
            words.append("performed")
        if self.score is not None:
            words.append(f"score {self.score:g} of 100")
        if self.accepted:
            words.append("accepted")
        if not self.rendered:
            words.append("made for an older text, voice or settings")
        words.append(f"other take: {self.alternative} (A)" if self.alternative else "no other take (R makes one)")
        return " · ".join(words)


def review_view(project: Project, number: int, flagged: list[int]) -> ReviewView:
    """The review bar's view of segment ``number``; ``flagged``: the flagged segments' numbers, in order."""
    segment = project.segments[number - 1]
    take = project.chosen_take(segment)
    screen = (take.screen if take is not None else None) or {}
    at = bisect_left(flagged, number)
    position = at + 1 if at < len(flagged) and flagged[at] == number else None
    score = screen.get("score")
    heard = (screen.get("asr") or {}).get("heard")
    return ReviewView(
        number=number,
        position=position,
        count=len(flagged),
        text=short_text(segment.text, TEXT_CHARS),
        reasons=tuple(describe_reason(r) for r in reasons_of(take)),
        take=(segment.chosen + 1) if take is not None and segment.chosen is not None else None,
        takes=len(segment.takes),
        score=float(score) if isinstance(score, (int, float)) else None,
        accepted=bool(screen.get("accepted")),
        alternative=alternative_take(project, segment),
        heard=short_text(str(heard), HEARD_CHARS) if heard else None,
        rendered=project.status(segment) == "rendered",
        performed=take is not None and take.is_performed,
    )


def short_text(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
