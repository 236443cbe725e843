"""The status bar's account of a model being loaded."""

from __future__ import annotations

GRAPH_NAMES = {
    "speech_encoder": "voice encoder",
    "embed_tokens": "embeddings",
    "language_model": "language model",
    "conditional_decoder": "decoder",
    "conditional_decoder_q8": "making the int8 decoder (once)",
    "language_model_rewrite": "preparing the language model (once)",
}


def load_progress_text(times: dict[str, float | None]) -> str:
    """Each graph with ``…`` while it loads and ``✓ 1.2 s`` once loaded, in the order they started."""
    return " · ".join(f"{GRAPH_NAMES.get(g, g)} {'…' if s is None else f'✓ {s:.1f} s'}" for g, s in times.items())
