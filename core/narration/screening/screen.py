"""Screening a project's takes: every new take measured and judged as it is rendered, takes screened again on
request, the flagged ones listed, a flagged take accepted by a person.

A take's screen (``Take.screen``) is a small JSON object stored with it::

    {"version": 1, "score": 58.0, "reasons": [{"code": "long_silence", "seconds": 3.1, ...}],
     "measures": {...}, "accepted": false, "asr": {"recogniser": "sphinx", "wer": 0.12, ...}}

A take is *flagged* while it has reasons and is not accepted; a segment is flagged when its chosen take is.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from core.engine import SAMPLE_RATE
from core.narration.projects.project import Project, Segment, Take
from core.narration.screening.judge import BookContext, Verdict, judge
from core.narration.screening.measures import TakeMeasures, measure_take
from core.narration.screening.recognition_errors import RecognitionUnavailable
from core.narration.screening.thresholds import Thresholds

if TYPE_CHECKING:
    from core.narration.screening.recognition import Recogniser

log = logging.getLogger(__name__)

SCREEN_VERSION = 1


def is_flagged(take: Take | None) -> bool:
    """The take has reasons to be listened to and nobody accepted it."""
    screen = take.screen if take is not None else None
    return bool(screen and screen.get("reasons") and not screen.get("accepted"))


def segment_flagged(project: Project, segment: Segment) -> bool:
    """A narrated segment whose chosen take is flagged and still its take (a segment edited since is pending, not
    flagged). Cheap for the many unflagged segments: the render key is computed only for a flagged take."""
    take = project.chosen_take(segment)
    return (
        is_flagged(take)
        and take is not None
        and not project.is_skipped(segment)
        and take.key == project.render_key(segment)
    )


def flagged_numbers(project: Project) -> list[int]:
    """The 1-based numbers of the flagged segments, in reading order."""
    return [n for n, s in enumerate(project.segments, 1) if segment_flagged(project, s)]


def reasons_of(take: Take | None) -> list[dict]:
    return list((take.screen or {}).get("reasons") or []) if take is not None else []


def score_of(take: Take) -> float | None:
    screen = take.screen
    return float(screen["score"]) if screen and "score" in screen else None


def best_take(project: Project, segment: Segment) -> int | None:
    """Index of the best-scoring current take of ``segment`` (an accepted take counts as clean; ``None``: no
    current take). Ties go to the earliest: a re-take must do better to replace the take a listener may know."""
    key = project.render_key(segment)
    best: tuple[float, int] | None = None
    for index, take in enumerate(segment.takes):
        if take.key != key:
            continue
        score = 100.0 if take.screen and take.screen.get("accepted") else score_of(take)
        value = score if score is not None else 50.0
        if best is None or value > best[0]:
            best = (value, index)
    return best[1] if best is not None else None


def accept(project: Project, segment: Segment) -> bool:
    """A person listened to the chosen take and keeps it: its mark is cleared (its reasons stay, for the record).
    ``False`` when there was nothing to accept."""
    take = project.chosen_take(segment)
    if take is None or not is_flagged(take):
        return False
    take.screen = {**(take.screen or {}), "accepted": True}
    return True


def set_thresholds(project: Project, values: dict[str, float]) -> list[Segment]:
    """The book's own thresholds (``values`` by name; a default's value is not kept) and every stored take judged
    again against them; the segments whose takes' screens changed (the caller stores them with the book)."""
    defaults = Thresholds()
    known = set(Thresholds.names())
    project.screening = {
        name: float(value) for name, value in values.items() if name in known and value != getattr(defaults, name)
    }
    return Screener(project).rejudge(project.segments)


def measures_of(take: Take) -> TakeMeasures | None:
    data = (take.screen or {}).get("measures")
    try:
        return TakeMeasures.from_dict(data) if isinstance(data, dict) else None
    except TypeError:
        return None  # written by another version: screened again when asked


@dataclass
class Screener:
    """Screens takes of one project, keeping the book's context (each voice's rate, the loudness) as takes come.

    ``recogniser``: speech recognition for every take (``None``: none; :mod:`.recognition`). ``fresh``: measures
    just taken of some segments' chosen takes (by segment id), counted in the book's context instead of the stored
    ones."""

    project: Project
    recogniser: Recogniser | None = None
    fresh: InitVar[Mapping[int, TakeMeasures] | None] = None
    thresholds: Thresholds = field(init=False)
    context: BookContext = field(init=False)
    screened: dict[int, Segment] = field(default_factory=dict, init=False)
    """Segments screened by this screener (their voice's rate and the loudness grew meanwhile): :meth:`settle`."""

    def __post_init__(self, fresh: Mapping[int, TakeMeasures] | None) -> None:
        self.thresholds = Thresholds.of(self.project.screening)
        self.context = book_context(self.project, fresh)

    def screen(
        self,
        segment: Segment,
        audio: np.ndarray,
        tokens: list[int],
        stop_reasons: list[str],
        performed: bool = False,
    ) -> dict | None:
        """The screen of a new take of ``segment`` (not attached: the caller stores it with the take; ``performed``:
        re-voiced from a person's recording, no tokens). A screen that fails leaves the take unscreened (``None``;
        ``--check-takes`` screens it later): it never costs the take."""
        try:
            text = self.project.spoken_text(segment)
            measures = measure_take(audio, text, tokens, stop_reasons, performed)
            return self.judge_new(segment, measures, self._recognise_quietly(audio, text))
        except Exception:
            log.exception("screening a take of segment %s failed", segment.id)
            return None

    def _recognise_quietly(self, audio: np.ndarray, text: str) -> dict | None:
        """Speech recognition during a render: a recogniser that fails on a take leaves the take screened without
        it (said once in the log)."""
        try:
            return self.recognise(audio, text)
        except RecognitionUnavailable as exc:
            log.warning("speech recognition failed on a take, screened without it: %s", exc)
            return None

    def judge_new(self, segment: Segment, measures: TakeMeasures, asr: dict | None = None) -> dict:
        """The screen of a new take measured elsewhere (a cluster actor measures its own takes)."""
        voice = self.project.voice_of(segment)
        verdict = self.judge_again(voice, measures, asr)
        self.screened[segment.id] = segment
        self.context.add(voice, measures)
        return record(verdict, measures, asr)

    def recognise(self, audio: np.ndarray, text: str) -> dict | None:
        if self.recogniser is None:
            return None
        return transcript(self.recogniser, audio, text, self.project.language)

    def rejudge(self, segments: Iterable[Segment]) -> list[Segment]:
        """Judge the takes of ``segments`` again from their stored measures (thresholds or context changed); the
        segments whose takes' screens changed."""
        changed = []
        for segment in segments:
            voice = self.project.voice_of(segment)
            touched = False
            for take in segment.takes:
                measures = measures_of(take)
                if measures is None or take.screen is None:
                    continue
                verdict = self.judge_again(voice, measures, take.screen.get("asr"))
                if verdict.reasons == take.screen.get("reasons") and abs(verdict.score - take.screen["score"]) < 1:
                    continue  # the same verdict: the store is not rewritten for a score's decimals
                take.screen = record(verdict, measures, take.screen.get("asr"), bool(take.screen.get("accepted")))
                touched = True
            if touched:
                changed.append(segment)
        return changed

    def settle(self) -> list[Segment]:
        """At the end of a render: judge its takes again against the book as it is now (the first takes were judged
        before their voice's rate or the book's loudness was known, later ones on fewer takes); the segments whose
        verdict changed."""
        waiting, self.screened = list(self.screened.values()), {}
        return self.rejudge(waiting)

    def judge_again(self, voice: str | None, measures: TakeMeasures, asr: dict | None) -> Verdict:
        thresholds = self.thresholds
        return judge(
            measures,
            thresholds,
            self.context.rate(voice, thresholds),
            self.context.book_loudness(thresholds),
            asr,
        )


def transcript(recogniser: Recogniser, audio: np.ndarray, text: str, language: str) -> dict:
    """What ``recogniser`` heard in a take, against the text it should say (a take's ``screen["asr"]``)."""
    from core.narration.screening.word_errors import compare_words

    heard = recogniser.transcribe(audio, SAMPLE_RATE, language)
    return {"recogniser": recogniser.name, "heard": heard, **compare_words(text, heard).to_dict()}


def record(verdict: Verdict, measures: TakeMeasures, asr: dict | None, accepted: bool = False) -> dict:
    screen = {
        "version": SCREEN_VERSION,
        "score": verdict.score,
        "reasons": verdict.reasons,
        "measures": measures.to_dict(),
        "accepted": accepted,
    }
    if asr is not None:
        screen["asr"] = asr
    return screen


def book_context(project: Project, fresh: Mapping[int, TakeMeasures] | None = None) -> BookContext:
    """Each voice's rate and the book's loudness, from the stored measures of the chosen takes (or ``fresh`` ones, by
    segment id)."""
    context = BookContext()
    for segment in project.segments:
        take = project.chosen_take(segment)
        measures = (fresh or {}).get(segment.id) or (measures_of(take) if take is not None else None)
        if measures is not None:
            context.add(project.voice_of(segment), measures)
    return context


__all__ = [
    "Screener",
    "accept",
    "best_take",
    "book_context",
    "flagged_numbers",
    "is_flagged",
    "reasons_of",
    "segment_flagged",
    "set_thresholds",
    "transcript",
]
