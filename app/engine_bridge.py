"""The only object that touches both Qt and the inference worker's queues.

A QTimer on the GUI thread drains the worker's event queue and re-emits each event as a Qt signal; events of
requests that are no longer current (cancelled or superseded) are dropped, so no stale audio reaches playback.
Speak and Re-voice (voice conversion of a recording) go to the worker as interactive jobs, a project render as a
background job (narration's :class:`~core.narration.RenderJob`). The two are separate lanes: a new Speak or Re-voice
replaces the running one only (they share the player), and either during a book render runs between two of the
render's segments while the render goes on. A Re-voice's chunks and end come as their own signals
(:attr:`EngineBridge.conversion_chunk`, :attr:`EngineBridge.conversion_finished`), so the Speak panel never takes them
for its own. With Settings →
Render on set to a Ray cluster, the pending segments go to :class:`~core.narration.ClusterRenderJob` instead (same
events; a new take of one segment stays a local ``RenderJob``), and what the cluster render reports as it goes
(nodes, actors, re-queued units) reaches the studio as :attr:`EngineBridge.cluster_changed`. A line the studio's
user performed goes to the worker as its interactive Convert job, in a lane of its own: its audio is gathered here
and reaches the studio whole (:attr:`EngineBridge.performed`), which stores it as the segment's take. What the worker
runs and what waits (:meth:`InferenceWorker.status`, which includes the local API's requests) reaches the window as
:attr:`EngineBridge.work_changed`.
"""

from __future__ import annotations

import queue
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import numpy as np
from PySide6.QtCore import QObject, QTimer, Signal, Slot

from core.engine import (
    Cancelled,
    Chunk,
    ConversionRequest,
    Failed,
    Finished,
    InferenceWorker,
    LoadProgress,
    ModelFailed,
    ModelLoaded,
    RuntimeOptions,
    Started,
    SynthesisRequest,
    WorkerStatus,
)
from core.narration import ONE_TAKE, ClusterRenderJob, ClusterStats, RenderDone, RenderJob, RenderStep, TakePolicy
from core.wording import describe_failure

from .controllers.render_on import RenderTarget, where


def describe_work(status: WorkerStatus, elsewhere: Mapping[int, str] | None = None) -> str:
    """The status bar's words for what the worker does: "Rendering “Book” · 1 request waiting" ("" when idle).
    ``elsewhere``: request id → where that render runs, in words ("on the Ray cluster at …")."""
    words = []
    background = status.background
    if background is not None:
        where = (elsewhere or {}).get(background.request_id)
        render = f"Rendering “{background.label}”{f' {where}' if where else ''}"
        words.append(render if background.kind == "render" else background.label)
    if status.running is not None and status.running != background:
        words.append(f"{status.running.label} running")
    if status.waiting:
        count = len(status.waiting)
        words.append(f"{count} request{'' if count == 1 else 's'} waiting")
    return " · ".join(words)


class EngineBridge(QObject):
    model_loaded = Signal(object)  # ModelLoaded
    model_failed = Signal(str)
    load_progress = Signal(str, object)  # graph, seconds (None: started)
    request_started = Signal(int)
    chunk_ready = Signal(object)  # core.engine.streaming.synthesis.AudioChunk
    request_finished = Signal(int, object)  # id, RequestReport
    request_failed = Signal(int, str)
    request_cancelled = Signal(int)
    render_step = Signal(object)  # core.narration.rendering.render.RenderProgress
    render_done = Signal(int, object)  # id, RenderSummary
    work_changed = Signal(str)  # describe_work(status): what the worker runs and what waits
    speak_submitted = Signal(int)  # a Speak request was queued (a render being listened to hands over the player)
    convert_submitted = Signal(int)  # a Re-voice request was queued (it takes the player as a Speak does)
    conversion_chunk = Signal(object)  # an AudioChunk of the running Re-voice
    conversion_finished = Signal(int, object)  # id, RequestReport of a Re-voice
    cluster_changed = Signal(object)  # the cluster render's ClusterStats, when its nodes, actors or re-queues change
    perform_progress = Signal(int, float)  # id, seconds of the recording re-voiced so far
    performed = Signal(int, object, object)  # id, the re-voiced audio (mono float32, 24 kHz), RequestReport
    perform_failed = Signal(int, str)  # id, why (in words)

    def __init__(self, worker: InferenceWorker | None = None, parent=None, poll_ms: int = 10):
        super().__init__(parent)
        self.worker = worker or InferenceWorker()
        self.current: int | None = None
        """The Speak or Re-voice request whose events reach the window (the interactive lane)."""
        self.converting = False
        """:attr:`current` is a Re-voice (its chunks and end go to the conversion signals)."""
        self.rendering: int | None = None
        """The project render whose events reach the studio."""
        self.performing: int | None = None
        """The recording being re-voiced for the studio (a performed line)."""
        self._performed_blocks: list[np.ndarray] = []
        self.model: ModelLoaded | None = None
        self.work = WorkerStatus()
        """What the worker ran and what waited at the last poll."""
        self.cluster_stats: ClusterStats | None = None
        """What the running cluster render reports as it goes (``None``: the render, if any, is on this computer)."""
        self._cluster_seen: tuple = ()
        self._elsewhere: dict[int, str] = {}
        """Request id → where that render runs, in words (cluster renders only)."""
        self._timer = QTimer(self)
        self._timer.setInterval(poll_ms)
        self._timer.timeout.connect(self._drain)
        self.worker.start()
        self._timer.start()

    def load(self, bundle: Path, runtime: RuntimeOptions) -> None:
        self.worker.load(bundle, runtime)

    def speak(self, text: str, voice, options, runtime: RuntimeOptions | None = None) -> int:
        """Start a request; a running Speak is cancelled first (its remaining events are dropped). A project render
        goes on: the worker runs this request between two of its segments."""
        self.cancel()
        rid = self.worker.new_request_id()
        self.current, self.converting = rid, False
        self.worker.speak(SynthesisRequest(text, voice, options, rid), runtime)
        self.speak_submitted.emit(rid)
        return rid

    def convert(self, source, voice, seed: int | None = None, runtime: RuntimeOptions | None = None) -> int:
        """Re-voice a recording (a loaded ``SourceRecording`` or a file) into ``voice`` (``None``: the model's own), in
        the interactive lane: a running Speak or Re-voice is cancelled first; a project render goes on."""
        self.cancel()
        rid = self.worker.new_request_id()
        self.current, self.converting = rid, True
        self.worker.convert(ConversionRequest(source, voice, seed, rid), runtime)
        self.convert_submitted.emit(rid)
        return rid

    def render(
        self,
        project,
        runtime: RuntimeOptions | None = None,
        regenerate: int | None = None,
        seed: int | None = None,
        numbers: tuple[int, ...] | None = None,
        target: RenderTarget | None = None,
        policy: TakePolicy = ONE_TAKE,
    ) -> int:
        """Render a project's pending segments (only ``numbers`` among them, e.g. a range of chapters; or a new take
        of segment ``regenerate``) on the inference thread, as a background job (a render already running is
        cancelled first). ``target`` a Ray cluster: the pending segments render there (a new take stays here).
        ``policy``: re-takes of flagged takes and candidates."""
        self.cancel_render()
        rid = self.worker.new_request_id()
        self.rendering = rid
        self.cluster_stats, self._cluster_seen = None, ()
        job: RenderJob | ClusterRenderJob
        if target is not None and target.cluster and regenerate is None:
            self.cluster_stats = ClusterStats()
            self._elsewhere = {rid: f"on {where(target.address)}"}
            job = ClusterRenderJob(
                rid, project, target.address, numbers=numbers, runtime=runtime, stats=self.cluster_stats, policy=policy
            )
        else:
            job = RenderJob(rid, project, regenerate, seed, numbers=numbers, runtime=runtime, policy=policy)
        self.worker.submit(job)
        return rid

    def perform(self, request: ConversionRequest, runtime: RuntimeOptions | None = None) -> int:
        """Re-voice a recording (a line the studio's user performed) on the inference thread, as an interactive job
        (a Speak or a render goes on around it); a performance already running is cancelled first. Its audio comes
        back whole, as :attr:`performed`."""
        self.cancel_perform()
        rid = self.worker.new_request_id()
        self.performing, self._performed_blocks = rid, []
        self.worker.convert(replace(request, request_id=rid), runtime, label="Perform this line")
        return rid

    def cancel_perform(self) -> None:
        """Stop re-voicing the performed line (nothing is stored)."""
        if self.performing is not None:
            self.worker.cancel(self.performing)
            self.request_cancelled.emit(self.performing)
            self.performing, self._performed_blocks = None, []

    def cancel(self) -> None:
        """Stop the running Speak or Re-voice request (a project render goes on)."""
        if self.current is not None:
            self.worker.cancel(self.current)
            self.request_cancelled.emit(self.current)
            self.current = None

    def cancel_render(self) -> None:
        """Stop the project render (finished segments stay)."""
        if self.rendering is not None:
            self.worker.cancel(self.rendering)
            self.request_cancelled.emit(self.rendering)
            self.rendering = None

    @property
    def busy(self) -> bool:
        """A Speak or Re-voice request is running."""
        return self.current is not None

    def shutdown(self, timeout: float = 5.0) -> bool:
        self._timer.stop()
        self.current = self.rendering = self.performing = None
        return self.worker.shutdown(timeout)

    @Slot()
    def _drain(self) -> None:
        for _ in range(200):  # bounded per tick so a flood of events cannot stall the GUI
            try:
                event = self.worker.events.get_nowait()
            except queue.Empty:
                break
            self._dispatch(event)
        self._poll_status()
        self._poll_cluster()

    def _poll_status(self) -> None:
        status = self.worker.status()
        if status != self.work:
            self.work = status
            self.work_changed.emit(describe_work(status, self._elsewhere))

    def _poll_cluster(self) -> None:
        """The cluster render fills its stats on the worker's thread: their change is said on this one."""
        stats = self.cluster_stats
        if stats is None:
            return
        seen = (stats.nodes, stats.actors, stats.requeued_units)
        if seen != self._cluster_seen:
            self._cluster_seen = seen
            self.cluster_changed.emit(stats)

    def _dispatch(self, event) -> None:
        if isinstance(event, ModelLoaded):
            self.model = event
            self.model_loaded.emit(event)
        elif isinstance(event, LoadProgress):
            self.load_progress.emit(event.graph, event.seconds)
        elif isinstance(event, ModelFailed):
            self.model_failed.emit(describe_failure(event))
        elif getattr(event, "request_id", None) is None:
            return
        elif event.request_id == self.rendering:
            self._dispatch_render(event)
        elif event.request_id == self.performing:
            self._dispatch_perform(event)
        elif event.request_id != self.current:
            return  # a cancelled or superseded request
        elif isinstance(event, Started):
            self.request_started.emit(event.request_id)
        elif isinstance(event, Chunk):
            (self.conversion_chunk if self.converting else self.chunk_ready).emit(event.chunk)
        elif isinstance(event, Finished):
            self.current = None
            finished = self.conversion_finished if self.converting else self.request_finished
            finished.emit(event.request_id, event.report)
        elif isinstance(event, Failed):
            self.current = None
            self.request_failed.emit(event.request_id, describe_failure(event))
        elif isinstance(event, Cancelled):
            self.current = None

    def _dispatch_perform(self, event: object) -> None:
        """An event of the line being re-voiced: its chunks gathered, then the whole audio (or why it failed)."""
        rid = self.performing
        assert rid is not None
        if isinstance(event, Chunk):
            self._performed_blocks.append(event.chunk.samples)
            self.perform_progress.emit(rid, sum(b.size for b in self._performed_blocks) / event.chunk.sample_rate)
            return
        if not isinstance(event, (Finished, Failed, Cancelled)):
            return
        blocks, self.performing, self._performed_blocks = self._performed_blocks, None, []
        if isinstance(event, Finished):
            audio = np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
            self.performed.emit(rid, audio, event.report)
        elif isinstance(event, Failed):
            self.perform_failed.emit(rid, describe_failure(event))

    def _dispatch_render(self, event: object) -> None:
        """An event of the project render (its own lane: a Speak between its segments does not end it)."""
        if isinstance(event, Started):
            self.request_started.emit(event.request_id)
        elif isinstance(event, RenderStep):
            self.render_step.emit(event.progress)
        elif isinstance(event, RenderDone):
            self.rendering = None
            self.render_done.emit(event.request_id, event.summary)
        elif isinstance(event, Failed):
            self.rendering = None
            self.request_failed.emit(event.request_id, describe_failure(event))
        elif isinstance(event, Cancelled):
            self.rendering = None
