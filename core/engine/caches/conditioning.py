"""Voice conditioning: the ``speech_encoder`` outputs for one reference recording."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from core.engine.audio.voice_reference import VoiceReference
from core.engine.constants import TOKENS_PER_SECOND
from core.engine.model.model_info import GraphNames


@dataclass(frozen=True)
class Conditioning:
    FIELDS = ("audio_features", "audio_tokens", "speaker_embeddings", "speaker_features")

    audio_features: np.ndarray = field(repr=False)
    """[1, rows, hidden]: conditioning rows that lead the language model's prompt."""
    audio_tokens: np.ndarray = field(repr=False)
    """[1, P]: prompt speech tokens that lead the decoder input."""
    speaker_embeddings: np.ndarray = field(repr=False)
    speaker_features: np.ndarray = field(repr=False)

    @property
    def rows(self) -> int:
        return int(self.audio_features.shape[1])

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.FIELDS}

    @property
    def prompt_tokens(self) -> int:
        return int(self.audio_tokens.shape[1])

    def with_decoder_prompt(self, seconds: float) -> Conditioning:
        """The decoder's voice prompt cut to its first ``seconds`` (prompt tokens and their two mel frames each).

        The decoder pays for its prompt on every call; a shorter one trades voice detail for speed. The language
        model's conditioning rows are untouched."""
        keep = max(1, int(round(seconds * TOKENS_PER_SECOND)))
        if keep >= self.prompt_tokens:
            return self
        frames = min(self.speaker_features.shape[1], 2 * keep)
        return replace(
            self,
            audio_tokens=np.ascontiguousarray(self.audio_tokens[:, :keep]),
            speaker_features=np.ascontiguousarray(self.speaker_features[:, :frames]),
        )


def encode_voice(session: Any, voice: VoiceReference, names: GraphNames) -> Conditioning:
    """Run ``speech_encoder`` once on the reference (the graph crops internally)."""
    audio: np.ndarray = voice.samples[None, :].astype(names.specs["audio_values"].dtype, copy=False)
    wanted = [getattr(names, role) for role in Conditioning.FIELDS]
    outputs = dict(zip(Conditioning.FIELDS, session.run(wanted, {names.audio_values: audio})))
    return Conditioning(
        audio_features=np.ascontiguousarray(outputs["audio_features"]),
        audio_tokens=np.ascontiguousarray(outputs["audio_tokens"]).astype(np.int64, copy=False),
        speaker_embeddings=np.ascontiguousarray(outputs["speaker_embeddings"]),
        speaker_features=np.ascontiguousarray(outputs["speaker_features"]),
    )
