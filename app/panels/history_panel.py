"""The History tab: one item per result (when, how long, text, voice, model, seed), and what can be done with it.

Every item is three short lines, elided to the panel's width (never a horizontal scroll bar); its tooltip holds the
whole text and every detail. Play, Load text back, Export and Delete act on the selected item (Delete also on the
Delete key, all of them from the context menu); Clear all asks first.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt, Signal, Slot
from PySide6.QtGui import QAction, QFont, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from core.wording import describe_error

from ..controllers.history import HistoryController
from ..history import HistoryEntry
from ..messages import Messages

LINES_ROLE = Qt.ItemDataRole.UserRole + 1
"""The item's three lines: header (when · length · status), the text, details (voice · model · seed)."""
ID_ROLE = Qt.ItemDataRole.UserRole + 2
PARTIAL_ROLE = Qt.ItemDataRole.UserRole + 3
PADDING = 6
TOOLTIP_CHARS = 1500


def entry_lines(entry: HistoryEntry) -> tuple[str, str, str]:
    header = " · ".join(p for p in (entry.when, f"{entry.seconds:.1f} s", entry.status) if p)
    return header, entry.excerpt, entry.details


def entry_tooltip(entry: HistoryEntry) -> str:
    text = entry.text if len(entry.text) <= TOOLTIP_CHARS else entry.text[:TOOLTIP_CHARS] + "…"
    rows = [
        ("When", entry.when_full),
        ("Length", f"{entry.seconds:.1f} s" + (" — stopped, partial result" if entry.partial else "")),
        ("Voice", entry.voice or "default"),
        ("Model", entry.model_label + (f" ({entry.model})" if entry.model else "")),
        ("Seed", str(entry.seed)),
    ]
    table = "".join(f"<tr><td><b>{k}</b></td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f"<table>{table}</table><p style='white-space: pre-wrap'>{html.escape(text)}</p>"


class HistoryDelegate(QStyledItemDelegate):
    """Paints an item's three lines, each elided to the width the list has (no horizontal scrolling)."""

    def sizeHint(self, option, index) -> QSize:
        line = option.fontMetrics.lineSpacing()
        return QSize(80, 3 * line + 2 * PADDING)  # a small width: the list never needs to scroll sideways

    def paint(self, painter, option, index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        widget = opt.widget
        style = widget.style() if widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        header, text, details = index.data(LINES_ROLE) or ("", index.data(Qt.ItemDataRole.DisplayRole) or "", "")
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        active = bool(opt.state & QStyle.StateFlag.State_Active)
        group = QPalette.ColorGroup.Normal if active else QPalette.ColorGroup.Inactive
        normal = opt.palette.color(group, QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        dim = normal if selected else opt.palette.color(group, QPalette.ColorRole.PlaceholderText)
        rect = opt.rect.adjusted(PADDING, PADDING, -PADDING, -PADDING)
        if widget is not None and hasattr(widget, "viewport"):
            rect.setRight(min(rect.right(), widget.viewport().width() - PADDING))
        line = opt.fontMetrics.lineSpacing()
        painter.save()
        bold = QFont(opt.font)
        bold.setBold(True)
        for number, (content, font, color) in enumerate(
            ((header, bold, normal), (text, opt.font, normal), (details, opt.font, dim))
        ):
            painter.setFont(font)
            painter.setPen(color)
            metrics = painter.fontMetrics()
            row = rect.adjusted(0, number * line, 0, 0)
            row.setHeight(line)
            elided = metrics.elidedText(content, Qt.TextElideMode.ElideRight, max(row.width(), 0))
            painter.drawText(row, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), elided)
        painter.restore()


class HistoryList(QListWidget):
    delete_pressed = Signal()

    def keyPressEvent(self, event) -> None:
        if event.matches(QKeySequence.StandardKey.Delete) or event.key() == Qt.Key.Key_Delete:
            self.delete_pressed.emit()
            event.accept()
            return
        super().keyPressEvent(event)


class HistoryPanel(QWidget):
    """Shows the :class:`HistoryEntry` items of a :class:`HistoryController` and deletes them; playing, exporting and
    loading a result back are the window's to route (each signal carries the entry's id)."""

    play_requested = Signal(str)
    load_requested = Signal(str)
    export_requested = Signal(str)
    delete_requested = Signal(str)
    clear_requested = Signal()
    """Emitted only after the user confirmed."""

    def __init__(self, controller: HistoryController, messages: Messages, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller, self.messages = controller, messages
        self._build_ui()
        self._connect_signals()
        self._update_buttons()
        self.delete_requested.connect(self.delete)
        self.clear_requested.connect(self.clear)
        controller.subscribe(self.refresh)

    # --- what the panel does itself ----------------------------------------------------------------------------
    def refresh(self) -> None:
        self.set_entries(self.controller.entries)

    def selected(self, entry_id: str | None = None) -> HistoryEntry | None:
        """The entry ``entry_id``, or the selected one."""
        return self.controller.find(entry_id or self.current_id())

    @Slot(str)
    def delete(self, entry_id: str | None = None) -> None:
        entry = self.selected(entry_id)
        if entry is None:
            return
        row = self.list.currentRow()
        try:
            self.controller.delete(entry)
        except OSError as exc:
            self.messages.show(f"The result could not be deleted: {describe_error(exc)}")
            return
        if self.list.count():
            self.list.setCurrentRow(min(row, self.list.count() - 1))

    @Slot()
    def clear(self) -> None:
        try:
            self.controller.clear()
        except OSError as exc:
            self.messages.show(f"The history could not be cleared: {describe_error(exc)}")

    def _build_ui(self) -> None:
        self.list = HistoryList(self)
        self.list.setItemDelegate(HistoryDelegate(self.list))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list.setResizeMode(QListWidget.ResizeMode.Adjust)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setWordWrap(False)
        self.list.setAlternatingRowColors(True)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.list.setToolTip("Double-click to play again; Delete removes the selected result")
        self.empty = QLabel("Results appear here after Speak.", self)
        self.empty.setStyleSheet("color: palette(placeholder-text);")
        self.play_button = QPushButton("Play", self)
        self.load_button = QPushButton("Load text", self)
        self.load_button.setToolTip("Put this result's text (and its voice and seed) back into the editor")
        self.export_button = QPushButton("Export…", self)
        self.delete_button = QPushButton("Delete", self)
        self.delete_button.setToolTip("Delete the selected result and its audio (Delete key)")
        self.clear_button = QPushButton("Clear all…", self)
        first = QHBoxLayout()
        for button in (self.play_button, self.load_button, self.export_button):
            first.addWidget(button)
        second = QHBoxLayout()
        second.addWidget(self.delete_button)
        second.addStretch(1)
        second.addWidget(self.clear_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.empty)
        layout.addWidget(self.list, 1)
        layout.addLayout(first)
        layout.addLayout(second)
        self.menu_actions = {}
        for key, label in (("play", "Play"), ("load", "Load text back"), ("export", "Export…"), ("delete", "Delete")):
            self.menu_actions[key] = QAction(label, self)

    def _connect_signals(self) -> None:
        self.list.itemDoubleClicked.connect(lambda _item: self._emit(self.play_requested))
        self.list.currentItemChanged.connect(lambda *_: self._update_buttons())
        self.list.delete_pressed.connect(lambda: self._emit(self.delete_requested))
        self.list.customContextMenuRequested.connect(self._on_context_menu)
        for key, signal in (
            ("play", self.play_requested),
            ("load", self.load_requested),
            ("export", self.export_requested),
            ("delete", self.delete_requested),
        ):
            getattr(self, f"{key}_button").clicked.connect(lambda _c=False, s=signal: self._emit(s))
            self.menu_actions[key].triggered.connect(lambda _c=False, s=signal: self._emit(s))
        self.clear_button.clicked.connect(self._on_clear_clicked)

    # --- content -----------------------------------------------------------------------------------------------
    def set_entries(self, entries: list[HistoryEntry], current: str | None = None) -> None:
        """Show ``entries`` (newest first); ``current`` (an id) stays selected, else the first row is."""
        keep = current if current is not None else self.current_id()
        self.list.clear()
        for entry in entries:
            item = QListWidgetItem(entry.title)
            item.setData(LINES_ROLE, entry_lines(entry))
            item.setData(ID_ROLE, entry.id)
            item.setData(PARTIAL_ROLE, entry.partial)
            item.setToolTip(entry_tooltip(entry))
            self.list.addItem(item)
            if entry.id == keep:
                self.list.setCurrentItem(item)
        if self.list.currentItem() is None and self.list.count():
            self.list.setCurrentRow(0)
        self.empty.setVisible(not entries)
        self._update_buttons()

    def current_id(self) -> str | None:
        item = self.list.currentItem()
        return item.data(ID_ROLE) if item is not None else None

    def _emit(self, signal) -> None:
        entry_id = self.current_id()
        if entry_id is not None:
            signal.emit(entry_id)

    def _update_buttons(self) -> None:
        has = self.list.currentItem() is not None
        for button in (self.play_button, self.load_button, self.export_button, self.delete_button):
            button.setEnabled(has)
        self.clear_button.setEnabled(self.list.count() > 0)

    @Slot(object)
    def _on_context_menu(self, pos) -> None:
        item = self.list.itemAt(pos)
        if item is None:
            return
        self.list.setCurrentItem(item)
        menu = QMenu(self)
        for key in ("play", "load", "export"):
            menu.addAction(self.menu_actions[key])
        menu.addSeparator()
        menu.addAction(self.menu_actions["delete"])
        menu.exec(self.list.viewport().mapToGlobal(pos))

    @Slot()
    def _on_clear_clicked(self) -> None:
        count = self.list.count()
        if not count:
            return
        answer = QMessageBox.question(
            self,
            "Clear history",
            f"Delete all {count} results and their audio from the history? This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Yes:
            self.clear_requested.emit()
