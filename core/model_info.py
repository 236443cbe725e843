"""Everything the runtime needs to know about a bundle, read once from the sessions' signatures.

This is the only module that spells tensor names. The variant, KV names, layer count, heads, head_dim, hidden size
and every dtype come from ``get_inputs()``/``get_outputs()``; a graph that does not fit the contract raises
:class:`ModelSignatureError` naming the file and what is wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ModelSignatureError

_ORT_DTYPES = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
}
_PAST = re.compile(r"^past_key_values\.(\d+)\.(key|value)$")
_PRESENT = re.compile(r"^present\.(\d+)\.(key|value)$")
ENCODER_OUTPUTS = ("audio_features", "audio_tokens", "speaker_embeddings", "speaker_features")
DECODER_INPUTS = ("speech_tokens", "speaker_embeddings", "speaker_features")


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: type
    shape: tuple


@dataclass(frozen=True)
class ModelInfo:
    variant: str
    """``turbo``, ``original`` or ``multilingual``."""
    layers: int
    kv_heads: int
    head_dim: int
    hidden: int
    logits_vocab: int | None
    kv_dtype: type
    embeds_dtype: type
    """What ``language_model`` declares for ``inputs_embeds``."""
    embed_output_dtype: type
    logits_dtype: type
    past_names: tuple[str, ...]
    """``past_key_values.*`` inputs in the session's order."""
    present_names: tuple[str, ...]
    """``present.*`` outputs paired with ``past_names`` by name (``present.N.x`` → ``past_key_values.N.x``)."""
    lm_has_position_ids: bool
    embed_inputs: tuple[str, ...]
    encoder_output_order: tuple[str, ...]
    audio_dtype: type
    decoder_inputs: dict[str, TensorSpec]

    @property
    def supports_cfg(self) -> bool:
        return self.variant != "turbo"

    @property
    def kv_bytes_per_position(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * np.dtype(self.kv_dtype).itemsize


def _specs(args) -> dict[str, TensorSpec]:
    out = {}
    for a in args:
        if a.type not in _ORT_DTYPES:
            continue
        out[a.name] = TensorSpec(a.name, _ORT_DTYPES[a.type], tuple(a.shape))
    return out


def _static(dim) -> int | None:
    return dim if isinstance(dim, int) and dim > 0 else None


def read_model_info(sessions: dict, paths: dict[str, Path], is_multilingual: bool) -> ModelInfo:
    """Validate the four sessions against the contract and derive :class:`ModelInfo`."""
    enc, emb, lm, dec = (
        sessions[n] for n in ("speech_encoder", "embed_tokens", "language_model", "conditional_decoder")
    )

    def fail(graph: str, what: str) -> ModelSignatureError:
        return ModelSignatureError(
            f"{paths[graph].name} does not match the Chatterbox ONNX interface: {what}. "
            "Use the graphs of one Chatterbox export (Turbo, Original or Multilingual) together, unmodified."
        )

    enc_in, enc_out = _specs(enc.get_inputs()), [o.name for o in enc.get_outputs()]
    if "audio_values" not in enc_in:
        raise fail("speech_encoder", "no 'audio_values' input")
    missing = [n for n in ENCODER_OUTPUTS if n not in enc_out]
    if missing:
        raise fail("speech_encoder", f"missing output(s) {', '.join(missing)}")

    emb_in, emb_out = _specs(emb.get_inputs()), _specs(emb.get_outputs())
    if "input_ids" not in emb_in or "inputs_embeds" not in emb_out:
        raise fail("embed_tokens", "expected input 'input_ids' and output 'inputs_embeds'")
    extra = set(emb_in) - {"input_ids", "position_ids", "exaggeration"}
    if extra:
        raise fail("embed_tokens", f"unexpected input(s) {', '.join(sorted(extra))}")

    lm_inputs = lm.get_inputs()
    lm_in, lm_out_list = _specs(lm_inputs), lm.get_outputs()
    for required in ("inputs_embeds", "attention_mask"):
        if required not in lm_in:
            raise fail("language_model", f"no '{required}' input")
    if not lm_out_list or lm_out_list[0].name != "logits":
        raise fail("language_model", "the first output must be 'logits'")
    past_names = tuple(a.name for a in lm_inputs if _PAST.match(a.name))
    if not past_names:
        raise fail("language_model", "no past_key_values.* inputs (a KV-cache export is required)")
    layers = 1 + max(int(_PAST.match(n).group(1)) for n in past_names)
    expected = {f"past_key_values.{i}.{kv}" for i in range(layers) for kv in ("key", "value")}
    if set(past_names) != expected:
        raise fail("language_model", f"past_key_values inputs are not complete for {layers} layers")
    out_names = {o.name for o in lm_out_list}
    present_names = tuple(n.replace("past_key_values.", "present.", 1) for n in past_names)
    missing = [p for p in present_names if p not in out_names]
    if missing:
        raise fail("language_model", f"no output {missing[0]} for {past_names[present_names.index(missing[0])]}")
    if any(_PRESENT.match(n) is None for n in present_names):
        raise fail("language_model", "present.* outputs are not named present.N.key/value")

    kv = lm_in[past_names[0]]
    if len(kv.shape) != 4:
        raise fail("language_model", f"{kv.name} must have rank 4 [batch, heads, past, head_dim]")
    heads, head_dim = _static(kv.shape[1]), _static(kv.shape[3])
    if heads is None or head_dim is None:
        raise fail("language_model", f"{kv.name} must declare fixed heads and head_dim")
    embeds = lm_in["inputs_embeds"]
    hidden = _static(embeds.shape[-1]) or _static(emb_out["inputs_embeds"].shape[-1])
    if hidden is None:
        raise fail("language_model", "inputs_embeds must declare a fixed hidden size")
    emb_hidden = _static(emb_out["inputs_embeds"].shape[-1])
    if emb_hidden is not None and emb_hidden != hidden:
        raise fail("embed_tokens", f"its hidden size {emb_hidden} differs from the language model's {hidden}")

    lm_pos = "position_ids" in lm_in
    llama_embed = {"position_ids", "exaggeration"} <= set(emb_in)
    if lm_pos and set(emb_in) == {"input_ids"}:
        variant = "turbo"
    elif not lm_pos and llama_embed:
        variant = "multilingual" if is_multilingual else "original"
    else:
        raise ModelSignatureError(
            f"{paths['embed_tokens'].name} and {paths['language_model'].name} come from different Chatterbox "
            "variants (Turbo's language model takes position_ids and its embed_tokens only input_ids; the "
            "original/multilingual ones are the other way round). Use all graphs from one export."
        )

    dec_in = _specs(dec.get_inputs())
    missing = [n for n in DECODER_INPUTS if n not in dec_in]
    if missing:
        raise fail("conditional_decoder", f"missing input(s) {', '.join(missing)}")
    if "waveform" not in [o.name for o in dec.get_outputs()]:
        raise fail("conditional_decoder", "no 'waveform' output")

    logits = _specs(lm_out_list[:1])["logits"]
    return ModelInfo(
        variant=variant,
        layers=layers,
        kv_heads=heads,
        head_dim=head_dim,
        hidden=hidden,
        logits_vocab=_static(logits.shape[-1]),
        kv_dtype=kv.dtype,
        embeds_dtype=embeds.dtype,
        embed_output_dtype=emb_out["inputs_embeds"].dtype,
        logits_dtype=logits.dtype,
        past_names=past_names,
        present_names=present_names,
        lm_has_position_ids=lm_pos,
        embed_inputs=tuple(emb_in),
        encoder_output_order=tuple(enc_out),
        audio_dtype=enc_in["audio_values"].dtype,
        decoder_inputs=dec_in,
    )
