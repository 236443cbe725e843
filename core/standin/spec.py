"""Dimensions of the stand-in bundles.

``full`` copies each variant's real layer count, hidden size, heads, head_dim and vocabularies, so a benchmark on a
full-size stand-in pays the real per-step cost. ``tiny`` keeps the interface (and the conditioning row count) but
shrinks every weight so a bundle builds in a second or two for tests.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

VARIANTS = ("turbo", "original", "multilingual")
SIZES = ("tiny", "full")
PRECISIONS = ("fp32", "q4", "fp16")


@dataclass(frozen=True)
class StandinSpec:
    variant: str
    layers: int
    heads: int
    head_dim: int
    mlp_dim: int
    logits_vocab: int
    """Width of the LM head: 6563 for Turbo, 8194 for the Llama variants."""
    tokenizer_vocab: int
    """Ids the tokenizer can produce (added tokens included)."""
    text_table_rows: int
    """Rows of the text embedding table (multilingual has fewer rows than the tokenizer has ids)."""
    cond_rows: int
    """Rows of ``audio_features`` that the speech encoder returns (375 Turbo, 33 original/multilingual)."""
    max_positions: int
    """Turbo: learned position table inside the LM. Llama variants: speech position table in ``embed_tokens``."""
    max_text_positions: int
    decoder_dim: int
    decoder_layers: int
    decoder_steps: int
    """Passes of the decoder's shared layers over every token, the voice prompt's included (the flow-matching part:
    a fixed cost per call that grows with the prompt)."""
    vocoder_steps: int
    """Passes over the new tokens only (the vocoder part: the cost per generated token)."""
    encoder_layers: int
    """Layers the speech encoder runs over the reference (8 frames of 1024 per 40 ms) so that it costs like the real
    one (a speaker encoder and a speech tokenizer over up to 15 s); 0 for tiny stand-ins."""
    decoder_frames: int
    """Frames per speech token the decoder works on (the real one upsamples to mel frames and samples)."""
    speech_tokens_per_text_token: int
    """How many speech tokens the stand-in LM emits per prompt text token before it says STOP."""
    repeating: bool = False
    """Greedy decoding repeats one token per sentence unless the repetition penalty covers the whole history."""
    decoder_noise: bool = False
    """The decoder draws noise as the real ones do: unseeded ``RandomNormalLike`` over its output and a
    ``RandomUniformLike`` phase per call (:mod:`core.engine.model.seeded_noise` replaces them at load)."""

    @property
    def hidden(self) -> int:
        return self.heads * self.head_dim

    @property
    def has_position_ids(self) -> bool:
        return self.variant == "turbo"


_FULL = {
    "turbo": StandinSpec(
        variant="turbo",
        layers=24,
        heads=16,
        head_dim=64,
        mlp_dim=4096,
        logits_vocab=6563,
        tokenizer_vocab=50276,
        text_table_rows=50276,
        cond_rows=375,
        max_positions=8196,
        max_text_positions=0,
        decoder_dim=1024,
        decoder_layers=4,
        decoder_steps=9,
        decoder_frames=8,
        vocoder_steps=48,
        encoder_layers=40,
        speech_tokens_per_text_token=5,
    ),
    "original": StandinSpec(
        variant="original",
        layers=30,
        heads=16,
        head_dim=64,
        mlp_dim=4096,
        logits_vocab=8194,
        tokenizer_vocab=704,
        text_table_rows=704,
        cond_rows=33,
        max_positions=4100,
        max_text_positions=2050,
        decoder_dim=1024,
        decoder_layers=4,
        decoder_steps=170,
        decoder_frames=8,
        vocoder_steps=90,
        encoder_layers=26,
        speech_tokens_per_text_token=2,
    ),
}
_FULL["multilingual"] = replace(_FULL["original"], variant="multilingual", tokenizer_vocab=2454, text_table_rows=2352)


def spec_for(variant: str, size: str = "tiny") -> StandinSpec:
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    if size not in SIZES:
        raise ValueError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
    full = _FULL[variant]
    if size == "full":
        return full
    return replace(
        full,
        layers=2,
        heads=2,
        head_dim=8,
        mlp_dim=32,
        decoder_dim=16,
        decoder_layers=1,
        decoder_steps=1,
        decoder_frames=1,
        vocoder_steps=0,
        encoder_layers=0,
    )
