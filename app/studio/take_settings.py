"""Takes ▾ beside Render: how many takes a render makes of each segment (:class:`~core.narration.TakePolicy`) —
re-takes of the takes the take screen flags, and candidates — remembered in the app settings like where the studio
renders. The defaults (no re-takes, one candidate) render as before: one take a segment. The menu also opens the
book's screen thresholds (:mod:`~app.studio.screen_thresholds`)."""

from __future__ import annotations

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFormLayout, QMenu, QSpinBox, QToolButton, QWidget, QWidgetAction

from core.narration import MAX_EXTRA_TAKES, TakePolicy

from ..settings import Key, Settings

RETAKES_TIP = (
    "A take the take screen flags (a long silence, a repeat, a missing end…) is rendered again with a new seed, up "
    "to this many times, and the best-scoring take is chosen (every take is kept). Render then also takes again the "
    "rendered segments that need review. 0, the default: no re-takes (one take a segment, as before)."
)
CANDIDATES_TIP = (
    "Takes of every segment a render makes, each with its own seed; the best-scoring one is chosen (every take is "
    "kept). 1, the default: one take a segment. Regenerate always makes one new take."
)


class TakeSettings(QToolButton):
    """A button whose menu holds the two spin boxes (the button row stays narrow enough for small screens)."""

    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setText("Takes ▾")
        self.setAccessibleName("Takes a render makes")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setStyleSheet("QToolButton::menu-indicator { image: none; }")  # the ▾ says it already
        self.retakes, self.candidates = QSpinBox(self), QSpinBox(self)
        self.retakes.setRange(0, MAX_EXTRA_TAKES)
        self.candidates.setRange(1, MAX_EXTRA_TAKES)
        box = QWidget(self)
        form = QFormLayout(box)
        form.setContentsMargins(10, 6, 10, 6)
        for spin, key, tip, words in (
            (self.retakes, Key.RETAKES, RETAKES_TIP, "&Re-takes of flagged takes:"),
            (self.candidates, Key.CANDIDATES, CANDIDATES_TIP, "&Candidates:"),
        ):
            spin.setValue(min(max(int(settings.get(key)), spin.minimum()), spin.maximum()))
            spin.setToolTip(tip)
            spin.setAccessibleName(words.replace("&", "").rstrip(":"))
            spin.setParent(box)
            spin.valueChanged.connect(lambda value, k=key: settings.set(k, value))
            spin.valueChanged.connect(self._show)
            form.addRow(words, spin)
        menu = QMenu(self)
        menu.setToolTipsVisible(True)
        action = QWidgetAction(menu)
        action.setDefaultWidget(box)
        menu.addAction(action)
        menu.addSeparator()
        self.thresholds_action = QAction("Screen &thresholds for this book…", menu)
        self.thresholds_action.setToolTip(
            "When the take screen marks a take “needs review”: a long silence, a length far from the voice's usual, "
            "a loop, a cut end, noise after it, clipping, loudness (kept in the project)"
        )
        menu.addAction(self.thresholds_action)
        self.check_action = QAction("&Screen the rendered takes again", menu)
        self.check_action.setToolTip(
            "Read and measure every rendered take again (a project rendered before takes were screened, or takes "
            "changed by hand), then mark those that need review"
        )
        self.listen_action = QAction("Screen again with speech &recognition", menu)
        self.listen_action.setToolTip(
            "As above, and compare what a speech recogniser hears with each text (pocketsphinx for English, or "
            "faster-whisper with its model downloaded: pip install '.[asr]'); about a fifth of real time"
        )
        menu.addAction(self.check_action)
        menu.addAction(self.listen_action)
        menu.addSeparator()
        self.words_action = QAction("Find &word times", menu)
        self.words_action.setToolTip(
            "Find when each word is spoken in the rendered takes that have no word times yet (a project rendered "
            "before takes had them): read-along books and subtitles at word level, the word highlighted as it plays"
        )
        menu.addAction(self.words_action)
        self.setMenu(menu)
        self._show()

    def policy(self) -> TakePolicy:
        return TakePolicy(retakes=self.retakes.value(), candidates=self.candidates.value())

    def _show(self) -> None:
        """The tooltip says what Render makes now."""
        retakes, candidates = self.retakes.value(), self.candidates.value()
        makes = f"{candidates} takes of each segment, the best kept" if candidates > 1 else "one take of each segment"
        again = f"; a flagged take is taken again up to {retakes} time(s)" if retakes else "; no re-takes"
        self.setToolTip(f"How many takes Render makes: {makes}{again}.")
