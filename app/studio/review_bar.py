"""The review bar over the studio's segment list: the flagged segment being reviewed (which of how many, its text,
why its take was flagged in words, the take and its score, and, in a book with a cast, who says it and whether the
attribution is unsure) and a button for each review key. It only shows and asks; :mod:`app.studio.take_review` does
the work."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from ..controllers.review import NOTHING, ReviewView

KEYS = {
    "previous": ("◀", ("K", "P"), "Previous: go to the previous segment that needs review"),
    "next": ("▶", ("J", "N"), "Next: go to the next segment that needs review"),
    "play": ("▶ Play", ("Space",), "Play this segment's chosen take (again: pause, resume)"),
    "other": ("Other take", ("A",), "Choose the best other take of this segment and hear it (again: back)"),
    "accept": (
        "✓ Accept",
        ("Y", "Return", "Enter"),
        "Keep this take: its mark is cleared and saved, and the review goes on to the next segment that needs review",
    ),
    "regenerate": (
        "↻ Regenerate",
        ("R",),
        "Render a new take of this segment (one take, on this computer); the review stays on it",
    ),
    "spoken": (
        "Spoken text…",
        ("E",),
        "Edit how this segment is said (the written text stays); then R or Render makes its take",
    ),
}
"""Per review action: its button's words, its keys (the first two named in its tooltip) and what it does. Previous
and Next are arrows beside the header, the others a row under the reasons."""
MOVES = ("previous", "next")
NAMES = {"previous": "Previous", "next": "Next"}
HINT = "Keys: J / K next / previous · Space play · A other take · Y or Enter accept · R regenerate · E spoken text"
"""The keys in a line, as the Review button's tooltip and the bar's (each button's tooltip names its own)."""
NOTHING_HINT = (
    "The take screen flags takes with a long silence, a repeat, a missing end, noise after the last word, clipping "
    "or a loudness unlike the book's. With re-takes set under Takes ▾, Render takes a flagged take again."
)
REASON_STYLE = "color: #a65e00;"
"""The reasons: dark amber, the colour of the list's mark."""


def key_tip(name: str) -> str:
    """A button's tooltip: what it does and its keys, as this platform writes them."""
    _words, keys, does = KEYS[name]
    native = " or ".join(QKeySequence(k).toString(QKeySequence.SequenceFormat.NativeText) for k in keys[:2])
    return f"{does} ({native})"


class ReviewBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Review")
        self.header = QLabel("", self)  # which segment, of how many, and its take: wraps on a small screen
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.text = QLabel("", self)
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.PlainText)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.reasons = QLabel("", self)
        self.reasons.setWordWrap(True)
        self.reasons.setTextFormat(Qt.TextFormat.PlainText)
        self.reasons.setStyleSheet(REASON_STYLE)
        self.speaker = QLabel("", self)  # who says the line, in a book with a cast (W sets it, U: the next unsure)
        self.speaker.setWordWrap(True)
        self.speaker.setTextFormat(Qt.TextFormat.PlainText)
        self.speaker.setVisible(False)
        self.hint = QLabel(NOTHING_HINT, self)  # shown when nothing needs review
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: palette(placeholder-text);")
        self.setToolTip(HINT)
        self.buttons: dict[str, QToolButton] = {}
        row = QHBoxLayout()
        row.setSpacing(4)
        for name, (words, _keys, _does) in KEYS.items():
            button = QToolButton(self)  # a tool button: no push button's minimum width, the row fits small screens
            button.setText(words)
            button.setToolTip(key_tip(name))
            button.setAccessibleName(NAMES.get(name, words.strip("◀▶✓↻… ")))
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)  # a click leaves the focus where the keys work
            self.buttons[name] = button
            if name not in MOVES:
                row.addWidget(button)
        row.addStretch(1)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        for name in MOVES:
            top.addWidget(self.buttons[name], 0, Qt.AlignmentFlag.AlignTop)
        column = QVBoxLayout(self)
        column.setContentsMargins(8, 6, 8, 6)
        column.setSpacing(3)
        column.addLayout(top)
        column.addWidget(self.text)
        column.addWidget(self.reasons)
        column.addWidget(self.speaker)
        column.addLayout(row)
        column.addWidget(self.hint)

    def show_view(self, view: ReviewView) -> None:
        self.header.setText(f"<b>{html.escape(view.header)}</b> · {html.escape(view.take_line)}")
        self.text.setText(f"“{view.text}”")
        reasons = [f"• {r}" for r in view.reasons] or ["• Nothing against this take now."]
        if view.heard:
            reasons.append(f"Heard: “{view.heard}”")
        self.reasons.setText("\n".join(reasons))
        for widget in (self.reasons, self.text, *self.buttons.values()):
            widget.setVisible(True)
        self.hint.setVisible(False)

    def show_nothing(self) -> None:
        """Nothing is flagged: the bar says so (no empty fields, no buttons that would do nothing)."""
        self.header.setText(f"<b>{html.escape(NOTHING)}</b>")
        for widget in (self.reasons, self.text, *self.buttons.values()):
            widget.setVisible(False)
        self.hint.setVisible(True)

    def show_speaker(self, text: str) -> None:
        """Who says the line (or, with nothing flagged, how many lines' speakers are unsure); empty: nothing."""
        self.speaker.setText(text)
        self.speaker.setVisible(bool(text))

    def enable(self, **names: bool) -> None:
        for name, on in names.items():
            self.buttons[name].setEnabled(on)
