"""Other tensor names a stand-in can be written with, as exports in the wild name them (contract §6).

``contract``: the contract's names. ``cond-emb``: the names third-party runtimes and example code use for the
speech encoder's outputs and the decoder's speaker inputs (``cond_emb``, ``prompt_token``, ``ref_x_vector``,
``prompt_feat``) and ``past.N.key``/``present.N.key`` for the KV cache. ``positional``: names that match nothing
known (``input.0``, ``output.1`` …), so only the order, dtypes and ranks say which tensor is which.
The weights and the graph are the same whatever the names, so the tokens must be too.
"""

from __future__ import annotations

from core.standin.graph_builder import GraphBuilder

NAMINGS = ("contract", "cond-emb", "positional")

_COND_EMB = {
    "speech_encoder": {
        "audio_features": "cond_emb",
        "audio_tokens": "prompt_token",
        "speaker_embeddings": "ref_x_vector",
        "speaker_features": "prompt_feat",
    },
    "conditional_decoder": {"speaker_embeddings": "ref_x_vector", "speaker_features": "prompt_feat"},
}


def renaming(naming: str, builder: GraphBuilder) -> dict[str, str]:
    """Old name → new name for ``builder``'s graph inputs and outputs under ``naming``."""
    if naming not in NAMINGS:
        raise ValueError(f"unknown naming {naming!r}; choose one of {', '.join(NAMINGS)}")
    inputs = [v.name for v in builder.inputs]
    outputs = [v.name for v in builder.outputs]
    if naming == "positional":
        return {**{n: f"input.{i}" for i, n in enumerate(inputs)}, **{n: f"output.{i}" for i, n in enumerate(outputs)}}
    if naming == "cond-emb":
        mapping = dict(_COND_EMB.get(builder.name, {}))
        for name in inputs + outputs:
            if name.startswith("past_key_values."):
                mapping[name] = name.replace("past_key_values.", "past.", 1)
        return mapping
    return {}
