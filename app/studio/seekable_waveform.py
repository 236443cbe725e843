"""The studio's waveform: the audio being heard, with its playhead; a click asks to play from that point."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal

from ..widgets.waveform_plot import WaveformPlot


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
