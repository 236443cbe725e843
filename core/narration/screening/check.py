"""Screening the rendered takes of a project again from their audio (``project DIR --check-takes``, the studio's
*Screen takes again*), in three parts so that the slow one can run on a thread of its own:

1. :func:`takes_to_check`, on the project's thread: what to read, as plain data (a snapshot: the project may be edited
   meanwhile);
2. :func:`measure_again`, on any thread: each take's audio read and measured, with speech recognition when a
   recogniser is given (the project is not touched);
3. :func:`store_checked`, on the project's thread: each take judged against the whole book and what changed stored.

The stop reasons of a take screened when it was rendered are kept (they cannot be read from the audio), and so is its
transcript when no recogniser listens this time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import soundfile as sf

from core.engine import SAMPLE_RATE
from core.narration.projects.project import Project
from core.narration.screening.measures import TakeMeasures, measure_take
from core.narration.screening.screen import Screener, measures_of, record, transcript

if TYPE_CHECKING:
    from core.narration.screening.recognition import Recogniser

log = logging.getLogger(__name__)

CheckProgress = Callable[[int, int], None]
"""``(takes done, takes in all)``."""


@dataclass(frozen=True)
class TakeToCheck:
    number: int
    segment_id: int
    file: str
    path: Path
    text: str
    """The spoken text the take should say."""
    language: str
    tokens: tuple[int, ...]
    stop_reasons: tuple[str, ...]
    asr: dict | None
    """The take's earlier transcript (kept when no recogniser listens this time)."""
    performed: bool = False
    """Re-voiced from a person's recording (:attr:`core.narration.projects.project.Take.performed`)."""


@dataclass
class Measured:
    take: TakeToCheck
    measures: TakeMeasures | None
    """``None``: the take's audio could not be read."""
    asr: dict | None = None


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
    changed: list[int] = field(default_factory=list)
    """Segments whose take's screen changed (numbers)."""
    cancelled: bool = False


def check_takes(
    project: Project,
    numbers: Iterable[int] | None = None,
    recogniser: Recogniser | None = None,
    progress: CheckProgress | None = None,
) -> CheckReport:
    """Screen the chosen takes of the rendered segments (all, or ``numbers``) again from their audio, with speech
    recognition when a ``recogniser`` is given, and store what changed (the three parts in a row)."""
    return store_checked(project, measure_again(takes_to_check(project, numbers), recogniser, progress))


def takes_to_check(project: Project, numbers: Iterable[int] | None = None) -> list[TakeToCheck]:
    """The chosen takes of the rendered segments (all, or ``numbers``), as what :func:`measure_again` reads."""
    wanted = set(numbers) if numbers is not None else None
    out = []
    for number, segment in enumerate(project.segments, 1):
        if (wanted is not None and number not in wanted) or project.status(segment) != "rendered":
            continue
        take = project.chosen_take(segment)
        assert take is not None
        before = measures_of(take)
        out.append(
            TakeToCheck(
                number,
                segment.id,
                take.file,
                project.path(take.file),
                project.spoken_text(segment),
                project.language,
                tuple(take.tokens),
                tuple(before.stop_reasons) if before else (),
                (take.screen or {}).get("asr"),
                take.is_performed,
            )
        )
    return out


def measure_again(
    takes: list[TakeToCheck],
    recogniser: Recogniser | None = None,
    progress: CheckProgress | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> list[Measured]:
    """Each take read and measured (and heard, with a ``recogniser``); stops early when ``cancelled()`` says so
    (what was measured is returned). Touches no project: safe on a thread of its own."""
    out = []
    for done, item in enumerate(takes, 1):
        if cancelled is not None and cancelled():
            break
        try:
            audio = _read(item.path)
        except (OSError, ValueError, sf.LibsndfileError) as exc:  # a missing or damaged file: the others go on
            log.warning("take %s of segment %s unreadable: %s", item.file, item.number, exc)
            out.append(Measured(item, None))
        else:
            measures = measure_take(audio, item.text, list(item.tokens), list(item.stop_reasons), item.performed)
            heard = transcript(recogniser, audio, item.text, item.language) if recogniser is not None else item.asr
            out.append(Measured(item, measures, heard))
        if progress is not None:
            progress(done, len(takes))
    return out


def store_checked(project: Project, measured: list[Measured], cancelled: bool = False) -> CheckReport:
    """The measured takes judged against the whole book (their fresh measures, the others' stored ones) and what
    changed stored in one transaction. A take no longer in the project (edited or removed meanwhile) is left out."""
    report = CheckReport(cancelled=cancelled)
    by_id = {s.id: s for s in project.segments}
    found = []
    for item in measured:
        segment = by_id.get(item.take.segment_id)
        take = next((t for t in segment.takes if t.file == item.take.file), None) if segment is not None else None
        if segment is None or take is None:
            continue
        if item.measures is None:
            report.missing.append(project.number(segment))
            continue
        found.append((segment, take, item.measures, item.asr))
    screener = Screener(project, fresh={segment.id: measures for segment, _take, measures, _asr in found})
    changed = []
    for segment, take, measures, asr in found:
        verdict = screener.judge_again(project.voice_of(segment), measures, asr)
        accepted = bool(take.screen and take.screen.get("accepted"))
        fresh = record(verdict, measures, asr, accepted)
        if fresh != take.screen:
            take.screen = fresh
            changed.append(segment)
        report.checked += 1
        chosen = project.chosen_take(segment) is take
        if verdict.flagged and not accepted and chosen:
            index = segment.takes.index(take) + 1
            report.flagged.append(
                CheckedTake(project.number(segment), index, verdict.score, verdict.reasons, False, asr)
            )
    if changed:
        project.save(changed)
    report.changed = [project.number(s) for s in changed]
    report.flagged.sort(key=lambda t: t.number)
    return report


def _read(path: Path) -> np.ndarray:
    audio, rate = sf.read(path, dtype="float32", always_2d=False)
    if rate != SAMPLE_RATE or audio.ndim != 1:
        raise ValueError(f"{path.name} is not a take of this app (mono, {SAMPLE_RATE} Hz)")
    return np.asarray(audio, dtype=np.float32)
