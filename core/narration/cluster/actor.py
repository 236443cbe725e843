"""What runs inside a Ray actor of a cluster render: one pipeline, loaded once, rendering work units.

The actor never sees the project folder (it may run on another machine): the owner sends each unit's segments as
:class:`SegmentWork` (the spoken text, the synthesis options with the seed, the voice's name), and once per render
the voices — each recording with the conditioning the owner computed (:meth:`core.engine.Pipeline.adopt_conditioning`:
the speech encoder does not run again on the nodes). A unit is rendered exactly as
:func:`core.narration.rendering.render` renders the same segments on this computer — the same look-ahead bounded by the
unit, the same calls — so the tokens are the same, and the samples wherever the decoder is deterministic (the real
decoder draws unseeded noise). Each segment's result is yielded as soon as it is ready (a Ray streaming generator); the
owner stores it.

This module does not import Ray: :mod:`core.narration.cluster.render` wraps :class:`SegmentRenderer` with
``ray.remote`` when a render starts.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from core.engine import (
    ChatterboxError,
    Conditioning,
    Pipeline,
    RuntimeOptions,
    SynthesisOptions,
    VoiceReference,
    new_seed,
)
from core.narration.cluster.model import resolve_model
from core.narration.rendering.lookahead import TokenLookahead
from core.narration.rendering.render import speak_segment
from core.narration.screening import TakeMeasures, Thresholds, judge, measure_take

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TakeRule:
    """What an actor needs to screen its own takes (:mod:`core.narration.screening`) and to make re-takes and
    candidates: the book's thresholds, this voice's rate and the book's loudness as the owner knew them."""

    thresholds: dict = field(default_factory=dict)
    rate: float | None = None
    loudness: float | None = None
    retakes: int = 0
    candidates: int = 1

    def flagged(self, measures: TakeMeasures) -> bool:
        return judge(measures, Thresholds.of(self.thresholds), self.rate, self.loudness).flagged


@dataclass(frozen=True)
class SegmentWork:
    """One segment as an actor needs it."""

    id: int
    number: int
    text: str
    """The spoken form."""
    options: SynthesisOptions
    """With the segment's seed."""
    voice: str | None
    """A name among the shipped voices (``None``: the model's own voice)."""
    rule: TakeRule = field(default_factory=TakeRule)


@dataclass
class SegmentResult:
    """A segment's audio and report, or why it failed (``error_code``)."""

    id: int
    audio: np.ndarray | None = None
    seed: int = 0
    tokens: list[int] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    busy_s: float = 0.0
    """Seconds the actor spent on this segment (its share of a batch counted where the batch ran)."""
    encoder_runs: int = 0
    """How often this actor's speech encoder has run (0: the shipped conditioning served every voice)."""
    error_code: str | None = None
    error_data: dict = field(default_factory=dict)
    error: str | None = None
    measures: dict | None = None
    """What the take screen measured of this take (:class:`core.narration.screening.TakeMeasures` as a dict)."""
    more: list[SegmentResult] = field(default_factory=list)
    """Re-takes and candidates of the same segment (each with its own seed and measures), in the order made."""


@dataclass(frozen=True)
class Voices:
    """The render's voices: name → recording, and each recording's conditioning (``None`` key: the model's voice)."""

    references: dict[str, VoiceReference]
    conditioning: dict[str | None, Conditioning]


class UnitBook:
    """What the look-ahead and :func:`speak_segment` ask of a project, answered from a unit's :class:`SegmentWork`."""

    voices: dict = {}  # every voice is already loaded (the ``voices`` cache the render passes), none is read here

    def spoken_text(self, segment: SegmentWork) -> str:
        return segment.text

    def voice_of(self, segment: SegmentWork) -> str | None:
        return segment.voice

    def synthesis_options(self, segment: SegmentWork, seed: int) -> SynthesisOptions:
        return segment.options


class SegmentRenderer:
    """A Ray actor's state: the pipeline of the owner's model folder (resolved on this node), with its runtime."""

    def __init__(self, folder: str, runtime: RuntimeOptions, expected: dict[str, str]):
        self.node = _node_address()
        self.error: ChatterboxError | None = None
        self.pipeline: Pipeline | None = None
        started = time.perf_counter()
        try:
            place = resolve_model(folder, runtime.precision, expected, self.node)
            self.pipeline = Pipeline.from_bundle(place, runtime)
        except ChatterboxError as exc:
            self.error = exc
        self.load_s = time.perf_counter() - started

    def ready(self) -> dict:
        """Where this actor runs and whether its model loaded (its error is returned, not raised: the owner raises
        it, with its code and data, for the front end to word)."""
        found: dict = {"pid": os.getpid(), "node": self.node, "load_s": round(self.load_s, 2)}
        if self.error is not None:
            found["error"] = self.error
        return found

    def pid(self) -> int:
        return os.getpid()

    def render_unit(self, work: list[SegmentWork], voices: Voices) -> Iterator[SegmentResult]:
        """Render a unit's segments in order, as a look-ahead over the unit alone; one result per segment."""
        pipeline = self.pipeline
        assert pipeline is not None, "render_unit on an actor whose model did not load"
        for name, cond in voices.conditioning.items():  # a dictionary entry each: cheap to repeat per unit
            pipeline.adopt_conditioning(voices.references[name] if name is not None else None, cond)
        loaded = dict(voices.references)
        book = UnitBook()
        seeds = {w.id: w.options.seed or 0 for w in work}  # the owner always sets one
        never = lambda: False  # noqa: E731 - the owner kills the actor to cancel
        lookahead = TokenLookahead(book, lambda: pipeline, list(work), seeds, loaded, never)  # type: ignore[arg-type]
        for index, segment in enumerate(work):
            started = time.perf_counter()
            result = SegmentResult(segment.id)
            try:
                for _step in lookahead.prepare(index):
                    pass
                tokens = lookahead.tokens(index)
                audio, report = speak_segment(book, pipeline, segment, seeds[segment.id], loaded, None, never, tokens)
            except ChatterboxError as exc:
                result.error_code, result.error_data, result.error = exc.code, dict(exc.data), str(exc)
            except Exception as exc:
                log.exception("segment %s failed", segment.number)
                result.error_code = "render.internal"
                result.error_data = {"kind": type(exc).__name__, "detail": str(exc)}
                result.error = f"internal error: {type(exc).__name__}: {exc}"
            else:
                result.audio, result.seed = audio, report.seed
                result.tokens, result.timings = list(report.speech_tokens), dict(report.timings)
                result.measures = _measured(segment, audio, result.tokens, report.stop_reasons)
                try:
                    self._more_takes(book, segment, result, loaded, never)
                except ChatterboxError as exc:  # the first take stands; a re-take that fails is not one
                    log.warning("a re-take of segment %s failed: %s", segment.number, exc)
            result.busy_s = time.perf_counter() - started
            result.encoder_runs = pipeline.encoder_runs
            yield result

    def _more_takes(self, book, segment: SegmentWork, result: SegmentResult, loaded: dict, never) -> None:
        """Candidates, then re-takes while every take so far is flagged; each made one at a time with a new seed."""
        rule, pipeline = segment.rule, self.pipeline
        assert pipeline is not None
        extra, retakes = rule.candidates - 1, rule.retakes
        takes = [result]
        while extra > 0 or (retakes > 0 and all(rule.flagged(TakeMeasures.from_dict(t.measures or {})) for t in takes)):
            if extra > 0:
                extra -= 1
            else:
                retakes -= 1
            seed = new_seed()
            again = replace(segment, options=replace(segment.options, seed=seed))
            audio, report = speak_segment(book, pipeline, again, seed, loaded, None, never, None)
            tokens = list(report.speech_tokens)
            more = SegmentResult(segment.id, audio, report.seed, tokens, dict(report.timings))
            more.measures = _measured(segment, audio, tokens, report.stop_reasons)
            result.more.append(more)
            takes.append(more)


def _measured(segment: SegmentWork, audio, tokens: list[int], stop_reasons: list[str]) -> dict:
    return measure_take(audio, segment.text, tokens, stop_reasons).to_dict()


def _node_address() -> str:
    try:
        import ray

        return str(ray.util.get_node_ip_address())
    except Exception:  # noqa: BLE001 - outside Ray (tests call the class directly)
        return socket.gethostname()
