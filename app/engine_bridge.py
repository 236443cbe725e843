"""The only object that touches both Qt and the inference worker's queues.

A QTimer on the GUI thread drains the worker's event queue and re-emits each event as a Qt signal; events of
requests that are no longer current (cancelled or superseded) are dropped, so no stale audio reaches playback.
"""

from __future__ import annotations

import queue
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from core.engine import (
    Cancelled,
    Chunk,
    Failed,
    Finished,
    InferenceWorker,
    LoadProgress,
    ModelFailed,
    ModelLoaded,
    RenderDone,
    RenderProject,
    RenderStep,
    RuntimeOptions,
    Started,
    SynthesisRequest,
)
from core.wording import describe_failure


class EngineBridge(QObject):
    model_loaded = Signal(object)  # ModelLoaded
    model_failed = Signal(str)
    load_progress = Signal(str, object)  # graph, seconds (None: started)
    request_started = Signal(int)
    chunk_ready = Signal(object)  # core.engine.streaming.synthesis.AudioChunk
    request_finished = Signal(int, object)  # id, RequestReport
    request_failed = Signal(int, str)
    request_cancelled = Signal(int)
    render_step = Signal(object)  # core.narration.render.RenderProgress
    render_done = Signal(int, object)  # id, RenderSummary

    def __init__(self, worker: InferenceWorker | None = None, parent=None, poll_ms: int = 10):
        super().__init__(parent)
        self.worker = worker or InferenceWorker()
        self.current: int | None = None
        self.model: ModelLoaded | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._drain)
        self.worker.start()
        self._timer.start()

    def load(self, bundle: Path, runtime: RuntimeOptions) -> None:
        self.worker.load(bundle, runtime)

    def speak(self, text: str, voice, options, runtime: RuntimeOptions | None = None) -> int:
        """Start a request; a running one is cancelled first (its remaining events are dropped)."""
        self.cancel()
        rid = self.worker.new_request_id()
        self.current = rid
        self.worker.speak(SynthesisRequest(text, voice, options, rid), runtime)
        return rid

    def render(self, project, runtime: RuntimeOptions | None = None, regenerate: int | None = None,
               seed: int | None = None) -> int:  # fmt: skip
        """Render a project's pending segments (or a new take of segment ``regenerate``) on the inference thread."""
        self.cancel()
        rid = self.worker.new_request_id()
        self.current = rid
        self.worker.render(RenderProject(rid, project, regenerate, seed, runtime=runtime))
        return rid

    def cancel(self) -> None:
        if self.current is not None:
            self.worker.cancel(self.current)
            self.request_cancelled.emit(self.current)
            self.current = None

    @property
    def busy(self) -> bool:
        return self.current is not None

    def shutdown(self, timeout: float = 5.0) -> bool:
        self._timer.stop()
        self.current = None
        return self.worker.shutdown(timeout)

    @Slot()
    def _drain(self) -> None:
        for _ in range(200):  # bounded per tick so a flood of events cannot stall the GUI
            try:
                event = self.worker.events.get_nowait()
            except queue.Empty:
                return
            self._dispatch(event)

    def _dispatch(self, event) -> None:
        if isinstance(event, ModelLoaded):
            self.model = event
            self.model_loaded.emit(event)
        elif isinstance(event, LoadProgress):
            self.load_progress.emit(event.graph, event.seconds)
        elif isinstance(event, ModelFailed):
            self.model_failed.emit(describe_failure(event))
        elif getattr(event, "request_id", None) != self.current:
            return  # a cancelled or superseded request
        elif isinstance(event, Started):
            self.request_started.emit(event.request_id)
        elif isinstance(event, Chunk):
            self.chunk_ready.emit(event.chunk)
        elif isinstance(event, RenderStep):
            self.render_step.emit(event.progress)
        elif isinstance(event, RenderDone):
            self.current = None
            self.render_done.emit(event.request_id, event.summary)
        elif isinstance(event, Finished):
            self.current = None
            self.request_finished.emit(event.request_id, event.report)
        elif isinstance(event, Failed):
            self.current = None
            self.request_failed.emit(event.request_id, describe_failure(event))
        elif isinstance(event, Cancelled):
            self.current = None
