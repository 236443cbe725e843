"""A project rendered by Ray actors; this process (the owner) keeps the project and stores every take.

The pending segments (or ``numbers`` among them) are cut into work units
(:func:`core.narration.rendering.render.render_units`: a chapter, at most eight segments). Actors — one per GPU
(``num_gpus=1``) when the cluster has GPUs, else one per :data:`CPUS_PER_ACTOR` cores, or ``actors`` — load the owner's
model folder once each (:mod:`core.narration.cluster.model`), receive the voices with their conditioning once
(``ray.put``: the speech encoder runs only here) and render units as :mod:`core.narration.cluster.actor` describes,
streaming each segment's result back. The owner stores each take as it arrives, with a save of that segment alone
(``project.save([segment])``, milliseconds however long the book), so the project stays single-writer and crash-safe: a
crash loses at most the take being stored, whose segment is pending again.

A unit whose actor or node dies is re-queued whole — it is rendered again from its start, so that its look-ahead,
and so its audio, stay the same — and the dead actor is replaced; results for segments already stored are dropped,
so no segment gets two takes. After :data:`ATTEMPTS` lost tries the unit's segments stay pending and the render ends
with ``cluster.lost``. Cancelling (Ctrl-C, the studio's Stop) cancels the outstanding Ray work, kills the actors and
keeps every stored segment; rendering again continues with what is pending.

When the cluster itself goes away — Ray's connection lost (``RaySystemError``, ``RpcError``, a Ray Client's
``ConnectionError``), or every actor lost with no alive node left to start another — the render stops with
``cluster.gone`` (the segments stored so far, the segments still pending); rendering again continues with those.
(Where Ray ends this process itself — the raylet of its own node gone — the command line says the same from the
process that started it: :mod:`core.cli.cluster`.)
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, field, replace
from typing import Any

from core.engine import SAMPLE_RATE, locate_bundle
from core.narration.cluster.actor import SegmentRenderer, SegmentResult, SegmentWork, TakeRule, Voices
from core.narration.cluster.connect import ClusterError, connect, label, reason_of
from core.narration.cluster.model import fingerprint
from core.narration.projects.project import Project, ProjectError, Segment
from core.narration.projects.voices import voice_reference
from core.narration.rendering.render import (
    PipelineSource,
    Progress,
    RenderProgress,
    RenderSteps,
    RenderSummary,
    add_take,
    adopt_model,
    check_voices,
    fixed_seeds,
    render_units,
)
from core.narration.rendering.short_lines import render_options
from core.narration.rendering.take_choice import ONE_TAKE, TakePolicy, render_todo, settle_screens
from core.narration.screening import Screener, TakeMeasures, best_take, is_flagged

log = logging.getLogger(__name__)

CPUS_PER_ACTOR = 4
"""CPU cores per actor on a cluster without GPUs (onnxruntime's threads of one pipeline use about that many well)."""

ATTEMPTS = 3
"""Tries of a unit whose actor or node dies (the first and two more) before its segments are left pending."""

NODES_CHECK_S = 5.0
"""While no actor is rendering (all loading, or being replaced), how often the owner checks that an alive node can
still run an actor: none left is ``cluster.gone``."""

WAIT_S = 0.1
"""How long the owner waits for a result before it yields (the worker runs interactive requests meanwhile)."""


@dataclass
class ClusterStats:
    """What a cluster render reports beside its summary (the CLI's ``--json`` ``cluster`` object)."""

    address: str = ""
    nodes: int = 0
    actors: int = 0
    requeued_units: int = 0
    startup_s: float = 0.0
    """Connecting (or starting a local Ray), computing the voices, starting the actors, until the first actor's
    model is loaded and rendering begins (the others join as they load)."""
    units: int = 0
    actor_pids: dict[str, int] = field(default_factory=dict)
    """Actor name → its process id on its node (tests kill one)."""
    per_actor: dict[str, dict] = field(default_factory=dict)
    """Actor name → ``segments``, ``audio_s``, ``busy_s`` (seconds spent rendering) and ``node``."""

    def as_dict(self) -> dict:
        return {
            "address": self.address,
            "nodes": self.nodes,
            "actors": self.actors,
            "units": self.units,
            "requeued_units": self.requeued_units,
            "startup_s": round(self.startup_s, 2),
            "per_actor": {
                name: {**found, "audio_s": round(found["audio_s"], 2), "busy_s": round(found["busy_s"], 2)}
                for name, found in self.per_actor.items()
            },
        }


def cluster_steps(
    project: Project,
    pipeline: PipelineSource,
    address: str | None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    numbers: list[int] | None = None,
    actors: int | None = None,
    stats: ClusterStats | None = None,
    connect_aside: bool = False,
    policy: TakePolicy = ONE_TAKE,
) -> RenderSteps:
    """The pending segments (or ``numbers`` among them) rendered on Ray actors at ``address``, as steps (see the
    module's docstring); returns the summary. ``pipeline()``: this process's pipeline (its model folder, runtime and
    the voices' conditioning). ``connect_aside``: connect to Ray on a thread of its own while the steps yield (the
    inference worker's job, which runs Speak and API requests meanwhile); a command line connects on its own
    thread, as Ray expects of a driver."""
    pipe = pipeline()
    todo = cluster_todo(project, pipe, numbers, policy)
    check_voices(project, pipe, todo)
    stats = stats if stats is not None else ClusterStats()
    summary = RenderSummary()
    if not todo:
        return summary
    render = _ClusterRender(project, pipe, todo, progress, cancelled or (lambda: False), stats, summary, policy)
    return (yield from render.run(address, actors, connect_aside))


def cluster_todo(
    project: Project, pipe, numbers: list[int] | None = None, policy: TakePolicy = ONE_TAKE
) -> list[Segment]:
    """The segments a render on Ray with ``pipe`` does: the pending ones (or ``numbers`` among them; with re-takes
    the flagged ones too), once the project names ``pipe``'s model (takes of another model are pending again)."""
    adopt_model(project, pipe)
    return render_todo(project, numbers, policy)


@dataclass
class _Unit:
    index: int
    segments: list[Segment]
    work: list[SegmentWork]
    attempts: int = 0


class _ClusterRender:
    def __init__(
        self, project, pipe, todo, progress, cancelled, stats: ClusterStats, summary: RenderSummary, policy: TakePolicy
    ):
        self.project, self.pipe, self.todo = project, pipe, todo
        self.policy = policy
        self.screener = Screener(project)  # the actors measure their takes; judged here against the whole book
        self.progress, self.cancelled, self.stats, self.summary = progress, cancelled, stats, summary
        self.started = time.perf_counter()
        self.remaining = sum(len(s.text) for s in todo)
        self.chars_done = 0
        self.stored: set[int] = set()
        self.by_id = {s.id: s for s in todo}
        again = {s.id: None for s in todo if project.status(s) == "rendered"}  # flagged takes: a new seed each
        seeds = fixed_seeds(project, todo, again)
        self.units = [
            _Unit(i, todo[start:end], [self._work(s, seeds[s.id]) for s in todo[start:end]])
            for i, (start, end) in enumerate(render_units(project, todo))
        ]
        stats.units = len(self.units)
        self.lost: list[int] = []
        self.lost_reason = ""

    def _work(self, segment: Segment, seed: int) -> SegmentWork:
        project = self.project
        options = render_options(project, segment, seed, self.pipe)  # a short line with its cap, as at home
        text, voice = project.spoken_text(segment), project.voice_of(segment)
        screener, thresholds = self.screener, self.screener.thresholds
        rule = TakeRule(
            dict(project.screening),
            screener.context.rate(voice, thresholds),
            screener.context.book_loudness(thresholds),
            self.policy.retakes,
            self.policy.candidates,
        )
        return SegmentWork(segment.id, project.number(segment), text, options, voice, rule)

    def _voices(self) -> Voices:
        """Each voice of the render loaded once, and its conditioning computed once, here."""
        loaded: dict = {}
        conditioning = {}
        for name in {w.voice for unit in self.units for w in unit.work}:
            reference = voice_reference(self.project, name, loaded)
            conditioning[name] = self.pipe.condition(reference).conditioning
        return Voices(dict(loaded), conditioning)

    def run(self, address: str | None, actors: int | None, connect_aside: bool) -> RenderSteps:
        ray = (yield from _connecting(address)) if connect_aside else connect(address)
        stats = self.stats
        stats.address = label(address)
        try:
            pool = _ActorPool(ray, self.pipe, actors, len(self.units), stats)
            try:
                voices = ray.put(self._voices())
                pool.start(self.started)
                yield from self._loop(ray, pool, voices)
            finally:
                pool.stop()
        except _gone_errors(ray) as exc:  # Ray's connection lost: no Ray call of this render can succeed
            raise self._gone(reason_of(exc)) from None
        self.summary.flagged = settle_screens(self.project, self.screener, self.todo, self.policy)
        self.summary.elapsed_s = time.perf_counter() - self.started
        if self.lost and not self.summary.cancelled:
            raise ClusterError("cluster.lost", segments=self.lost, reason=self.lost_reason)
        return self.summary

    def _loop(self, ray, pool: _ActorPool, voices) -> RenderSteps:
        queue = deque(self.units)
        running: dict[Any, tuple[str, _Unit]] = {}  # generator → (actor name, unit)
        next_check = time.monotonic() + NODES_CHECK_S
        while queue or running:
            if self.cancelled():
                self.summary.cancelled = True
                for generator in running:
                    _cancel(ray, generator)
                return self.summary
            while queue and (name := pool.idle()) is not None:
                unit = queue.popleft()
                unit.attempts += 1
                running[pool.submit(name, unit.work, voices)] = (name, unit)
            if not running:  # every actor still loading its model (or being replaced)
                if time.monotonic() >= next_check:
                    next_check = time.monotonic() + NODES_CHECK_S
                    if not pool.can_start():
                        raise self._gone("no alive node left to start an actor on")
                ray.wait(list(pool.starting), num_returns=1, timeout=WAIT_S)
                yield
                continue
            # The results ready now, one per unit at most: each stored as it is taken (a save of one segment).
            ready, _ = ray.wait(list(running), num_returns=1, timeout=WAIT_S)
            if ready and len(running) > 1:
                ready, _ = ray.wait(list(running), num_returns=len(running), timeout=0)
            for generator in ready:
                self._take_one(ray, pool, queue, running, generator)
            yield  # between two waits: the worker may run interactive requests here
        return self.summary

    def _gone(self, reason: str) -> ClusterError:
        """``cluster.gone``: what is stored stays, what is left is pending for the next render."""
        kept = self.summary.rendered  # a stored failure is pending again, as every failed segment is
        return ClusterError(
            "cluster.gone", address=self.stats.address, reason=reason, kept=kept, left=len(self.todo) - kept
        )

    def _take_one(self, ray, pool: _ActorPool, queue: deque, running: dict, generator) -> None:
        """The next result of a unit whose generator is ready (its end, a segment, or its actor lost), stored."""
        name, unit = running[generator]
        try:
            ref = next(generator)
        except StopIteration:
            del running[generator]
            pool.release(name)
            return
        try:
            result = ray.get(ref)
        except _lost_errors(ray) as exc:
            del running[generator]
            self._requeue(unit, queue, exc)
            pool.replace(name)
            return
        self._store(name, result)

    def _requeue(self, unit: _Unit, queue: deque, exc: BaseException) -> None:
        left = [s for s in unit.segments if s.id not in self.stored]
        log.warning("a cluster actor was lost during unit %d (%s)", unit.index, type(exc).__name__)
        if not left:
            return
        if unit.attempts >= ATTEMPTS:
            self.lost += [self.project.number(s) for s in left]
            self.lost_reason = type(exc).__name__
            return
        self.stats.requeued_units += 1
        queue.appendleft(unit)  # first in line: the book fills in reading order

    def _store(self, actor: str, result: SegmentResult) -> None:
        """Write the take (or the failure) and save that segment alone; a failed save takes it back (and the take's
        file), as a local render does, and stops the render."""
        segment = self.by_id.get(result.id)
        if segment is None or result.id in self.stored:
            return  # a re-rendered unit's segment that an earlier try already stored: one take only
        if result.error_code is not None:
            before = segment.error, segment.error_code, segment.error_data
            segment.fail(result.error_code, result.error_data, result.error or result.error_code)

            def undo() -> None:
                segment.error, segment.error_code, segment.error_data = before

        else:
            undo = self._add_takes(segment, result)
        try:
            self.project.save([segment])
        except ProjectError:
            undo()
            raise
        self.stored.add(result.id)
        self._count(actor, result, segment)

    def _add_takes(self, segment: Segment, result: SegmentResult) -> Callable[[], None]:
        """The segment's takes from one result (re-takes and candidates too), judged here, the best chosen; a
        function that takes them all back."""
        undos = []
        for made in (result, *result.more):
            measures = TakeMeasures.from_dict(made.measures) if made.measures else None
            screen = self.screener.judge_new(segment, measures) if measures is not None else None
            _take, undo = add_take(self.project, segment, made.audio, made.seed, made.tokens, made.timings, screen)
            undos.append(undo)
        best = best_take(self.project, segment)
        if best is not None:
            segment.chosen = best
        self.summary.extra_takes += len(result.more)

        def undo_all() -> None:
            for undo in reversed(undos):
                undo()

        return undo_all

    def _count(self, actor: str, result: SegmentResult, segment: Segment) -> None:
        summary = self.summary
        if result.error_code is not None:
            summary.failed += 1
        else:
            summary.rendered += 1
            summary.audio_seconds += segment.takes[-1].seconds
        found = self.stats.per_actor.setdefault(actor, {"segments": 0, "audio_s": 0.0, "busy_s": 0.0})
        found["segments"] += 1
        found["busy_s"] += result.busy_s
        found["encoder_runs"] = max(found.get("encoder_runs", 0), result.encoder_runs)
        if result.audio is not None:
            found["audio_s"] += result.audio.size / SAMPLE_RATE
        self.remaining -= len(segment.text)
        self.chars_done += len(segment.text)
        self._event(segment)

    def _event(self, segment: Segment) -> None:
        if self.progress is None:
            return
        summary = self.summary
        summary.elapsed_s = time.perf_counter() - self.started
        failed = segment.error is not None
        self.progress(
            RenderProgress(
                "failed" if failed else "segment",
                self.project.number(segment),
                summary.rendered + summary.failed,
                len(self.todo),
                summary.audio_seconds,
                summary.elapsed_s,
                self.remaining,
                self.chars_done,
                None,
                segment.error if failed else None,
                segment.error_code if failed else None,
                dict(segment.error_data) if failed else {},
                not failed and is_flagged(self.project.chosen_take(segment)),
            )
        )


class _ActorPool:
    """The render's actors: started together, one replaced when it dies, all killed at the end."""

    def __init__(self, ray, pipe, wanted: int | None, units: int, stats: ClusterStats):
        self.ray, self.stats = ray, stats
        files = pipe.files
        # The same switches (precision, threads, batching…): the same tokens. Caches: each node's own user cache.
        runtime = replace(pipe.runtime, cache_dir=None, costs_dir=None)
        # The bundle's own files, as every node finds them: derived files (the int8 decoder made from the float32
        # one, kept in a user cache) are made again on each node from the same source.
        source = locate_bundle(files.root, runtime.precision)
        resources = ray.cluster_resources()
        cpus, gpus = float(resources.get("CPU", 0.0)), float(resources.get("GPU", 0.0))
        stats.nodes = sum(1 for node in ray.nodes() if node.get("Alive"))
        if gpus < 1 and cpus < 1:
            raise ClusterError("cluster.no_resources", address=stats.address)
        if gpus >= 1:
            count, self.options = int(gpus), {"num_gpus": 1.0}
        else:
            count = max(1, int(cpus) // CPUS_PER_ACTOR)
        count = max(1, min(wanted or count, units))
        if gpus < 1:  # the cores shared out (a fraction each when more actors than cores are asked for)
            self.options = {"num_cpus": float(int(cpus) // count) if int(cpus) >= count else cpus / count}
            if count > 1:
                # Actors that may share a node's cores keep their threads from spinning (spinning threads of two
                # processes take the cores from each other); the same tokens and audio, only the timing differs.
                runtime = replace(runtime, take_turns="never")
        self.args = (str(files.root), runtime, fingerprint(source))
        self.count = count
        self.remote = ray.remote(SegmentRenderer)
        self.actors: dict[str, Any] = {}
        self.free: deque[str] = deque()
        self.starting: dict[Any, str] = {}  # ready() reference → an actor still loading its model
        self.started = 0.0
        self.made = 0

    def start(self, started: float) -> None:
        """Start the actors; each joins the free ones once its model is loaded (:meth:`idle`), so that a cancel
        works while they load, and the render begins with the first one ready."""
        self.started = started
        for _ in range(self.count):
            name = self._new()
            self.starting[self.actors[name].ready.remote()] = name
        self.stats.actors = self.count

    def _new(self) -> str:
        self.made += 1
        name = f"actor-{self.made}"
        self.actors[name] = self.remote.options(**self.options, max_restarts=0).remote(*self.args)
        return name

    def _answered(self, name: str, answer: dict) -> None:
        if "error" in answer:
            raise answer["error"]  # the actor's own error (its model missing on its node, a damaged bundle…)
        self.stats.actor_pids[name] = answer["pid"]
        self.stats.per_actor.setdefault(name, {"segments": 0, "audio_s": 0.0, "busy_s": 0.0})
        self.stats.per_actor[name]["node"] = answer["node"]

    def idle(self) -> str | None:
        """An actor with nothing to do (replacements join once their model is loaded)."""
        if self.starting:
            ready, _ = self.ray.wait(list(self.starting), num_returns=len(self.starting), timeout=0)
            for ref in ready:
                name = self.starting.pop(ref)
                try:
                    answer = self.ray.get(ref)
                except _lost_errors(self.ray):
                    self.replace(name)  # lost while loading: another one
                    continue
                self._answered(name, answer)
                self.free.append(name)
                if not self.stats.startup_s:  # the first actor loaded: the render begins
                    self.stats.startup_s = time.perf_counter() - self.started
        return self.free.popleft() if self.free else None

    def submit(self, name: str, work: list[SegmentWork], voices) -> Any:
        return self.actors[name].render_unit.options(num_returns="streaming").remote(work, voices)

    def release(self, name: str) -> None:
        self.free.append(name)

    def replace(self, name: str) -> None:
        """A dead actor's place goes to a new one (on whatever node Ray finds room)."""
        self._kill(self.actors.pop(name))
        new = self._new()
        self.starting[self.actors[new].ready.remote()] = new

    def can_start(self) -> bool:
        """Whether an alive node still offers what an actor asks for (a GPU, or CPU cores)."""
        key = "GPU" if "num_gpus" in self.options else "CPU"
        return any(
            node.get("Alive") and float(node.get("Resources", {}).get(key, 0.0)) > 0 for node in self.ray.nodes()
        )

    def stop(self) -> None:
        for actor in self.actors.values():
            self._kill(actor)
        self.actors.clear()

    def _kill(self, actor) -> None:
        try:
            self.ray.kill(actor, no_restart=True)
        except Exception as exc:  # noqa: BLE001 - already gone with its node
            log.debug("killing an actor: %s", exc)


def _connecting(address: str | None) -> Generator[None, None, Any]:
    """:func:`connect` on its own thread, yielding until it is done: starting a local Ray instance or joining a
    cluster takes 10-16 s, and the worker runs interactive requests (Speak, the API) meanwhile. A cancel is seen
    once connected (``ray.init`` cannot be interrupted); the connection then serves the next render."""
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["ray"] = connect(address)
        except BaseException as exc:  # noqa: BLE001 - raised again on the owner's thread below
            outcome["error"] = exc

    thread = threading.Thread(target=work, name="ray-connect", daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(WAIT_S)
        if thread.is_alive():
            yield
    if "error" in outcome:
        raise outcome["error"]
    return outcome["ray"]


def _cancel(ray, generator) -> None:
    try:
        ray.cancel(generator, force=False)
    except Exception as exc:  # noqa: BLE001 - finished meanwhile, or an actor task Ray cannot cancel: killed next
        log.debug("cancelling cluster work: %s", exc)


def _gone_errors(ray) -> tuple[type[BaseException], ...]:
    """What Ray raises when this process's connection to the cluster is gone: its own node's raylet or the GCS lost
    (``RaySystemError``, ``RpcError``), or a Ray Client's connection broken (``ConnectionError``)."""
    names = ("RaySystemError", "RpcError")
    return (*(getattr(ray.exceptions, n) for n in names if hasattr(ray.exceptions, n)), ConnectionError)


def _lost_errors(ray) -> tuple[type[BaseException], ...]:
    """What Ray raises when an actor, its worker process or its node is gone (the unit can be rendered again)."""
    names = ("RayActorError", "ActorDiedError", "ActorUnavailableError", "WorkerCrashedError", "NodeDiedError")
    found = tuple(getattr(ray.exceptions, n) for n in (*names, "ObjectLostError") if hasattr(ray.exceptions, n))
    return found or (RuntimeError,)
