"""The studio's project state: the open project, unsaved changes, the render running, and the edits of one segment;
with the words the panel shows about them. No widgets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from core.engine import ChatterboxError
from core.narration import (
    Edit,
    History,
    Performance,
    Project,
    ProjectLock,
    ProjectLocked,
    Refresh,
    RenderProgress,
    RenderSummary,
    cast,
    clock,
    editing,
    plan_performance,
    segment_flagged,
    store_performance,
)
from core.narration import accept as accept_take
from core.narration import set_thresholds as set_book_thresholds
from core.narration import store_checked as store_checked_takes
from core.wording import describe_error

NO_PROJECT = "No project: File → New project, Import or Open."
PLAY_AND_EXPORT = "It can be played and exported here; rendering and edits wait."
READ_ONLY = f"It is open read-only: {PLAY_AND_EXPORT[0].lower()}{PLAY_AND_EXPORT[1:]}"


class StudioController:
    def __init__(self) -> None:
        self.project: Project | None = None
        self.dirty = False
        """The project in memory differs from its folder (a render saves as it goes)."""
        self.rendering: int | None = None
        """The request id of the render running."""
        self.read_only: str | None = None
        """Why the project is open read-only (another process holds its lock), in words; ``None``: it is ours."""
        self._lock: ProjectLock | None = None
        self.history = History()
        """The undo records, kept in the project's store with it (the panel's undo stack mirrors them)."""
        self.performing: int | None = None
        """The request id of the performed line being re-voiced (the project waits for its take meanwhile)."""
        self.performance: Performance | None = None
        """What is being re-voiced: the recording, the segment and the voice."""

    def open(self, project: Project | None) -> None:
        """Open ``project`` (``None``: close): its lock is taken, or, held by another process, it opens read-only.
        Its undo records come with it (what was undone before it was closed cannot be redone)."""
        self.close()
        self.project, self.dirty = project, False
        self.history = History()
        if project is None:
            return
        self.history = History.load(project)
        self.history.redo_records = []
        lock = ProjectLock(project.folder, "studio")
        try:
            lock.acquire()
        except ProjectLocked as exc:  # its words say who holds it, and that it opens read-only
            self.read_only = f"{describe_error(exc)} {PLAY_AND_EXPORT}"
        except ChatterboxError as exc:  # a folder where no lock can be written (read-only medium): read-only too
            self.read_only = f"{describe_error(exc)} {READ_ONLY}"
        else:
            self._lock = lock

    def close(self) -> None:
        """Give the project's lock back (the window closes, or another project opens)."""
        if self._lock is not None:
            self._lock.release()
        self._lock, self.read_only = None, None

    def save(self) -> None:
        """``ChatterboxError`` when the project cannot be saved (it stays unsaved then); read-only: nothing."""
        if self.project is not None and self.read_only is None:
            self.project.save(history=self.history.records())
            self.dirty = False

    def follow(self) -> Refresh | None:
        """A project open read-only while another process renders it: take in the takes stored since (``None``:
        nothing new, or the project is ours)."""
        if self.project is None or self.read_only is None:
            return None
        return self.project.refresh()

    def pending(self, regenerate: int | None, numbers: tuple[int, ...] | None = None, retakes: int = 0) -> int:
        """How many segments a render does: one new take, the pending ones among ``numbers``, or every pending
        segment; with ``retakes``, the rendered segments whose take needs review too (they are taken again)."""
        project = self.project
        if project is None:
            return 0
        if regenerate is not None:
            return 1
        if numbers is not None:
            return len(numbers)
        return sum(1 for segment in project.segments if self._to_render(segment, retakes))

    def pending_in_chapters(self, first: int, last: int, retakes: int = 0) -> tuple[int, ...]:
        """The numbers of the pending segments of chapters ``first`` to ``last`` (1-based, both included); with
        ``retakes``, and those whose take needs review."""
        project = self._open()
        return tuple(
            number
            for number, segment in enumerate(project.segments, 1)
            if first - 1 <= segment.chapter <= last - 1 and self._to_render(segment, retakes)
        )

    def _to_render(self, segment: Any, retakes: int) -> bool:
        """What a render takes on, as the core decides (``render_todo``): pending or failed, or flagged when it
        makes re-takes."""
        project = self._open()
        if project.status(segment) not in ("rendered", "skipped"):
            return True
        take = project.chosen_take(segment)
        return retakes > 0 and take is not None and not take.is_performed and segment_flagged(project, segment)

    def started(self, rid: int) -> None:
        self.rendering = rid
        self.dirty = False  # the render saves the project after every segment

    def owns(self, rid: int) -> bool:
        return self.rendering is not None and rid == self.rendering

    def ended(self) -> None:
        self.rendering = None

    # --- edits of one segment (``ChatterboxError`` when the project refuses one) -----------------------------
    def _open(self) -> Project:
        assert self.project is not None, "no project is open"
        return self.project

    def _segment(self, number: int) -> Any:  # a core.narration Segment (not among its public names)
        return self._open().segments[number - 1]

    def edit_text(self, number: int, text: str) -> Edit:
        return self.apply(lambda project: editing.edit_text(project, number, text))

    # --- a performed line: a recording of one segment, re-voiced on the worker, stored as its take ---------------
    def plan_performance(self, number: int, source: Any, capabilities: Any) -> Performance:
        """The recording (a file, or a ``SourceRecording`` from the microphone) checked for segment ``number``
        (``ChatterboxError`` in words when it cannot be used; nothing changes)."""
        return plan_performance(self._open(), self._segment(number), source, capabilities)

    def perform_started(self, rid: int, plan: Performance) -> None:
        self.performing, self.performance = rid, plan

    def owns_performance(self, rid: int) -> bool:
        return self.performing is not None and rid == self.performing

    def perform_ended(self) -> Performance | None:
        plan, self.performing, self.performance = self.performance, None, None
        return plan

    def store_performance(self, plan: Performance, audio: Any, report: Any) -> tuple[int, Any]:
        """The re-voiced audio stored as the segment's chosen take, marked performed (with unsaved edits, as
        :meth:`accept` stores them); its segment's number and the take. ``ChatterboxError`` when it cannot be
        stored (nothing is)."""
        project = self._open()
        take = store_performance(project, plan, audio, report)
        if self.dirty:
            self.save()
        return project.number(plan.segment), take

    # --- structural edits, each returning its undo record (the panel keeps them on Qt's undo stack) --------------
    def apply(self, operation: Callable[[Project], Edit]) -> Edit:
        """Run one of :mod:`core.narration.projects.editing`'s operations on the open project, and record it."""
        edit = operation(self._open())
        self.history.record(edit)
        self.dirty = True
        return edit

    def apply_cast(self, operation: Callable[[Project], Edit]) -> Edit | None:
        """Run one of :mod:`core.narration.cast`'s edits (or finding the characters) on the open project and record
        it; ``None`` (nothing recorded) when it changed nothing (the book attributed as it already was)."""
        edit = operation(self._open())
        if cast.is_empty(edit):
            return None
        self.history.record(edit)
        self.dirty = True
        return edit

    def undo(self) -> Edit:
        """Take back the latest edit; the record of what was undone (``ChatterboxError``: the project changed in
        another way since, and the history is emptied)."""
        try:
            return self.history.undo(self._open())
        finally:
            self.dirty = True

    def redo(self) -> Edit:
        try:
            return self.history.redo(self._open())
        finally:
            self.dirty = True

    def chapter_starts_at(self, number: int) -> bool:
        """Segment ``number`` starts a chapter (the first segment, or the first of a chapter)."""
        segments = self._open().segments
        return number == 1 or segments[number - 2].chapter != segments[number - 1].chapter

    def choose_take(self, number: int, take: int) -> None:
        self._open().choose(self._segment(number), take)
        self.dirty = True

    def accept(self, number: int) -> bool:
        """A person listened to segment ``number``'s chosen take and keeps it: its mark is cleared and stored at
        once (``False``: it was not flagged; ``ChatterboxError`` when it cannot be stored, and it stays unsaved).
        Unsaved edits are saved with it, as a render saves them: a store of this segment alone could not hold them."""
        project, segment = self._open(), self._segment(number)
        if not accept_take(project, segment):
            return False
        if self.dirty:
            self.save()
            return True
        try:
            project.save([segment])
        except ChatterboxError:
            self.dirty = True
            raise
        return True

    def store_checked(self, measured: list, cancelled: bool = False) -> Any:
        """Takes measured again on another thread, judged against the whole book and stored (with unsaved edits, as
        :meth:`accept` stores them): the core's ``CheckReport``."""
        project = self._open()
        report = store_checked_takes(project, measured, cancelled)
        if self.dirty:
            self.save()
        return report

    def set_thresholds(self, values: dict[str, float]) -> list[int]:
        """The book's take-screen thresholds, and every stored take judged again against them, stored at once (with
        unsaved edits, as :meth:`accept` stores them); the numbers of the segments whose verdicts changed."""
        project = self._open()
        changed = set_book_thresholds(project, values)
        try:
            if self.dirty:
                self.save()
            else:
                project.save(changed)
        except ChatterboxError:
            self.dirty = True  # the thresholds and verdicts stay as set, stored with the next save
            raise
        return [project.number(s) for s in changed]

    def set_voice(self, number: int, name: str | None) -> None:
        self._open().set_voice(self._segment(number), name)
        self.dirty = True

    def set_pause(self, number: int, seconds: float) -> None:
        self._open().set_pause(self._segment(number), seconds)
        self.dirty = True

    def set_speed(self, number: int, speed: float) -> None:
        """The pace of one segment (× the project's; 1.0 clears it)."""
        self._open().set_speed(self._segment(number), None if abs(speed - 1.0) < 1e-6 else speed)
        self.dirty = True

    def set_pace(self, speed: float) -> bool:
        """The pace of the whole narration; True when it changed."""
        if self.project is None or abs(float(self.project.finishing.get("speed", 1.0)) - speed) <= 1e-9:
            return False
        self.project.set_speed(None, speed)
        self.dirty = True
        return True

    def pace(self) -> float:
        return float(self.project.finishing.get("speed") or 1.0) if self.project is not None else 1.0

    # --- words -------------------------------------------------------------------------------------------------
    def summary(self, counts: dict[str, int] | None = None) -> str:
        """The title line: the project, its segments and chapters, what is rendered, unsaved changes. ``counts``: its
        segments' statuses as the studio's list keeps them (``None``: each segment's status is worked out now)."""
        project = self.project
        if project is None:
            return NO_PROJECT
        counts = counts if counts is not None else project.counts()
        unsaved = " · unsaved changes" if self.dirty else (" · read-only" if self.read_only else "")
        skipped = f", {counts['skipped']} skipped" if counts["skipped"] else ""
        return (
            f"<b>{project.title}</b> — {len(project.segments)} segments in {len(project.chapters)} "
            f"chapter(s): {counts['rendered']} rendered, {counts['pending']} pending, {counts['failed']} failed"
            f"{skipped}{unsaved}"
        )


def progress_text(step: RenderProgress) -> str:
    left = f" · {clock(step.eta_s)} left" if step.eta_s is not None and step.done < step.total else ""
    return f"Segment {step.done} of {step.total} · {clock(step.audio_seconds)} of audio{left}"


EXPORT_STAGES = {"finishing": "Finishing", "encoding": "Encoding", "checking": "Checking"}


def export_progress_text(progress: Any) -> str:
    """The progress bar's words for an export: "Encoding · 42 % · 03 - Chapter.mp3 · 1:20 left"."""
    stage = str(getattr(progress, "stage", "") or "")
    words = [EXPORT_STAGES.get(stage, stage.capitalize() or "Exporting")]
    words.append(f"{round(100 * float(getattr(progress, 'fraction', 0.0)))} %")
    file = getattr(progress, "file", None)
    if file:
        words.append(Path(str(file)).name)
    left = getattr(progress, "seconds_left", None)
    if left is not None:
        words.append(f"{clock(left)} left")
    return " · ".join(words)


def export_done_text(result: Any, target: Path) -> str:
    """The status line after an export: how much audio, where, and the store check's verdict."""
    files = [f for f in getattr(result, "files", []) if f.get("kind") == "audio"]
    where = f"{len(files)} files in {target}" if len(files) > 1 else str(target)
    checks = list(getattr(result, "checks", None) or [])
    verdict = ""
    if checks:
        failed = sum(not c.get("passed") for c in checks)
        verdict = (
            " · every file passes the store check"
            if not failed
            else f" · {failed} of {len(checks)} file(s) fail the store check"
        )
    return f"Exported {clock(getattr(result, 'seconds', 0.0))} of audio to {where}{verdict}."


def done_text(summary: RenderSummary) -> str:
    failed = f"; {summary.failed} failed" if summary.failed else ""
    extra_takes, flagged_count = getattr(summary, "extra_takes", 0), getattr(summary, "flagged", 0)
    extra = f"; {extra_takes} extra take(s)" if extra_takes else ""
    flagged = f"; {flagged_count} need review" if flagged_count else ""
    return (
        f"Rendered {summary.rendered} segment(s), {clock(summary.audio_seconds)} of audio in "
        f"{clock(summary.elapsed_s)} (RTF {summary.rtf:.2f}){failed}{extra}{flagged}."
    )
