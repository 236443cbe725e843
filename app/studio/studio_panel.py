"""The narration studio: a project's segments, rendering with progress, listening, fixing one sentence, pace, export.

Rendering runs on the inference worker (``EngineBridge.render``); the project autosaves after every segment. While
it renders, what is rendered can be heard (the segment being heard is highlighted); when generation falls behind
playback the status says "Buffering…". Edits (text, take, voice, pause, pace) change the project in memory and mark
it unsaved; only the edited segment becomes pending. Edits of the text and of the project's shape (delete, skip,
merge, split, chapter boundaries, chapter titles and skipping) go on Qt's undo stack: Undo (Ctrl+Z) and Redo
(Ctrl+Shift+Z) in the studio, while nothing renders. Render's menu renders one chapter or a range of chapters.

With Settings → Render on set to a Ray cluster, Render (and a range of chapters) sends the pending segments to the
cluster (:class:`~core.narration.ClusterRenderJob`: the same progress; the status line says where it renders and on
how many actors); the takes come back whole, so nothing is heard while they render. Ray missing or a wrong address
is said before anything starts; an unreachable cluster stops the render with its reason, and nothing is lost. A new
take of one segment (Regenerate) always renders on this computer.

Every take is screened as it is rendered (:mod:`core.narration.screening`): a segment whose take needs review is
marked in the list, with the reasons in words as its tooltip; Needs review beside the search shows only those, and
Review (F7) goes through them from the keyboard (:mod:`~app.studio.take_review`). Re-takes and candidates beside
the buttons make a render take a flagged take again, or several takes of each segment, and keep the best.

A cast (:mod:`~app.studio.cast_edits`): the Cast panel (a side tab of the window) finds the book's characters, merges,
renames and adds them and gives each a voice; Speakers ▾ above the list shows one character's lines, the narration
or the lines whose speaker is unsure, and a Speaker column says who says each line; W on a line sets who says it (a
few letters of a name and Enter), U goes to the next unsure line. Each of these edits is on the undo stack.

Perform this line (a segment's menu, or a recording file dropped on its row): the user's own recording of the
segment, chosen or made with the microphone, is re-voiced into the segment's voice on the inference worker and
becomes its chosen take, marked "performed" in the list (:mod:`~app.studio.perform_line`).

Export runs on its own thread (:mod:`app.studio.export_runner`): the progress bar shows it with the time left,
Cancel stops it (no file is left under the final name), and the window stays responsive; the project is not edited
or rendered meanwhile. An export with the store check ends with its report (:mod:`app.studio.check_report`). A
project that another process holds (it renders there) opens read-only: it can be played and exported, not rendered
or edited.

This module builds the panel, opens and saves its project; the rest is in parts named after what they do:
:mod:`~app.studio.render_controls`, :mod:`~app.studio.segment_playback`, :mod:`~app.studio.segment_actions` (one
segment), :mod:`~app.studio.shape_edits` (the undo stack), :mod:`~app.studio.chapter_actions`,
:mod:`~app.studio.export_controls`, :mod:`~app.studio.segment_search`, :mod:`~app.studio.take_review`,
:mod:`~app.studio.perform_line`, :mod:`~app.studio.cast_edits`; what they share is :mod:`~app.studio.studio_base`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QShortcut, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
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

from core.engine import ChatterboxError, RuntimeOptions
from core.narration import SPEED_RANGE, Placement, Project, editing, export_project
from core.voices import VoiceLibrary
from core.wording import describe_error

from ..audio.playback import Player
from ..controllers.render_on import RenderTarget
from ..controllers.studio import NO_PROJECT, StudioController
from ..engine_bridge import EngineBridge
from ..settings import Settings
from ..widgets.elided_label import ElidedLabel
from .cast_edits import CastEdits, cast_voices, touched_lines
from .cast_finder import CastFinder
from .cast_panel import CastCounts, CastPanel
from .chapter_actions import ChapterActions
from .check_report import CheckReport
from .export_controls import ExportControls
from .export_runner import ExportRunner
from .lexicon_dialog import edit_spoken, open_lexicon
from .perform_line import PerformLine
from .preview_windows import PreviewWindows
from .reading_line import ReadingLine
from .render_controls import RenderControls
from .review_bar import ReviewBar
from .seekable_waveform import SeekableWaveform
from .segment_actions import SegmentActions
from .segment_list import SegmentList
from .segment_playback import SegmentPlayback
from .segment_search import SegmentSearch
from .shape_edits import ShapeEdits
from .studio_base import StudioBase
from .take_check import TakeCheck
from .take_check_runner import TakeCheckRunner
from .take_review import TakeReview
from .take_settings import TakeSettings
from .word_times import WordTimes
from .word_times_runner import WordTimesRunner

FOLLOW_MS = 1000
"""How often a project open read-only looks for the takes another process stored."""


class StudioPanel(
    RenderControls,
    SegmentPlayback,
    SegmentActions,
    ShapeEdits,
    ChapterActions,
    ExportControls,
    SegmentSearch,
    TakeReview,
    TakeCheck,
    WordTimes,
    PerformLine,
    CastEdits,
    StudioBase,
):
    """The studio: made here (its widgets, their layout and connections), opened on a project, saved; what each
    control does is in the part named after it."""

    def __init__(
        self,
        bridge: EngineBridge,
        player: Player,
        settings: Settings,
        runtime: Callable[[], RuntimeOptions],
        parent: QWidget | None = None,
        library: VoiceLibrary | None = None,
    ) -> None:
        super().__init__(parent)
        self.bridge, self.player, self.settings, self.runtime = bridge, player, settings, runtime
        self.library = library
        self.input_device: Any = None
        self.controller = StudioController()
        self.progress_events = 0
        self._audio = np.zeros(0, np.float32)
        self._placements: list[Placement] = []
        self._offset = 0.0
        """Seconds of the preview before what the player was given."""
        self._paused_at: float | None = None
        self._live = False
        """Playing chunks as they render (rather than a preview of finished segments)."""
        self._heard_marks: list[tuple[int, int]] = []
        """While listening to a render: (sample where a segment's audio starts in the player, its number)."""
        self._windows = PreviewWindows()
        """Finished segments are played a window at a time (see :mod:`app.studio.preview_windows`)."""
        self.export_runner = ExportRunner(export_project, self)
        self.take_check = TakeCheckRunner(self)
        self.word_times = WordTimesRunner(self)
        self.cast_finder = CastFinder(self)
        self._cast_counts = CastCounts()
        self.speaker_picker = None
        self._export_target: Path | None = None
        self.check_report: CheckReport | None = None
        self._target = RenderTarget()
        """Where the render running (or the last one) renders."""
        self._play_only: int | None = None
        self._review_segment = None
        self._build()

    def _build(self) -> None:
        self.title = QLabel(NO_PROJECT, self)
        self.title.setWordWrap(True)
        self.render_button = QPushButton("&Render", self)
        self.render_button.setToolTip("Render every pending segment (only what changed since the last render)")
        self.stop_button = QPushButton("S&top", self)
        self.play_button = QPushButton("&Play", self)
        self.play_button.setToolTip("Play the project from the selected segment (Space pauses and resumes)")
        self.render_menu = QMenu(self)
        self.render_chapter_action = self.render_menu.addAction("Render the selected &chapter", self.render_chapter)
        self.render_range_action = self.render_menu.addAction("Render c&hapters…", self._ask_chapter_range)
        self.render_more = QToolButton(self)
        self.render_more.setText("▾")
        self.render_more.setToolTip("Render one chapter, or a range of chapters")
        self.render_more.setAccessibleName("Render chapters")
        self.render_more.setMenu(self.render_menu)
        self.render_more.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.render_more.setStyleSheet("QToolButton::menu-indicator { image: none; }")  # the ▾ says it already
        self.export_button = QPushButton("E&xport…", self)
        self.cancel_export_button = QPushButton("&Cancel export", self)
        self.cancel_export_button.setToolTip("Stop the export: no file is left under its name")
        self.cancel_export_button.setVisible(False)
        self.lexicon_button = QPushButton("Le&xicon…", self)
        self.lexicon_button.setToolTip("How words are said in this project (the written text stays)")
        self.listen = QCheckBox("&Listen while rendering", self)
        self.listen.setChecked(True)
        self.listen.setToolTip(
            "Hear the segments while they render on this computer (a Ray cluster sends each take back whole: "
            "play them when they are rendered)"
        )
        self.progress = QProgressBar(self)
        self.progress.setTextVisible(True)
        self.progress.setFormat("")
        self.status = QLabel("", self)
        self.status.setWordWrap(True)
        self.pace = QSlider(Qt.Orientation.Horizontal, self)
        self.pace.setRange(round(SPEED_RANGE[0] * 100), round(SPEED_RANGE[1] * 100))
        self.pace.setSingleStep(5)
        self.pace.setPageStep(10)
        self.pace.setValue(100)
        self.pace.setToolTip(
            "Pace of the whole narration, pitch preserved (applied when playing and exporting; "
            "nothing is rendered again)"
        )
        self.pace_label = QLabel("Pace 1.00×", self)
        self.segments = SegmentList(self)
        self.cast_panel = CastPanel()  # placed by the window, as a side tab beside the studio
        self.speakers_row = QWidget(self)  # shown for a project with a cast
        self.speaker_filter = QComboBox(self.speakers_row)
        self.speaker_filter.setAccessibleName("Speakers")
        self.speaker_filter.setToolTip(
            "Show every line, the lines whose speaker is unsure, the narration, or one character's lines"
        )
        self.speaker_filter.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.speaker_filter.setMinimumContentsLength(14)
        self.speakers_hint = ElidedLabel("", self.speakers_row)  # elided by its room: it never widens the studio
        self.speakers_hint.setStyleSheet("color: palette(placeholder-text);")
        self.cast_button = QToolButton(self.speakers_row)
        self.cast_button.setText("Cast…")
        self.cast_button.setToolTip("The characters, their lines and their voices (the Cast tab)")
        speakers_label = QLabel("Speak&ers:", self.speakers_row)
        speakers_label.setBuddy(self.speaker_filter)
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Find in the text (Ctrl+F)")
        self.search.setToolTip(
            "Show only the segments whose text holds these words, with their chapters (Enter: to the list; "
            "Esc: every segment again)"
        )
        self.search.setAccessibleName("Find in the text")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(64)
        self.found = QLabel("", self)
        self.review_filter = QToolButton(self)  # a tool button: narrower, the title beside it keeps its room
        self.review_filter.setText("Needs review (0)")
        self.review_filter.setCheckable(True)
        self.review_filter.setToolTip(
            "Show only the segments whose take the take screen flagged (the Status column's mark; its tooltip says "
            "why); with words in the search, only those of them that hold the words"
        )
        self.review_action = QAction("Review", self)
        self.review_action.setCheckable(True)
        self.review_action.setShortcut(QKeySequence(Qt.Key.Key_F7))
        self.review_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.addAction(self.review_action)
        self.review_button = QToolButton(self)
        self.review_button.setDefaultAction(self.review_action)
        self.review_bar = ReviewBar(self)
        self.takes = TakeSettings(self.settings, self)
        self.find_action = QAction("&Find in the text", self)
        self.find_action.setShortcut(QKeySequence.StandardKey.Find)
        self.find_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.addAction(self.find_action)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.setUndoLimit(editing.HISTORY_LIMIT)  # as many as the project's store keeps
        self.follow_timer = QTimer(self)
        self.follow_timer.setInterval(FOLLOW_MS)
        self.follow_timer.timeout.connect(self._follow)
        self.undo_action = QAction("&Undo", self)
        self.undo_action.setShortcut(QKeySequence.StandardKey.Undo)
        self.redo_action = QAction("&Redo", self)
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence(QKeySequence.StandardKey.Redo)])
        for action in (self.undo_action, self.redo_action):
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)  # not the Speak text's
            self.addAction(action)
        self.undo_button = QToolButton(self)
        self.undo_button.setDefaultAction(self.undo_action)
        self.redo_button = QToolButton(self)
        self.redo_button.setDefaultAction(self.redo_action)
        self.waveform = SeekableWaveform(self)
        self.waveform.setMinimumHeight(70)
        self.reading = ReadingLine(self)

        title = QHBoxLayout()  # Undo / Redo beside the title: the button row stays narrow for small screens
        title.addWidget(self.title, 1)
        title.addWidget(self.found)  # the search here, where the title elides: the button row fits small screens
        title.addWidget(self.search)
        title.addWidget(self.review_filter)
        title.addWidget(self.undo_button)
        title.addWidget(self.redo_button)
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        for widget in (
            self.render_button,
            self.render_more,
            self.stop_button,
            self.play_button,
            self.export_button,
            self.cancel_export_button,
            self.takes,
            self.review_button,
        ):
            buttons.addWidget(widget)
            if isinstance(widget, QPushButton):  # as wide as its words, not the style's 80 px: small screens fit
                widget.setMinimumWidth(widget.fontMetrics().horizontalAdvance(widget.text().replace("&", "")) + 12)
        buttons.addStretch(1)
        self._button_row = buttons
        pace = QHBoxLayout()
        pace.addWidget(self.pace_label)
        pace.addWidget(self.pace, 1)
        pace.addWidget(self.listen)
        pace.addWidget(self.lexicon_button)  # here, beside a slider that yields room: the window fits small screens
        column = QVBoxLayout(self)
        self._page = column
        column.addLayout(title)
        column.addLayout(buttons)
        column.addWidget(self.progress)
        column.addWidget(self.status)
        column.addWidget(self.review_bar)
        speakers = self._speakers_layout = QHBoxLayout(self.speakers_row)
        speakers.setContentsMargins(0, 0, 0, 0)
        speakers.addWidget(speakers_label)
        speakers.addWidget(self.speaker_filter)
        speakers.addWidget(self.speakers_hint, 1)
        speakers.addWidget(self.cast_button)
        self.speakers_row.setVisible(False)
        column.addWidget(self.speakers_row)
        column.addWidget(self.segments, 3)
        column.addLayout(pace)
        column.addWidget(self.reading)
        column.addWidget(self.waveform, 1)

        self.render_button.clicked.connect(self.render_pending)
        self.stop_button.clicked.connect(self.stop)
        self.play_button.clicked.connect(self.toggle_play)
        self.export_button.clicked.connect(self.export_dialog)
        self.cancel_export_button.clicked.connect(self.export_runner.cancel)
        self.export_runner.progress.connect(self._on_export_progress)
        self.export_runner.finished.connect(self._on_export_finished)
        self.export_runner.failed.connect(self._on_export_failed)
        self.export_runner.cancelled.connect(self._on_export_cancelled)
        # several segments (or chapters) can be selected: the export dialog offers "the selected segments"
        self.segments.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.pace.valueChanged.connect(self._on_pace)
        self.segments.play_from.connect(self.play_from)
        self.segments.regenerate.connect(self.regenerate)
        self.segments.edit_text.connect(self._ask_text)
        self.segments.choose_take.connect(self.choose_take)
        self.segments.set_voice.connect(self.set_voice)
        self.segments.set_pause.connect(self._ask_pause)
        self.segments.set_speed.connect(self._ask_speed)
        self.segments.delete_segment.connect(self.delete_segment)
        self.segments.set_skipped.connect(self.set_skipped)
        self.segments.merge_next.connect(self.merge_next)
        self.segments.split_segment.connect(self._ask_split)
        self.segments.chapter_starts.connect(self._ask_chapter_start)
        self.segments.chapter_joins.connect(self.chapter_joins)
        self.segments.rename_chapter.connect(self._ask_chapter_title)
        self.segments.set_chapter_skipped.connect(self.set_chapter_skipped)
        self.undo_action.triggered.connect(self.undo)
        self.redo_action.triggered.connect(self.redo)
        self.undo_stack.canUndoChanged.connect(self._on_undo_state_changed)
        self.undo_stack.canRedoChanged.connect(self._on_undo_state_changed)
        self.lexicon_button.clicked.connect(lambda: open_lexicon(self))
        self.segments.edit_spoken.connect(lambda number: edit_spoken(self, number))
        self.segments.show_reading.connect(self.show_reading)
        self.waveform.seek_requested.connect(self.seek)
        self.reading.word_clicked.connect(self.play_from_word)
        self.bridge.render_step.connect(self._on_step)
        self.bridge.render_done.connect(self._on_done)
        self.bridge.request_failed.connect(self._on_failed)
        self.bridge.request_cancelled.connect(self._on_cancelled)
        self.bridge.speak_submitted.connect(self._on_speak_submitted)
        self.bridge.convert_submitted.connect(lambda rid: self._on_speak_submitted(rid, "Re-voice"))
        self.bridge.cluster_changed.connect(self._on_cluster_changed)
        self._timer = QTimer(self)
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._tick)
        self._refresh_timer = QTimer(self)  # a dragged pace slider prepares the next window once, when it rests
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(300)
        self._refresh_timer.timeout.connect(self._refresh_preview)
        self.changed.connect(self._refresh_timer.start)
        self._search_timer = QTimer(self)  # typing searches once it rests a moment, not at every letter
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(150)
        self._search_timer.timeout.connect(self.apply_search)
        self.search.textChanged.connect(self._search_timer.start)
        self.search.returnPressed.connect(self._search_entered)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self.search, self.search.clear, Qt.ShortcutContext.WidgetShortcut)
        self.find_action.triggered.connect(self._find)
        self.review_filter.toggled.connect(self.filter_review)
        self._connect_review()
        self._connect_take_check()
        self._connect_word_times()
        self._connect_perform()
        self._connect_cast()
        self.cast_button.clicked.connect(self.show_cast_requested)
        self._update_controls()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_speakers()
        self._fit_review()

    def _refresh_preview(self) -> None:
        """The project changed: the next preview window is prepared again from its new state."""
        if self.project is not None:
            self._windows.refresh(self.project)

    def set_project(self, project: Project | None) -> None:
        self.stop()
        if self.exporting:  # the export reads the project being closed
            self.export_runner.shutdown()
        if self.checking:  # its takes' measures are the project being closed's
            self.take_check.shutdown()
        if self.aligning:  # its takes' words are the project being closed's (not stored)
            self.word_times.shutdown()
        if self.finding:  # its characters are the project being closed's (what it finds is not adopted)
            self.cast_finder.shutdown()
        self.undo_stack.clear()
        self.controller.open(project)
        self._restore_undo()
        self.progress.setFormat("")  # the last render's progress was another project's
        self.progress.setValue(0)
        self.search.blockSignals(True)  # the list shows the new project whole
        self.search.clear()
        self.search.blockSignals(False)
        self.review_filter.blockSignals(True)
        self.review_filter.setChecked(False)
        self.review_filter.blockSignals(False)
        self.found.clear()
        self._review_segment = None
        self.segments.set_project(project)
        self.segments.editable = not self.controller.read_only
        self.segments.voices = sorted(project.voices) if project else []
        self.pace.blockSignals(True)
        self.pace.setValue(round(self.controller.pace() * 100))
        self.pace.blockSignals(False)
        self._on_pace(self.pace.value(), mark=False)
        self.waveform.clear_audio()
        self.reading.show_line(None)
        self.cast_panel.set_note("")
        self._show_cast()
        self._show_counts()
        self._update_controls()
        if self.controller.read_only:
            self.status.setText(self.controller.read_only)
            self.message.emit(self.controller.read_only, False)
            self.follow_timer.start()
        else:
            self.follow_timer.stop()
        self.changed.emit()

    def _follow(self) -> None:
        """Read-only while another process renders the project: the takes it stored since show up, row by row."""
        before = cast_voices(self.project)
        try:
            changes = self.controller.follow()
        except ChatterboxError as exc:  # the project was damaged or removed meanwhile: stop following it
            self.follow_timer.stop()
            self.message.emit(describe_error(exc), True)
            return
        if changes is None or self.project is None:
            return
        if changes.shape:
            self.segments.shape_changed()
        else:  # a character's new voice changes no segment row: its lines are read again all the same
            voiced = touched_lines(self.project, (), before)
            self.segments.segments_changed([*changes.numbers, *voiced])
        self._show_cast()
        self._show_counts()

    def save(self) -> bool:
        if self.project is None:
            return True
        try:
            self.controller.save()
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return False
        self.changed.emit()
        return True
