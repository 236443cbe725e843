"""The facade: ``Pipeline.from_bundle(path, runtime)`` loads a bundle; ``stream``/``synthesize`` speak text.

The pipeline owns the sessions and everything that is constant across requests: the conditioning cache (speech
encoder once per voice), the voice-prefix KV cache (conditioning rows prefilled once per voice), the text table for
CFG. It is not thread-safe: one inference thread owns it.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import platformdirs

from .bundle import BundleFiles, locate_bundle
from .conditioning import Conditioning, encode_voice
from .conditioning_cache import ConditioningCache, bundle_identity
from .constants import SAMPLE_RATE
from .decode_loop import DecodeStats
from .embedding import PromptEmbedder, load_text_table
from .errors import InvalidOptions, ModelSignatureError, VoiceReferenceError
from .kv_cache import ChainedKV, CopiedKV
from .model_info import ModelInfo, read_model_info
from .options import RuntimeOptions, SamplingParams, SynthesisOptions
from .prefix_cache import PrefixCache, VoicePrefix
from .sessions import SessionFactory
from .speech_decoder import SpeechDecoder
from .synthesis import AudioChunk, RequestReport, SynthesisRequest, SynthesisStream
from .tokenizer import TextTokenizer
from .voice import VoiceReference, load_voice

log = logging.getLogger(__name__)
APP_NAME = "ChatterboxDesk"
SESSION_FIELDS = ("provider", "threads", "precision", "graph_optimization", "spinning")
"""RuntimeOptions fields that need new sessions (a new Pipeline); the others apply to the next request."""


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)) / "conditioning"


@dataclass
class SynthesisResult:
    audio: np.ndarray = field(repr=False)
    sample_rate: int
    report: RequestReport
    chunks: list[AudioChunk] = field(default_factory=list, repr=False)

    @property
    def audio_seconds(self) -> float:
        return self.audio.size / self.sample_rate

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
    def warnings(self) -> list[str]:
        return self.report.warnings

    @property
    def seed(self) -> int:
        return self.report.seed


class Pipeline:
    def __init__(
        self,
        files: BundleFiles,
        sessions: dict,
        info: ModelInfo,
        tokenizer: TextTokenizer,
        text_table: np.ndarray | None,
        runtime: RuntimeOptions,
        factory: SessionFactory | None = None,
    ):
        self.files, self.sessions, self.info, self.tokenizer = files, sessions, info, tokenizer
        self.providers = dict(factory.providers) if factory else dict.fromkeys(sessions, "cpu")
        self.provider_notice = factory.notice if factory else None
        self.embedder = PromptEmbedder(sessions["embed_tokens"], info.variant, text_table, info.embed_output_dtype)
        self.decoder = SpeechDecoder(sessions["conditional_decoder"], info)
        self.device = "cuda" if self.providers.get("language_model") == "cuda" else "cpu"
        self.encoder_runs = 0
        """How many times ``speech_encoder`` ran (the conditioning cache keeps this low)."""
        self.prefix_cache = PrefixCache()
        self._identity = bundle_identity(files.graphs["speech_encoder"], info.variant)
        self.runtime = runtime
        self.conditioning_cache = self._make_conditioning_cache(runtime)

    @classmethod
    def from_bundle(cls, path: Path | str, runtime: RuntimeOptions | None = None) -> Pipeline:
        runtime = runtime or RuntimeOptions()
        files = locate_bundle(path, runtime.precision)
        factory = SessionFactory(runtime)
        sessions = {
            name: factory.create(name, graph, dynamic_shapes=name == "language_model")
            for name, graph in files.graphs.items()
        }
        info = read_model_info(sessions, files.graphs, TextTokenizer.is_multilingual(files.tokenizer))
        text_table = None
        if info.variant != "turbo":
            try:
                text_table = load_text_table(files.graphs["embed_tokens"], info.hidden)
            except ModelSignatureError as exc:
                log.warning("classifier-free guidance unavailable: %s", exc)
        rows = text_table.shape[0] if text_table is not None else None
        tokenizer = TextTokenizer(files.tokenizer, info.variant, rows)
        return cls(files, sessions, info, tokenizer, text_table, runtime, factory)

    # --- runtime switches --------------------------------------------------------------------------------------
    def _make_conditioning_cache(self, runtime: RuntimeOptions) -> ConditioningCache:
        directory = (runtime.cache_dir or default_cache_dir()) if runtime.conditioning_cache else None
        return ConditioningCache(directory, self._identity, self.info.hidden)

    def update_runtime(self, runtime: RuntimeOptions) -> None:
        """Apply switches for the next request. Session settings (provider, threads, precision) need a reload."""
        changed = [f for f in SESSION_FIELDS if getattr(runtime, f) != getattr(self.runtime, f)]
        if changed:
            raise ValueError(f"{', '.join(changed)} change the sessions: load the bundle again")
        if runtime.cache_dir != self.runtime.cache_dir or runtime.conditioning_cache != self.runtime.conditioning_cache:
            self.conditioning_cache = self._make_conditioning_cache(runtime)
        if not runtime.prefix_cache or runtime.kv_chaining != self.runtime.kv_chaining:
            self.prefix_cache.clear()
        self.runtime = runtime

    # --- voice -------------------------------------------------------------------------------------------------
    def default_voice(self) -> VoiceReference:
        if self.files.default_voice is None:
            raise VoiceReferenceError(
                "This model has no default voice (Turbo bundles ship none): choose a reference recording "
                "of 5-10 s of clean speech."
            )
        return load_voice(self.files.default_voice)

    def voice(self, voice: VoiceReference | Path | str | None) -> VoiceReference:
        if voice is None:
            return self.default_voice()
        if isinstance(voice, VoiceReference):
            return voice
        return load_voice(voice)

    def conditioning(self, voice: VoiceReference) -> Conditioning:
        """Run the speech encoder (uncached)."""
        self.encoder_runs += 1
        return encode_voice(
            self.sessions["speech_encoder"], voice, self.info.encoder_output_order, self.info.audio_dtype
        )

    def conditioning_for(self, voice: VoiceReference, cache_report: dict | None = None) -> tuple[Conditioning, str]:
        """Conditioning through the cache; returns it with the voice's cache key."""
        key = self.conditioning_cache.key(voice.digest)
        cond = self.conditioning_cache.get(key) if self.runtime.conditioning_cache else None
        if cond is None:
            cond = self.conditioning(voice)
            if self.runtime.conditioning_cache:
                write_error = self.conditioning_cache.put(key, cond)
                if write_error and cache_report is not None:
                    cache_report["write_error"] = write_error
        if cache_report is not None:
            cache_report["conditioning"] = (
                self.conditioning_cache.last_lookup if self.runtime.conditioning_cache else "off"
            )
        return cond, key

    # --- language model ----------------------------------------------------------------------------------------
    def resolve(self, options: SynthesisOptions) -> SamplingParams:
        try:
            return options.resolve(self.info.variant)
        except ValueError as exc:
            raise InvalidOptions(str(exc)) from exc

    def cfg_enabled(self, params: SamplingParams) -> bool:
        return self.info.supports_cfg and params.cfg_weight > 0 and self.embedder.text_table is not None

    @staticmethod
    def new_seed() -> int:
        return secrets.randbelow(2**31)

    def _kv(self, batch: int, exaggeration: float):
        kv_class = ChainedKV if self.runtime.kv_chaining else CopiedKV
        return kv_class(
            self.sessions["language_model"], self.sessions["embed_tokens"], self.info, batch, exaggeration, self.device
        )

    def start_kv(
        self,
        cond: Conditioning,
        cond_key: str,
        ids: np.ndarray,
        params: SamplingParams,
        cfg: bool,
        stats: DecodeStats,
        cache_report: dict,
    ):
        """A KV runner for one sentence and the embedding blocks it still has to prefill."""
        batch = 2 if cfg else 1
        text = self.embedder.text(ids, params.exaggeration, cfg)
        features = np.repeat(cond.audio_features.astype(text.dtype, copy=False), batch, axis=0)
        kv = self._kv(batch, params.exaggeration)
        if not self.runtime.prefix_cache:
            cache_report["prefix"] = "off"
            return kv, [np.concatenate([features, text], axis=1)]

        def build() -> VoicePrefix:
            started = time.perf_counter()
            runner = self._kv(batch, params.exaggeration)
            runner.prefill(features)
            stats.prefix_build_ms = (time.perf_counter() - started) * 1000
            return VoicePrefix(runner.past, runner.total)

        hits = self.prefix_cache.hits
        prefix = self.prefix_cache.get_or_build((cond_key, batch, self.runtime.kv_chaining, self.device), build)
        hit = self.prefix_cache.hits > hits
        cache_report["prefix_hits"] = cache_report.get("prefix_hits", 0) + hit
        cache_report["prefix_misses"] = cache_report.get("prefix_misses", 0) + (not hit)
        kv.adopt(prefix.past, prefix.total)
        return kv, [text]

    # --- synthesis ---------------------------------------------------------------------------------------------
    def stream(self, request: SynthesisRequest, cancelled: Callable[[], bool] | None = None) -> SynthesisStream:
        return SynthesisStream(self, request, cancelled)

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
