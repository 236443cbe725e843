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

    def with_decoder_prompt(self, seconds: float, window: str = "best") -> Conditioning:
        """The decoder's voice prompt cut to ``seconds`` (prompt tokens and their two mel frames each): the most
        voiced stretch of the reference (``best``, :func:`best_prompt_start`) or its first seconds (``first``).

        The decoder pays for its prompt on every call; a shorter one trades voice detail for speed. The language
        model's conditioning rows are untouched."""
        keep = max(1, int(round(seconds * TOKENS_PER_SECOND)))
        if keep >= self.prompt_tokens:
            return self
        start = best_prompt_start(self.speaker_features[0], keep, self.prompt_tokens) if window == "best" else 0
        first = min(self.speaker_features.shape[1], 2 * start)
        return replace(
            self,
            audio_tokens=np.ascontiguousarray(self.audio_tokens[:, start : start + keep]),
            speaker_features=np.ascontiguousarray(self.speaker_features[:, first : 2 * (start + keep)]),
        )


def best_prompt_start(mel: np.ndarray, keep: int, tokens: int) -> int:
    """The first prompt token of the ``keep`` consecutive tokens whose mel frames (two per token; ``mel`` is the
    prompt's [frames, bands] log-mel) carry the most voiced energy: each token scores its frames' mean level above
    the reference's quietest token, so pauses and breaths score nothing and the window falls on speech. The earliest
    of equal windows wins (a reference of even loudness keeps its start, as before)."""
    if keep >= tokens or mel.ndim != 2 or mel.shape[0] < 2:
        return 0
    frames = min(mel.shape[0] // 2, tokens)
    level = mel[: 2 * frames].astype(np.float64).mean(axis=1).reshape(frames, 2).mean(axis=1)
    score = level - level.min()
    if frames < tokens:  # tokens without mel frames (a graph that crops its mel) score nothing
        score = np.concatenate([score, np.zeros(tokens - frames)])
    sums = np.convolve(score, np.ones(keep), mode="valid")  # sums[s]: tokens s .. s + keep - 1
    best = sums.max()
    return int(np.flatnonzero(sums >= best - 1e-9 * max(1.0, abs(best)))[0])


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
