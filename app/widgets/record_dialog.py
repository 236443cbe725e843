"""Record a reference voice from the microphone (level meter, 10 s countdown), then trim it; or trim a file.
:class:`SourceRecordDialog` records what the Re-voice tab converts (up to five minutes) the same way.
:class:`LineRecordDialog` records one line of a narration to perform (up to a minute): it ends with the kept samples,
which the studio re-voices into the segment's voice (the project keeps them).

The dialogs end with a WAV file in the app's recordings folder (``path``), which the window opens like a dropped
file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import soundfile as sf
from PySide6.QtCore import QTimer, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QVBoxLayout,
)

from core.engine import SAMPLE_RATE, atomic_path
from core.voices import cut, safe_stem, speech_span

from ..audio.recorder import Recorder


def save_recording(folder: Path, samples: np.ndarray, stem: str = "recording") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}.wav"
    counter = 1
    while path.exists():
        counter += 1
        path = folder / f"{stem}-{time.strftime('%Y%m%d-%H%M%S')}-{counter}.wav"
    with atomic_path(path) as tmp:
        sf.write(tmp, samples, SAMPLE_RATE, format="WAV", subtype="PCM_16")
    return path


def reference_advice(seconds: float) -> str:
    return " (a voice needs at least 1 s; 5–10 s is best)" if seconds < 5 else ""


def source_advice(seconds: float) -> str:
    return " (a recording to re-voice needs at least 0.5 s)" if seconds < 0.5 else ""


class TrimPanel(QFormLayout):
    """Start and end of the part to keep, with "Trim silence" finding the speech."""

    def __init__(self, parent, advice: Callable[[float], str] = reference_advice):
        super().__init__()
        self.advice = advice
        self.samples = np.zeros(0, np.float32)
        self.start = QDoubleSpinBox(parent)
        self.end = QDoubleSpinBox(parent)
        for box in (self.start, self.end):
            box.setDecimals(2)
            box.setSuffix(" s")
            box.setSingleStep(0.1)
        self.auto = QPushButton("Trim &silence", parent)
        self.auto.setToolTip("Keep from the first to the last sound (with 0.1 s of margin)")
        self.auto.clicked.connect(self.trim_silence)
        self.length = QLabel("", parent)
        row = QHBoxLayout()
        row.addWidget(self.start)
        row.addWidget(QLabel("to", parent))
        row.addWidget(self.end)
        row.addWidget(self.auto)
        self.addRow("&Keep:", row)
        self.addRow("", self.length)
        self.start.valueChanged.connect(self._show_length)
        self.end.valueChanged.connect(self._show_length)

    def set_samples(self, samples: np.ndarray) -> None:
        self.samples = samples
        total = samples.size / SAMPLE_RATE
        for box in (self.start, self.end):
            box.setRange(0.0, total)
        self.start.setValue(0.0)
        self.end.setValue(total)
        self._show_length()

    @Slot()
    def trim_silence(self) -> None:
        start, end = speech_span(self.samples)
        self.start.setValue(start)
        self.end.setValue(end)

    def kept(self) -> np.ndarray:
        return cut(self.samples, self.start.value(), max(self.end.value(), self.start.value()))

    def _show_length(self) -> None:
        seconds = max(0.0, self.end.value() - self.start.value())
        self.length.setText(f"{seconds:.1f} s kept{self.advice(seconds)}")


class RecordDialog(QDialog):
    SECONDS = 10
    TITLE = "Record a reference voice"
    HINT = (
        "Read a few sentences in your normal voice, in a quiet room, 20–30 cm from the microphone. Recording stops "
        "after 10 s."
    )
    STEM = "recording"
    ADVICE = staticmethod(reference_advice)

    def __init__(self, folder: Path, sd=None, parent=None):
        super().__init__(parent)
        self.setWindowTitle(self.TITLE)
        self.folder = folder
        self.path: Path | None = None
        self.recorder = Recorder(sd, max_seconds=self.SECONDS)
        self.hint = QLabel(self.HINT, self)
        self.hint.setWordWrap(True)
        self.meter = QProgressBar(self)
        self.meter.setRange(0, 100)
        self.meter.setFormat("level")
        self.meter.setToolTip("Input level: aim for the upper half without reaching the end")
        self.countdown = QLabel(time_left(self.SECONDS), self)
        self.record = QPushButton("● &Record", self)
        self.stop = QPushButton("■ &Stop", self)
        self.stop.setEnabled(False)
        self.trim = TrimPanel(self, self.ADVICE)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.use = self.buttons.addButton("&Use this recording", QDialogButtonBox.ButtonRole.AcceptRole)
        self.use.setEnabled(False)
        row = QHBoxLayout()
        row.addWidget(self.record)
        row.addWidget(self.stop)
        row.addWidget(self.countdown)
        layout = QVBoxLayout(self)
        layout.addWidget(self.hint)
        layout.addLayout(row)
        layout.addWidget(self.meter)
        layout.addLayout(self.trim)
        layout.addWidget(self.buttons)
        self.record.clicked.connect(self.start_recording)
        self.stop.clicked.connect(self.stop_recording)
        self.buttons.accepted.connect(self._use)
        self.buttons.rejected.connect(self.reject)
        self._timer = QTimer(self)
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._tick)

    @Slot()
    def start_recording(self) -> bool:
        if not self.recorder.start():
            self.hint.setText(self.recorder.error or "The microphone cannot be used.")
            return False
        self.record.setEnabled(False)
        self.stop.setEnabled(True)
        self.use.setEnabled(False)
        self._timer.start()
        return True

    @Slot()
    def stop_recording(self) -> None:
        self._timer.stop()
        self.recorder.stop()
        self.record.setEnabled(True)
        self.record.setText("● Record &again")
        self.stop.setEnabled(False)
        samples = self.recorder.samples()
        self.trim.set_samples(samples)
        self.trim.trim_silence()
        self.countdown.setText(f"{samples.size / SAMPLE_RATE:.1f} s recorded")
        self.use.setEnabled(samples.size > 0)

    def _tick(self) -> None:
        level = self.recorder.level
        self.meter.setValue(min(100, round(100 * (1 + 20 * np.log10(max(level, 1e-5)) / 60))))
        self.countdown.setText(time_left(max(0, self.SECONDS - int(self.recorder.seconds))) + " left")
        if self.recorder.full:
            self.stop_recording()

    def _use(self) -> None:
        self.path = save_recording(self.folder, self.trim.kept(), stem=self.STEM)
        self.accept()

    def done(self, result: int) -> None:
        self._timer.stop()
        self.recorder.stop()
        super().done(result)


class SourceRecordDialog(RecordDialog):
    """A recording to re-voice: what the other voice should say, up to five minutes, stopped when done."""

    SECONDS = 300
    TITLE = "Record something to re-voice"
    HINT = (
        "Say what the other voice should say, as you want it said: the words, timing and intonation stay yours, "
        "the voice becomes the chosen one. Press Stop when done (at most 5 minutes)."
    )
    STEM = "revoice-source"
    ADVICE = staticmethod(source_advice)


class LineRecordDialog(RecordDialog):
    """Record one line to perform: the studio re-voices the kept part into the segment's voice (:attr:`samples`)."""

    SECONDS = 60
    TITLE = "Perform this line"
    ADVICE = staticmethod(source_advice)
    TEXT_CHARS = 240

    def __init__(self, text: str, sd=None, parent=None):
        super().__init__(Path(), sd, parent)
        line = " ".join(text.split())
        line = line if len(line) <= self.TEXT_CHARS else line[: self.TEXT_CHARS - 1] + "…"
        self.hint.setText(
            f"Say the line as it should sound: “{line}”. Your words, timing and intonation are kept; the voice "
            f"becomes the segment's. Recording stops after {time_left(self.SECONDS)}."
        )
        self.use.setText("&Use this recording")
        self.samples: np.ndarray | None = None

    def _use(self) -> None:
        self.samples = self.trim.kept()
        self.accept()


def time_left(seconds: int) -> str:
    """``10 s`` under a minute, ``4:59`` above."""
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60}:{seconds % 60:02d}"


class TrimDialog(QDialog):
    """Keep part of the current reference; the result is a new recording (the original file is not changed)."""

    def __init__(self, samples: np.ndarray, folder: Path, name: str, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Trim the reference voice")
        self.folder, self.name = folder, name
        self.path: Path | None = None
        self.trim = TrimPanel(self)
        self.trim.set_samples(samples)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self._keep)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(
            QLabel("The trimmed part is saved as a new recording; the original file is not changed.", self)
        )
        layout.addLayout(self.trim)
        layout.addWidget(buttons)

    def _keep(self) -> None:
        self.path = save_recording(self.folder, self.trim.kept(), stem=f"{safe_stem(self.name)}-trimmed")
        self.accept()
