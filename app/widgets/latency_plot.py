"""Latency: per chunk of the current (or replayed) request, and per request with the settings that produced it, so a
setting's effect shows on the next request."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from .chunk_latency_plot import EMPTY_TEXT as CHUNKS_EMPTY
from .chunk_latency_plot import ChunkLatencyPlot, ChunkPoint
from .forecast_plot import ForecastPlot, forecast_chunks
from .request_latency_plot import CONVERSION_METRICS, METRICS, Metric, RequestLatencyPlot, RequestPoint

CHUNKS_CAPTION = "This request, per chunk"
FORECAST_CAPTION = "Playback forecast"
MIN_HEIGHT = 100
"""Low enough for a 1024×600 screen at 150 %; the plots grow with the window."""


@dataclass(frozen=True)
class LatencyWords:
    """What the plots call things: Speak's by default; :data:`CONVERSION_WORDS` for a re-voiced recording, whose
    speech encoder stands where the language model does and whose chunks are windows of the recording."""

    stage: str = "LM"
    unit: str = "chunk"
    caption: str = CHUNKS_CAPTION
    empty: str = CHUNKS_EMPTY
    metrics: tuple[Metric, ...] = METRICS


CONVERSION_WORDS = LatencyWords(
    "encoder", "window", "Per window", "Re-voice to see\nlatency per window", CONVERSION_METRICS
)


class LatencyPlot(QWidget):
    def __init__(self, parent=None, words: LatencyWords = LatencyWords()):
        super().__init__(parent)
        self.words = words
        self.setMinimumHeight(MIN_HEIGHT)
        self.chunk_plot = ChunkLatencyPlot(self, words.stage, words.empty, words.unit)
        self.request_plot = RequestLatencyPlot(self, words.metrics)
        self.forecast_plot = ForecastPlot(self)
        self.forecast_caption = QLabel(FORECAST_CAPTION, self)
        self.forecast_caption.setToolTip(
            "When each chunk was predicted to arrive, when playback needs it (deadline), and when it arrived. "
            "“Play smoothly” starts playback late enough that no chunk is predicted above its deadline."
        )
        self.chunks_caption = QLabel(words.caption, self)
        self.metric_choice = QComboBox(self)
        self.metric_choice.addItems([m.name for m in words.metrics])
        self.metric_choice.setToolTip("What the per-request plot shows")
        self.metric_choice.currentTextChanged.connect(self.request_plot.set_metric)
        requests_caption = QLabel("Per request:", self)
        requests_caption.setBuddy(self.metric_choice)
        height = self.metric_choice.sizeHint().height()  # the plots start at one height
        self.chunks_caption.setMinimumHeight(height)
        self.forecast_caption.setMinimumHeight(height)
        request_row = QHBoxLayout()
        request_row.addWidget(requests_caption)
        request_row.addWidget(self.metric_choice)
        request_row.addStretch(1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        chunk_row = QHBoxLayout()
        chunk_row.addWidget(self.chunks_caption)
        forecast_row = QHBoxLayout()
        forecast_row.addWidget(self.forecast_caption)
        self.forecast_column = QWidget(self)
        for row, plot, parent in (
            (chunk_row, self.chunk_plot, None),
            (forecast_row, self.forecast_plot, self.forecast_column),
            (request_row, self.request_plot, None),
        ):
            column = QVBoxLayout(parent) if parent is not None else QVBoxLayout()
            column.setSpacing(2)
            column.addLayout(row)
            column.addWidget(plot, 1)
            if parent is None:
                layout.addLayout(column, 1)
            else:
                column.setContentsMargins(0, 0, 0, 0)
                layout.addWidget(parent, 1)
        # Shown while the request shown has a forecast ("play smoothly"): three plots side by side are narrow.
        self.forecast_column.setVisible(False)
        self.chunks: list[ChunkPoint] = []
        self._settings: tuple[str, ...] = ()
        self._forecast: dict | None = None

    @property
    def requests(self) -> list[RequestPoint]:
        return self.request_plot.requests

    @property
    def points(self) -> int:
        return 3 * len(self.chunk_plot.chunks) + len(self.requests)

    def start_request(self, settings: tuple[str, ...] = ()) -> None:
        """A new request begins, made with ``settings`` (:func:`app.settings_summary.describe_settings`)."""
        self.chunks, self._settings = [], tuple(settings)
        self.chunks_caption.setText(self.words.caption)
        self.request_plot.set_highlight(None)
        self.chunk_plot.show_chunks(self.chunks)
        self.set_forecast(None)

    def add_chunk(self, lm_ms: float, decode_ms: float, rtf: float, at_ms: float | None = None) -> None:
        self.chunks.append(ChunkPoint(lm_ms, decode_ms, rtf, at_ms))
        self.chunk_plot.show_chunks(self.chunks)
        self._show_forecast()

    def set_forecast(self, forecast: dict | None) -> None:
        """The request's playback forecast as the core reports it (``None``: none, playback starts at once)."""
        self._forecast = forecast
        self._show_forecast()

    def _show_forecast(self, chunks: list[ChunkPoint] | None = None) -> None:
        start, predicted = forecast_chunks(self._forecast)
        self.forecast_column.setVisible(bool(predicted))
        arrived = [c.at_ms / 1000 for c in (self.chunks if chunks is None else chunks) if c.at_ms is not None]
        self.forecast_plot.show_forecast(start, predicted, arrived)

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
        forecast = timings.get("forecast")
        self._forecast = forecast if isinstance(forecast, dict) else None
        self._show_forecast(chunks)
