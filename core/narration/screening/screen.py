"""Screening a project's takes: every new take measured and judged as it is rendered, takes screened again on
request, the flagged ones listed, a flagged take accepted by a person.

A take's screen (``Take.screen``) is a small JSON object stored with it::

    {"version": 1, "score": 58.0, "reasons": [{"code": "long_silence", "seconds": 3.1, ...}],
     "measures": {...}, "accepted": false, "asr": {"recogniser": "sphinx", "wer": 0.12, ...}}

A take is *flagged* while it has reasons and is not accepted; a segment is flagged when its chosen take is.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import soundfile as sf

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

    ``recogniser``: speech recognition for every take (``None``: none; :mod:`.recognition`)."""

    project: Project
    recogniser: Recogniser | None = None
    thresholds: Thresholds = field(init=False)
    context: BookContext = field(init=False)
    screened: dict[int, Segment] = field(default_factory=dict, init=False)
    """Segments screened by this screener (their voice's rate and the loudness grew meanwhile): :meth:`settle`."""

    def __post_init__(self) -> None:
        self.thresholds = Thresholds.of(self.project.screening)
        self.context = book_context(self.project)

    def screen(self, segment: Segment, audio: np.ndarray, tokens: list[int], stop_reasons: list[str]) -> dict | None:
        """The screen of a new take of ``segment`` (not attached: the caller stores it with the take). A screen that
        fails leaves the take unscreened (``None``; ``--check-takes`` screens it later): it never costs the take."""
        try:
            text = self.project.spoken_text(segment)
            measures = measure_take(audio, text, tokens, stop_reasons)
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
        verdict = self._judge(voice, measures, asr)
        self.screened[segment.id] = segment
        self.context.add(voice, measures)
        return record(verdict, measures, asr)

    def recognise(self, audio: np.ndarray, text: str) -> dict | None:
        if self.recogniser is None:
            return None
        from core.narration.screening.word_errors import compare_words

        heard = self.recogniser.transcribe(audio, SAMPLE_RATE, self.project.language)
        return {"recogniser": self.recogniser.name, "heard": heard, **compare_words(text, heard).to_dict()}

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
                verdict = self._judge(voice, measures, take.screen.get("asr"))
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

    def _judge(self, voice: str | None, measures: TakeMeasures, asr: dict | None) -> Verdict:
        thresholds = self.thresholds
        return judge(
            measures,
            thresholds,
            self.context.rate(voice, thresholds),
            self.context.book_loudness(thresholds),
            asr,
        )


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


def book_context(project: Project) -> BookContext:
    """Each voice's rate and the book's loudness, from the stored measures of the chosen takes."""
    context = BookContext()
    for segment in project.segments:
        take = project.chosen_take(segment)
        measures = measures_of(take) if take is not None else None
        if measures is not None:
            context.add(project.voice_of(segment), measures)
    return context


@dataclass
class CheckedTake:
    number: int
    take: int
    """1-based, as the command line shows takes."""
    score: float
    reasons: list[dict]
    accepted: bool
    asr: dict | None = None

    def to_dict(self) -> dict:
        out = {"segment": self.number, "take": self.take, "score": self.score, "reasons": self.reasons}
        out["accepted"] = self.accepted
        if self.asr is not None:
            out["asr"] = {k: self.asr[k] for k in ("recogniser", "heard", "wer", "missing", "extra") if k in self.asr}
        return out


@dataclass
class CheckReport:
    checked: int = 0
    flagged: list[CheckedTake] = field(default_factory=list)
    missing: list[int] = field(default_factory=list)
    """Segments whose take file could not be read (numbers)."""


CheckProgress = Callable[[int, int], None]


def check_takes(
    project: Project,
    numbers: Iterable[int] | None = None,
    recogniser: Recogniser | None = None,
    progress: CheckProgress | None = None,
) -> CheckReport:
    """Screen the chosen takes of the rendered segments (all, or ``numbers``) again from their audio, with speech
    recognition when a ``recogniser`` is given, and store what changed. The stop reasons of a take screened when
    it was rendered are kept (they cannot be read from the audio)."""
    wanted = set(numbers) if numbers is not None else None
    todo = [
        (n, s)
        for n, s in enumerate(project.segments, 1)
        if (wanted is None or n in wanted) and project.status(s) == "rendered"
    ]
    screener = Screener(project, recogniser)
    measured: list[tuple[int, Segment, Take, TakeMeasures, dict | None]] = []
    report = CheckReport()
    for done, (number, segment) in enumerate(todo, 1):
        take = project.chosen_take(segment)
        assert take is not None
        try:
            audio = _read(project, take)
        except (OSError, ValueError, sf.LibsndfileError) as exc:  # a missing or damaged file: the others go on
            log.warning("take %s of segment %s unreadable: %s", take.file, number, exc)
            report.missing.append(number)
            continue
        before = measures_of(take)
        text = project.spoken_text(segment)
        measures = measure_take(audio, text, take.tokens, before.stop_reasons if before else [])
        asr = screener.recognise(audio, text) if recogniser is not None else (take.screen or {}).get("asr")
        measured.append((number, segment, take, measures, asr))
        if progress is not None:
            progress(done, len(todo))
    checked = {segment.id for _n, segment, _t, _m, _a in measured}
    context = BookContext()
    for segment in project.segments:
        take = project.chosen_take(segment) if segment.id not in checked else None
        stored = measures_of(take) if take is not None else None
        if stored is not None:
            context.add(project.voice_of(segment), stored)
    for _number, segment, _take, measures, _asr in measured:
        context.add(project.voice_of(segment), measures)
    screener.context = context
    changed = []
    for number, segment, take, measures, asr in measured:
        verdict = screener._judge(project.voice_of(segment), measures, asr)
        accepted = bool(take.screen and take.screen.get("accepted"))
        fresh = record(verdict, measures, asr, accepted)
        if fresh != take.screen:
            take.screen = fresh
            changed.append(segment)
        report.checked += 1
        if verdict.flagged and not fresh["accepted"]:
            report.flagged.append(
                CheckedTake(number, (segment.chosen or 0) + 1, verdict.score, verdict.reasons, False, asr)
            )
    if changed:
        project.save(changed)
    return report


def _read(project: Project, take: Take) -> np.ndarray:
    audio, rate = sf.read(project.path(take.file), dtype="float32", always_2d=False)
    if rate != SAMPLE_RATE or audio.ndim != 1:
        raise ValueError(f"{take.file} is not a take of this app (mono, {SAMPLE_RATE} Hz)")
    return np.asarray(audio, dtype=np.float32)


__all__ = [
    "CheckReport",
    "CheckedTake",
    "Screener",
    "accept",
    "best_take",
    "book_context",
    "check_takes",
    "flagged_numbers",
    "is_flagged",
    "reasons_of",
    "segment_flagged",
    "set_thresholds",
]
