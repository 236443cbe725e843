"""Each take's words and their times (:attr:`core.narration.Take.alignment`), from the forced aligner
(:func:`core.engine.align`): the segment's written text aligned through what the model was given to say (its
spoken form: numbers, abbreviations, the lexicon's respellings), in the language it was read in.

During a render the alignment runs on a thread of its own (:class:`TakeWords`), off the render's critical path: a
take is aligned while the model speaks the next segment, and the render thread stores the words with the next save.
A project rendered before takes had words gets them with :func:`align_takes` (``project DIR --align``, the studio's
*Takes ▾ → Find word times*), with progress and a stop.

The aligner runs in a child process (:func:`core.engine.shared_aligner`): pocketsphinx holds the GIL while it works,
and on a thread of the render's process it would stall the render's own decode loop and the window.

A take whose alignment fails keeps its sentence timing: its ``alignment`` says why (``error``, a code worded by
:mod:`core.wording`, and ``error_data``, its facts) and holds no words.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

import numpy as np
import soundfile as sf

from core.engine import SAMPLE_RATE, AlignerFailed, AlignerProcess, ChatterboxError, shared_aligner
from core.narration.projects.project import Project, Segment, Take

log = logging.getLogger(__name__)
WAIT_AT_END_S = 30.0
"""How long the end of a render waits for the takes still being aligned (the rest are aligned later on demand)."""


def take_alignment(
    project: Project,
    segment: Segment,
    take: Take,
    audio: np.ndarray | None = None,
    aligner: AlignerProcess | None = None,
) -> dict:
    """``take``'s words for :attr:`Take.alignment` (its audio read from its file unless given), found by ``aligner``
    (the process's shared one unless given): never raises for a take that cannot be aligned — the dict's ``error``
    says why, and it holds no words."""
    started = time.perf_counter()
    aligner = aligner or shared_aligner()
    try:
        if audio is None:
            audio, rate = sf.read(project.path(take.file), dtype="float32", always_2d=False)
            if rate != SAMPLE_RATE or audio.ndim != 1:
                return _no_words("align.audio_unreadable")
        spoken = project.spoken_text(segment)
        language = project.model_language(segment) or project.language or "en"
        found = aligner.align(audio, SAMPLE_RATE, segment.text, language, spoken if spoken != segment.text else None)
    except ChatterboxError as exc:
        return _no_words(exc.code, exc.data)
    except (OSError, sf.LibsndfileError):
        return _no_words("align.audio_unreadable")
    except AlignerFailed:
        log.exception("the aligner's process failed on segment %s", project.number(segment))
        return _no_words("align.internal")
    except Exception:
        log.exception("aligning segment %s failed", project.number(segment))
        return _no_words("align.internal")
    return {
        "words": [[w.word, round(w.start, 3), round(w.end, 3)] for w in found.words],
        "placed": round(found.placed_share, 4),
        "aligner": found.aligner,
        "error": None,
        "seconds": round(time.perf_counter() - started, 3),
    }


def _no_words(code: str, data: dict | None = None) -> dict:
    failed = {"words": [], "placed": 0.0, "aligner": "", "error": code}
    if data:
        failed["error_data"] = dict(data)
    return failed


def has_words(take: Take | None) -> bool:
    """The take was aligned (words or a reason it has none): nothing to do again for it."""
    return take is not None and take.alignment is not None


class TakeWords:
    """Aligns takes on one thread of its own while a render goes on (the thread waits on the aligner's process, with
    the GIL free); the render thread stores what is done."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="take-words")
        self._waiting: list[tuple[Segment, Take, Future[dict]]] = []
        self.seconds = 0.0
        """Time spent aligning (on the aligner's thread), for the render's report."""

    def submit(self, segment: Segment, take: Take, audio: np.ndarray | None = None) -> None:
        self._waiting.append((segment, take, self._pool.submit(take_alignment, self.project, segment, take, audio)))

    def store_done(self, wait_s: float = 0.0) -> int:
        """Give the aligned takes their words and save their segments (on the caller's thread); waits up to
        ``wait_s`` for those still being aligned. How many were stored."""
        deadline = time.monotonic() + wait_s
        done: list[Segment] = []
        still: list[tuple[Segment, Take, Future[dict]]] = []
        for segment, take, future in self._waiting:
            left = deadline - time.monotonic()
            if not future.done() and left > 0:
                wait([future], timeout=left)
            if not future.done():
                still.append((segment, take, future))
                continue
            alignment = future.result()
            self.seconds += alignment.pop("seconds", 0.0)
            if any(t is take for t in segment.takes):  # not a take taken back meanwhile
                take.alignment = alignment
                done.append(segment)
        self._waiting = still
        if done:
            self.project.save(done)
        return len(done)

    def close(self, wait_s: float = WAIT_AT_END_S) -> None:
        """Store what is done (waiting up to ``wait_s``) and stop the thread; takes not aligned by then keep no
        words (:func:`align_takes` gives them theirs later)."""
        try:
            self.store_done(wait_s)
        finally:
            self.abandon()

    def abandon(self) -> None:
        """Stop without storing what is waiting (a render that failed): the take being aligned finishes on its own
        (its child answers within seconds), the rest are dropped."""
        for _segment, _take, future in self._waiting:
            future.cancel()
        self._waiting = []
        self._pool.shutdown(wait=False, cancel_futures=True)


@dataclass
class AlignReport:
    aligned: int = 0
    """Takes given their words."""
    failed: list[int] = field(default_factory=list)
    """Segments whose take could not be aligned (it keeps its sentence timing)."""
    skipped: int = 0
    """Rendered takes that had their words already."""
    cancelled: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict:
        return {
            "aligned": self.aligned,
            "failed": self.failed,
            "skipped": self.skipped,
            "cancelled": self.cancelled,
            "seconds": round(self.seconds, 3),
        }


def takes_to_align(project: Project, again: bool = False) -> tuple[list[tuple[Segment, Take]], int]:
    """The rendered segments' chosen takes without words (``again``: all of them), and how many had theirs."""
    todo, skipped = [], 0
    for segment in project.segments:
        take = project.chosen_take(segment)
        if take is None or project.status(segment) != "rendered":
            continue
        if has_words(take) and not again:
            skipped += 1
            continue
        todo.append((segment, take))
    return todo, skipped


def store_alignments(project: Project, found: list[tuple[Segment, Take, dict]]) -> list[Segment]:
    """Give each take the words found for it (a take no longer the segment's is left as it is) and save those
    segments; the segments changed."""
    changed = []
    for segment, take, alignment in found:
        if any(t is take for t in segment.takes):
            take.alignment = {k: v for k, v in alignment.items() if k != "seconds"}
            changed.append(segment)
    if changed:
        project.save(changed)
    return changed


def align_takes(
    project: Project,
    again: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> AlignReport:
    """Give every rendered segment's chosen take its words (``again``: also those that have them), saving each;
    ``progress(done, total, number)`` after each, ``cancelled()`` stops between two (what is done stays)."""
    started = time.perf_counter()
    todo, skipped = takes_to_align(project, again)
    report = AlignReport(skipped=skipped)
    for done, (segment, take) in enumerate(todo, 1):
        if cancelled is not None and cancelled():
            report.cancelled = True
            break
        alignment = take_alignment(project, segment, take)
        store_alignments(project, [(segment, take, alignment)])
        if alignment["error"]:
            report.failed.append(project.number(segment))
        else:
            report.aligned += 1
        if progress is not None:
            progress(done, len(todo), project.number(segment))
    report.seconds = time.perf_counter() - started
    return report
