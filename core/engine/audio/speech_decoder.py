"""``conditional_decoder``: speech tokens → 24 kHz waveform, one-shot or in streaming windows.

Streaming: each decoder call sees up to ``context`` already-decoded tokens plus the new ones and keeps only the new
tokens' samples, so the cost stays linear in the utterance length. The last :data:`CROSSFADE` samples of what has
been decoded are always held back and blended with the same stretch of the next call's output, so seams do not
click. Trailing silence is held back too (and dropped at the end of the sentence, with stray end noise), so a
streamed sentence and a one-shot sentence come out the same. Only the final call gets Turbo's end padding.

Noise: every call feeds the decoder's noise seed (:mod:`core.engine.model.seeded_noise`): a sentence's calls take
its seed (the request's seed plus the sentence's number, as its sampler), so a seeded request gives the same samples
each time; an unseeded call draws a random one.

Joined: :meth:`SpeechDecoder.decode_joined` decodes several sentences in one call, each followed by the end padding,
and cuts the waveform at the token boundaries, so the voice prompt's fixed cost is paid once for all of them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import onnxruntime as ort

from core.engine.caches.conditioning import Conditioning
from core.engine.constants import SAMPLE_RATE, SILENCE_TOKEN, SPEECH_VOCAB, TURBO_TAIL_SILENCE
from core.engine.model.model_info import ModelInfo
from core.engine.model.seeded_noise import NOISE_SEED, fed_seed, new_noise_seed
from core.engine.streaming.stream_plan import CostModel

CROSSFADE = SAMPLE_RATE // 50  # 20 ms
FADE_OUT = SAMPLE_RATE // 100  # 10 ms
FRAME = SAMPLE_RATE // 100  # 10 ms analysis frames for silence trimming
SILENCE_RMS = 10 ** (-50 / 20)
STRAY_MAX_FRAMES = 8  # a burst shorter than 80 ms ...
STRAY_GAP_FRAMES = 15  # ... after 150 ms of silence, at the very end, is noise, not speech


class SpeechDecoder:
    """Runs ``conditional_decoder``; every call's time goes into the cost model the stream plan reads."""

    def __init__(self, session: Any, info: ModelInfo, costs: CostModel | None = None):
        self.session = session
        self.info = info
        self.costs = costs or CostModel()
        self.calls = 0
        self._running: ort.RunOptions | None = None
        self._seeded: bool | None = None

    def interrupt(self) -> None:
        """Abort the call in progress (from another thread): a cancelled request does not wait for the decoder."""
        running = self._running
        if running is not None:
            running.terminate = True

    def end_padding(self, final: bool) -> int:
        return TURBO_TAIL_SILENCE if final and self.info.variant == "turbo" else 0

    def decoder_tokens(self, cond: Conditioning, tokens: Sequence[int], final: bool = True) -> np.ndarray:
        """Prompt tokens + audio codes (only ids 0..6560 may reach the decoder); Turbo ends with 3 silences."""
        codes = [t for t in tokens if 0 <= t < SPEECH_VOCAB] + [SILENCE_TOKEN] * self.end_padding(final)
        return np.concatenate([cond.audio_tokens[:1], np.asarray([codes], dtype=np.int64)], axis=1)

    @property
    def seeded(self) -> bool:
        """Whether the decoder's noise comes from the fed seed (its graph had random nodes, rewritten at load)."""
        if self._seeded is None:
            loaded = getattr(self.session, "loaded", None)  # a session still loading: the real one's inputs
            session = loaded() if callable(loaded) else self.session
            inputs: list[Any] = getattr(session, "get_inputs", list)()  # a test's stand-in session may have none
            self._seeded = any(i.name == NOISE_SEED for i in inputs)
        return self._seeded

    def decode(
        self,
        cond: Conditioning,
        tokens: Sequence[int],
        final: bool = True,
        lm_waits: bool = False,
        seed: int | None = None,
    ) -> np.ndarray:
        """``lm_waits``: the language model waits for this call. A call during which the language model does not run
        is timed as the decoder's cost by itself; the others as its cost beside the language model. ``seed``: the
        noise seed (``None``: a random one)."""
        names = self.info.decoder
        specs = names.specs
        feeds: dict[str, np.ndarray] = {
            names.speech_tokens: self.decoder_tokens(cond, tokens, final).astype(specs["speech_tokens"].dtype),
            names.speaker_embeddings: cond.speaker_embeddings.astype(specs["speaker_embeddings"].dtype, copy=False),
            names.speaker_features: cond.speaker_features.astype(specs["speaker_features"].dtype, copy=False),
        }
        if self.seeded:
            feeds[NOISE_SEED] = fed_seed(new_noise_seed() if seed is None else seed)
        self.calls += 1
        self._running = run_options = ort.RunOptions()
        alone = lm_waits or not self.costs.lm_running
        started = time.perf_counter()
        try:
            wav = self.session.run([names.waveform], feeds, run_options)[0]
        finally:
            self._running = None
        alone = alone and (lm_waits or not self.costs.lm_running)  # and still so at the end
        self.costs.add_call(
            cond.prompt_tokens,
            feeds[names.speech_tokens].shape[1] - cond.prompt_tokens,
            time.perf_counter() - started,
            alone,
        )
        return np.ascontiguousarray(wav.reshape(-1), dtype=np.float32)

    def decode_joined(
        self, cond: Conditioning, sentences: Sequence[Sequence[int]], seed: int | None = None
    ) -> list[np.ndarray]:
        """Several sentences' tokens in one call (noise from ``seed``), the waveform cut back into sentences (to be
        finished with :func:`finish_sentence` as a one-shot sentence is). Each sentence is followed by Turbo's end
        padding (three silence tokens; the original models' decoder gets the same gap between sentences), so every
        cut falls in silence the decoder itself produced."""
        gap = TURBO_TAIL_SILENCE
        codes = [[t for t in tokens if 0 <= t < SPEECH_VOCAB] for tokens in sentences]
        joined: list[int] = []
        for i, sentence in enumerate(codes):
            joined += sentence + ([SILENCE_TOKEN] * gap if i < len(codes) - 1 else [])
        wav = self.decode(cond, joined, final=True, seed=seed)
        lengths = [len(sentence) + gap for sentence in codes[:-1]] + [len(codes[-1]) + self.end_padding(True)]
        per_token = wav.size / max(1, sum(lengths))  # 960 samples (24 kHz, 25 tokens per second)
        cuts = np.round(np.cumsum([0, *lengths]) * per_token).astype(int)
        cuts[-1] = wav.size
        return [wav[cuts[i] : cuts[i + 1]] for i in range(len(codes))]


class SentenceDecoding(Protocol):
    """One sentence's audio as its tokens arrive: ``add`` returns the samples ready to play."""

    def add(self, tokens: Sequence[int], final: bool, lm_waits: bool = False) -> np.ndarray: ...


class SentenceAudio:
    """Decodes one sentence's tokens chunk by chunk and returns the samples ready to play."""

    def __init__(self, decoder: SpeechDecoder, cond: Conditioning, context: int, trim: bool, seed: int | None = None):
        self.decoder, self.cond, self.context, self.trim = decoder, cond, context, trim
        self.seed = new_noise_seed() if seed is None else seed
        """The noise seed of every window of this sentence."""
        self.decoded: list[int] = []
        self.pending = np.zeros(0, dtype=np.float32)

    def add(self, tokens: Sequence[int], final: bool, lm_waits: bool = False) -> np.ndarray:
        tokens = [t for t in tokens if 0 <= t < SPEECH_VOCAB]
        context = self.decoded[-self.context :] if self.context else []
        window = context + tokens
        padded = len(window) + self.decoder.end_padding(final)
        if tokens or (padded > len(context)):
            out = self.decoder.decode(self.cond, window, final, lm_waits, self.seed)
            ctx_samples = round(out.size * len(context) / padded) if padded else 0
            overlap = min(CROSSFADE, ctx_samples, self.pending.size)
            if overlap:
                ramp = np.linspace(0.0, 1.0, overlap, dtype=np.float32)
                tail = self.pending[-overlap:]
                self.pending[-overlap:] = tail + (out[ctx_samples - overlap : ctx_samples] - tail) * ramp
            self.pending = np.concatenate([self.pending, out[ctx_samples:]])
            self.decoded += tokens
        if final:
            ready, self.pending = finish_sentence(self.pending, self.trim), np.zeros(0, dtype=np.float32)
            return ready
        end = speech_end(self.pending) if self.trim else self.pending.size
        end = max(0, min(end, self.pending.size - CROSSFADE))
        kept: np.ndarray = self.pending[:end].copy()
        self.pending = self.pending[end:]
        return kept


class DecodedAudio:
    """A sentence decoded beforehand (:meth:`SpeechDecoder.decode_joined`), handed over as :class:`SentenceAudio`
    would hand over a one-shot sentence: all of it on the final call."""

    def __init__(self, samples: np.ndarray):
        self.samples = samples

    def add(self, tokens: Sequence[int], final: bool, lm_waits: bool = False) -> np.ndarray:
        return self.samples if final else np.zeros(0, dtype=np.float32)


def finish_sentence(audio: np.ndarray, trim: bool) -> np.ndarray:
    """The end of a sentence: trailing silence and stray end noise cut, and a short fade-out (with ``trim``)."""
    ready: np.ndarray = audio[: speech_end(audio) if trim else audio.size].copy()
    if trim and ready.size:
        n = min(FADE_OUT, ready.size)
        ready[-n:] *= np.linspace(1.0, 0.0, n, dtype=np.float32)
    return ready


def speech_end(audio: np.ndarray) -> int:
    """Index just after the last real sound: trailing silence and a short stray burst after it are excluded."""
    if audio.size == 0:
        return 0
    frames = -(-audio.size // FRAME)
    padded = np.zeros(frames * FRAME, dtype=np.float32)
    padded[: audio.size] = audio
    active = np.sqrt(np.mean(padded.reshape(frames, FRAME) ** 2, axis=1)) > SILENCE_RMS
    end = frames
    for _ in range(2):
        idx = np.flatnonzero(active[:end])
        if idx.size == 0:
            return 0
        last = int(idx[-1]) + 1
        run_start = last
        while run_start > 0 and active[run_start - 1]:
            run_start -= 1
        before = np.flatnonzero(active[:run_start])
        is_stray = (
            last - run_start < STRAY_MAX_FRAMES and before.size and run_start - (before[-1] + 1) >= STRAY_GAP_FRAMES
        )
        if not is_stray:
            return min(last * FRAME, audio.size)
        end = run_start
    idx = np.flatnonzero(active[:end])
    return min(int(idx[-1] + 1) * FRAME, audio.size) if idx.size else 0
