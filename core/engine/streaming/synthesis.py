"""One request, as a stream of :class:`AudioChunk`: sentence by sentence, chunk by chunk, with its report.

Streaming playback, non-streaming synthesis and file export all consume this generator.
"""

from __future__ import annotations

import secrets
import statistics
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.audio.speech_decoder import DecodedAudio, SentenceAudio, SentenceDecoding, SpeechDecoder
from core.engine.audio.voice_reference import VoiceReference
from core.engine.caches.conditioning import Conditioning
from core.engine.caches.prefix_cache import start_sentence
from core.engine.constants import LOGITS_VOCAB, SAMPLE_RATE
from core.engine.errors import Notice, SynthesisCancelled
from core.engine.generation.batch_generate import Generated
from core.engine.generation.decode_loop import DecodeStats, generate, step_overhead_share
from core.engine.generation.sampler import Sampler
from core.engine.generation.stop_guards import RunawayGuard, token_cap
from core.engine.model.model_parts import ModelParts
from core.engine.options import SamplingParams, SynthesisOptions
from core.engine.streaming.forecast import choose_policy
from core.engine.streaming.stream_plan import StreamPlan
from core.engine.text import SENTENCE_GAP_S, Pause, Sentence, clean_text, split_text


@dataclass(frozen=True)
class SynthesisRequest:
    text: str
    voice: VoiceReference | Path | str | None = None
    """A loaded reference, a file, or ``None`` for the bundle's default voice."""
    options: SynthesisOptions = field(default_factory=SynthesisOptions)
    request_id: int = 0


@dataclass(frozen=True)
class AudioChunk:
    samples: np.ndarray = field(repr=False)
    """Mono float32 samples, ready to play."""
    sample_rate: int
    index: int
    sentence: int
    """Index of the sentence (or pause) this chunk belongs to."""
    text_span: tuple[int, int]
    """Characters of the cleaned request text this chunk speaks."""
    tokens: int
    """Speech tokens decoded into this chunk (0 for pauses and gaps)."""
    kind: str
    """``speech``, ``pause`` or ``gap``."""
    lm_ms: float = 0.0
    decode_ms: float = 0.0
    at_ms: float = 0.0
    """When the chunk was ready, from the start of the request."""
    last_in_sentence: bool = True
    request_id: int = 0
    play_start_ms: float | None = None
    """"Play smoothly": playback starts no earlier than this (ms from the start of the request), as planned when
    this chunk was made; ``None``: play at once."""
    forecast: dict[str, Any] | None = field(default=None, repr=False)
    """The forecast behind :attr:`play_start_ms` (``RequestReport.forecast``'s shape), for front ends to show."""

    @property
    def seconds(self) -> float:
        return self.samples.size / self.sample_rate

    @property
    def rtf(self) -> float:
        """Real-time factor of this speech chunk: (LM + decoder time) ÷ its audio time; 0 for silences."""
        audio_ms = self.samples.size / self.sample_rate * 1000
        return (self.lm_ms + self.decode_ms) / audio_ms if audio_ms and self.kind == "speech" else 0.0


@dataclass
class RequestReport:
    seed: int = 0
    text: str = ""
    speech_tokens: list[int] = field(default_factory=list)
    stop_reasons: list[str] = field(default_factory=list)
    warnings: list[Notice] = field(default_factory=list)
    """What a person may want to know about this request (codes and data: :mod:`core.wording` words them)."""
    cache: dict[str, Any] = field(default_factory=dict)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    samples: int = 0
    forecast: dict[str, Any] = field(default_factory=dict)
    """The playback policy used and its forecast: ``policy`` (``fast``/``smooth``), ``requested``, ``rtf`` (the
    measured real-time factor it was chosen by), ``serial``, ``start_ms`` (the planned start; ``None``: with the
    first audio) and ``chunks`` (``tokens``, ``arrive_ms``, ``play_ms`` per predicted window)."""


def new_seed() -> int:
    return secrets.randbelow(2**31)


class SynthesisStream:
    """Iterate to get the chunks; :attr:`report` is complete once iteration ends."""

    def __init__(
        self,
        parts: ModelParts,
        request: SynthesisRequest,
        cancelled: Callable[[], bool] | None = None,
        pregenerated: dict[int, Generated] | None = None,
    ):
        self.parts = parts
        self.request = request
        self.pregenerated = pregenerated or {}
        """Speech tokens already generated for some sentences (by piece number, :mod:`.batch_generate`): those
        sentences skip the language model and go straight to the decoder."""
        self.cancelled = cancelled or (lambda: False)
        self.report = RequestReport()
        self._ttfa_ms: float | None = None
        self._decoder_ms = 0.0
        self._index = 0
        """The next chunk's index."""
        self._plan: StreamPlan | None = None

    def __iter__(self) -> Iterator[AudioChunk]:
        return self._run()

    def _run(self) -> Iterator[AudioChunk]:
        started = time.perf_counter()
        pieces = split_text(self.request.text)
        ctx = self._start(started, pieces)
        stats: list[DecodeStats] = []
        previous_was_sentence = False
        try:
            for number, piece in enumerate(pieces):
                if isinstance(piece, Pause) or previous_was_sentence:
                    self._put_silence(ctx, number, piece)
                if isinstance(piece, Pause):
                    previous_was_sentence = False
                    continue
                previous_was_sentence = True
                stats.append((yield from self._speak_sentence(ctx, number, piece, len(stats))))
            yield from ctx.out.drain(ctx.plan)
            ctx.plan.finished(time.perf_counter())
        except BaseException:
            ctx.out.abandon(self.parts.decoder)
            raise
        finally:
            self.parts.costs.lm_running = False
            ctx.out.close()
        self._finish_report(stats, started)

    def _start(self, started: float, pieces: list[Sentence | Pause]) -> _RequestContext:
        """Everything a request's sentences share: sampling parameters, the voice's conditioning, the plan."""
        parts, request, report = self.parts, self.request, self.report
        runtime, caps = parts.runtime, parts.capabilities
        options = request.options
        params = options.resolve(caps.variant)
        report.text = clean_text(request.text)
        reference = parts.reference(request.voice)
        report.warnings += reference.warnings
        voice = parts.voices.lookup(reference)
        report.cache["conditioning"] = voice.source
        if voice.write_error:
            report.cache["write_error"] = voice.write_error
            report.warnings.append(Notice("cache.write_failed", {"reason": voice.write_error}))
        report.seed = options.seed if options.seed is not None else new_seed()
        cfg = caps.supports_cfg and params.cfg_weight > 0
        if parts.info.supports_cfg and params.cfg_weight > 0 and not cfg:
            report.warnings.append(Notice("synthesis.no_cfg"))
        dec_cond = voice.conditioning.with_decoder_prompt(runtime.decoder_prompt_seconds, runtime.decoder_prompt_window)
        plan = StreamPlan(
            runtime.stream_plan if runtime.stream else "off",
            runtime.first_chunk_tokens,
            runtime.chunk_tokens,
            runtime.decoder_context_tokens,
            parts.costs,
            dec_cond.prompt_tokens,
            started=started,
            turns=parts.takes_turns(runtime),
        )
        if plan.mode == "adaptive":  # the forecast knows the adaptive plan's shape only
            plan.policy = choose_policy(runtime.playback_policy, parts.costs.snapshot(dec_cond.prompt_tokens))
            plan.set_outline(_outline(pieces), params.max_new_tokens)
        self._plan = plan
        self.report.forecast = {"requested": runtime.playback_policy, **plan.forecast_report()}
        pool = ThreadPoolExecutor(1, thread_name_prefix="decoder") if runtime.decoder_thread else None
        out = _InOrder(pool, self.cancelled)
        return _RequestContext(params, cfg, voice.conditioning, voice.key, dec_cond, plan, out, started)

    def _put_silence(self, ctx: _RequestContext, number: int, piece: Sentence | Pause) -> None:
        """A pause tag's silence, or the short gap between two sentences."""
        if isinstance(piece, Pause):
            seconds, kind, span = piece.seconds, "pause", (piece.start, piece.end)
        else:
            seconds, kind, span = SENTENCE_GAP_S, "gap", (piece.start, piece.start)
        silence = np.zeros(round(seconds * SAMPLE_RATE), np.float32)
        index = self._next_index()
        ctx.out.put_ready(lambda: self._chunk(silence, index, number, span, 0, kind, ctx.started))
        ctx.plan.silence(seconds)

    def _speak_sentence(
        self, ctx: _RequestContext, number: int, piece: Sentence, ordinal: int
    ) -> Generator[AudioChunk, None, DecodeStats]:
        """One sentence: its tokens as the language model generates them, decoded in the windows the plan chooses;
        the chunks that are ready are yielded on the way. Returns the sentence's decode statistics."""
        parts, report = self.parts, self.report
        sentence, dropped = parts.tokenizer.prepare(piece.text)
        report.warnings += [Notice("text.unknown_tag", {"tag": tag}) for tag in dropped]
        guard = RunawayGuard()
        stats, tokens = self._sentence_tokens(ctx, number, sentence, guard)
        audio = self._sentence_audio(ctx, number)
        plan = ctx.plan
        plan.new_sentence(ordinal)
        pending = _PendingTokens()

        def decode(count: int, final: bool, now: float) -> None:
            plan.decoding(count, now)
            self._decode(ctx, audio, pending, count, final, number, piece, now)

        first = ordinal == 0
        parts.costs.lm_running = True
        for token in tokens:
            pending.tokens.append(token)
            report.speech_tokens.append(token)
            now = time.perf_counter()
            size = plan.window(len(pending.tokens), now, first)
            if size:
                decode(size, False, now)
            yield from ctx.out.ready(plan)
        parts.costs.lm_running = False
        drop = guard.trim(pending.tokens)
        del report.speech_tokens[len(report.speech_tokens) - drop :]
        now = time.perf_counter()
        total = plan.sentence_tokens + len(pending.tokens)
        plan.sentence_done(total, len(piece.text), stats.stop_reason == "token_cap", now)
        split = plan.window(len(pending.tokens), now, first, sentence_done=True)
        if split:  # the rest is long: decode a first part now so that playback does not run dry meanwhile
            decode(split, False, now)
        decode(len(pending.tokens), True, time.perf_counter())
        report.stop_reasons.append(stats.stop_reason)
        parts.costs.add_steps(stats.step_ms, alone=plan.serial)
        parts.costs.add_prefill(stats.prefill_ms)
        return stats

    def _sentence_tokens(
        self, ctx: _RequestContext, number: int, sentence: str, guard: RunawayGuard
    ) -> tuple[DecodeStats, Iterator[int]]:
        """The sentence's speech tokens: generated ahead (a batch) or by the decode loop as they are iterated."""
        ahead = self.pregenerated.get(number)
        if ahead is not None:
            return DecodeStats(stop_reason=ahead.stop_reason, started_at=time.perf_counter()), iter(ahead.tokens)
        parts, params = self.parts, ctx.params
        ids = parts.tokenizer.encode(sentence, self.request.options.language)
        self.report.warnings += parts.tokenizer.take_notices()  # a language step that could not run as upstream's
        start = start_sentence(
            parts, ctx.conditioning, ctx.voice_key, ids, params.exaggeration, ctx.cfg, self.report.cache
        )
        stats = DecodeStats(prefix_build_ms=start.prefix_build_ms)
        tokens = generate(
            start.runner,
            start.prompt,
            Sampler(params, self.report.seed + number, parts.info.logits_vocab or LOGITS_VOCAB),
            token_cap(parts.capabilities.variant, ids.shape[1], params.max_new_tokens),
            params.cfg_weight if ctx.cfg else 0.0,
            stats,
            self.cancelled,
            guard,
        )
        return stats, tokens

    def _sentence_audio(self, ctx: _RequestContext, number: int) -> SentenceDecoding:
        """Where the sentence's tokens become samples: decoded ahead (joined), or by the speech decoder per window."""
        decoded = self.pregenerated.get(number)
        if decoded is not None and decoded.audio is not None:
            return DecodedAudio(decoded.audio)
        runtime = self.parts.runtime
        trim = self.request.options.trim_silence
        seed = self.report.seed + number  # as the sentence's sampler: a seeded request gives the same samples
        return SentenceAudio(self.parts.decoder, ctx.decoder_conditioning, runtime.decoder_context_tokens, trim, seed)

    def _next_index(self) -> int:
        index, self._index = self._index, self._index + 1
        return index

    def _decode(
        self,
        ctx: _RequestContext,
        audio: SentenceDecoding,
        pending: _PendingTokens,
        count: int,
        final: bool,
        number: int,
        piece: Sentence,
        now: float,
    ) -> None:
        """Hand the first ``count`` pending tokens to the decoder; the chunk comes out in order."""
        tokens, lm_ms, index = pending.tokens[:count], (now - pending.lm_started) * 1000, self._next_index()

        def job(lm_waits: bool) -> tuple[np.ndarray, float]:
            t0 = time.perf_counter()
            samples = audio.add(tokens, final, lm_waits)
            return samples, (time.perf_counter() - t0) * 1000

        def chunk(result: tuple[np.ndarray, float]) -> AudioChunk:
            samples, decode_ms = result
            self._decoder_ms += decode_ms
            span = (piece.start, piece.end)
            return self._chunk(
                samples, index, number, span, len(tokens), "speech", ctx.started, lm_ms, decode_ms, final
            )

        ctx.out.put(job, chunk, wait=ctx.plan.serial)
        pending.tokens, pending.lm_started = pending.tokens[count:], time.perf_counter()

    def _chunk(
        self,
        samples: np.ndarray,
        index: int,
        number: int,
        span: tuple[int, int],
        tokens: int,
        kind: str,
        started: float,
        lm_ms: float = 0.0,
        decode_ms: float = 0.0,
        last: bool = True,
    ) -> AudioChunk:
        at_ms = (time.perf_counter() - started) * 1000
        plan = self._plan
        planned = plan.planned_start if plan is not None and kind == "speech" else None
        play_start_ms = None if planned is None else (planned - started) * 1000
        chunk = AudioChunk(
            samples,
            SAMPLE_RATE,
            index,
            number,
            span,
            tokens,
            kind,
            lm_ms,
            decode_ms,
            at_ms,
            last,
            self.request.request_id,
            play_start_ms,
            plan.forecast_report() if planned is not None and plan is not None else None,
        )
        self.report.samples += samples.size
        if self._ttfa_ms is None and kind == "speech" and samples.size:
            self._ttfa_ms = at_ms
        self.report.chunks.append(
            {
                "index": index,
                "sentence": number,
                "kind": kind,
                "tokens": tokens,
                "samples": int(samples.size),
                "lm_ms": round(lm_ms, 3),
                "decode_ms": round(decode_ms, 3),
                "at_ms": round(at_ms, 3),
                "rtf": round(chunk.rtf, 4),
            }
        )
        return chunk

    def _finish_report(self, stats: list[DecodeStats], started: float) -> None:
        parts, report = self.parts, self.report
        total_ms = (time.perf_counter() - started) * 1000
        steps = [s for st in stats for s in st.step_ms]
        audio_s = report.samples / SAMPLE_RATE
        ttfa_ms = self._ttfa_ms if self._ttfa_ms is not None else total_ms
        plan = self._plan
        if plan is not None:
            report.forecast = {"requested": report.forecast.get("requested"), **plan.forecast_report()}
        start_ms = report.forecast.get("start_ms")
        report.timings = {
            "ttfa_ms": ttfa_ms,
            "play_start_ms": max(ttfa_ms, start_ms) if start_ms is not None else ttfa_ms,
            "prefill_ms": stats[0].prefill_ms if stats else 0.0,
            "prefix_build_ms": sum(st.prefix_build_ms for st in stats),
            "first_token_ms": (stats[0].started_at - started) * 1000 + stats[0].first_token_ms if stats else 0.0,
            "step_ms_median": statistics.median(steps) if steps else 0.0,
            "decoder_ms": self._decoder_ms,
            "total_ms": total_ms,
            "rtf": (total_ms / 1000) / audio_s if audio_s else 0.0,
            "python_overhead_share": statistics.median(step_overhead_share(st) for st in stats) if stats else 0.0,
        }
        report.cache["encoder_runs"] = parts.voices.encoder_runs
        parts.cost_file.save(parts.costs)  # the next start plans its first request from these


@dataclass(frozen=True)
class _RequestContext:
    """What every sentence of one request shares."""

    params: SamplingParams
    cfg: bool
    conditioning: Conditioning
    voice_key: str
    decoder_conditioning: Conditioning
    """The conditioning with the decoder's voice prompt cut to ``decoder_prompt_seconds``."""
    plan: StreamPlan
    out: _InOrder
    started: float


def _outline(pieces: list[Sentence | Pause]) -> list[tuple[int, float]]:
    """Each sentence's characters and the silence after it (pauses, and the gap before a following sentence)."""
    out: list[tuple[int, float]] = []
    previous_was_sentence = False
    for piece in pieces:
        if isinstance(piece, Pause):
            if out:
                out[-1] = (out[-1][0], out[-1][1] + piece.seconds)
            previous_was_sentence = False
            continue
        if previous_was_sentence:
            out[-1] = (out[-1][0], out[-1][1] + SENTENCE_GAP_S)
        out.append((len(piece.text), 0.0))
        previous_was_sentence = True
    return out


@dataclass
class _PendingTokens:
    """A sentence's tokens generated and not yet handed to the decoder, and when the language model began them."""

    tokens: list[int] = field(default_factory=list)
    lm_started: float = field(default_factory=time.perf_counter)


def wait_cancellable(
    future: Future[Any], cancelled: Callable[[], bool], interrupt: Callable[[], None] | None = None
) -> None:
    """Wait for ``future``, looking at ``cancelled`` every 50 ms; on a cancel, ``interrupt`` the work (and let it end)
    and raise :class:`SynthesisCancelled`."""
    while not wait([future], timeout=0.05).done:
        if cancelled():
            if interrupt is not None:
                interrupt()
                wait([future])
            raise SynthesisCancelled()


Finish = Callable[[Any], AudioChunk]
"""Turns a finished job's result into the chunk."""


class _InOrder:
    """The request's chunks in order: decoded on the decoder thread (or at once without one), silences ready at once.

    ``ready()`` yields the chunks at the head that are done without waiting; ``drain()`` waits for all of them.
    """

    def __init__(self, pool: ThreadPoolExecutor | None, cancelled: Callable[[], bool]):
        self.pool = pool
        self.cancelled = cancelled
        self.items: deque[tuple[Future[Any], Finish]] = deque()
        self.speech_seen = False
        self.speech_submitted = False

    def put(self, job: Callable[[bool], Any], finish: Finish, wait: bool = False) -> None:
        """``wait``: the language model waits for this window (the smooth plan's serial lanes)."""
        if self.pool is None:
            done: Future[Any] = Future()
            done.set_result(job(True))
            self.items.append((done, finish))
            return
        first = not self.speech_submitted
        future = self.pool.submit(job, first or wait)
        self.items.append((future, finish))
        if first or wait:
            # The first window decides the time to first audio: the language model waits for it rather than
            # share the cores with it (on a 2-core CPU that halves the decoder's speed).
            self.speech_submitted = True
            wait_cancellable(future, self.cancelled)

    def put_ready(self, make: Callable[[], AudioChunk]) -> None:
        done: Future[None] = Future()
        done.set_result(None)
        self.items.append((done, lambda _none: make()))

    def _pop(self, plan: StreamPlan) -> AudioChunk:
        future, finish = self.items.popleft()
        chunk: AudioChunk = finish(future.result())
        if chunk.kind == "speech":
            first = bool(chunk.samples.size) and not self.speech_seen
            self.speech_seen = self.speech_seen or first
            plan.delivered(time.perf_counter(), first=first)
        return chunk

    def ready(self, plan: StreamPlan) -> Iterator[AudioChunk]:
        while self.items and self.items[0][0].done():
            yield self._pop(plan)

    def drain(self, plan: StreamPlan) -> Iterator[AudioChunk]:
        while self.items:
            yield self._pop(plan)

    def abandon(self, decoder: SpeechDecoder) -> None:
        """The request ends early (cancelled or failed): drop queued windows, stop the one being decoded."""
        for future, _finish in self.items:
            future.cancel()
        self.items.clear()
        decoder.interrupt()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
