"""*Takes ▾ → Screen thresholds…*: the take screen's thresholds for the open book (docs/REVIEW.md), each with what it
catches; *Defaults* puts them back. OK stores them in the project and judges every stored take again against them
(from the measures kept with each take: nothing is read or rendered again)."""

from __future__ import annotations

from dataclasses import fields

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from core.narration import Thresholds

ROWS: dict[str, tuple[str, str, float, float, float, int]] = {
    # name: (label, what it catches, minimum, maximum, step, decimals)
    "silence_s": (
        "Longest silence inside (s)",
        "A stall inside a sentence, beyond the pauses its text asks for.",
        *(0.3, 10, 0.1, 1),
    ),
    "short_ratio": (
        "Too short below (× usual)",
        "Words skipped or the end cut off: the take is under this share of what this voice takes for text of this "
        "length in this book.",
        *(0.1, 1, 0.05, 2),
    ),
    "long_ratio": (
        "Too long above (× usual)",
        "Babble, a repeat or a take of other words: over this multiple of what this voice usually takes.",
        *(1.1, 5, 0.1, 2),
    ),
    "duration_margin_s": (
        "Length margin (s)",
        "Short texts vary most: a length is judged only when it also differs by this many seconds.",
        *(0, 5, 0.1, 1),
    ),
    "utterance_s": (
        "Short line's start and end (s)",
        "A short line (“Yes.”) is allowed this much on top of its letters before it is judged too long.",
        *(0, 3, 0.1, 1),
    ),
    "rate_takes": (
        "Takes before a voice's pace is known",
        "Lengths and loudness are judged once this many takes of a voice are rendered.",
        *(1, 100, 1, 0),
    ),
    "loop_share": (
        "Loop: repeated share",
        "How much of a stretch of speech must repeat itself to count as a loop (natural speech stays under 0.2).",
        *(0.3, 1, 0.05, 2),
    ),
    "end_db": ("Cut off: end above fade (dB)", "A take that ends mid-sound instead of fading out.", *(1, 40, 1, 0)),
    "tail_s": ("Sound after the last word (s)", "Noise or mumbling after the end.", *(0.1, 5, 0.1, 1)),
    "clipped_ms": ("Clipping (ms at full scale)", "Distortion from samples at full scale.", *(0.5, 100, 0.5, 1)),
    "loudness_db": (
        "Loudness off the book's by (dB)",
        "A take far louder or quieter than the rest of the book.",
        *(1, 30, 0.5, 1),
    ),
    "wer": (
        "Word error rate above",
        "With speech recognition (--asr on the command line): other words than the text's.",
        *(0.05, 1, 0.05, 2),
    ),
}


class ThresholdsDialog(QDialog):
    """Spin boxes for every threshold of :class:`~core.narration.Thresholds`, set to the book's own values."""

    def __init__(self, current: dict[str, float], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Screen thresholds for this book")
        self.setMinimumWidth(440)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Every take is screened as it is rendered; a take past one of these is marked “needs review”. Changing "
            "them judges every rendered take again (nothing is rendered again)."
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        form = QFormLayout()
        layout.addLayout(form)
        self.defaults = Thresholds()
        self.spins: dict[str, QDoubleSpinBox] = {}
        values = Thresholds.of(current)
        for item in fields(Thresholds):
            label, tip, low, high, step, decimals = ROWS[item.name]
            spin = QDoubleSpinBox(self)
            spin.setRange(low, high)
            spin.setSingleStep(step)
            spin.setDecimals(decimals)
            spin.setValue(float(getattr(values, item.name)))
            spin.setToolTip(f"{tip} Default {getattr(self.defaults, item.name):g}.")
            spin.setAccessibleName(label)
            form.addRow(label + ":", spin)
            self.spins[item.name] = spin
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults,
            parent=self,
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        restore = buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        restore.setText("&Defaults")
        restore.clicked.connect(self.restore_defaults)
        layout.addWidget(buttons)

    def restore_defaults(self) -> None:
        for name, spin in self.spins.items():
            spin.setValue(float(getattr(self.defaults, name)))

    def values(self) -> dict[str, float]:
        return {name: spin.value() for name, spin in self.spins.items()}
