"""The facade: ``Pipeline.from_bundle(path, runtime)`` loads a bundle; ``stream``/``synthesize`` speak text.

A request flows one way: the pipeline hands its :class:`~.model_parts.ModelParts` (sessions, signatures,
tokenizer, embedder, decoder, caches, runtime switches) to a :class:`~.synthesis.SynthesisStream`, which never
calls back. The parts stay private: a render's look-ahead and the benchmarks use the narrow methods below
(generate several sentences' tokens, decode them joined, time a language-model runner) and read-only counters.
Not thread-safe: one inference thread owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.audio.voice_reference import VoiceReference
from core.engine.caches.conditioning import Conditioning
from core.engine.caches.conditioning_cache import ConditioningLookup
from core.engine.constants import SAMPLE_RATE
from core.engine.errors import Notice
from core.engine.generation import batch_generate
from core.engine.generation.batch_generate import Generated, Row
from core.engine.generation.lm_runners import ChainedKV, CopiedKV
from core.engine.model.bundle import BundleFiles
from core.engine.model.fixed_noise import FLOW_NOISE_SEED as FIXED_NOISE_SEED
from core.engine.model.model_info import ModelInfo
from core.engine.model.model_parts import (
    Capabilities,
    LoadProgress,
    ModelParts,
    language_model_session,
    load_decoder,
    load_parts,
    runner_kind,
)
from core.engine.options import RuntimeOptions, SamplingParams, SynthesisOptions
from core.engine.streaming.conversion import ConversionRequest, ConversionStream
from core.engine.streaming.synthesis import AudioChunk, RequestReport, SynthesisRequest, SynthesisStream


@dataclass
class SynthesisResult:
    audio: np.ndarray = field(repr=False)
    sample_rate: int
    report: RequestReport
    chunks: list[AudioChunk] = field(default_factory=list, repr=False)

    @property
    def speech_tokens(self) -> list[int]:
        return self.report.speech_tokens

    @property
    def timings(self) -> dict[str, float]:
        return self.report.timings

    @property
    def stop_reasons(self) -> list[str]:
        return self.report.stop_reasons

    @property
    def warnings(self) -> list[Notice]:
        return self.report.warnings

    @property
    def seed(self) -> int:
        return self.report.seed


class Pipeline:
    def __init__(self, parts: ModelParts) -> None:
        self._parts = parts

    @classmethod
    def from_bundle(
        cls,
        path: Path | str,
        runtime: RuntimeOptions | None = None,
        progress: LoadProgress | None = None,
        background: bool = False,
    ) -> Pipeline:
        """Load a bundle (see :func:`core.engine.model.model_parts.load_parts` for ``progress`` and ``background``)."""
        return cls(load_parts(path, runtime or RuntimeOptions(), progress, background))

    # What front ends read about the loaded model.
    @property
    def info(self) -> ModelInfo:
        return self._parts.info

    @property
    def files(self) -> BundleFiles:
        return self._parts.files

    @property
    def capabilities(self) -> Capabilities:
        return self._parts.capabilities

    def check_language(self, language: str | None) -> None:
        """Raise :class:`~core.engine.errors.TextInputError` when text in ``language`` cannot be read by this model
        (not one of its languages, or a file its step needs is missing), before anything is queued."""
        self._parts.tokenizer.check_language(language)

    @property
    def providers(self) -> dict[str, str]:
        return self._parts.capabilities.providers

    @property
    def provider_notice(self) -> Notice | None:
        return self._parts.capabilities.provider_notice

    @property
    def runtime(self) -> RuntimeOptions:
        return self._parts.runtime

    # Read-only counters (benchmarks and tests read what the caches and the decoder did).
    @property
    def encoder_runs(self) -> int:
        """Times the speech encoder ran (a conditioning-cache miss)."""
        return self._parts.voices.encoder_runs

    @property
    def decoder_calls(self) -> int:
        """Calls of the speech decoder so far (a joined call counts once)."""
        return self._parts.decoder.calls

    @property
    def prefix_hits(self) -> int:
        """Sentences that started from a cached voice prefix."""
        return self._parts.prefixes.hits

    @property
    def prefix_misses(self) -> int:
        return self._parts.prefixes.misses

    def update_runtime(self, runtime: RuntimeOptions) -> None:
        """Apply switches for the next request (``ValueError`` for those that need new sessions)."""
        self._parts.update_runtime(runtime)

    def resolve(self, options: SynthesisOptions) -> SamplingParams:
        """The options with the model's defaults filled in (:class:`InvalidOptions` when out of range)."""
        return options.resolve(self._parts.info.variant)

    def default_voice(self) -> VoiceReference:
        return self._parts.reference(None)

    def reference(self, voice: VoiceReference | Path | str | None) -> VoiceReference:
        """A loaded reference recording: the one given, a file, or the bundle's default voice for ``None``."""
        return self._parts.reference(voice)

    def condition(self, voice: VoiceReference | Path | str | None) -> ConditioningLookup:
        """A voice's conditioning (from the cache, or the speech encoder), and its cache key."""
        return self._parts.voices.lookup(self._parts.reference(voice))

    def adopt_conditioning(self, voice: VoiceReference | None, conditioning: Conditioning) -> str:
        """Speak ``voice`` (``None``: the default voice) with ``conditioning`` computed by another process (a cluster
        render's owner ships it to every actor) instead of running the speech encoder; the voice's cache key."""
        return self._parts.voices.adopt(self._parts.reference(voice), conditioning)

    # --- sentences ahead of time (a render's look-ahead) ---------------------------------------------------------
    def can_batch(self, options: SynthesisOptions) -> bool:
        """Whether sentences spoken with ``options`` can share a language-model batch (see :func:`generate_rows`)."""
        return batch_generate.can_batch(self._parts, options)

    def request_rows(self, text: str, options: SynthesisOptions) -> dict[int, Row]:
        """The sentences of one request by piece number, seeded as the synthesis stream would seed them."""
        return batch_generate.request_rows(self._parts, text, options)

    def generate_rows(
        self, conditioning: Conditioning, voice_key: str, rows: list[Row], cancelled: Callable[[], bool] = lambda: False
    ) -> list[Generated]:
        """Every row's speech tokens in one batch (:class:`SynthesisCancelled` when ``cancelled`` says so)."""
        return batch_generate.generate_rows(self._parts, conditioning, voice_key, rows, cancelled)

    def generate_alone(
        self, conditioning: Conditioning, voice_key: str, row: Row, cancelled: Callable[[], bool] = lambda: False
    ) -> Generated:
        """One sentence's speech tokens through the ordinary decode loop (any model, guidance included)."""
        return batch_generate.generate_alone(self._parts, conditioning, voice_key, row, cancelled)

    def decode(self, conditioning: Conditioning, tokens: list[int], seed: int | None = None) -> np.ndarray:
        """One sentence's speech tokens to samples in one decoder call (its noise from ``seed``; ``None``: random)."""
        return self._parts.decoder.decode(conditioning, tokens, seed=seed)

    def other_decoder(
        self, runtime: RuntimeOptions, fixed_noise: bool = False, graph_noise: bool = False
    ) -> Callable[..., np.ndarray]:
        """This model's speech decoder loaded again with other session settings (precision, flow steps, threads,
        graph optimisation): ``decode(conditioning, tokens, seed=None)``, for comparisons. With ``fixed_noise`` its
        random nodes are seeded, so two variants draw the same noise call for call; with ``graph_noise`` it draws the
        exported graph's own unseeded noise (float32). Its calls do not teach the stream plan."""
        decoder = load_decoder(self._parts.files.root, runtime, self._parts.info, fixed_noise, graph_noise)
        fixed = FIXED_NOISE_SEED if fixed_noise else None

        def decode(conditioning: Conditioning, tokens: list[int], seed: int | None = None) -> np.ndarray:
            return decoder.decode(conditioning, tokens, seed=fixed if seed is None else seed)

        return decode

    def decode_joined(
        self, conditioning: Conditioning, sentences: list[list[int]], seed: int | None = None
    ) -> list[np.ndarray]:
        """Several sentences' tokens in one decoder call (its noise from ``seed``), cut back into sentences."""
        return self._parts.decoder.decode_joined(conditioning, sentences, seed)

    def interrupt_decoder(self) -> None:
        """Abort the decoder call in progress (from another thread)."""
        self._parts.decoder.interrupt()

    def lm_runner(
        self,
        kind: type[ChainedKV] | type[CopiedKV],
        batch: int = 1,
        exaggeration: float = 0.5,
        session: Any = None,
    ) -> Any:
        """A fresh language-model runner of ``kind`` (benchmarks time its steps), on ``session`` if given (one from
        :meth:`language_model_variant`). A chained runner on a graph that writes its cache in place is
        :class:`SharedKV`, as the pipeline runs it."""
        parts, sessions = self._parts, self._parts.sessions
        lm = session if session is not None else sessions["language_model"]
        if kind is ChainedKV:
            kind = runner_kind(lm, kv_chaining=True)
        return kind(lm, sessions["embed_tokens"], parts.info, batch, exaggeration, parts.device)

    def language_model_variant(self, **changes: Any) -> Any:
        """A second language-model session of this bundle with ``changes`` to the runtime options (e.g.
        ``shape_folding=False``): benchmarks compare it with the one in use."""
        return language_model_session(self._parts.files, replace(self._parts.runtime, **changes))

    # --- synthesis ---------------------------------------------------------------------------------------------
    def stream(
        self,
        request: SynthesisRequest,
        cancelled: Callable[[], bool] | None = None,
        pregenerated: dict[int, Generated] | None = None,
    ) -> SynthesisStream:
        """``pregenerated``: speech tokens by sentence (piece) number from :func:`.batch_generate.generate_rows`."""
        return SynthesisStream(self._parts, request, cancelled, pregenerated)

    def synthesize(
        self,
        text: str,
        voice: VoiceReference | Path | str | None = None,
        options: SynthesisOptions | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        runtime: RuntimeOptions | None = None,
    ) -> SynthesisResult:
        """Speak ``text`` in one go (the same generator as streaming, collected)."""
        if runtime is not None:
            self.update_runtime(runtime)
        stream = self.stream(SynthesisRequest(text, voice, options or SynthesisOptions()), cancelled)
        chunks = list(stream)
        audio = np.concatenate([c.samples for c in chunks]) if chunks else np.zeros(0, np.float32)
        return SynthesisResult(audio, SAMPLE_RATE, stream.report, chunks)

    # --- voice conversion --------------------------------------------------------------------------------------
    def convert_stream(
        self, request: ConversionRequest, cancelled: Callable[[], bool] | None = None
    ) -> ConversionStream:
        """Re-voice a recording, window by window (:mod:`core.engine.streaming.conversion`)."""
        return ConversionStream(self._parts, request, cancelled)

    def convert(
        self,
        source: Any,
        voice: VoiceReference | Path | str | None = None,
        seed: int | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> SynthesisResult:
        """Re-voice ``source`` (a file or a loaded :class:`SourceRecording`) into ``voice`` in one go."""
        stream = self.convert_stream(ConversionRequest(source, voice, seed), cancelled)
        chunks = list(stream)
        audio = np.concatenate([c.samples for c in chunks]) if chunks else np.zeros(0, np.float32)
        return SynthesisResult(audio, SAMPLE_RATE, stream.report, chunks)
