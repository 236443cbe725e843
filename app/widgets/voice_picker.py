"""The voice pickers: the same choices (:meth:`VoiceController.choices`) shown in the Re-voice tab's "Into voice"
drop-down (:class:`VoicePicker`, all of them) and the Voice tab's library list (:class:`VoiceLibraryList`, the
library's voices, with whose voice each is). Both say a choice through ``chosen(kind, value)``; what it does (and the
refresh of both when the voice or the library changes) is the Voice tab's."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import QComboBox, QListWidget, QListWidgetItem, QWidget

from ..controllers.voices import VoiceChoice

GENDER_WORDS = {"m": "a man's voice", "f": "a woman's voice", None: "whose voice is not said"}
"""How the library list describes a voice's gender (a cast's characters are offered voices of theirs first)."""


class VoicePicker(QComboBox):
    """A drop-down of every choice: the built-in voice, the library, the recording in use, another recording."""

    chosen = Signal(str, str)
    """(kind, value) of the choice picked: see :class:`VoiceChoice`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(6)
        self.activated.connect(self._on_activated)

    def show_choices(self, choices: list[VoiceChoice]) -> None:
        """Fill the drop-down (each item's data: the choice's ``kind:value``); the voice in use is shown, else the
        first."""
        self.blockSignals(True)
        self.clear()
        for choice in choices:
            self.addItem(choice.label, choice.key)
        current = next((c.key for c in choices if c.current), "")
        self.setCurrentIndex(max(0, self.findData(current)))
        self.blockSignals(False)

    @Slot(int)
    def _on_activated(self, index: int) -> None:
        kind, _, value = str(self.itemData(index)).partition(":")
        self.chosen.emit(kind, value)


class VoiceLibraryList(QListWidget):
    """The library's voices, the one in use highlighted; a click chooses one."""

    chosen = Signal(str, str)
    """("library", name) of the voice clicked."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.itemClicked.connect(lambda item: self.chosen.emit("library", item_name(item)))

    def show_choices(self, choices: list[VoiceChoice]) -> None:
        """Fill the list with the library's choices (the others are the Voice tab's buttons)."""
        self.clear()
        library = [c for c in choices if c.kind == "library"]
        for choice in library:
            item = QListWidgetItem(choice.value)
            item.setToolTip(f"{choice.value}: {GENDER_WORDS[choice.gender]} (right-click to change)")
            if choice.gender is not None:
                item.setText(f"{choice.value}  ({'man' if choice.gender == 'm' else 'woman'})")
                item.setData(Qt.ItemDataRole.UserRole, choice.value)
            self.addItem(item)
        self.select(next((c.value for c in library if c.current), None))

    def select(self, name: str | None) -> None:
        """Highlight the library voice in use (none for the default voice or a file outside the library)."""
        matches = [self.item(row) for row in range(self.count())] if name else []
        matches = [item for item in matches if item_name(item) == name]
        if matches:
            self.setCurrentItem(matches[0])
            self.scrollToItem(matches[0])
        else:
            self.setCurrentRow(-1)
            self.clearSelection()


def item_name(item: QListWidgetItem) -> str:
    """The library voice an item of the list shows (its text may say whose voice it is too)."""
    name = item.data(Qt.ItemDataRole.UserRole)
    return name if isinstance(name, str) else item.text()
