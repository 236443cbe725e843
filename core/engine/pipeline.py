"""The facade: ``Pipeline.from_bundle(path, runtime)`` loads a bundle; ``stream``/``synthesize`` speak text.

A request flows one way: the pipeline hands its :class:`~.model_parts.ModelParts` (sessions, signatures,
tokenizer, embedder, decoder, caches, runtime switches) to a :class:`~.synthesis.SynthesisStream`, which never
calls back. Not thread-safe: one inference thread owns it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.engine.audio.voice_reference import VoiceReference
from core.engine.constants import SAMPLE_RATE
from core.engine.errors import Notice
from core.engine.generation.batch_generate import Generated
from core.engine.model.model_parts import Capabilities, LoadProgress, ModelParts, load_parts
from core.engine.options import RuntimeOptions, SamplingParams, SynthesisOptions
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
    def __init__(self, parts: ModelParts):
        self.parts = parts

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
    def info(self):
        return self.parts.info

    @property
    def files(self):
        return self.parts.files

    @property
    def capabilities(self) -> Capabilities:
        return self.parts.capabilities

    @property
    def providers(self) -> dict[str, str]:
        return self.parts.capabilities.providers

    @property
    def provider_notice(self) -> Notice | None:
        return self.parts.capabilities.provider_notice

    @property
    def runtime(self) -> RuntimeOptions:
        return self.parts.runtime

    @property
    def encoder_runs(self) -> int:
        return self.parts.voices.encoder_runs

    def update_runtime(self, runtime: RuntimeOptions) -> None:
        """Apply switches for the next request (``ValueError`` for those that need new sessions)."""
        self.parts.update_runtime(runtime)

    def resolve(self, options: SynthesisOptions) -> SamplingParams:
        """The options with the model's defaults filled in (:class:`InvalidOptions` when out of range)."""
        return options.resolve(self.parts.info.variant)

    def default_voice(self) -> VoiceReference:
        return self.parts.reference(None)

    # --- synthesis ---------------------------------------------------------------------------------------------
    def stream(
        self,
        request: SynthesisRequest,
        cancelled: Callable[[], bool] | None = None,
        pregenerated: dict[int, Generated] | None = None,
    ) -> SynthesisStream:
        """``pregenerated``: speech tokens by sentence (piece) number from :func:`.batch_generate.generate_rows`."""
        return SynthesisStream(self.parts, request, cancelled, pregenerated)

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
