"""Latency: per chunk of the current (or replayed) request, and per request with the settings that produced it, so a
setting's effect shows on the next request."""

from __future__ import annotations

import contextlib
import time

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .chunk_latency_plot import ChunkLatencyPlot, ChunkPoint
from .request_latency_plot import METRICS, RequestLatencyPlot, RequestPoint

CHUNKS_CAPTION = "This request, per chunk"
MIN_HEIGHT = 100
"""Low enough for a 1024×600 screen at 150 %; the plots grow with the window."""


class LatencyPlot(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumHeight(MIN_HEIGHT)
        self.chunk_plot = ChunkLatencyPlot(self)
        self.request_plot = RequestLatencyPlot(self)
        self.chunks_caption = QLabel(CHUNKS_CAPTION, self)
        self.metric_choice = QComboBox(self)
        self.metric_choice.addItems([m.name for m in METRICS])
        self.metric_choice.setToolTip("What the per-request plot shows")
        self.metric_choice.currentTextChanged.connect(self.request_plot.set_metric)
        requests_caption = QLabel("Per request:", self)
        requests_caption.setBuddy(self.metric_choice)
        self.chunks_caption.setMinimumHeight(self.metric_choice.sizeHint().height())  # both plots start at one height
        request_row = QHBoxLayout()
        request_row.addWidget(requests_caption)
        request_row.addWidget(self.metric_choice)
        request_row.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        chunk_row = QHBoxLayout()
        chunk_row.addWidget(self.chunks_caption)
        for row, plot in ((chunk_row, self.chunk_plot), (request_row, self.request_plot)):
            column = QVBoxLayout()
            column.setSpacing(2)
            column.addLayout(row)
            column.addWidget(plot, 1)
            layout.addLayout(column, 1)
        self.chunks: list[ChunkPoint] = []
        self._settings: tuple[str, ...] = ()

    @property
    def requests(self) -> list[RequestPoint]:
        return self.request_plot.requests

    @property
    def points(self) -> int:
        return 3 * len(self.chunk_plot.chunks) + len(self.requests)

    def start_request(self, settings: tuple[str, ...] = ()) -> None:
        """A new request begins, made with ``settings`` (:func:`app.settings_summary.describe_settings`)."""
        self.chunks, self._settings = [], tuple(settings)
        self.chunks_caption.setText(CHUNKS_CAPTION)
        self.request_plot.set_highlight(None)
        self.chunk_plot.show_chunks(self.chunks)

    def add_chunk(self, lm_ms: float, decode_ms: float, rtf: float, at_ms: float | None = None) -> None:
        self.chunks.append(ChunkPoint(lm_ms, decode_ms, rtf, at_ms))
        self.chunk_plot.show_chunks(self.chunks)

    def add_request(self, ttfa_ms: float, step_ms: float, rtf: float) -> None:
        self.request_plot.add(RequestPoint(ttfa_ms, step_ms, rtf, self._settings, list(self.chunks)))

    def name_last_request(self, key: str) -> None:
        """The last request became the history entry ``key`` (so replaying it shows its chunks)."""
        if self.requests:
            self.requests[-1].key = key

    def chunk_rows(self) -> list[list[float | None]]:
        """The current request's chunks, as the history keeps them."""
        return [c.row() for c in self.chunks]

    def show_replay(self, key: str, timings: dict, created: float) -> None:
        """A history entry plays again: its chunks here, its point (if made in this session) marked."""
        index = next((i for i, r in enumerate(self.requests) if key and r.key == key), None)
        if index is not None:
            chunks = self.requests[index].chunks
        else:
            given = timings.get("chunks")
            rows = given if isinstance(given, list) else []
            chunks = [c for c in (ChunkPoint.from_row(r) for r in rows if isinstance(r, list)) if c is not None]
        stamp = time.strftime("%H:%M:%S", time.localtime(created))
        self.chunks_caption.setText(f"Replay of {stamp}, per chunk")
        self.request_plot.set_highlight(index)
        empty = "No per-chunk timings were kept for this entry"
        with contextlib.suppress(KeyError, TypeError, ValueError):
            empty += f"\nfirst audio {float(timings['ttfa_ms']):.0f} ms · RTF {float(timings['rtf']):.2f}"
        self.chunk_plot.show_chunks(chunks, empty_text=empty)
