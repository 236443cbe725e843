"""Rendering a project: every pending segment in order through the pipeline, one take (a FLAC file) each.

When nobody listens (``stream`` off), the render works a few segments ahead
(:mod:`core.narration.rendering.lookahead`): their sentences are generated together where the model can batch them, and
neighbours are decoded in one decoder call.

After each segment the take is written (atomically), screened (:mod:`core.narration.screening`; re-takes and
candidates: :mod:`core.narration.rendering.take_choice`) and stored, so a crash loses at most the segment in flight
and rendering again continues with what is pending. Cancelling keeps everything finished. A segment that
cannot be spoken is marked failed with its message and the render goes on; a disk that fills up stops it with the
project consistent (the half-written take is removed, the last saved ``project.json`` still describes every file).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TypeVar

import numpy as np

from core.engine import (
    SAMPLE_RATE,
    AudioChunk,
    AudioWriteError,
    Capabilities,
    ChatterboxError,
    Pipeline,
    SynthesisCancelled,
    SynthesisRequest,
    new_seed,
    write_audio,
)
from core.narration.projects.project import Project, ProjectError, Segment, Take
from core.narration.projects.voices import voice_reference
from core.narration.rendering.lookahead import TokenLookahead, candidate_tokens
from core.narration.rendering.short_lines import render_options
from core.narration.rendering.take_choice import (
    ONE_TAKE,
    TakePolicy,
    choose_best,
    render_todo,
    settle_screens,
)
from core.narration.rendering.take_words import WAIT_AT_END_S, TakeWords
from core.narration.screening import Screener, is_flagged

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class RenderProgress:
    """One event of a render: a chunk of audio, a segment finished or a segment failed."""

    kind: str
    """``chunk``, ``segment`` or ``failed``."""
    number: int
    """1-based position of the segment in the project."""
    done: int
    """Segments finished (rendered or failed) in this render."""
    total: int
    """Segments this render set out to do."""
    audio_seconds: float
    """Audio rendered in this render so far."""
    elapsed_s: float
    remaining_chars: int
    chars_done: int
    chunk: AudioChunk | None = None
    error: str | None = None
    """Why the segment failed, as a technical line; the front ends word ``error_code`` and ``error_data``."""
    error_code: str | None = None
    error_data: dict = field(default_factory=dict)
    flagged: bool = False
    """A ``segment`` event: the take chosen for it is flagged by the take screen (:mod:`core.narration.screening`)."""

    @property
    def rtf(self) -> float:
        """Measured real-time factor of this render: seconds of work per second of audio."""
        return self.elapsed_s / self.audio_seconds if self.audio_seconds else 0.0

    @property
    def eta_s(self) -> float | None:
        """Time left, from the time per character of text so far (``None`` before the first segment)."""
        if not self.chars_done:
            return None
        return self.elapsed_s / self.chars_done * self.remaining_chars


@dataclass
class RenderSummary:
    rendered: int = 0
    failed: int = 0
    cancelled: bool = False
    audio_seconds: float = 0.0
    elapsed_s: float = 0.0
    cluster: dict | None = None
    """A render on Ray actors: address, nodes, actors, units, re-queued units, start-up seconds (else ``None``)."""
    flagged: int = 0
    """Segments of this render whose chosen take the screen flagged (after re-takes)."""
    extra_takes: int = 0
    """Takes rendered beyond one a segment: re-takes of flagged takes and candidates."""
    align_s: float = 0.0
    """Time spent aligning the takes' words, on a thread beside the render (not part of ``elapsed_s``'s path)."""

    @property
    def rtf(self) -> float:
        return self.elapsed_s / self.audio_seconds if self.audio_seconds else 0.0


Progress = Callable[[RenderProgress], None]


def clock(seconds: float | None) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour): how progress lines and the studio show durations."""
    seconds = max(0, round(seconds or 0))
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def model_identity(pipeline: Pipeline) -> dict:
    """What of the model changes a segment's audio (part of every render key)."""
    return capabilities_identity(pipeline.capabilities)


def capabilities_identity(caps: Capabilities) -> dict:
    """:func:`model_identity` of a model known by its capabilities (the worker's, in the window)."""
    return {"variant": caps.variant, "precision": caps.lm_precision, "q4_compute": caps.q4_compute or "none"}


UNIT_SEGMENTS = 8
"""Longest work unit, in segments. A render's look-ahead never groups sentences across two units, so that a unit
rendered by a cluster actor (:mod:`core.narration.cluster.render`) is grouped, batched and joined exactly as on this
computer: the same seed gives the same tokens either way (and the same samples where the decoder is
deterministic). Eight segments hold two of the look-ahead's default batches (``lm_batch`` 4), so a local render
loses at most one partly filled batch per eight segments (measured: no slower, docs/PERFORMANCE-LOG.md)."""


def render_units(project: Project, todo: list[Segment]) -> list[tuple[int, int]]:
    """``todo`` cut into work units, ``(start, end)`` index ranges: a new unit at every chapter and after
    :data:`UNIT_SEGMENTS` segments (a deterministic function of ``todo``: a local and a cluster render agree)."""
    units: list[tuple[int, int]] = []
    start = 0
    for index in range(1, len(todo) + 1):
        if index == len(todo) or todo[index].chapter != todo[start].chapter or index - start >= UNIT_SEGMENTS:
            units.append((start, index))
            start = index
    return units


def unit_ends(units: list[tuple[int, int]]) -> list[int]:
    """For each index of ``todo``, the end of its unit (where the look-ahead stops gathering)."""
    return [end for start, end in units for _ in range(start, end)]


PipelineSource = Callable[[], Pipeline]
"""Where each step of a render finds the pipeline: the CLI's one, or the worker's current one (a background job)."""

RenderSteps = Generator[None, None, RenderSummary]
"""A render as steps: it yields after every segment (and between the look-ahead's batches) and returns the
summary. :func:`render_pending` runs one to its end; the studio's render job
(:class:`core.narration.rendering.job.RenderJob`) lets the worker run interactive requests between its steps."""


def render_pending(
    project: Project,
    pipeline: Pipeline,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    numbers: list[int] | None = None,
    policy: TakePolicy = ONE_TAKE,
) -> RenderSummary:
    """Render the pending (and failed) segments, or only those ``numbers`` among them, in order."""
    return run_steps(pending_steps(project, lambda: pipeline, progress, cancelled, numbers, policy))


def regenerate(
    project: Project,
    pipeline: Pipeline,
    number: int,
    seed: int | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    policy: TakePolicy = ONE_TAKE,
) -> RenderSummary:
    """A new take of one segment (a new seed unless one is given); it becomes the chosen take, older ones stay."""
    return run_steps(regenerate_steps(project, lambda: pipeline, number, seed, progress, cancelled, policy))


def pending_steps(
    project: Project,
    pipeline: PipelineSource,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    numbers: list[int] | None = None,
    policy: TakePolicy = ONE_TAKE,
) -> RenderSteps:
    """:func:`render_pending` as steps (``pipeline()`` is asked again for every step)."""
    adopt_model(project, pipeline())
    todo = render_todo(project, numbers, policy)
    retaking = {s.id for s in todo if project.status(s) == "rendered"}  # flagged takes made again: a new seed each
    return (yield from _render(project, pipeline, todo, dict.fromkeys(retaking), progress, cancelled, policy, retaking))


def regenerate_steps(
    project: Project,
    pipeline: PipelineSource,
    number: int,
    seed: int | None = None,
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    policy: TakePolicy = ONE_TAKE,
) -> RenderSteps:
    """:func:`regenerate` as steps."""
    adopt_model(project, pipeline())
    segment = project.segment(number)
    seeds = {segment.id: seed if seed is not None else new_seed()}
    return (yield from _render(project, pipeline, [segment], seeds, progress, cancelled, policy))


def run_steps(steps: Generator[None, None, T]) -> T:
    """Run a generator of steps to its end; its return value."""
    while True:
        try:
            next(steps)
        except StopIteration as stop:
            return stop.value


def adopt_model(project: Project, pipeline: Pipeline) -> None:
    """The project names the model that renders it, and is saved whole before the render stores takes one segment
    at a time (edits not saved yet, in the window, are stored with it)."""
    identity = model_identity(pipeline)
    if project.model != identity:
        project.model = identity  # takes made with another model become outdated (pending)
    project.save()


def _render(
    project: Project,
    pipeline: PipelineSource,
    todo: list[Segment],
    seeds: Mapping[int, int | None],
    progress: Progress | None,
    cancelled: Callable[[], bool] | None,
    policy: TakePolicy = ONE_TAKE,
    retaking: frozenset[int] | set[int] = frozenset(),
) -> RenderSteps:
    """``retaking``: the rendered segments whose flagged takes are made again (each has used one of its re-takes,
    and its earlier takes compete with the new ones). A regenerated segment is not among them: a new take asked for by
    a person becomes the chosen take, as :func:`regenerate` says."""
    check_voices(project, pipeline(), todo)
    screener = Screener(project, policy.recogniser)
    cancelled = cancelled or (lambda: False)
    summary = RenderSummary()
    started = time.perf_counter()
    remaining = sum(len(s.text) for s in todo)
    chars_done = 0
    voices: dict = {}

    def event(kind, segment, chunk=None):
        if progress is not None:
            summary.elapsed_s = time.perf_counter() - started
            failed = kind == "failed"
            progress(
                RenderProgress(
                    kind,
                    project.number(segment),
                    summary.rendered + summary.failed,
                    len(todo),
                    summary.audio_seconds,
                    summary.elapsed_s,
                    remaining,
                    chars_done,
                    chunk,
                    segment.error if failed else None,
                    segment.error_code if failed else None,
                    dict(segment.error_data) if failed else {},
                    kind == "segment" and is_flagged(project.chosen_take(segment)),
                )
            )

    words = TakeWords(project) if policy.words else None
    fixed = fixed_seeds(project, todo, seeds)
    lookahead = TokenLookahead(
        project, pipeline, todo, fixed, voices, cancelled, unit_ends(render_units(project, todo))
    )
    try:
        for index, segment in enumerate(todo):
            if cancelled():
                summary.cancelled = True
                break
            try:
                yield from lookahead.prepare(index)
                tokens = lookahead.tokens(index)
                take = _render_one(
                    project,
                    pipeline(),
                    segment,
                    fixed[segment.id],
                    voices,
                    lambda c, s=segment: event("chunk", s, c),
                    cancelled,
                    tokens,
                    screener,
                )
                retakes = policy.retakes - (1 if segment.id in retaking else 0)
                if policy.candidates > 1 or (retakes > 0 and is_flagged(take)):
                    summary.audio_seconds += take.seconds
                    take = yield from _more_takes(
                        project, pipeline, segment, policy, retakes, screener, voices, event, cancelled, summary
                    )
                    summary.audio_seconds -= take.seconds
                elif segment.id in retaking:
                    take = choose_best(project, segment)
            except SynthesisCancelled:
                summary.cancelled = True
                break
            except (AudioWriteError, ProjectError):
                raise  # the disk: every later segment would fail the same way
            except ChatterboxError as exc:
                segment.fail(exc.code, exc.data, str(exc))
                summary.failed += 1
            except Exception as exc:
                log.exception("segment %s failed", project.number(segment))
                segment.fail(
                    "render.internal",
                    {"kind": type(exc).__name__, "detail": str(exc)},
                    f"internal error: {type(exc).__name__}: {exc}",
                )
                summary.failed += 1
            else:
                summary.rendered += 1
                summary.audio_seconds += take.seconds
                if words is not None:
                    words.submit(segment, take)
            if words is not None:
                words.store_done()
            remaining -= len(segment.text)
            chars_done += len(segment.text)
            if segment.error:
                project.save([segment])  # a rendered segment was saved with its take
            event("failed" if segment.error else "segment", segment)
            if index + 1 < len(todo):
                yield  # between two segments: the worker may run interactive requests here
        summary.flagged = settle_screens(project, screener, todo, policy)
        if words is not None:
            words.close(0.0 if summary.cancelled else WAIT_AT_END_S)
            summary.align_s = words.seconds
    finally:
        if words is not None:
            words.abandon()  # a render that failed or was closed: no thread is left behind (none when closed)
    summary.elapsed_s = time.perf_counter() - started
    return summary


def _more_takes(
    project, pipeline, segment, policy: TakePolicy, retakes: int, screener, voices, event, cancelled, summary
):
    """Candidates beyond the first take (their tokens generated together where the model can batch them), then
    re-takes while the best take is flagged (one at a time); each with a new seed, every take kept, the best-scoring
    one chosen. Steps (a yield between takes); the chosen take."""
    seeds = [new_seed() for _ in range(policy.candidates - 1)]
    if len(seeds) > 1:
        yield
    ahead = candidate_tokens(project, pipeline(), segment, seeds, voices, cancelled)  # one batch where it can
    while seeds or (retakes > 0 and is_flagged(project.chosen_take(segment))):
        if cancelled():
            raise SynthesisCancelled()
        if seeds:
            seed, tokens = seeds.pop(0), ahead.pop(0)
        else:
            seed, tokens = new_seed(), None
            retakes -= 1
        yield
        take = _render_one(
            project,
            pipeline(),
            segment,
            seed,
            voices,
            lambda c, s=segment: event("chunk", s, c),
            cancelled,
            tokens,
            screener,
        )
        summary.extra_takes += 1
        summary.audio_seconds += take.seconds
        choose_best(project, segment)
    return choose_best(project, segment)


def check_voices(project: Project, pipeline: Pipeline, todo: list[Segment]) -> None:
    """``render.no_voice`` when a segment would need the model's voice and the model has none."""
    capabilities = pipeline.capabilities
    unvoiced = [project.number(s) for s in todo if project.voice_of(s) is None]
    if unvoiced and not capabilities.has_default_voice:
        raise ProjectError("render.no_voice", variant=capabilities.variant, segment=unvoiced[0])


def fixed_seeds(project: Project, todo: list[Segment], seeds: Mapping[int, int | None]) -> dict[int, int]:
    """Each segment's seed by id: a regenerated take's own (or a new one); the others the project's, or a new one."""
    chosen = {s.id: seeds.get(s.id, project.seed) for s in todo}
    return {key: new_seed() if seed is None else seed for key, seed in chosen.items()}


def speak_segment(project, pipeline: Pipeline, segment, seed: int, voices: dict, on_chunk, cancelled, tokens=None):
    """One segment's audio and report (nothing stored). ``project`` is anything with ``spoken_text``, ``voice_of``,
    ``synthesis_options`` and ``voices`` (a cluster actor passes a stand-in that holds only its unit); a short line
    is spoken with its own cap (:mod:`core.narration.rendering.short_lines`)."""
    reference = voice_reference(project, project.voice_of(segment), voices)
    request = SynthesisRequest(
        project.spoken_text(segment), reference, render_options(project, segment, seed, pipeline)
    )
    stream = pipeline.stream(request, cancelled, tokens)
    blocks = []
    for chunk in stream:
        blocks.append(chunk.samples)
        if on_chunk is not None:
            on_chunk(chunk)
    audio = np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
    return audio, stream.report


def _render_one(project, pipeline, segment, seed, voices, on_chunk, cancelled, tokens=None, screener=None) -> Take:
    audio, report = speak_segment(project, pipeline, segment, seed, voices, on_chunk, cancelled, tokens)
    tokens_made = list(report.speech_tokens)
    screen = screener.screen(segment, audio, tokens_made, report.stop_reasons) if screener is not None else None
    return store_take(project, segment, audio, report.seed, tokens_made, report.timings, screen)


def store_take(
    project: Project, segment: Segment, audio, seed: int, tokens: list[int], timings: dict, screen: dict | None = None
) -> Take:
    """Write a segment's take (atomically), make it the chosen one and store it (the file first, its row after:
    one transaction for this segment alone); a failed save takes the take back and removes its file."""
    take, undo = add_take(project, segment, audio, seed, tokens, timings, screen)
    try:
        project.save([segment])
    except ProjectError:
        undo()
        raise
    return take


def add_take(
    project: Project,
    segment: Segment,
    audio,
    seed: int,
    tokens: list[int],
    timings: dict,
    screen: dict | None = None,
    key: str | None = None,
):
    """Write a segment's take (atomically) and make it the chosen one, without storing it: the take
    and a function that takes it back (and removes its file) if the save that follows fails. ``key``: the render key
    the take was made for (``None``: the segment's now)."""
    rel = project.new_take_file(segment)
    path = project.path(rel)
    path.parent.mkdir(exist_ok=True)
    write_audio(path, audio, SAMPLE_RATE)
    take = Take(
        file=rel,
        seed=seed,
        tokens=list(tokens),
        seconds=round(audio.size / SAMPLE_RATE, 4),
        key=project.render_key(segment) if key is None else key,
        timings={k: round(v, 1) for k, v in timings.items()},
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        screen=screen,
    )
    segment.takes.append(take)
    previous = segment.chosen, segment.error, segment.error_code, segment.error_data
    segment.chosen = len(segment.takes) - 1
    segment.clear_error()

    def undo() -> None:
        segment.takes.remove(take)
        segment.chosen, segment.error, segment.error_code, segment.error_data = previous
        path.unlink(missing_ok=True)

    return take, undo
