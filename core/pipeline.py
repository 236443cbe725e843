"""The facade: ``Pipeline.from_bundle(path, runtime)`` loads a bundle; ``synthesize`` turns text into speech."""

from __future__ import annotations

import logging
import secrets
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .bundle import BundleFiles, locate_bundle
from .conditioning import Conditioning, encode_voice
from .constants import SAMPLE_RATE
from .decode_loop import DecodeStats, generate
from .embedding import PromptEmbedder, load_text_table
from .errors import ChatterboxError, ModelSignatureError, VoiceReferenceError
from .kv_cache import ChainedKV, CopiedKV
from .model_info import ModelInfo, read_model_info
from .options import RuntimeOptions, SamplingParams, SynthesisOptions
from .sampler import Sampler
from .sessions import SessionFactory
from .speech_decoder import SpeechDecoder
from .stop_guards import token_cap
from .text import SENTENCE_GAP_S, Pause, split_text
from .tokenizer import TextTokenizer
from .voice import VoiceReference, load_voice

log = logging.getLogger(__name__)


class InvalidOptions(ChatterboxError):
    """A synthesis option is out of range."""


@dataclass
class SynthesisResult:
    audio: np.ndarray = field(repr=False)
    sample_rate: int
    speech_tokens: list[int]
    seed: int
    timings: dict[str, float]
    stop_reasons: list[str]
    warnings: list[str]

    @property
    def audio_seconds(self) -> float:
        return self.audio.size / self.sample_rate


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
        self.files, self.sessions, self.info, self.tokenizer, self.runtime = files, sessions, info, tokenizer, runtime
        self.providers = dict(factory.providers) if factory else {name: "cpu" for name in sessions}
        self.provider_notice = factory.notice if factory else None
        self.embedder = PromptEmbedder(sessions["embed_tokens"], info.variant, text_table, info.embed_output_dtype)
        self.decoder = SpeechDecoder(sessions["conditional_decoder"], info)
        self.device = "cuda" if self.providers.get("language_model") == "cuda" else "cpu"
        self.encoder_runs = 0
        """How many times ``speech_encoder`` ran (the conditioning cache keeps this low)."""

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

    # --- voice -------------------------------------------------------------------------------------------------
    def default_voice(self) -> VoiceReference:
        if self.files.default_voice is None:
            raise VoiceReferenceError(
                "This model has no default voice (Turbo bundles ship none): choose a reference recording "
                "of 5-10 s of clean speech."
            )
        return load_voice(self.files.default_voice)

    def conditioning(self, voice: VoiceReference) -> Conditioning:
        self.encoder_runs += 1
        return encode_voice(
            self.sessions["speech_encoder"], voice, self.info.encoder_output_order, self.info.audio_dtype
        )

    def _voice(self, voice: VoiceReference | Path | str | None) -> VoiceReference:
        if voice is None:
            return self.default_voice()
        if isinstance(voice, VoiceReference):
            return voice
        return load_voice(voice)

    # --- synthesis ---------------------------------------------------------------------------------------------
    def resolve(self, options: SynthesisOptions) -> SamplingParams:
        try:
            return options.resolve(self.info.variant)
        except ValueError as exc:
            raise InvalidOptions(str(exc)) from exc

    def synthesize(
        self,
        text: str,
        voice: VoiceReference | Path | str | None = None,
        options: SynthesisOptions | None = None,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> SynthesisResult:
        started = time.perf_counter()
        options = options or SynthesisOptions()
        params = self.resolve(options)
        pieces = split_text(text)
        reference = self._voice(voice)
        warnings = list(reference.warnings)
        cond = self.conditioning(reference)
        seed = options.seed if options.seed is not None else secrets.randbelow(2**31)
        cfg = self.info.supports_cfg and params.cfg_weight > 0 and self.embedder.text_table is not None
        if self.info.supports_cfg and params.cfg_weight > 0 and not cfg:
            warnings.append("Classifier-free guidance is unavailable for this bundle; generating without it.")

        parts: list[np.ndarray] = []
        tokens: list[int] = []
        stats: list[DecodeStats] = []
        decoder_ms = 0.0
        first_token_ms = None
        previous_was_sentence = False
        for index, piece in enumerate(pieces):
            if isinstance(piece, Pause):
                parts.append(np.zeros(int(round(piece.seconds * SAMPLE_RATE)), dtype=np.float32))
                previous_was_sentence = False
                continue
            if previous_was_sentence:
                parts.append(np.zeros(int(SENTENCE_GAP_S * SAMPLE_RATE), dtype=np.float32))
            sentence, dropped = self.tokenizer.prepare(piece.text)
            warnings += [f"Unknown tag {tag} was skipped." for tag in dropped]
            ids = self.tokenizer.encode(sentence, options.language)
            st = DecodeStats()
            sentence_tokens = list(self._generate(cond, ids, params, cfg, seed + index, st, cancelled))
            if first_token_ms is None:
                first_token_ms = (time.perf_counter() - started) * 1000
            stats.append(st)
            tokens += sentence_tokens
            decode_started = time.perf_counter()
            if sentence_tokens:
                parts.append(self.decoder.decode(cond, sentence_tokens))
            decoder_ms += (time.perf_counter() - decode_started) * 1000
            previous_was_sentence = True

        audio = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
        total_ms = (time.perf_counter() - started) * 1000
        steps = [s for st in stats for s in st.step_ms]
        loop_s, ort_s = sum(st.loop_s for st in stats), sum(st.ort_s for st in stats)
        timings = {
            "prefill_ms": stats[0].prefill_ms if stats else 0.0,
            "first_token_ms": first_token_ms or 0.0,
            "step_ms_median": statistics.median(steps) if steps else 0.0,
            "decoder_ms": decoder_ms,
            "total_ms": total_ms,
            "rtf": (total_ms / 1000) / (audio.size / SAMPLE_RATE) if audio.size else 0.0,
            "python_overhead_share": max(0.0, 1 - ort_s / loop_s) if loop_s else 0.0,
        }
        return SynthesisResult(audio, SAMPLE_RATE, tokens, seed, timings, [st.stop_reason for st in stats], warnings)

    def _generate(
        self,
        cond: Conditioning,
        ids: np.ndarray,
        params: SamplingParams,
        cfg: bool,
        seed: int,
        stats: DecodeStats,
        cancelled: Callable[[], bool],
    ):
        batch = 2 if cfg else 1
        text = self.embedder.text(ids, params.exaggeration, cfg)
        features = np.repeat(cond.audio_features.astype(text.dtype, copy=False), batch, axis=0)
        kv_class = ChainedKV if self.runtime.kv_chaining else CopiedKV
        kv = kv_class(
            self.sessions["language_model"],
            self.sessions["embed_tokens"],
            self.info,
            batch,
            params.exaggeration,
            self.device,
        )
        vocab = self.info.logits_vocab or 6563
        sampler = Sampler(params, seed, vocab)
        cap = token_cap(self.info.variant, ids.shape[1], params.max_new_tokens)
        return generate(
            kv,
            [np.concatenate([features, text], axis=1)],
            sampler,
            cap,
            params.cfg_weight if cfg else 0.0,
            stats,
            cancelled,
        )
