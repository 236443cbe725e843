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

Export runs on its own thread (:mod:`app.studio.export_runner`): the progress bar shows it with the time left,
Cancel stops it (no file is left under the final name), and the window stays responsive; the project is not edited
or rendered meanwhile. An export with the store check ends with its report (:mod:`app.studio.check_report`). A
project that another process holds (it renders there) opens read-only: it can be played and exported, not rendered
or edited.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence, QShortcut, QUndoCommand, QUndoStack
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHBoxLayout,
    QInputDialog,
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

from core.engine import SAMPLE_RATE, ChatterboxError, RuntimeOptions
from core.narration import (
    SPEED_RANGE,
    Edit,
    Placement,
    Project,
    RenderProgress,
    RenderSummary,
    clock,
    editing,
    export_project,
)
from core.wording import describe_error, describe_failure

from ..audio.playback import Player
from ..controllers.render_on import RenderTarget, refusal, rendering_text, where
from ..controllers.studio import (
    NO_PROJECT,
    StudioController,
    done_text,
    export_done_text,
    export_progress_text,
    progress_text,
)
from ..engine_bridge import EngineBridge
from ..settings import Key, Settings
from ..widgets.waveform_plot import WaveformPlot
from .check_report import CheckReport
from .export_choices import ExportChoices
from .export_dialog import ExportDialog, default_folder
from .export_runner import ExportRunner
from .lexicon_dialog import edit_spoken, open_lexicon
from .preview_windows import PreviewWindows
from .render_range import ChapterRangeDialog
from .segment_list import SegmentList
from .split_dialog import SplitDialog

log = logging.getLogger(__name__)


class SeekableWaveform(WaveformPlot):
    seek_requested = Signal(float)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setToolTip("Click to play from that point")
        self.scene().sigMouseClicked.connect(self._clicked)

    def show_audio(self, audio: np.ndarray) -> None:
        self.clear_audio()
        self.append(audio)

    def _clicked(self, event) -> None:
        point = self.getPlotItem().vb.mapSceneToView(event.scenePos())
        self.seek_requested.emit(max(0.0, float(point.x())))


class EditCommand(QUndoCommand):
    """One edit of the project on the undo stack: done when pushed; undo and redo swap its record for the inverse."""

    def __init__(self, panel: StudioPanel, edit: Edit, text: str) -> None:
        super().__init__(text)
        self.panel, self.edit, self.done = panel, edit, True

    def undo(self) -> None:
        self._swap()

    def redo(self) -> None:
        if self.done:  # pushing calls redo: the edit was made already
            self.done = False
            return
        self._swap()

    def _swap(self) -> None:
        try:
            self.edit = self.panel.controller.revert(self.edit)
        except ChatterboxError as exc:  # the project changed in another way since: this step cannot be replayed
            self.setObsolete(True)
            self.panel.message.emit(describe_error(exc), True)
            return
        self.panel._reshaped(self.edit.number)


class StudioPanel(QWidget):
    changed = Signal()
    """The project was edited, rendered, saved, opened or closed (the window updates its title and menus)."""
    message = Signal(str, bool)
    """Text for the window's message line, and whether it is an error."""
    export_finished = Signal(object)
    """An export ended and its files are in place (the export's result)."""
    export_ended = Signal()
    """An export ended: written (after :attr:`export_finished`), failed or cancelled."""

    def __init__(
        self,
        bridge: EngineBridge,
        player: Player,
        settings: Settings,
        runtime: Callable[[], RuntimeOptions],
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.bridge, self.player, self.settings, self.runtime = bridge, player, settings, runtime
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
        self._export_target: Path | None = None
        self.check_report: CheckReport | None = None
        self._target = RenderTarget()
        """Where the render running (or the last one) renders."""
        self._build()

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
    def exporting(self) -> bool:
        return self.export_runner.running

    @property
    def busy(self) -> bool:
        """The project belongs to a render or an export: no edits, no second render or export."""
        return self.rendering is not None or self.exporting

    # --- construction ------------------------------------------------------------------------------------------
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
        self.search = QLineEdit(self)
        self.search.setPlaceholderText("Find in the text (Ctrl+F)")
        self.search.setToolTip(
            "Show only the segments whose text holds these words, with their chapters (Enter: to the list; "
            "Esc: every segment again)"
        )
        self.search.setAccessibleName("Find in the text")
        self.search.setClearButtonEnabled(True)
        self.search.setMinimumWidth(160)
        self.found = QLabel("", self)
        self.find_action = QAction("&Find in the text", self)
        self.find_action.setShortcut(QKeySequence.StandardKey.Find)
        self.find_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.addAction(self.find_action)
        self.undo_stack = QUndoStack(self)
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

        title = QHBoxLayout()  # Undo / Redo beside the title: the button row stays narrow for small screens
        title.addWidget(self.title, 1)
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
        ):
            buttons.addWidget(widget)
        buttons.addStretch(1)
        buttons.addWidget(self.found)
        buttons.addWidget(self.search, 1)
        pace = QHBoxLayout()
        pace.addWidget(self.pace_label)
        pace.addWidget(self.pace, 1)
        pace.addWidget(self.listen)
        pace.addWidget(self.lexicon_button)  # here, beside a slider that yields room: the window fits small screens
        column = QVBoxLayout(self)
        column.addLayout(title)
        column.addLayout(buttons)
        column.addWidget(self.progress)
        column.addWidget(self.status)
        column.addWidget(self.segments, 3)
        column.addLayout(pace)
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
        self.waveform.seek_requested.connect(self.seek)
        self.bridge.render_step.connect(self._on_step)
        self.bridge.render_done.connect(self._on_done)
        self.bridge.request_failed.connect(self._on_failed)
        self.bridge.request_cancelled.connect(self._on_cancelled)
        self.bridge.speak_submitted.connect(self._on_speak_submitted)
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
        self._update_controls()

    # --- the project -------------------------------------------------------------------------------------------
    def _refresh_preview(self) -> None:
        """The project changed: the next preview window is prepared again from its new state."""
        if self.project is not None:
            self._windows.refresh(self.project)

    def set_project(self, project: Project | None) -> None:
        self.stop()
        if self.exporting:  # the export reads the project being closed
            self.export_runner.shutdown()
        self.undo_stack.clear()
        self.controller.open(project)
        self.progress.setFormat("")  # the last render's progress was another project's
        self.progress.setValue(0)
        self.search.blockSignals(True)  # the list shows the new project whole
        self.search.clear()
        self.search.blockSignals(False)
        self.found.clear()
        self.segments.set_project(project)
        self.segments.editable = not self.controller.read_only
        self.segments.voices = sorted(project.voices) if project else []
        self.pace.blockSignals(True)
        self.pace.setValue(round(self.controller.pace() * 100))
        self.pace.blockSignals(False)
        self._on_pace(self.pace.value(), mark=False)
        self.waveform.clear_audio()
        self._show_counts()
        self._update_controls()
        if self.controller.read_only:
            self.status.setText(self.controller.read_only)
            self.message.emit(self.controller.read_only, False)
        self.changed.emit()

    def _writable(self) -> bool:
        """Edits are possible: a project is open, neither a render nor an export has it, no other process holds it."""
        return self.project is not None and not self.busy and not self.controller.read_only

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

    def _edited(self, number: int | None = None) -> None:
        self.segments.segments_changed(None if number is None else [number])
        self._show_counts()
        self.changed.emit()

    # --- search ------------------------------------------------------------------------------------------------
    @Slot()
    def apply_search(self) -> None:
        """Show only the segments whose text holds the words in the search field (all of them when it is empty)."""
        self._search_timer.stop()
        words = self.search.text().strip()
        shown = self.segments.search(words)
        self.found.setText(f"{shown} found" if words else "")

    def _search_entered(self) -> None:
        """Enter in the search field: to the list, on the selected segment if it is found, else the first found."""
        self.apply_search()
        selected = self.segments.selected_number()
        if selected is None or not self.segments.segment_index(selected).isValid():
            first = self.segments.first_shown()
            if first is not None:
                self.segments.select(first)
        self.segments.setFocus()

    def _find(self) -> None:
        self.search.setFocus()
        self.search.selectAll()

    # --- rendering ---------------------------------------------------------------------------------------------
    @Slot()
    def render_pending(self) -> None:
        self._start_render(None)

    @Slot(int)
    def regenerate(self, number: int) -> None:
        self._start_render(number)

    def render_chapters(self, first: int, last: int) -> None:
        """Render the pending segments of chapters ``first`` to ``last`` (1-based, both included)."""
        if self.project is None:
            return
        numbers = self.controller.pending_in_chapters(first, last)
        if not numbers:
            which = f"Chapter {first}" if first == last else f"Chapters {first} to {last}"
            self.status.setText(f"{which}: every segment is rendered (or skipped).")
            return
        self._start_render(None, numbers)

    @Slot()
    def render_chapter(self) -> None:
        """Render the chapter of the selected row (the first chapter when nothing is selected)."""
        chapter = self._selected_chapter()
        self.render_chapters(chapter, chapter)

    def _ask_chapter_range(self) -> None:
        if self.project is None:
            return
        chapter = self._selected_chapter()
        dialog = ChapterRangeDialog(self.project, chapter, chapter, self)
        if dialog.exec():
            self.render_chapters(*dialog.chapters())

    def _selected_chapter(self) -> int:
        return self.segments.selected_chapter() or 1

    def selected_segments(self) -> tuple[int, ...]:
        """The selected segments, in order; a selected chapter row stands for all of its segments."""
        return self.segments.selected_numbers() if self.project is not None else ()

    def _start_render(self, regenerate: int | None, numbers: tuple[int, ...] | None = None) -> None:
        project = self.project
        if project is None or not self._writable():
            return
        if self.bridge.model is None:
            self.message.emit("No model is loaded: choose one in the Models menu.", True)
            return
        todo = self.controller.pending(regenerate, numbers)
        if not todo:
            self.status.setText("Every segment is rendered. Play it, fix a sentence, or export.")
            return
        target = RenderTarget() if regenerate is not None else RenderTarget.from_settings(self.settings)
        refused = refusal(target, frozen=self.frozen)
        if refused is not None:  # nothing has started: the project and the studio are as they were
            self.status.setText("Not rendered: " + refused)
            self.message.emit(refused, True)
            return
        self._target = target
        self.stop_playback()
        self._live = self.listen.isChecked() and not target.cluster  # a cluster's takes come back whole
        self._heard_marks = []
        if self._live:
            self.player.begin()
            self.waveform.clear_audio()
        self.progress.setRange(0, todo)
        self.progress.setValue(0)
        self.progress.setFormat(f"0 of {todo} segments")
        self.status.setText(rendering_text(target.address) if target.cluster else "Generating…")
        self.segments.editable = False
        runtime = self.runtime()
        if not self._live:  # nobody listens: one decoder call per segment renders faster than streaming windows
            runtime = replace(runtime, stream=False)
        self.controller.started(self.bridge.render(project, runtime, regenerate, numbers=numbers, target=target))
        if self._live:  # the playhead and "Buffering…" (a silent render has no playhead: the status says what runs)
            self._timer.start()
        self._update_controls()

    @property
    def on_cluster(self) -> bool:
        """A render runs on a Ray cluster now."""
        return self.rendering is not None and self._target.cluster

    @property
    def frozen(self) -> bool:
        """The desktop build (no Ray in it)."""
        return bool(getattr(sys, "frozen", False))

    @Slot()
    def render_on_changed(self) -> None:
        """Settings → Render on changed: Render's tooltip says where the next render goes."""
        self._update_controls()

    @Slot(object)
    def _on_cluster_changed(self, stats) -> None:
        """The cluster render found its nodes and started its actors, or re-queued a unit whose actor died."""
        if self.rendering is None or not self._target.cluster:
            return
        text = rendering_text(self._target.address, stats.actors or None)
        if stats.requeued_units:
            text += f" {stats.requeued_units} unit(s) re-queued after an actor was lost."
        self.status.setText(text)

    @Slot(object)
    def _on_step(self, step: RenderProgress) -> None:
        if self.rendering is None:
            return
        self.progress_events += 1
        if step.kind == "chunk":
            if self._live and step.chunk is not None:
                if not self._heard_marks or self._heard_marks[-1][1] != step.number:
                    self._heard_marks.append((self.player.queued, step.number))  # where its audio starts
                self.player.feed(step.chunk.samples)
                self.waveform.append(step.chunk.samples)
            else:
                self.segments.highlight(step.number)  # nobody listens: the segment being generated
            return
        self.segments.segments_changed([step.number])  # its take arrived (or it failed): only its row changes
        self.progress.setValue(step.done)
        self.progress.setFormat(progress_text(step))
        if step.kind == "failed":
            self.message.emit(f"Segment {step.number} failed: {describe_failure(step)}", True)
        self._show_counts()

    @Slot(int, object)
    def _on_done(self, rid: int, summary: RenderSummary) -> None:
        if not self.controller.owns(rid):
            return
        self._end_render()
        text = done_text(summary)
        stats = self.bridge.cluster_stats
        if self._target.cluster and stats is not None and stats.actors:
            text += f" On {where(self._target.address)}, {stats.actors} actor{'' if stats.actors == 1 else 's'}."
        self.status.setText(text)

    @Slot(int, str)
    def _on_failed(self, rid: int, message: str) -> None:
        if self.controller.owns(rid):
            self._end_render()
            self.status.setText("Rendering stopped: " + message)
            self.message.emit(message, True)

    @Slot(int)
    def _on_cancelled(self, rid: int) -> None:
        if self.controller.owns(rid):
            self._end_render()
            self.status.setText("Stopped. Finished segments are saved; Render continues with the rest.")

    @Slot(int)
    def _on_speak_submitted(self, _rid: int) -> None:
        """Speak during a render: the render goes on (the worker runs the request between two segments), and a
        render being listened to hands the player over and goes on silently."""
        if self.rendering is None or not self._live:
            return
        self._live = False
        self._timer.stop()
        self.status.setText("Speak is playing; the render goes on without sound.")

    def _end_render(self) -> None:
        self.controller.ended()
        self.segments.editable = True
        if self._live:
            self.player.end_of_input()
        self.segments.segments_changed()
        self._show_counts()
        self._update_controls()
        self.changed.emit()

    # --- listening ---------------------------------------------------------------------------------------------
    @Slot()
    def toggle_play(self) -> None:
        """Play from the selected segment; pause; resume where it paused."""
        if self._paused_at is not None:
            self._play_at(self._paused_at)
        elif self._timer.isActive() and not self._live:
            self.pause()
        else:
            self.play_from(self.segments.selected_number() or 1)

    def toggle_from_key(self) -> str:
        """Space in the Project view: what Play / Pause / Resume does when enabled ("studio"), else "nothing"."""
        if self.play_button.isEnabled():
            self.play_button.click()
            return "studio"
        return "nothing"

    @Slot(int)
    def play_from(self, number: int) -> None:
        if self.project is None or self.rendering is not None:
            return
        try:
            audio, placements = self._windows.load(self.project, number)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        if not audio.size:
            self.status.setText("Nothing from here on is rendered yet: press Render.")
            return
        self._show_window(audio, placements)

    def _show_window(self, audio: np.ndarray, placements: list[Placement]) -> None:
        self._audio, self._placements = audio, placements
        self.waveform.show_audio(self._audio)
        self.segments.highlight(self._placements[0].number)
        self._play_at(0.0)

    def _next_window(self) -> bool:
        """At the end of a window: go on with the next one if it is prepared (``False``: nothing more to play)."""
        try:
            ready = self._windows.take_next(self._open_project())
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return False
        if ready is None:
            self.status.setText("Loading the next segments…")
            return True  # still being prepared: the next tick looks again
        if not ready[0].size:
            return False
        self._show_window(*ready)
        return True

    def _play_at(self, seconds: float) -> None:
        seconds = min(max(0.0, seconds), self._audio.size / SAMPLE_RATE)
        self._live, self._paused_at, self._offset = False, None, seconds
        player = self.player
        player.begin()
        if not player.feed(self._audio[round(seconds * SAMPLE_RATE) :]):
            self.message.emit(player.error or "Audio cannot be played on this computer.", False)
        player.end_of_input()
        self.status.setText("Playing")
        self._timer.start()
        self._update_controls()

    @Slot()
    def pause(self) -> None:
        if not self._timer.isActive() or self._live:
            return
        self._paused_at = self.position()
        self.player.stop()
        self._timer.stop()
        self.status.setText(f"Paused at {clock(self._paused_at)}")
        self._update_controls()

    @Slot(float)
    def seek(self, seconds: float) -> None:
        if self.rendering is None and self._audio.size:
            self._play_at(seconds)

    def position(self) -> float:
        """Seconds into the preview being heard (never past the end of what exists)."""
        played = self.player.played / SAMPLE_RATE
        return min(self._offset + played, self._audio.size / SAMPLE_RATE)

    def stop_playback(self) -> None:
        self._windows.cancel()
        self.player.stop()
        self._paused_at = None
        if self.rendering is None:
            self._timer.stop()

    @Slot()
    def stop(self) -> None:
        if self.rendering is not None:
            self.bridge.cancel_render()
            if not self._live:  # the player may be playing what Speak said
                self._timer.stop()
                self._update_controls()
                return
        self.stop_playback()
        if self.project is not None and self.rendering is None:
            self.status.setText("Stopped")
        self._update_controls()

    @Slot()
    def _tick(self) -> None:
        player = self.player
        if self._live:
            if self.rendering is not None and player.stream is not None and player.ring.available == 0:
                self.status.setText("Buffering… (generation is behind playback)")
            elif self.rendering is not None:
                self.status.setText("Generating…")
            self.waveform.set_playhead(min(player.played, player.queued))
            self.segments.highlight(heard_segment(self._heard_marks, player.played))
            return
        seconds = self.position()
        self.waveform.set_playhead(round(seconds * SAMPLE_RATE))
        current = next((p.number for p in self._placements if p.start <= seconds < p.end), None)
        if current is None:  # in a pause: the segment before it
            current = next((p.number for p in reversed(self._placements) if p.start <= seconds), None)
        self.segments.highlight(current)
        if player.finished or player.stream is None:
            if player.stream is not None and self._windows.has_next() and self._next_window():
                return
            self._timer.stop()
            self.status.setText("Finished playing")
            self._update_controls()

    # --- one segment -------------------------------------------------------------------------------------------
    def _ask_text(self, number: int) -> None:
        segment = self._open_project().segments[number - 1]
        text, ok = QInputDialog.getMultiLineText(self, "Edit segment", f"Segment {number}:", segment.text)
        if ok and text.strip() and text != segment.text:
            self.edit_text(number, text)

    def edit_text(self, number: int, text: str) -> bool:
        return self._apply(f"edit segment {number}", lambda p: editing.edit_text(p, number, text), reshaped=False)

    # --- the project's shape (each edit on the undo stack) ----------------------------------------------------------
    def _apply(self, text: str, operation: Callable[[Project], Edit], reshaped: bool = True) -> bool:
        """Run an edit and push it on the undo stack; ``False`` (and a message) when the project refuses it."""
        if not self._writable():
            return False
        try:
            edit = self.controller.apply(operation)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return False
        self.undo_stack.push(EditCommand(self, edit, text))
        if reshaped:
            self._reshaped(edit.number)
        else:
            self._edited(edit.number)
        return True

    def _reshaped(self, number: int) -> None:
        """Segments or chapters were added, removed or renumbered: the list reads them again, keeping the selected
        segments and where it was scrolled (with none of them left, segment ``number`` is selected)."""
        self.stop_playback()
        self.segments.shape_changed()
        if self.project is not None and self.project.segments and not self.segments.selectionModel().hasSelection():
            self.segments.select(number)
        self._show_counts()
        self._update_controls()
        self.changed.emit()

    @Slot(bool)
    def _on_undo_state_changed(self, _possible: bool) -> None:
        self._update_controls()
        self.undo_action.setToolTip(f"Undo {self.undo_stack.undoText()}".strip())
        self.redo_action.setToolTip(f"Redo {self.undo_stack.redoText()}".strip())

    @Slot()
    def undo(self) -> None:
        if not self.busy and self.undo_stack.canUndo():
            self.undo_stack.undo()

    @Slot()
    def redo(self) -> None:
        if not self.busy and self.undo_stack.canRedo():
            self.undo_stack.redo()

    @Slot(int)
    def delete_segment(self, number: int) -> bool:
        return self._apply(f"delete segment {number}", lambda p: editing.delete(p, number))

    @Slot(int, bool)
    def set_skipped(self, number: int, skipped: bool) -> bool:
        what = "skip" if skipped else "narrate again"
        return self._apply(f"{what} segment {number}", lambda p: editing.set_skipped(p, number, skipped))

    @Slot(int)
    def merge_next(self, number: int) -> bool:
        return self._apply(f"merge segments {number} and {number + 1}", lambda p: editing.merge(p, number))

    def split(self, number: int, at: int) -> bool:
        return self._apply(f"split segment {number}", lambda p: editing.split(p, number, at))

    def chapter_starts(self, number: int, title: str | None = None) -> bool:
        return self._apply(
            f"new chapter at segment {number}", lambda p: editing.chapter_starts(p, number, title or None)
        )

    @Slot(int)
    def chapter_joins(self, number: int) -> bool:
        return self._apply(f"join the chapter at segment {number}", lambda p: editing.chapter_joins(p, number))

    def rename_chapter(self, chapter: int, title: str) -> bool:
        return self._apply(f"rename chapter {chapter}", lambda p: editing.rename_chapter(p, chapter, title))

    @Slot(int, bool)
    def set_chapter_skipped(self, chapter: int, skipped: bool) -> bool:
        what = "skip" if skipped else "narrate again"
        return self._apply(f"{what} chapter {chapter}", lambda p: editing.set_chapter_skipped(p, chapter, skipped))

    def _ask_split(self, number: int) -> None:
        dialog = SplitDialog(number, self._open_project().segments[number - 1].text, self)
        if dialog.exec():
            self.split(number, dialog.position())

    def _ask_chapter_start(self, number: int) -> None:
        title, ok = QInputDialog.getText(
            self, "New chapter", f"Title of the chapter that starts at segment {number} (empty: its first words):"
        )
        if ok:
            self.chapter_starts(number, title.strip() or None)

    def _ask_chapter_title(self, chapter: int) -> None:
        current = self._open_project().chapters[chapter - 1].title
        title, ok = QInputDialog.getText(self, "Rename chapter", f"Title of chapter {chapter}:", text=current)
        if ok and title.strip() and title != current:
            self.rename_chapter(chapter, title)

    def show_imported(self) -> None:
        """After an import: the chapters are in the list (skipped ones marked); nothing renders before Render."""
        project = self.project
        if project is None:
            return
        skipped = sum(c.skipped for c in project.chapters)
        marked = f" ({skipped} skipped)" if skipped else ""
        self.status.setText(
            f"Imported {len(project.chapters)} chapter(s){marked} and {len(project.segments)} segments. Review "
            "them (skip, merge, split, rename), then press Render."
        )

    @Slot(int, int)
    def choose_take(self, number: int, take: int) -> None:
        if not self._writable():
            return
        try:
            self.controller.choose_take(number, take)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        self._edited(number)
        self.play_from(number)  # A/B: hear the chosen take at once

    @Slot(int, object)
    def set_voice(self, number: int, name) -> None:
        if not self._writable():
            return
        try:
            self.controller.set_voice(number, name)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        self._edited(number)

    def _ask_pause(self, number: int) -> None:
        if not self._writable():
            return
        segment = self._open_project().segments[number - 1]
        value, ok = QInputDialog.getDouble(
            self, "Pause after", f"Seconds of silence after segment {number}:", segment.pause_after, 0.0, 30.0, 2
        )
        if ok:
            self.controller.set_pause(number, value)
            self._edited(number)

    def _ask_speed(self, number: int) -> None:
        if not self._writable():
            return
        segment = self._open_project().segments[number - 1]
        value, ok = QInputDialog.getDouble(
            self,
            "Pace of this segment",
            f"Pace of segment {number} (× the project's):",
            segment.speed or 1.0,
            SPEED_RANGE[0],
            SPEED_RANGE[1],
            2,
        )
        if ok:
            self.controller.set_speed(number, value)
            self._edited(number)

    def _on_pace(self, value: int, mark: bool = True) -> None:
        speed = value / 100
        self.pace_label.setText(f"Pace {speed:.2f}×")
        if mark and self.controller.set_pace(speed):
            self.changed.emit()

    # --- export ------------------------------------------------------------------------------------------------
    @Slot()
    def export_dialog(self) -> None:
        if self.project is None or self.busy:
            return
        settings = self.settings
        folder = default_folder(settings.get(Key.EXPORT_FOLDER))
        remembered = settings.get(Key.EXPORT_CHOICES)
        choices = (
            ExportChoices.from_json(remembered)
            if remembered
            else ExportChoices(loudness=self.project.finishing.get("loudness"))
        )
        dialog = ExportDialog(self.project, folder, choices, self.selected_segments(), self)
        if dialog.exec():
            settings.set(Key.EXPORT_CHOICES, dialog.choices().to_json())
            request = dialog.request()
            self.project.finishing["loudness"] = request.loudness
            self.export(request)

    def export(self, request) -> bool:
        """Start writing the export on its own thread (:attr:`export_finished` brings the result); ``False`` when
        it cannot start."""
        if self.project is None or self.busy:
            return False
        self._export_target = Path(request.out or request.per_chapter)
        if not self.export_runner.start(self.project, request):
            return False
        self.segments.editable = False
        self.progress.setRange(0, 1000)
        self.progress.setValue(0)
        self.progress.setFormat("Exporting…")
        self.status.setText(f"Exporting to {self._export_target}…")
        self._update_controls()
        return True

    @Slot()
    def cancel_export(self) -> None:
        self.export_runner.cancel()

    @Slot(object)
    def _on_export_progress(self, progress) -> None:
        self.progress.setValue(round(1000 * min(1.0, max(0.0, float(progress.fraction)))))
        self.progress.setFormat(export_progress_text(progress))

    @Slot(object)
    def _on_export_finished(self, result) -> None:
        target = self._export_target or Path(".")
        self.settings.set(Key.EXPORT_FOLDER, str(target.parent))
        self._export_ended(export_done_text(result, target))
        checks = list(getattr(result, "checks", None) or [])
        if checks:
            self.check_report = CheckReport(checks, parent=self)
            self.check_report.show()
        self.export_finished.emit(result)
        self.export_ended.emit()

    @Slot(str)
    def _on_export_failed(self, message: str) -> None:
        self._export_ended("Export stopped: " + message)
        self.message.emit(message, True)
        self.export_ended.emit()

    @Slot()
    def _on_export_cancelled(self) -> None:
        self._export_ended("Export cancelled: no file was written.")
        self.export_ended.emit()

    def _export_ended(self, text: str) -> None:
        self.segments.editable = not self.controller.read_only
        self.progress.setFormat("")
        self.progress.setValue(0)
        self.status.setText(text)
        self._update_controls()

    def shutdown(self, timeout: float = 10.0) -> None:
        """The window closes: an export is cancelled and waited for, and the project's lock is given back."""
        if not self.export_runner.shutdown(timeout):
            log.warning("the export did not stop within %.0f s", timeout)
        self.controller.close()

    # --- display -----------------------------------------------------------------------------------------------
    def _show_counts(self) -> None:
        self.title.setText(self.controller.summary())

    def _update_controls(self) -> None:
        has, rendering, exporting = self.project is not None, self.rendering is not None, self.exporting
        busy = rendering or exporting
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
        self.stop_button.setEnabled(rendering or self._timer.isActive())
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
        self.pace.setEnabled(has and not exporting and not self.controller.read_only)
        self.undo_action.setEnabled(writable and self.undo_stack.canUndo())
        self.redo_action.setEnabled(writable and self.undo_stack.canRedo())


def heard_segment(marks: list[tuple[int, int]], played: int) -> int | None:
    """The segment whose audio the player is playing: the last one that started at or before ``played``."""
    heard = None
    for start, number in marks:
        if start > played:
            break
        heard = number
    return heard
