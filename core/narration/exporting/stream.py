"""One exported file, streamed: read → pace → pauses → (measure, spool) → level → limit → encode, block by block.

Pass 1 reads each chosen take, stretches it to its pace, adds the pause after it, measures the programme (BS.1770
loudness, RMS, peak: :class:`core.engine.LoudnessMeter`) and spools the finished float samples to a hidden temporary
file beside the destination. Pass 2 reads the spool in blocks, applies one gain for the whole file and a true-peak
limiter whose state carries across blocks (:class:`core.engine.StreamingLimiter`), adds the mastering preset's room
tone, and hands each block to the encoder, which writes under a temporary name and renames when complete. Memory
holds one take and one block at a time, whatever the length of the book; the spool (4 bytes a sample) is removed as
soon as the file is encoded, and whatever happens.

When the gain pushes peaks into the limiter, the limiter lowers the loudness a little: the spool is leveled and
measured again (no encoding, a few hundred times real time) and the gain corrected, up to three times, as
:func:`core.engine.normalize_loudness` does for a whole array.
"""

from __future__ import annotations

import contextlib
import math
import os
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import soundfile as sf

from core.engine import (
    PARTIAL,
    SAMPLE_RATE,
    LoudnessMeter,
    StreamingLimiter,
    TruePeakMeter,
    stretch,
)
from core.narration.exporting.plan import ExportCancelled, ExportProgress, ProgressCallback
from core.narration.projects.project import Project, ProjectError, Segment, pause_seconds

WORKERS = max(1, min(4, (os.cpu_count() or 1)))
AHEAD = 2 * WORKERS
"""Takes read and stretched ahead of the one being spooled (each a few seconds of audio)."""
BLOCK = 1 << 18
"""Samples per block in pass 2 (about 11 s: large enough that per-call costs vanish, small enough to stay flat)."""
_LIMITER_MARGIN_DB = 0.3
_TOLERANCE_DB = 0.05


def read_take(project: Project, segment: Segment) -> np.ndarray:
    """The chosen take of ``segment`` at its pace."""
    take = project.rendered_take(segment)
    path = project.path(take.file)
    try:
        audio, rate = sf.read(path, dtype="float32", always_2d=False)
    except (OSError, sf.LibsndfileError) as exc:
        raise ProjectError(
            "export.take_unreadable", segment=project.number(segment), file=take.file, reason=str(exc)
        ) from exc
    if rate != SAMPLE_RATE or audio.ndim != 1:
        raise ProjectError("export.take_foreign", segment=project.number(segment), file=take.file)
    return stretch(audio, project.speed_of(segment))


class Ticker:
    """Progress and cancel for a whole export: every step says how much audio it went through."""

    def __init__(self, total: float, progress: ProgressCallback | None, cancelled: Callable[[], bool] | None) -> None:
        self.total, self.done = total, 0.0
        self.progress, self.cancelled = progress, cancelled
        self.started = time.monotonic()

    def tick(self, stage: str, file: Path | str, seconds: float = 0.0) -> None:
        if self.cancelled is not None and self.cancelled():
            raise ExportCancelled("export.cancelled")
        self.done += seconds
        if self.progress is not None:
            elapsed = time.monotonic() - self.started
            self.progress(ExportProgress(stage, min(self.done, self.total), self.total, str(file), elapsed))


@dataclass
class Level:
    """What pass 2 does to the spooled audio."""

    gain_db: float = 0.0
    ceiling_db: float | None = None
    """The limiter's ceiling (``None``: no limiter)."""
    trim_db: float = 0.0
    head: int = 0
    tail: int = 0
    """Samples of room tone before and after the programme."""
    room_tone_db: float | None = None
    """A steady noise this loud (RMS) under everything, so no stretch is digital silence (``None``: none)."""

    @property
    def changes_audio(self) -> bool:
        return bool(self.gain_db or self.ceiling_db is not None or self.trim_db or self.room_tone_db is not None)


@dataclass
class Target:
    """A level to reach: integrated loudness (LUFS) or RMS (dBFS, the stores' measure) under a peak ceiling."""

    value: float
    ceiling_db: float
    rms: bool = False
    head_s: float = 0.0
    tail_s: float = 0.0
    room_tone_db: float | None = None


@dataclass
class Finished:
    """Pass 1 of one file: its spool and what was measured."""

    spool: Path
    samples: int
    meter: LoudnessMeter
    lengths: list[tuple[int, int, int]] = field(default_factory=list)
    """(segment id, speech samples, pause samples) in file order."""


@contextlib.contextmanager
def spooled(project: Project, segments: list[Segment], folder: Path, stem: str, ticker: Ticker, file: Path):
    """Pass 1 into a spool file in ``folder``; yields :class:`Finished`; the spool is removed on leaving."""
    try:
        fd, name = tempfile.mkstemp(prefix=f".{stem}.", suffix=f"{PARTIAL}.spool", dir=folder)
    except OSError as exc:
        raise ProjectError("export.write_failed", path=str(file), reason=str(exc.strerror or exc)) from exc
    spool = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            finished = Finished(spool, 0, LoudnessMeter())
            for block, entry in finish_segments(project, segments, ticker, file):
                try:
                    block.tofile(out)
                except OSError as exc:
                    raise ProjectError("export.write_failed", path=str(file), reason=str(exc.strerror or exc)) from exc
                finished.meter.add(block)
                finished.samples += block.size
                if entry is not None:
                    finished.lengths.append(entry)
        yield finished
    finally:
        spool.unlink(missing_ok=True)


def finish_segments(
    project: Project, segments: list[Segment], ticker: Ticker | None = None, file: Path | str = ""
) -> Iterator[tuple[np.ndarray, tuple[int, int, int] | None]]:
    """Each segment's speech at its pace, then its pause (none after the last); with each segment's pause block
    (or its speech, when it has no pause) comes its (id, speech, pause) lengths.

    Takes are read and stretched a few ahead on worker threads (Rubber Band and libsndfile release the GIL), so
    the stretching, the longest step, uses the machine's cores; at most :data:`AHEAD` takes wait in memory."""
    with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="export-finish") as pool:
        waiting: deque[Future[np.ndarray]] = deque()
        upcoming = iter(segments)

        def top_up() -> None:
            while len(waiting) < AHEAD:
                segment = next(upcoming, None)
                if segment is None:
                    return
                waiting.append(pool.submit(read_take, project, segment))

        try:
            for index, segment in enumerate(segments):
                top_up()
                speech = waiting.popleft().result()
                pause = round(pause_seconds(project, segment) * SAMPLE_RATE) if index < len(segments) - 1 else 0
                entry = (segment.id, speech.size, pause)
                yield speech, None if pause else entry
                if pause:
                    yield np.zeros(pause, np.float32), entry
                if ticker is not None:
                    ticker.tick("finishing", file, (speech.size + pause) / SAMPLE_RATE)
        finally:
            for future in waiting:
                future.cancel()


def spool_blocks(spool: Path) -> Iterator[np.ndarray]:
    with open(spool, "rb") as source:
        while True:
            block = np.fromfile(source, dtype=np.float32, count=BLOCK)
            if block.size == 0:
                return
            yield block


def leveled(spool: Path, level: Level) -> Iterator[np.ndarray]:
    """The spooled programme with ``level`` applied: room tone, gain, limiter, trim (as many samples as given)."""
    tone = _RoomTone(level.room_tone_db)
    if level.head:
        yield tone.over(np.zeros(level.head, np.float32))
    gain = np.float32(10 ** ((level.gain_db + level.trim_db) / 20))
    pre = np.float32(10 ** (level.gain_db / 20))
    trim = np.float32(10 ** (level.trim_db / 20))
    limiter = StreamingLimiter(level.ceiling_db) if level.ceiling_db is not None else None
    for block in spool_blocks(spool):
        if limiter is None:
            yield tone.over(block * gain) if level.changes_audio else block
        else:
            out = limiter.process(block * pre)
            if out.size:
                yield tone.over(out * trim)
    if limiter is not None:
        tail = limiter.flush()
        if tail.size:
            yield tone.over(tail * trim)
    if level.tail:
        yield tone.over(np.zeros(level.tail, np.float32))


class _RoomTone:
    """Steady noise added under the programme (the same samples for the same file: one seed, blocks in order)."""

    def __init__(self, level_db: float | None) -> None:
        self.scale = None if level_db is None else np.float32(10 ** (level_db / 20))
        self.rng = np.random.default_rng(0)

    def over(self, block: np.ndarray) -> np.ndarray:
        if self.scale is None:
            return block
        noise = self.rng.standard_normal(block.size, dtype=np.float32)
        noise *= self.scale
        noise += block
        return noise


def choose_level(finished: Finished, target: Target | None) -> tuple[Level, float | None, bool]:
    """The gain (and limiter, and last trim) that brings the spooled file to ``target``, the level measured before,
    and whether the limiter had to work. Passes over the spool without encoding only where the limiter lowers the
    level (the encoding pass measures the result)."""
    head, tail = (round(target.head_s * SAMPLE_RATE), round(target.tail_s * SAMPLE_RATE)) if target else (0, 0)
    level = Level(head=head, tail=tail, room_tone_db=target.room_tone_db if target else None)
    if target is None:
        return level, None, False
    before = _measure_finished(finished, target, head + tail)
    if before is None:  # silence: nothing to bring up
        return level, None, False
    level.gain_db = target.value - before
    level.ceiling_db = target.ceiling_db - _LIMITER_MARGIN_DB
    sample_peak = finished.meter.peak_db()
    if sample_peak is None or sample_peak + level.gain_db <= level.ceiling_db - 1.0:
        return level, before, False  # peaks stay well under the ceiling (1 dB left for inter-sample peaks)
    peak = None
    for _ in range(3):
        current, peak = _measure(finished.spool, level, target)
        if current is None or abs(target.value - current) < _TOLERANCE_DB:
            break
        level.gain_db += target.value - current
        peak = None
    if peak is None:
        _, peak = _measure(finished.spool, level, target)
    if peak is not None and peak > target.ceiling_db:  # what the limiter let through: a last static trim
        level.trim_db = target.ceiling_db - peak
    return level, before, True


class OutputMeter:
    """What the encoding pass measures of the audio it encodes (for the report)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.loudness, self.peaks = LoudnessMeter(), TruePeakMeter()

    def add(self, block: np.ndarray) -> None:
        self.loudness.add(block)
        self.peaks.add(block)

    def report(self, level: Level, before: float | None, limited: bool) -> dict:
        self.peaks.add(np.zeros(0, np.float32), last=True)
        after = self.loudness.rms_db() if self.target.rms else self.loudness.integrated()
        key = "rms_db" if self.target.rms else "lufs"
        values = {
            f"target_{key}": self.target.value,
            f"before_{key}": before,
            f"after_{key}": after,
            "gain_db": level.gain_db + level.trim_db,
            "true_peak_db": self.peaks.peak_db(),
            "limited": limited,
        }
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in values.items()}


def _measure_finished(finished: Finished, target: Target, room: int) -> float | None:
    if target.rms:
        rms = finished.meter.rms_db()
        return None if rms is None else rms + 10 * math.log10(finished.samples / max(1, finished.samples + room))
    return finished.meter.integrated()


def _measure(spool: Path, level: Level, target: Target) -> tuple[float | None, float | None]:
    meter, peaks = LoudnessMeter(), TruePeakMeter()
    for block in leveled(spool, level):
        meter.add(block)
        peaks.add(block)
    peaks.add(np.zeros(0, np.float32), last=True)
    return (meter.rms_db() if target.rms else meter.integrated()), peaks.peak_db()
