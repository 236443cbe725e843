"""One request, as a stream of :class:`AudioChunk`: sentence by sentence, chunk by chunk, with its report.

Streaming playback, non-streaming synthesis and file export all consume this generator.
"""

from __future__ import annotations

import secrets
import statistics
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.engine.audio.speech_decoder import DecodedAudio, SentenceAudio
from core.engine.audio.voice_reference import VoiceReference
from core.engine.caches.prefix_cache import start_sentence
from core.engine.constants import LOGITS_VOCAB, SAMPLE_RATE
from core.engine.errors import Notice, SynthesisCancelled
from core.engine.generation.batch_generate import Generated
from core.engine.generation.decode_loop import DecodeStats, generate, step_overhead_share
from core.engine.generation.sampler import Sampler
from core.engine.generation.stop_guards import RunawayGuard, token_cap
from core.engine.model.model_parts import ModelParts
from core.engine.options import SynthesisOptions
from core.engine.streaming.stream_plan import StreamPlan
from core.engine.text import SENTENCE_GAP_S, Pause, clean_text, split_text


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
    cache: dict = field(default_factory=dict)
    chunks: list[dict] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    samples: int = 0


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

    def __iter__(self) -> Iterator[AudioChunk]:
        return self._run()

    def _run(self) -> Iterator[AudioChunk]:
        parts, request, report = self.parts, self.request, self.report
        runtime, caps = parts.runtime, parts.capabilities
        started = time.perf_counter()
        options = request.options
        params = options.resolve(caps.variant)
        report.text = clean_text(request.text)
        pieces = split_text(request.text)
        reference = parts.reference(request.voice)
        report.warnings += reference.warnings
        voice = parts.voices.lookup(reference)
        cond = voice.conditioning
        report.cache["conditioning"] = voice.source
        if voice.write_error:
            report.cache["write_error"] = voice.write_error
            report.warnings.append(Notice("cache.write_failed", {"reason": voice.write_error}))
        report.seed = options.seed if options.seed is not None else new_seed()
        cfg = caps.supports_cfg and params.cfg_weight > 0
        if parts.info.supports_cfg and params.cfg_weight > 0 and not cfg:
            report.warnings.append(Notice("synthesis.no_cfg"))

        dec_cond = cond.with_decoder_prompt(runtime.decoder_prompt_seconds)
        plan = StreamPlan(
            runtime.stream_plan if runtime.stream else "off", runtime.first_chunk_tokens, runtime.chunk_tokens,
            runtime.decoder_context_tokens, parts.costs, dec_cond.prompt_tokens,
        )  # fmt: skip
        pool = ThreadPoolExecutor(1, thread_name_prefix="decoder") if runtime.decoder_thread else None
        out = _InOrder(pool, self.cancelled)
        stats: list[DecodeStats] = []
        index = 0
        previous_was_sentence = False
        try:
            for number, piece in enumerate(pieces):
                if isinstance(piece, Pause) or previous_was_sentence:
                    seconds, kind = (piece.seconds, "pause") if isinstance(piece, Pause) else (SENTENCE_GAP_S, "gap")
                    span = (piece.start, piece.end) if kind == "pause" else (piece.start, piece.start)
                    silence = np.zeros(round(seconds * SAMPLE_RATE), np.float32)
                    out.put_ready(lambda s=silence, i=index, n=number, sp=span, k=kind: self._chunk(
                        s, i, n, sp, 0, k, started))  # fmt: skip
                    plan.silence(seconds)
                    index += 1
                if isinstance(piece, Pause):
                    previous_was_sentence = False
                    continue
                previous_was_sentence = True
                sentence, dropped = parts.tokenizer.prepare(piece.text)
                report.warnings += [Notice("text.unknown_tag", {"tag": tag}) for tag in dropped]
                guard = RunawayGuard()
                if number in self.pregenerated:
                    st = DecodeStats(stop_reason=self.pregenerated[number].stop_reason, started_at=time.perf_counter())
                    tokens = iter(self.pregenerated[number].tokens)
                else:
                    ids = parts.tokenizer.encode(sentence, options.language)
                    start = start_sentence(parts, cond, voice.key, ids, params.exaggeration, cfg, report.cache)
                    st = DecodeStats(prefix_build_ms=start.prefix_build_ms)
                    tokens = generate(
                        start.runner,
                        start.prompt,
                        Sampler(params, report.seed + number, parts.info.logits_vocab or LOGITS_VOCAB),
                        token_cap(caps.variant, ids.shape[1], params.max_new_tokens),
                        params.cfg_weight if cfg else 0.0,
                        st,
                        self.cancelled,
                        guard,
                    )
                stats.append(st)
                decoded = self.pregenerated.get(number)
                if decoded is not None and decoded.audio is not None:
                    audio = DecodedAudio(decoded.audio)
                else:
                    audio = SentenceAudio(parts.decoder, dec_cond, runtime.decoder_context_tokens, options.trim_silence)
                plan.new_sentence()
                first_sentence = len(stats) == 1
                pending: list[int] = []
                lm_started = time.perf_counter()

                def decode(count: int, final: bool, now: float, audio=audio, number=number, piece=piece) -> None:
                    """Hand the first ``count`` pending tokens to the decoder (its chunk comes out in order)."""
                    nonlocal index, pending, lm_started
                    plan.decoding(count, now)
                    self._decode(out, audio, pending[:count], final, index, number, piece, now - lm_started, started)
                    index += 1
                    pending, lm_started = pending[count:], time.perf_counter()

                parts.costs.lm_running = True
                for token in tokens:
                    pending.append(token)
                    report.speech_tokens.append(token)
                    now = time.perf_counter()
                    size = plan.window(len(pending), now, first_sentence)
                    if size:
                        decode(size, False, now)
                    yield from out.ready(plan)
                parts.costs.lm_running = False
                drop = guard.trim(pending)
                del report.speech_tokens[len(report.speech_tokens) - drop :]
                now = time.perf_counter()
                split = plan.window(len(pending), now, first_sentence, sentence_done=True)
                if split:  # the rest is long: decode a first part now so that playback does not run dry meanwhile
                    decode(split, False, now)
                decode(len(pending), True, time.perf_counter())
                report.stop_reasons.append(st.stop_reason)
                parts.costs.add_steps(st.step_ms)
            yield from out.drain(plan)
        except BaseException:
            out.abandon(parts.decoder)
            raise
        finally:
            parts.costs.lm_running = False
            out.close()

        total_ms = (time.perf_counter() - started) * 1000
        steps = [s for st in stats for s in st.step_ms]
        audio_s = report.samples / SAMPLE_RATE
        report.timings = {
            "ttfa_ms": self._ttfa_ms if self._ttfa_ms is not None else total_ms,
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

    def _decode(self, out, audio: SentenceAudio, tokens: list[int], final: bool, index: int, number: int, piece,
                lm_s: float, started: float) -> None:  # fmt: skip
        """Hand the tokens generated since the last window to the decoder; the chunk comes out in order."""
        tokens = list(tokens)

        def job(lm_waits: bool):
            t0 = time.perf_counter()
            samples = audio.add(tokens, final, lm_waits)
            return samples, (time.perf_counter() - t0) * 1000

        def chunk(result) -> AudioChunk:
            samples, decode_ms = result
            self._decoder_ms += decode_ms
            return self._chunk(samples, index, number, (piece.start, piece.end), len(tokens), "speech", started,
                               lm_ms=lm_s * 1000, decode_ms=decode_ms, last=final)  # fmt: skip

        out.put(job, chunk)

    def _chunk(self, samples, index, number, span, tokens, kind, started, lm_ms=0.0, decode_ms=0.0, last=True):
        at_ms = (time.perf_counter() - started) * 1000
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
        )
        self.report.samples += samples.size
        if self._ttfa_ms is None and kind == "speech" and samples.size:
            self._ttfa_ms = at_ms
        self.report.chunks.append({
            "index": index, "sentence": number, "kind": kind, "tokens": tokens, "samples": int(samples.size),
            "lm_ms": round(lm_ms, 3), "decode_ms": round(decode_ms, 3), "at_ms": round(at_ms, 3),
            "rtf": round(chunk.rtf, 4),
        })  # fmt: skip
        return chunk


def wait_cancellable(future: Future, cancelled: Callable[[], bool], interrupt: Callable[[], None] | None = None):
    """Wait for ``future``, looking at ``cancelled`` every 50 ms; on a cancel, ``interrupt`` the work (and let it end)
    and raise :class:`SynthesisCancelled`."""
    while not wait([future], timeout=0.05).done:
        if cancelled():
            if interrupt is not None:
                interrupt()
                wait([future])
            raise SynthesisCancelled()


class _InOrder:
    """The request's chunks in order: decoded on the decoder thread (or at once without one), silences ready at once.

    ``ready()`` yields the chunks at the head that are done without waiting; ``drain()`` waits for all of them.
    """

    def __init__(self, pool: ThreadPoolExecutor | None, cancelled: Callable[[], bool]):
        self.pool = pool
        self.cancelled = cancelled
        self.items: deque[tuple[Future, Callable]] = deque()
        self.speech_seen = False
        self.speech_submitted = False

    def put(self, job: Callable, finish: Callable) -> None:
        if self.pool is None:
            done: Future = Future()
            done.set_result(job(True))
            self.items.append((done, finish))
            return
        first = not self.speech_submitted
        future = self.pool.submit(job, first)
        self.items.append((future, finish))
        if first:
            # The first window decides the time to first audio: the language model waits for it rather than
            # share the cores with it (on a 2-core CPU that halves the decoder's speed).
            self.speech_submitted = True
            wait_cancellable(future, self.cancelled)

    def put_ready(self, make: Callable) -> None:
        done: Future = Future()
        done.set_result(None)
        self.items.append((done, lambda _none: make()))

    def _pop(self, plan: StreamPlan) -> AudioChunk:
        future, finish = self.items.popleft()
        chunk = finish(future.result())
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

    def abandon(self, decoder) -> None:
        """The request ends early (cancelled or failed): drop queued windows, stop the one being decoded."""
        for future, _finish in self.items:
            future.cancel()
        self.items.clear()
        decoder.interrupt()

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
