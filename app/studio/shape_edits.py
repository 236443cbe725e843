"""Edits of the book's shape, each on Qt's undo stack: delete, skip or narrate again, merge, split (and a text edit,
pushed by :mod:`app.studio.segment_actions`, and the cast's edits, pushed by :mod:`app.studio.cast_edits` as
:class:`CastCommand`); Undo and Redo while nothing renders. The list reads the new shape and keeps its selection and
scroll position; a cast edit undone reads again only the lines it touched."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer
from PySide6.QtGui import QUndoCommand

from core.engine import ChatterboxError
from core.narration import Edit, Project, editing
from core.wording import describe_error

from .split_dialog import SplitDialog

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object


class EditCommand(QUndoCommand):
    """One edit of the project on the undo stack: done when pushed. The records themselves are the controller's
    history (kept in the project's store, so undo survives a restart); the stack moves in step with it."""

    def __init__(self, panel: StudioBase, text: str) -> None:
        super().__init__(text)
        self.panel, self.done = panel, True

    def undo(self) -> None:
        self._step(self.panel.controller.undo)

    def redo(self) -> None:
        if self.done:  # pushing calls redo: the edit was made already
            self.done = False
            return
        self._step(self.panel.controller.redo)

    def _step(self, step: Callable[[], Edit]) -> None:
        try:
            edit = step()
        except ChatterboxError as exc:  # the project changed in another way since: no step can be replayed
            self.setObsolete(True)
            self.panel.message.emit(describe_error(exc), True)
            QTimer.singleShot(0, self.panel.undo_stack.clear)  # the history was emptied: the stack follows
            return
        self.panel._reshaped(edit.number)


class CastCommand(EditCommand):
    """A cast edit on the undo stack: it changes no segment row and not the book's shape, so an undo or a redo reads
    again only the lines whose speaker or voice it changed (:meth:`CastEdits._cast_after`)."""

    def _step(self, step: Callable[[], Edit]) -> None:
        before = self.panel._cast_before()
        try:
            edit = step()
        except ChatterboxError as exc:
            self.setObsolete(True)
            self.panel.message.emit(describe_error(exc), True)
            QTimer.singleShot(0, self.panel.undo_stack.clear)
            return
        self.panel._cast_after(before, edit)


def command_for(panel: StudioBase, edit: Edit) -> EditCommand:
    """The undo stack's command for a stored record."""
    kind = CastCommand if edit.op in editing.CAST_OPERATIONS else EditCommand
    return kind(panel, edit_words(edit))


def edit_words(edit: Edit) -> str:
    """What the undo stack calls an edit ("Undo delete segment 4"), made now or restored from the store."""
    n = edit.number
    return {
        "delete": f"delete segment {n}",
        "skip": f"skip segment {n}",
        "unskip": f"narrate again segment {n}",
        "merge": f"merge segments {n} and {n + 1}",
        "split": f"split segment {n}",
        "edit": f"edit segment {n}",
        "cut_quotes": "cut sentences at their quotes",
        "chapter_starts": f"new chapter at segment {n}",
        "chapter_joins": f"join the chapter at segment {n}",
        "rename_chapter": f"rename chapter {n}",
        "skip_chapter": f"skip chapter {n}",
        "unskip_chapter": f"narrate again chapter {n}",
        "attribute": "find characters",
        "set_speaker": f"who says segment {n}",
        "merge_character": "merge characters",
        "rename_character": "rename a character",
        "add_character": "add a character",
        "cast_voice": "a character's voice",
    }.get(edit.op, edit.op)


class ShapeEdits(_Part):
    """The undoable edits, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def _apply(self, operation: Callable[[Project], Edit], reshaped: bool = True) -> bool:
        """Run an edit and push it on the undo stack; ``False`` (and a message) when the project refuses it."""
        if not self._writable():
            return False
        try:
            edit = self.controller.apply(operation)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return False
        self.undo_stack.push(EditCommand(self, edit_words(edit)))
        if reshaped:
            self._reshaped(edit.number)
        else:
            self._edited(edit.number)
        return True

    def _restore_undo(self) -> None:
        """The undo stack of a project just opened: its stored records, the oldest first (each already done)."""
        self.undo_stack.clear()
        for edit in self.controller.history.undo_records:
            self.undo_stack.push(command_for(self, edit))

    def _reshaped(self, number: int) -> None:
        """Segments or chapters were added, removed or renumbered: the list reads them again, keeping the selected
        segments and where it was scrolled (with none of them left, segment ``number`` is selected)."""
        self.stop_playback()
        self.segments.shape_changed()
        self._show_cast()  # a line's speaker may have gone or come with it
        if self.project is not None and self.project.segments and not self.segments.selectionModel().hasSelection():
            self.segments.select(number)
        self._show_counts()
        self._update_controls()
        self.changed.emit()

    def _on_undo_state_changed(self, _possible: bool) -> None:
        self._update_controls()
        self.undo_action.setToolTip(f"Undo {self.undo_stack.undoText()}".strip())
        self.redo_action.setToolTip(f"Redo {self.undo_stack.redoText()}".strip())

    def undo(self) -> None:
        if not self.busy and self.undo_stack.canUndo():
            self.undo_stack.undo()

    def redo(self) -> None:
        if not self.busy and self.undo_stack.canRedo():
            self.undo_stack.redo()

    def delete_segment(self, number: int) -> bool:
        return self._apply(lambda p: editing.delete(p, number))

    def set_skipped(self, number: int, skipped: bool) -> bool:
        return self._apply(lambda p: editing.set_skipped(p, number, skipped))

    def merge_next(self, number: int) -> bool:
        return self._apply(lambda p: editing.merge(p, number))

    def split(self, number: int, at: int) -> bool:
        return self._apply(lambda p: editing.split(p, number, at))

    def _ask_split(self, number: int) -> None:
        dialog = SplitDialog(number, self._open_project().segments[number - 1].text, self)
        if dialog.exec():
            self.split(number, dialog.position())
