"""The cast in the studio: who says each line, and the voices that read them.

- **Find characters** (the Cast panel) attributes the book on a thread (:mod:`app.studio.cast_finder`) and adopts
  what it found as one step of the undo stack; the project is not edited meanwhile (it is *busy*, as while it
  renders), so nothing is lost or mixed.
- **Merge, rename, add a character, a character's voice, a line's speaker** are the core's undoable cast edits
  (:mod:`core.narration.cast`), each on Qt's undo stack like the edits of the book's shape. Only the lines whose
  voice changes become pending, and only their rows are read again: a cast edit changes no segment row, so the
  lines it touches are worked out here (the lines whose speaker it changed, and the lines of each character whose
  voice it changed), after an undo or a redo too, and when another process changes the cast of a project open
  read-only.
- **Speakers ▾** above the list (shown for a project with a cast) shows every line, the unsure lines, the narration
  or one character's lines, with their counts; a Speaker column beside the text says who says each line.
- **W** on a line (or its menu's "Who says it…") opens a small popup of the cast's names: a few letters and Enter
  set its speaker, kept when characters are found again; a new name adds a character (one undo step for both).
  **U** / **Shift+U** go to the next / previous line whose speaker is unsure; with "Unsure speakers" shown, setting
  a line's speaker moves on to the next unsure line, as accepting a take moves the review on.
- ▶ in the Cast panel plays the voice that reads a character, as the Voice tab plays a reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QSizePolicy

from core.engine import ChatterboxError, load_voice
from core.narration import Edit, Project, cast, editing, resolve_voices
from core.wording import describe_error

from ..controllers.review import step
from .cast_finder import FoundCast, adopt
from .cast_panel import CastCounts, VoiceChoice, count_lines, fallback_words
from .segment_model import NARRATION, SPEAKER, TEXT, UNSURE_LINES, SpeakerFilter, is_unsure
from .shape_edits import CastCommand
from .speaker_picker import SpeakerChoice, SpeakerPicker

if TYPE_CHECKING:  # typed as the panel it is a part of; at run time a plain class (the panel is the QWidget)
    from .studio_base import StudioBase

    _Part = StudioBase
else:
    _Part = object

SPEAKERS_ROOM = 80
"""Speakers ▾ joins the row of buttons when this much room is left beside them (for a few words of its hint)."""
CastVoices = dict[str, "str | None"]
"""Each character's name → its voice: what a cast edit is compared by, to find the lines whose voice it changed."""
MISSING = object()


def cast_voices(project: Project | None) -> CastVoices:
    return {c.name: c.voice for c in project.cast} if project is not None else {}


def touched_lines(project: Project, ids: Iterable[int], before: CastVoices) -> list[int]:
    """The numbers of the lines a cast change touched: those whose speaker changed (``ids``) and those of every
    character whose voice changed (or who came or went) since ``before``. One pass over the book."""
    after = cast_voices(project)
    names = {n for n in before.keys() | after.keys() if before.get(n, MISSING) != after.get(n, MISSING)}
    wanted = set(ids)
    if not wanted and not names:
        return []
    return [n for n, s in enumerate(project.segments, 1) if s.id in wanted or (names and s.speaker in names)]


class CastEdits(_Part):
    """The cast's edits and the speakers in the list, as a part of :class:`~app.studio.studio_panel.StudioPanel`."""

    def _connect_cast(self) -> None:
        panel = self.cast_panel
        panel.find_requested.connect(self.find_characters)
        panel.merge_requested.connect(self.merge_character)
        panel.rename_requested.connect(self.rename_character)
        panel.add_requested.connect(self.add_character)
        panel.voice_requested.connect(self.choose_character_voice)
        panel.play_requested.connect(self.hear_character)
        panel.show_lines.connect(self.show_character_lines)
        panel.cut_requested.connect(self.cut_at_quotes)
        self.cast_finder.finished.connect(self._on_found)
        self.cast_finder.failed.connect(self._on_find_failed)
        self.cast_finder.cancelled.connect(self._update_controls)
        self.segments.ask_speaker.connect(self.ask_speaker)
        self.segments.next_unsure.connect(self.go_unsure)
        self.speaker_filter.activated.connect(self._on_speaker_filter)

    # --- what is shown ---------------------------------------------------------------------------------------------
    def _show_cast(self) -> None:
        """The Cast panel, the Speakers filter and the Speaker column from the project (one count of its lines)."""
        project = self.project
        counts = self._cast_counts = count_lines(project)
        self.cast_panel.show_cast(project, counts, self.library)
        shown = project is not None and bool(project.cast or counts.spoken or counts.unknown)
        self.segments.show_speakers(shown)
        self.speakers_row.setVisible(shown)
        self._fill_speaker_filter(project, counts)
        self._place_speakers()

    def _place_speakers(self) -> None:
        """Speakers ▾ at the right of the row of buttons when the studio is wide enough (no row is spent on it), else
        in a row of its own above the list (the studio never grows wider for it)."""
        row, buttons, page = self.speakers_row, self._button_row, self._page
        items = [buttons.itemAt(i) for i in range(buttons.count())]
        widgets = [w for item in items if item is not None and (w := item.widget()) is not None]
        room = sum(w.sizeHint().width() + buttons.spacing() for w in widgets if w is not row and not w.isHidden())
        wide = self.width() >= room + row.minimumSizeHint().width() + SPEAKERS_ROOM
        beside = row in widgets
        if wide and not beside:
            page.removeWidget(row)
            buttons.addWidget(row, 1)
        elif not wide and beside:
            buttons.removeWidget(row)
            page.insertWidget(page.indexOf(self.segments), row)
        else:
            return
        # beside the buttons its width is what is left (never a minimum: the window can still be made narrower,
        # and it moves back to a row of its own); the buttons' stretch gives it that room
        policy = row.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Ignored if wide else QSizePolicy.Policy.Preferred)
        row.setSizePolicy(policy)
        self._speakers_layout.setContentsMargins(12 if wide else 0, 0, 0, 0)  # apart from Review, beside it
        stretch = next(i for i, item in enumerate(items) if item is not None and item.spacerItem() is not None)
        buttons.setStretch(stretch, 0 if wide else 1)

    def _fill_speaker_filter(self, project: Project | None, counts: CastCounts) -> None:
        """Speakers ▾: every line, the unsure ones, the narration, each character (with their counts); the filter
        chosen stays chosen (every line again when its character is gone)."""
        combo = self.speaker_filter
        wanted = self.segments.segment_model.speaker_filter
        combo.blockSignals(True)
        combo.clear()
        total = len(project.segments) if project is not None else 0
        combo.addItem(f"All lines ({total})", None)
        combo.addItem(f"Unsure speakers ({counts.unsure_total})", UNSURE_LINES)
        combo.addItem(f"Narration ({counts.narration})", NARRATION)
        if project is not None and project.cast:
            combo.insertSeparator(combo.count())
            for character in project.cast:
                combo.addItem(
                    f"{character.name} ({counts.lines.get(character.name, 0)})", ("character", character.name)
                )
        at = next((i for i in range(combo.count()) if combo.itemData(i) == wanted), -1)
        combo.setCurrentIndex(max(at, 0))
        combo.blockSignals(False)
        if at < 0 and wanted is not None:  # its character was merged away or renamed: every line again
            self.segments.set_speaker_filter(None)
        unsure = counts.unsure_total
        self.speakers_hint.setText(
            f"{unsure} unsure · U: next unsure · W: who says it" if unsure else "W on a line: who says it"
        )
        self.speakers_hint.setToolTip(
            "In the list: W opens the cast's names for the selected line (type a few letters, Enter sets it); "
            "U and Shift+U go to the next and previous line whose speaker is unsure"
        )

    def _update_cast_controls(self) -> None:
        self.cast_panel.set_state(self._writable(), self.finding)
        self.speaker_filter.setEnabled(self.project is not None)

    # --- after an edit, an undo, a redo ----------------------------------------------------------------------------
    def _cast_before(self) -> CastVoices:
        return cast_voices(self.project)

    def _cast_after(self, before: CastVoices, edit: Edit | None) -> None:
        """A cast edit was made, undone or redone: the lines it touched are read again, and the cast shown again."""
        project = self.project
        if project is None:
            return
        ids = [entry[0] for entry in (edit.speakers or ())] if edit is not None else []
        numbers = touched_lines(project, ids, before)
        if numbers:
            self.segments.segments_changed(numbers)
        self._show_cast()
        self._show_counts()  # with the review's bar: who says the line it shows
        self._update_controls()
        self.changed.emit()

    def _apply_cast(self, operation: Callable[[Project], Edit], words: str) -> Edit | None:
        """Run a cast edit and push it on the undo stack; ``None`` when the project refuses it (a message says
        why) or it changed nothing."""
        if not self._writable():
            return None
        before = self._cast_before()
        try:
            edit = self.controller.apply_cast(operation)
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return None
        if edit is None:
            return None
        self.undo_stack.push(CastCommand(self, words))
        self._cast_after(before, edit)
        return edit

    # --- finding the characters ------------------------------------------------------------------------------------
    @property
    def finding(self) -> bool:
        return self.cast_finder.running

    def find_characters(self) -> bool:
        """Attribute the book on a thread (what a person set is kept); ``False`` when it cannot start now."""
        if not self._writable():
            return False
        if not self.cast_finder.start(self._open_project()):
            return False
        self.status.setText("Finding the characters and who says each line…")
        self._update_controls()
        return True

    def _on_found(self, found: FoundCast) -> None:
        self._update_controls()  # no longer busy
        project = self.project
        if project is None or found.project is not project:
            return  # another project was opened meanwhile
        before = self._cast_before()
        try:
            edit = self.controller.apply_cast(lambda p: adopt(p, found))
        except ChatterboxError:
            self.message.emit("The book changed while its characters were found: Find characters again.", True)
            return
        self._note_mixed(project)
        if edit is None:
            self._show_cast()
            self.status.setText(
                f"No new characters or speakers: the book is attributed as it is ({found.seconds:.1f} s)."
            )
            return
        self.undo_stack.push(CastCommand(self, "find characters"))
        self._cast_after(before, edit)
        counts = self._cast_counts
        self.status.setText(
            f"Found {len(project.cast)} character(s) who say {counts.spoken} line(s), {counts.unsure_total} unsure, "
            f"in {found.seconds:.1f} s (Undo takes it back)."
        )
        self.show_cast_requested.emit()

    def _note_mixed(self, project: Project) -> None:
        mixed = len(project.mixed_speech())
        self.cast_panel.set_note(
            f"{mixed} line(s) hold speech and narration together, so the narrator reads them. Cut at quotes makes "
            "the speech lines of their own, read by whoever says them."
            if mixed
            else "",
            cut=True,
        )

    def cut_at_quotes(self) -> bool:
        """Cut every sentence that holds speech and narration together at its quotes (one undo step); the parts
        keep the speaker their sentence had, the narration around the speech is the narrator's."""
        project = self.project
        if project is None or self.finding:
            return False
        before = len(project.segments)
        if not self._apply(editing.cut_at_quotes):
            return False
        self.cast_panel.set_note("")
        self._show_cast()
        self.status.setText(
            f"Cut at their quotes: {len(project.segments) - before} more line(s); the speech is read by whoever "
            "says it (Undo takes it back)."
        )
        return True

    def _on_find_failed(self, sentence: str) -> None:
        self._update_controls()
        self.message.emit(f"The characters could not be found: {sentence}", True)

    # --- the cast's edits ------------------------------------------------------------------------------------------
    def merge_character(self, name: str, into: str) -> bool:
        edit = self._apply_cast(lambda p: cast.merge_character(p, name, into), f"merge {name} into {into}")
        if edit is not None:
            self.status.setText(
                f"{name} and {into} are one character: {into} ({len(edit.speakers or [])} line(s) moved)."
            )
            self.cast_panel.select(into)
        return edit is not None

    def rename_character(self, name: str, new: str) -> bool:
        model = self.segments.segment_model
        wanted = model.speaker_filter
        if wanted == ("character", name):  # the list keeps showing the same character's lines
            model.speaker_filter = ("character", " ".join(new.split()))
        edit = self._apply_cast(lambda p: cast.rename_character(p, name, new), f"rename {name} to {new}")
        if edit is None:
            model.speaker_filter = wanted
            self._show_cast()
            return False
        renamed = self._open_project().cast[edit.number - 1].name
        self.status.setText(f"{name} is now {renamed} (the old name stays an alias).")
        self.cast_panel.select(renamed)
        return True

    def add_character(self, name: str, gender: str | None = None) -> str | None:
        """Add a character; its name as the cast keeps it (``None``: refused)."""
        edit = self._apply_cast(lambda p: cast.add_character(p, name, gender), f"add {name}")
        if edit is None:
            return None
        added = self._open_project().cast[edit.number - 1].name
        self.cast_panel.select(added)
        self.status.setText(f"{added} added to the cast: W on a line says it is theirs.")
        return added

    def choose_character_voice(self, name: str, choice: VoiceChoice) -> bool:
        """Character ``name`` reads in the chosen voice (a library voice is copied into the project first)."""
        if not self._writable():
            return False
        project = self._open_project()
        voice = choice.name
        if choice.kind == "library" and voice is not None:
            try:
                voice = resolve_voices(project, [voice], self.library, None)[voice]
            except ChatterboxError as exc:
                self.message.emit(describe_error(exc), True)
                return False
            self.segments.voices = sorted(project.voices)
        return self.set_character_voice(name, voice)

    def set_character_voice(self, name: str, voice: str | None) -> bool:
        project = self._open_project()
        words = voice or fallback_words(project)
        edit = self._apply_cast(lambda p: cast.set_character_voice(p, name, voice), f"{name}'s voice: {words}")
        if edit is None:
            return False
        lines = self._cast_counts.lines.get(name, 0)
        self.status.setText(f"{name} reads in {words}: their {lines} line(s) are pending where the voice changed.")
        return True

    def set_speaker(self, number: int, name: str | None) -> bool:
        """Segment ``number`` is said by ``name`` (``None``: the narrator), as a person set it. A line that leaves
        the list (its filter no longer shows it) hands the selection to the next line the list shows."""
        project = self._open_project()
        if not 1 <= number <= len(project.segments):
            return False
        segment = project.segments[number - 1]
        if segment.speaker_fixed and segment.speaker == name:
            self.status.setText(f"Segment {number}: {name or 'the narrator'} says it already.")
            return False
        said = name or "the narrator"
        edit = self._apply_cast(lambda p: cast.set_speaker(p, number, name), f"{said} says segment {number}")
        if edit is None:
            return False
        if not self.segments.segment_index(number).isValid():
            shown = self.segments.segment_model.shown_numbers()
            following = next((n for n in shown if n > number), shown[-1] if shown else None)
            if following is not None:
                self.segments.select(following)
        left = self._cast_counts.unsure_total
        self.status.setText(
            f"Segment {number}: {said} says it (kept when characters are found again); "
            + (f"{left} unsure line(s) left (U: the next)." if left else "no unsure lines left.")
        )
        return True

    # --- W: who says it --------------------------------------------------------------------------------------------
    def ask_speaker(self, number: int) -> SpeakerPicker | None:
        """The popup of the cast's names over segment ``number``'s row (``None``: the project cannot be edited)."""
        if not self._writable():
            return None
        project = self._open_project()
        segment = project.segments[number - 1]
        # an unsure line's guess is highlighted (Enter confirms it); a quote whose speaker was not found, nothing
        current = None if segment.speaker is None and is_unsure(segment) else SpeakerChoice(segment.speaker)
        picker = SpeakerPicker([(c.name, list(c.aliases)) for c in project.cast], current, self)
        picker.chosen.connect(lambda choice, s=segment: self._speaker_chosen(s, choice))
        view = self.segments
        index = view.segment_index(number, TEXT if view.isColumnHidden(SPEAKER) else SPEAKER)
        if index.isValid():
            view.scrollTo(index)
            rect = view.visualRect(index)
            where = view.viewport().mapToGlobal(rect.bottomLeft())
            width = rect.width()
        else:
            where, width = view.viewport().mapToGlobal(QPoint(0, 0)), 0
        self.speaker_picker = picker
        picker.popup(where, width)
        return picker

    def _speaker_chosen(self, segment, choice: SpeakerChoice) -> None:
        project = self.project
        if project is None:
            return
        try:
            number = project.number(segment)
        except ValueError:  # deleted or merged away while the popup was open
            return
        if not choice.new:
            self.set_speaker(number, choice.name)
            return
        name = choice.name or ""
        if not self._writable():
            return
        before = self._cast_before()
        try:  # the new character first: a name the cast refuses leaves nothing on the undo stack
            added = self.controller.apply_cast(lambda p: cast.add_character(p, name))
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return
        if added is None:
            return
        kept = project.cast[added.number - 1].name
        self.undo_stack.beginMacro(f"{kept} says segment {number}")  # one undo step: the character and the line
        self.undo_stack.push(CastCommand(self, f"add {kept}"))
        self._cast_after(before, added)
        self.set_speaker(number, kept)
        self.undo_stack.endMacro()

    # --- U: the unsure lines ---------------------------------------------------------------------------------------
    def go_unsure(self, forward: bool = True) -> int | None:
        """Select the next (or previous) line whose speaker is unsure among those the list shows, going round."""
        unsure = self.segments.unsure()
        if not unsure:
            self.status.setText("No line's speaker is unsure.")
            return None
        shown = [n for n in unsure if self.segments.segment_index(n).isValid()]
        if not shown:
            self.status.setText(
                f"{len(unsure)} unsure line(s), none of them shown: choose Speakers ▾ Unsure speakers (or All lines)."
            )
            return None
        target = step(shown, self.segments.selected_number(), forward)
        if target is None:
            return None
        self.segments.select(target)
        self.segments.setFocus()
        where = shown.index(target) + 1
        self.status.setText(f"Unsure line {where} of {len(shown)} (segment {target}): W sets who says it.")
        return target

    def _review_speaker_words(self, number: int | None) -> str:
        """The review bar's line about speakers: who says the reviewed line (``None``: how many are unsure)."""
        project = self.project
        if project is None or not (project.cast or self._cast_counts.spoken):
            return ""
        unsure = self._cast_counts.unsure_total
        if number is None or not 1 <= number <= len(project.segments):
            return (
                f"{unsure} line(s) with an unsure speaker: U goes to the next one, W sets who says it."
                if unsure
                else ""
            )
        segment = project.segments[number - 1]
        who = segment.speaker or "the narrator"
        if is_unsure(segment):
            guess = f"perhaps {segment.speaker}" if segment.speaker else "a quote whose speaker was not found"
            return f"Who says it: {guess}, unsure (W sets who says it; U: the next unsure line)."
        return f"Who says it: {who}{' (set by you)' if segment.speaker_fixed else ''} · W changes it."

    # --- the filter ------------------------------------------------------------------------------------------------
    def _on_speaker_filter(self, index: int) -> None:
        self.filter_speakers(self.speaker_filter.itemData(index))

    def filter_speakers(self, wanted: SpeakerFilter) -> int:
        """Show only these lines (``None``: every line); how many are shown."""
        combo = self.speaker_filter
        at = next((i for i in range(combo.count()) if combo.itemData(i) == wanted), 0)
        if combo.currentIndex() != at:
            combo.setCurrentIndex(at)
        shown = self.segments.set_speaker_filter(wanted)
        if wanted is not None and self.segments.selected_number() is None and shown:
            first = self.segments.first_shown()
            if first is not None:
                self.segments.select(first)
        return shown

    def show_character_lines(self, name: str) -> None:
        self.filter_speakers(("character", name))
        self.segments.setFocus()

    # --- hearing a character's voice -------------------------------------------------------------------------------
    def character_voice(self, name: str) -> str | None:
        """The voice a character's lines read in when they are speech: its own, else the dialogue voice, else the
        narrator's (the first segment's voice)."""
        project = self._open_project()
        character = project.character(name)
        if character is not None and character.voice is not None:
            return character.voice
        if project.dialogue_voice is not None:
            return project.dialogue_voice
        return project.voice_of(project.segments[0]) if project.segments else None

    def hear_character(self, name: str) -> bool:
        """Play the reference recording of the voice that reads ``name`` (as the Voice tab plays one)."""
        project = self.project
        if project is None:
            return False
        if self.rendering is not None:
            self.status.setText("The voices can be heard when nothing renders.")
            return False
        voice = self.character_voice(name)
        if voice is None or voice not in project.voices:
            self.status.setText(f"{name} reads in the model's own voice: there is no recording of it to play.")
            return False
        try:
            reference = load_voice(project.folder / project.voices[voice])
        except ChatterboxError as exc:
            self.message.emit(describe_error(exc), True)
            return False
        self.stop_playback()
        self.player.begin()
        if not self.player.feed(reference.samples):
            self.message.emit(self.player.error or "The voice could not be played.", True)
        self.player.end_of_input()
        self._update_controls()
        self.status.setText(f"Playing {voice}, the voice of {name} ({reference.duration_s:.1f} s).")
        return True
