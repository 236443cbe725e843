"""What the studio panel's parts share: its signals, its widgets and state (declared here, made by
:class:`~app.studio.studio_panel.StudioPanel`), whether the project can be edited now, and the display of the
controls and counts every part updates.

The panel is this class and its parts (:mod:`render_controls`, :mod:`segment_playback`, :mod:`segment_actions`,
:mod:`shape_edits`, :mod:`chapter_actions`, :mod:`export_controls`, :mod:`segment_search`, :mod:`take_review`,
:mod:`perform_line`, :mod:`cast_edits`).
For the type checker each part is a ``StudioBase``; at run time each is a plain class, and what one part calls of
another is named at the end of this class, for the type checker only. The parts' methods carry no ``@Slot``: PySide
connects a decorated method of a class that is not a QObject through a receiver of its own, which outlives the panel
(a closing window's undo stack, clearing itself, called into deleted buttons); undecorated, each connection is the
panel's and ends with it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QAction, QShortcut, QUndoStack
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMenu,
    QProgressBar,
    QPushButton,
    QSlider,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.engine import RuntimeOptions
from core.narration import Edit, Placement, Project
from core.voices import VoiceLibrary

from ..audio.playback import Player
from ..controllers.render_on import RenderTarget, where
from ..controllers.studio import StudioController
from ..engine_bridge import EngineBridge
from ..settings import Settings
from .cast_finder import CastFinder
from .cast_panel import CastCounts, CastPanel
from .check_report import CheckReport
from .export_runner import ExportRunner
from .preview_windows import PreviewWindows
from .reading_line import ReadingLine
from .review_bar import ReviewBar
from .seekable_waveform import SeekableWaveform
from .segment_list import SegmentList
from .speaker_picker import SpeakerPicker
from .take_check_runner import TakeCheckRunner
from .take_settings import TakeSettings
from .word_times_runner import WordTimesRunner


class StudioBase(QWidget):
    changed = Signal()
    """The project was edited, rendered, saved, opened or closed (the window updates its title and menus)."""
    message = Signal(str, bool)
    """Text for the window's message line, and whether it is an error."""
    export_finished = Signal(object)
    """An export ended and its files are in place (the export's result)."""
    export_ended = Signal()
    _takes_progress_format = "{done} of {total} takes"
    """The progress bar's words while a job on the takes runs (:meth:`_takes_job_began` sets them)."""
    """An export ended: written (after :attr:`export_finished`), failed or cancelled."""
    show_cast_requested = Signal()
    """The Cast panel should be shown (the window shows its side tab)."""

    # --- what the panel is given and keeps ---------------------------------------------------------------------
    bridge: EngineBridge
    player: Player
    settings: Settings
    runtime: Callable[[], RuntimeOptions]
    controller: StudioController
    progress_events: int
    _audio: np.ndarray
    _placements: list[Placement]
    _offset: float
    _paused_at: float | None
    _live: bool
    _heard_marks: list[tuple[int, int]]
    _windows: PreviewWindows
    export_runner: ExportRunner
    take_check: TakeCheckRunner
    _export_target: Path | None
    check_report: CheckReport | None
    _target: RenderTarget
    _timer: QTimer
    _refresh_timer: QTimer
    _search_timer: QTimer
    _play_only: int | None
    """The segment whose take alone is being heard (the review's Space), or ``None``."""
    _review_segment: Any
    """The segment being reviewed (a core Segment, kept across changes of the book's shape), or ``None``."""
    _review_keys: list[QShortcut]
    input_device: Any
    """The sounddevice module the microphone is opened through (``None``: the real one; tests inject a fake)."""
    library: VoiceLibrary | None
    """The user's voice library (a character's voice can be one of its voices); ``None``: none."""
    cast_finder: CastFinder
    word_times: WordTimesRunner
    _cast_counts: CastCounts
    """How the open project's lines are spoken, counted at its last change of cast or speakers."""
    speaker_picker: SpeakerPicker | None
    """The last "who says it" popup (W)."""

    # --- its widgets -------------------------------------------------------------------------------------------
    title: QLabel
    render_button: QPushButton
    stop_button: QPushButton
    play_button: QPushButton
    render_menu: QMenu
    render_chapter_action: QAction
    render_range_action: QAction
    render_more: QToolButton
    export_button: QPushButton
    cancel_export_button: QPushButton
    lexicon_button: QPushButton
    listen: QCheckBox
    progress: QProgressBar
    status: QLabel
    pace: QSlider
    pace_label: QLabel
    segments: SegmentList
    search: QLineEdit
    found: QLabel
    find_action: QAction
    undo_stack: QUndoStack
    follow_timer: QTimer
    undo_action: QAction
    redo_action: QAction
    undo_button: QToolButton
    redo_button: QToolButton
    waveform: SeekableWaveform
    reading: ReadingLine
    """The line being heard, its word highlighted."""
    review_filter: QToolButton
    review_action: QAction
    review_button: QToolButton
    review_bar: ReviewBar
    takes: TakeSettings
    cast_panel: CastPanel
    speakers_row: QWidget
    speaker_filter: QComboBox
    speakers_hint: QLabel
    _button_row: QHBoxLayout
    """The row of Render, Play, Export…: Speakers ▾ joins it, at its right, when the studio is wide enough."""
    _page: QVBoxLayout
    _speakers_layout: QHBoxLayout
    cast_button: QToolButton

    # --- state -------------------------------------------------------------------------------------------------
    @property
    def project(self) -> Project | None:
        return self.controller.project

    def _open_project(self) -> Project:
        """The open project, for actions that exist only while one is open (segment menus, export, playback)."""
        project = self.controller.project
        if project is None:
            raise RuntimeError("no project is open")
        return project

    @property
    def dirty(self) -> bool:
        return self.controller.dirty

    @property
    def rendering(self) -> int | None:
        """The request id of the render running, or None."""
        return self.controller.rendering

    @property
    def checking(self) -> bool:
        """The rendered takes are being screened again (:mod:`app.studio.take_check`)."""
        return self.take_check.running

    @property
    def exporting(self) -> bool:
        return self.export_runner.running

    @property
    def aligning(self) -> bool:
        """The rendered takes' word times are being found (:mod:`app.studio.word_times`)."""
        return self.word_times.running

    @property
    def performing(self) -> bool:
        """A line's recording is being re-voiced (:mod:`app.studio.perform_line`): its take is on the way."""
        return self.controller.performing is not None

    @property
    def busy(self) -> bool:
        """The project belongs to a render, an export, a line being re-voiced or the characters being found: no
        edits, no second render or export."""
        return (
            self.rendering is not None
            or self.exporting
            or self.checking
            or self.aligning
            or self.performing
            or self.finding
        )

    def _writable(self) -> bool:
        """Edits are possible: a project is open, neither a render nor an export has it, no other process holds it."""
        return self.project is not None and not self.busy and not self.controller.read_only

    def _takes_job_began(self, total: int, progress_format: str, status: str) -> None:
        """A job on the rendered takes (screening again, finding word times) started: the list is locked and the
        progress bar counts ``total`` takes (``progress_format`` holds ``{done}`` and ``{total}``)."""
        self.segments.editable = False
        self._takes_progress_format = progress_format
        self.progress.setRange(0, total)
        self._takes_job_progress(0, total)
        self.status.setText(status)
        self._update_controls()

    def _takes_job_progress(self, done: int, total: int) -> None:
        self.progress.setValue(done)
        self.progress.setFormat(self._takes_progress_format.format(done=done, total=total))

    def _takes_job_ended(self, text: str) -> None:
        """The job on the takes is over: the list editable again, the progress bar empty, ``text`` said."""
        self.segments.editable = not self.controller.read_only
        self.progress.setFormat("")
        self.progress.setValue(0)
        self.status.setText(text)
        self._update_controls()

    def _edited(self, number: int | None = None) -> None:
        self.segments.segments_changed(None if number is None else [number])
        self._show_counts()
        self.changed.emit()

    def _show_counts(self) -> None:
        model = self.segments.segment_model  # its statuses follow every changed row: no render key per segment
        counts = model.status_counts() if model.project is self.project and self.project is not None else None
        self.title.setText(self.controller.summary(counts))
        self._show_review_count()
        self._show_review()

    def _update_controls(self) -> None:
        has, rendering, exporting = self.project is not None, self.rendering is not None, self.exporting
        busy = self.busy  # a render, an export, or the takes being screened again
        writable = has and not busy and not self.controller.read_only
        self.render_button.setEnabled(writable)
        self.render_more.setEnabled(writable)
        self.render_button.setText("Rendering…" if rendering else "&Render")
        target = RenderTarget.from_settings(self.settings)
        self.render_button.setToolTip(
            "Render every pending segment (only what changed since the last render)"
            + (f" on {where(target.address)} (Settings → Render on)" if target.cluster else "")
        )
        self.listen.setEnabled(not target.cluster)  # a cluster's takes come back whole: nothing to hear meanwhile
        self.stop_button.setEnabled(rendering or self.performing or self._timer.isActive())
        self.play_button.setEnabled(has and not rendering)
        playing = self._timer.isActive() and not self._live and self._paused_at is None
        self.play_button.setText("&Pause" if playing else ("&Resume" if self._paused_at is not None else "&Play"))
        self.export_button.setEnabled(has and not busy)
        self.export_button.setText("Exporting…" if exporting else "E&xport…")
        self.cancel_export_button.setVisible(exporting)
        # at rest an empty bar looked like a second, empty text field under the search: shown while it has news
        self.progress.setVisible(busy or bool(self.progress.format()))
        self.lexicon_button.setEnabled(writable)
        self.search.setEnabled(has)
        self.review_action.setEnabled(has)
        checking, aligning = self.checking, self.aligning
        self.takes.setEnabled(not busy or checking or aligning)  # while screening or aligning: its Stop is in the menu
        self.takes.check_action.setText("&Stop screening" if checking else "&Screen the rendered takes again")
        self.takes.words_action.setText("Stop finding &word times" if aligning else "Find &word times")
        self.takes.listen_action.setEnabled(has and not busy)
        self.takes.thresholds_action.setEnabled(has and not busy)
        self.takes.check_action.setEnabled(has and (checking or not busy))
        self.takes.words_action.setEnabled(has and (aligning or not busy))
        if self.reviewing:
            self._show_review()  # its buttons follow what can be done now
        self._update_cast_controls()
        self.pace.setEnabled(has and not exporting and not self.controller.read_only)
        self.undo_action.setEnabled(writable and self.undo_stack.canUndo())
        self.redo_action.setEnabled(writable and self.undo_stack.canRedo())

    if TYPE_CHECKING:  # what one part calls of another (each defined in its part)

        def stop_playback(self) -> None: ...

        def play_from(self, number: int) -> None: ...

        def selected_segments(self) -> tuple[int, ...]: ...

        def export(self, request) -> bool: ...

        def _apply(self, operation: Callable[[Project], Edit], reshaped: bool = True) -> bool: ...

        def _reshaped(self, number: int) -> None: ...

        def play_segment(self, number: int) -> None: ...

        def pause(self) -> None: ...

        def _play_at(self, seconds: float) -> None: ...

        def regenerate(self, number: int) -> None: ...

        def cancel_performance(self) -> None: ...

        @property
        def reviewing(self) -> bool: ...

        def review_play(self) -> None: ...

        def _show_review(self) -> None: ...

        def _show_review_count(self) -> None: ...

        def _fit_review(self) -> None: ...

        @property
        def finding(self) -> bool: ...

        def _update_cast_controls(self) -> None: ...

        def _show_cast(self) -> None: ...

        def _place_speakers(self) -> None: ...

        def _review_speaker_words(self, number: int | None) -> str: ...

        def _cast_before(self) -> dict[str, str | None]: ...

        def _cast_after(self, before: dict[str, str | None], edit: Edit | None) -> None: ...
