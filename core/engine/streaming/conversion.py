"""Re-voicing a recording (Chatterbox voice conversion), as a stream of :class:`AudioChunk`.

The recording is cut into windows (:mod:`core.engine.audio.conversion_windows`); each window goes through the speech
encoder for its speech tokens, and the speech decoder renders those tokens in the target voice, from the target's
conditioning as a Speak request gets it (the conditioning cache, the decoder prompt of the runtime). No language
model runs: the words, timing and intonation are the recording's, the voice is the target's. The joined result is
exactly as long as the source.

While the decoder renders one window (on a helper thread, so a cancel stops it at once), the encoder already reads
the next (without the runtime's decoder thread, one after the other); a window's audio is yielded as soon as it is
decoded, and streaming gives the same samples as collecting the stream (the windows are planned from the whole
recording first). Each window's decoder noise comes from the
request's seed and the window's number (:mod:`core.engine.model.seeded_noise`): a seeded conversion is repeatable.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.audio.conversion_windows import Window, WindowJoin, plan_windows, window_audio
from core.engine.audio.source_recording import SourceRecording, load_source
from core.engine.audio.voice_reference import VoiceReference
from core.engine.caches.conditioning import Conditioning
from core.engine.constants import SAMPLE_RATE, SPEECH_VOCAB
from core.engine.errors import Notice, SynthesisCancelled
from core.engine.model.model_info import GraphNames
from core.engine.model.model_parts import ModelParts
from core.engine.streaming.synthesis import AudioChunk, RequestReport, new_seed, wait_cancellable


@dataclass(frozen=True)
class ConversionRequest:
    source: SourceRecording | Path | str
    """The recording to re-voice: loaded, or a file (any length up to 30 minutes, any rate or channel count)."""
    voice: VoiceReference | Path | str | None = None
    """The target voice: a loaded reference, a file, or ``None`` for the bundle's default voice."""
    seed: int | None = None
    """The decoder noise's seed (``None``: a new one, reported)."""
    request_id: int = 0


@dataclass(frozen=True)
class _Decoded:
    audio: np.ndarray
    encoder_ms: float
    decode_ms: float


def encode_tokens(session: Any, names: GraphNames, audio: np.ndarray) -> np.ndarray:
    """The speech encoder's tokens for ``audio`` (mono 24 kHz, at most 10 s): only that output is asked for."""
    fed: np.ndarray = audio[None, :].astype(names.specs["audio_values"].dtype, copy=False)
    tokens = session.run([names.audio_tokens], {names.audio_values: fed})[0]
    return np.asarray(tokens, dtype=np.int64).reshape(-1)


class ConversionStream:
    """Iterate to get the chunks (one per window); :attr:`report` is complete once iteration ends."""

    def __init__(self, parts: ModelParts, request: ConversionRequest, cancelled: Callable[[], bool] | None = None):
        self.parts, self.request = parts, request
        self.cancelled = cancelled or (lambda: False)
        self.report = RequestReport()
        self.windows: list[Window] = []
        """The windows the source was cut into (known once iteration has started)."""

    def __iter__(self) -> Iterator[AudioChunk]:
        return self._run()

    def _run(self) -> Iterator[AudioChunk]:
        started = time.perf_counter()
        parts, request, report = self.parts, self.request, self.report
        source = request.source if isinstance(request.source, SourceRecording) else load_source(request.source)
        report.warnings += source.warnings
        reference = parts.reference(request.voice)
        report.warnings += reference.warnings
        voice = parts.voices.lookup(reference)
        report.cache["conditioning"] = voice.source
        if voice.write_error:
            report.warnings.append(Notice("cache.write_failed", {"reason": voice.write_error}))
        runtime = parts.runtime
        cond = voice.conditioning.with_decoder_prompt(runtime.decoder_prompt_seconds, runtime.decoder_prompt_window)
        report.seed = request.seed if request.seed is not None else new_seed()
        self.windows = windows = plan_windows(source.samples)
        join = WindowJoin()
        encoder_ms = decoder_ms = 0.0
        first_audio_ms: float | None = None
        # With the runtime's decoder thread, the encoder reads the next window while the decoder renders this one.
        with ThreadPoolExecutor(1, thread_name_prefix="convert-decoder") as pool:
            overlap = runtime.decoder_thread
            submit = pool.submit if overlap else _run_now
            pending: tuple[int, Future[_Decoded]] | None = None
            for number, window in enumerate(windows):
                if self.cancelled():
                    raise SynthesisCancelled()
                t0 = time.perf_counter()
                tokens = self._tokens(source.samples, window)
                encoder_ms += (spent := (time.perf_counter() - t0) * 1000)
                if pending is not None:  # the previous window, decoded meanwhile
                    yield (chunk := self._finish(*pending, join, windows, started))
                    decoder_ms += chunk.decode_ms
                pending = (number, submit(self._decode, cond, tokens, report.seed + number, spent))
                report.speech_tokens += tokens.tolist()
                if number == 0 or not overlap:  # the first audio waits for nothing else; nor does any without overlap
                    yield (chunk := self._finish(*pending, join, windows, started))
                    decoder_ms += chunk.decode_ms
                    first_audio_ms = chunk.at_ms if first_audio_ms is None else first_audio_ms
                    pending = None
            if pending is not None:
                yield (chunk := self._finish(*pending, join, windows, started))
                decoder_ms += chunk.decode_ms
        total_ms = (time.perf_counter() - started) * 1000
        report.samples = source.samples.size
        seconds = source.samples.size / SAMPLE_RATE
        report.timings = {
            "first_audio_ms": round(first_audio_ms or total_ms, 3),
            "total_ms": round(total_ms, 3),
            "encoder_ms": round(encoder_ms, 3),
            "decoder_ms": round(decoder_ms, 3),
            "audio_seconds": round(seconds, 3),
            "rtf": round(total_ms / 1000 / seconds, 4) if seconds else 0.0,
        }

    def _tokens(self, samples: np.ndarray, window: Window) -> np.ndarray:
        parts = self.parts
        session = parts.sessions["speech_encoder"]
        tokens = encode_tokens(session, parts.info.encoder, window_audio(samples, window))
        return tokens[(tokens >= 0) & (tokens < SPEECH_VOCAB)]

    def _decode(self, cond: Conditioning, tokens: np.ndarray, seed: int, encoder_ms: float) -> _Decoded:
        t0 = time.perf_counter()
        audio = self.parts.decoder.decode(cond, tokens.tolist(), final=False, lm_waits=True, seed=seed)
        return _Decoded(audio, encoder_ms, (time.perf_counter() - t0) * 1000)

    def _finish(
        self,
        number: int,
        pending: Future[_Decoded],
        join: WindowJoin,
        windows: list[Window],
        started: float,
    ) -> AudioChunk:
        decoding_since = time.perf_counter()
        wait_cancellable(pending, self.cancelled, self.parts.decoder.interrupt)
        decoded = pending.result()
        window = windows[number]
        samples = join.add(window, decoded.audio, last=number == len(windows) - 1)
        now = time.perf_counter()
        self.report.chunks.append(
            {
                "index": number,
                "start_s": round(window.start / SAMPLE_RATE, 3),
                "end_s": round(min(window.keep, window.end) / SAMPLE_RATE, 3),
                "tokens": window.tokens,
                "encoder_ms": round(decoded.encoder_ms, 3),
                "decode_ms": round(decoded.decode_ms, 3),
                "waited_ms": round((now - decoding_since) * 1000, 3),
            }
        )
        return AudioChunk(
            samples=samples,
            sample_rate=SAMPLE_RATE,
            index=number,
            sentence=number,
            text_span=(0, 0),
            tokens=window.tokens,
            kind="speech",
            lm_ms=decoded.encoder_ms,
            decode_ms=decoded.decode_ms,
            at_ms=(now - started) * 1000,
            last_in_sentence=True,
            request_id=self.request.request_id,
        )


def _run_now(work: Callable[..., _Decoded], *args: Any) -> Future[_Decoded]:
    """``work`` run here and now, as an already finished future (no decoder thread)."""
    done: Future[_Decoded] = Future()
    done.set_result(work(*args))
    return done
