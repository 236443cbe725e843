"""``conditional_decoder``: speech tokens → 24 kHz waveform."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .conditioning import Conditioning
from .constants import SILENCE_TOKEN, SPEECH_VOCAB, TURBO_TAIL_SILENCE
from .model_info import ModelInfo


class SpeechDecoder:
    def __init__(self, session, info: ModelInfo):
        self.session = session
        self.info = info

    def decoder_tokens(self, cond: Conditioning, tokens: Sequence[int], final: bool = True) -> np.ndarray:
        """Prompt tokens + audio codes (only ids 0..6560 may reach the decoder); Turbo ends with 3 silences."""
        codes = [t for t in tokens if 0 <= t < SPEECH_VOCAB]
        if final and self.info.variant == "turbo":
            codes += [SILENCE_TOKEN] * TURBO_TAIL_SILENCE
        return np.concatenate([cond.audio_tokens[:1], np.asarray([codes], dtype=np.int64)], axis=1)

    def decode(self, cond: Conditioning, tokens: Sequence[int], final: bool = True) -> np.ndarray:
        specs = self.info.decoder_inputs
        feeds = {
            "speech_tokens": self.decoder_tokens(cond, tokens, final).astype(specs["speech_tokens"].dtype),
            "speaker_embeddings": cond.speaker_embeddings.astype(specs["speaker_embeddings"].dtype, copy=False),
            "speaker_features": cond.speaker_features.astype(specs["speaker_features"].dtype, copy=False),
        }
        wav = self.session.run(["waveform"], feeds)[0]
        return np.ascontiguousarray(wav.reshape(-1), dtype=np.float32)
