"""Everything the runtime needs to know about a bundle, read once from the sessions' signatures.

This is the only module that spells tensor names. Exports in the wild name the same tensors differently
(``cond_emb`` for ``audio_features``, ``prompt_token`` for ``audio_tokens``, …; contract §6), so every tensor the
runtime uses has a *role* (the contract's name) and :data:`ALIASES` lists the names each role is known under. A role
no name matches is taken by position, as the model cards unpack the outputs, and checked by dtype and rank. What was
used is kept per graph in a :class:`GraphNames` (``info.lm.logits`` is the language model's actual logits name)
and reported by ``python -m core info``. A graph that fits neither names nor order raises
:class:`ModelSignatureError` naming the file and what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.errors import ModelSignatureError
from core.engine.model.seeded_noise import NOISE_SEED

_ORT_DTYPES = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
}
_FLOATS = (np.float32, np.float16)
_INTS = (np.int64, np.int32)

# Known names per graph and role, the contract's first. Matching ignores case.
ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "speech_encoder": {
        "audio_values": ("audio_values", "audio", "input_values", "wav", "waveform"),
        "audio_features": ("audio_features", "cond_emb", "cond_embeds", "conditioning"),
        "audio_tokens": ("audio_tokens", "prompt_token", "prompt_tokens", "speech_prompt_tokens"),
        "speaker_embeddings": ("speaker_embeddings", "ref_x_vector", "x_vector", "speaker_embedding", "embedding"),
        "speaker_features": ("speaker_features", "prompt_feat", "prompt_feats", "speaker_feats"),
    },
    "embed_tokens": {
        "input_ids": ("input_ids", "ids", "tokens"),
        "position_ids": ("position_ids", "positions"),
        "exaggeration": ("exaggeration", "emotion_adv", "emotion"),
        "inputs_embeds": ("inputs_embeds", "input_embeds", "embeds", "embeddings"),
    },
    "language_model": {
        "inputs_embeds": ("inputs_embeds", "input_embeds", "embeds"),
        "attention_mask": ("attention_mask", "mask"),
        "position_ids": ("position_ids", "positions"),
        "logits": ("logits", "lm_logits"),
    },
    "conditional_decoder": {
        "speech_tokens": ("speech_tokens", "speech_token", "tokens"),
        "speaker_embeddings": ("speaker_embeddings", "ref_x_vector", "x_vector", "speaker_embedding", "embedding"),
        "speaker_features": ("speaker_features", "prompt_feat", "prompt_feats", "speaker_feats"),
        "waveform": ("waveform", "wav", "audio", "output_wav", "audio_values"),
    },
}
# KV names: past_key_values.N.key (contract), past.N.key, past_key_values_N_key … and the matching present names.
_PAST = re.compile(r"^past(?:_key_values)?[._](\d+)[._](key|value)$", re.IGNORECASE)
_PRESENT = re.compile(r"^present(?:_key_values)?[._](\d+)[._](key|value)$", re.IGNORECASE)

Fail = Callable[[str], ModelSignatureError]
"""Builds the error for a graph that does not fit, from what does not fit."""


@dataclass(frozen=True)
class TensorSpec:
    name: str
    dtype: type
    shape: tuple[int | str | None, ...]


@dataclass(frozen=True)
class _Role:
    """What a tensor in a role must look like: dtype family, rank(s) and, where fixed, the last dimension."""

    name: str
    dtypes: tuple[type, ...]
    ranks: tuple[int, ...]
    last: int | None = None
    optional: bool = False

    def fits(self, spec: TensorSpec) -> bool:
        last = _static(spec.shape[-1]) if spec.shape else None
        return (
            spec.dtype in self.dtypes
            and len(spec.shape) in self.ranks
            and (self.last is None or last is None or last == self.last)
        )

    def describe(self) -> str:
        kind = "float" if self.dtypes is _FLOATS else "integer"
        ranks = "/".join(map(str, self.ranks))
        return f"{kind} rank {ranks}" + (f" ending in {self.last}" if self.last else "")


_ENCODER_IN = (_Role("audio_values", _FLOATS, (2,)),)
_ENCODER_OUT = (
    _Role("audio_features", _FLOATS, (3,)),
    _Role("audio_tokens", _INTS, (2,)),
    _Role("speaker_embeddings", _FLOATS, (2,), 192),
    _Role("speaker_features", _FLOATS, (3,), 80),
)
_EMBED_IN = (
    _Role("input_ids", _INTS, (2,)),
    _Role("position_ids", _INTS, (2,), optional=True),
    _Role("exaggeration", _FLOATS, (1, 2), optional=True),
)
_EMBED_OUT = (_Role("inputs_embeds", _FLOATS, (3,)),)
_LM_IN = (
    _Role("inputs_embeds", _FLOATS, (3,)),
    _Role("attention_mask", _INTS, (2,)),
    _Role("position_ids", _INTS, (2,), optional=True),
)
_LM_OUT = (_Role("logits", _FLOATS, (3,)),)
_DECODER_IN = (
    _Role("speech_tokens", _INTS, (2,)),
    _Role("speaker_embeddings", _FLOATS, (2,), 192),
    _Role("speaker_features", _FLOATS, (3,), 80),
)
_DECODER_OUT = (_Role("waveform", _FLOATS, (1, 2, 3)),)


@dataclass(frozen=True)
class GraphNames:
    """The actual tensor names of one graph by role, and how they were found."""

    graph: str
    roles: dict[str, str]
    """Role (the contract's name) → the name in this graph."""
    matched_by: str
    """``names`` (the contract's), ``aliases`` (known other names) or ``order`` (position, checked by dtype/rank)."""
    specs: dict[str, TensorSpec]
    """Role → the tensor's declared dtype and shape."""

    def __getattr__(self, role: str) -> str:
        """``names.logits``: the actual name of a role (AttributeError when this graph has no such tensor)."""
        try:
            name: str = self.__dict__["roles"][role]
            return name
        except KeyError:
            raise AttributeError(f"{self.__dict__.get('graph', 'graph')} has no {role} tensor") from None

    def __contains__(self, role: str) -> bool:
        return role in self.roles

    def report(self) -> dict[str, Any]:
        return {"matched_by": self.matched_by, "tensors": dict(self.roles)}


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
    """The language model's past KV inputs in the session's order."""
    present_names: tuple[str, ...]
    """The present KV outputs paired with ``past_names`` (by layer and key/value, or by order)."""
    encoder: GraphNames
    embed: GraphNames
    lm: GraphNames
    decoder: GraphNames

    @property
    def lm_has_position_ids(self) -> bool:
        return "position_ids" in self.lm

    @property
    def supports_cfg(self) -> bool:
        """The variant can do classifier-free guidance (it still needs the text table: see ``Capabilities``)."""
        return self.variant != "turbo"

    @property
    def kv_bytes_per_position(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * np.dtype(self.kv_dtype).itemsize

    def tensor_names(self) -> dict[str, dict[str, Any]]:
        """Per graph: how names were matched and the mapping role → name (KV listed by count)."""
        report = {g.graph: g.report() for g in (self.encoder, self.embed, self.lm, self.decoder)}
        report["language_model"]["kv"] = {
            "past": [self.past_names[0], self.past_names[-1]],
            "present": [self.present_names[0], self.present_names[-1]],
            "count": len(self.past_names),
        }
        return report


@dataclass(frozen=True)
class _Arg:
    """What ``session.get_inputs()`` describes, read from the graph file instead."""

    name: str
    type: str
    shape: list[int | str | None]


_ONNX_TYPES = {1: "tensor(float)", 10: "tensor(float16)", 7: "tensor(int64)", 6: "tensor(int32)"}


def graph_signature(path: Path) -> tuple[list[_Arg], list[_Arg]]:
    """A graph's inputs and outputs from its file (weights not read), for a session that is still loading."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    init = {t.name for t in model.graph.initializer}

    def args(values: Any) -> list[_Arg]:
        out = []
        for v in values:
            if v.name in init:
                continue
            t = v.type.tensor_type
            dims = [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in t.shape.dim]
            out.append(_Arg(v.name, _ONNX_TYPES.get(t.elem_type, f"tensor({t.elem_type})"), dims))
        return out

    return args(model.graph.input), args(model.graph.output)


def _specs(args: list[Any]) -> list[TensorSpec]:
    return [TensorSpec(a.name, _ORT_DTYPES[a.type], tuple(a.shape)) for a in args if a.type in _ORT_DTYPES]


def _static(dim: object) -> int | None:
    return dim if isinstance(dim, int) and dim > 0 else None


def _match(graph: str, side: str, roles: tuple[_Role, ...], tensors: list[TensorSpec], fail: Fail) -> GraphNames:
    """Find each role by its known names, then the rest by position among the tensors no name claimed."""
    by_name = {t.name.lower(): t for t in tensors}
    found: dict[str, TensorSpec] = {}
    how = "names"
    for role in roles:
        for alias in ALIASES[graph][role.name]:
            spec = by_name.get(alias.lower())
            if spec is not None and spec not in found.values():
                if not role.fits(spec):
                    raise fail(f"{side} '{spec.name}' ({role.name}) must be {role.describe()}, not {_show(spec)}")
                found[role.name] = spec
                if alias != role.name:
                    how = "aliases"
                break
    rest = [t for t in tensors if t not in found.values()]
    missing = [r for r in roles if r.name not in found]
    if rest and missing:
        how = "order"
        for role in missing:
            if not rest:
                break
            if not role.fits(rest[0]):
                if role.optional:
                    continue
                raise fail(
                    f"no {side} is named {role.name} (or {', '.join(ALIASES[graph][role.name][1:])}), and "
                    f"{side} '{rest[0].name}' in its place is {_show(rest[0])}, not {role.describe()}"
                )
            found[role.name] = rest.pop(0)
    absent = [r.name for r in roles if r.name not in found and not r.optional]
    if absent:
        raise fail(f"missing {side}(s) {', '.join(absent)}")
    if side == "input" and rest:
        raise fail(f"unexpected input(s) {', '.join(t.name for t in rest)}")
    return GraphNames(graph, {k: v.name for k, v in found.items()}, how, found)


def _show(spec: TensorSpec) -> str:
    return f"{np.dtype(spec.dtype).name} {list(spec.shape)}"


def _layer_kv(pattern: re.Pattern[str], name: str) -> tuple[str, str] | None:
    """(layer, "key"/"value") of a past or present tensor's name, ``None`` for another name."""
    match = pattern.match(name)
    return (match.group(1), match.group(2)) if match else None


def _kv_names(
    lm_inputs: list[TensorSpec], lm_outputs: list[TensorSpec], fail: Fail
) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Past inputs and their present outputs: by layer and key/value where named so, else by order."""
    named = [t for t in lm_inputs if _PAST.match(t.name)]
    if named:
        keys = {kv for t in named if (kv := _layer_kv(_PAST, t.name))}
        layers = 1 + max(int(i) for i, _ in keys)
        if keys != {(str(i), kv) for i in range(layers) for kv in ("key", "value")}:
            raise fail(f"past key/value inputs are not complete for {layers} layers")
        past = tuple(t.name for t in named)
        presents = {_layer_kv(_PRESENT, o.name): o.name for o in lm_outputs if _PRESENT.match(o.name)}
        if presents:
            pairs = [presents.get(_layer_kv(_PAST, n)) for n in past]
            if None in pairs:
                missing = past[pairs.index(None)]
                raise fail(f"no present output for {missing}")
            return past, tuple(p for p in pairs if p is not None), "names"
    else:
        past = tuple(t.name for t in lm_inputs if len(t.shape) == 4)
        if not past:
            raise fail("no past key/value inputs (a KV-cache export is required)")
        if len(past) % 2:
            raise fail(f"{len(past)} rank-4 past inputs: key/value inputs must come in pairs")
    outputs = [o.name for o in lm_outputs[1:] if len(o.shape) == 4]
    if len(outputs) != len(past):
        raise fail(f"{len(past)} past inputs but {len(outputs)} present outputs after the logits")
    return past, tuple(outputs), "order"


def read_model_info(sessions: dict[str, Any], paths: dict[str, Path], is_multilingual: bool) -> ModelInfo:
    """Validate the four sessions against the contract and derive :class:`ModelInfo`."""

    def failer(graph: str) -> Fail:
        def fail(what: str) -> ModelSignatureError:
            return ModelSignatureError("bundle.signature_mismatch", file=paths[graph].name, problem=what)

        return fail

    def io(graph: str) -> tuple[list[TensorSpec], list[TensorSpec]]:
        session = sessions[graph]
        return _specs(session.get_inputs()), _specs(session.get_outputs())

    enc_in, enc_out = io("speech_encoder")
    f = failer("speech_encoder")
    encoder = _merge(
        _match("speech_encoder", "input", _ENCODER_IN, enc_in, f),
        _match("speech_encoder", "output", _ENCODER_OUT, enc_out, f),
    )

    emb_in, emb_out = io("embed_tokens")
    f = failer("embed_tokens")
    embed = _merge(
        _match("embed_tokens", "input", _EMBED_IN, emb_in, f), _match("embed_tokens", "output", _EMBED_OUT, emb_out, f)
    )

    lm_in, lm_out = io("language_model")
    f = failer("language_model")
    past_names, present_names, kv_how = _kv_names(lm_in, lm_out, f)
    lm_inputs = _match("language_model", "input", _LM_IN, [t for t in lm_in if t.name not in past_names], f)
    logits_first = lm_out[:1] if lm_out and lm_out[0].name not in present_names else []
    lm_outputs = _match("language_model", "output", _LM_OUT, logits_first, f)
    if lm_outputs.logits != lm_out[0].name:
        raise f("the first output must be the logits")
    lm = _merge(lm_inputs, lm_outputs, kv_how)

    specs = {t.name: t for t in lm_in}
    kv = specs[past_names[0]]
    if len(kv.shape) != 4:
        raise f(f"{kv.name} must have rank 4 [batch, heads, past, head_dim]")
    heads, head_dim = _static(kv.shape[1]), _static(kv.shape[3])
    if heads is None or head_dim is None:
        raise f(f"{kv.name} must declare fixed heads and head_dim")
    embeds, embed_out = lm.specs["inputs_embeds"], embed.specs["inputs_embeds"]
    hidden = _static(embeds.shape[-1]) or _static(embed_out.shape[-1])
    if hidden is None:
        raise f("inputs_embeds must declare a fixed hidden size")
    emb_hidden = _static(embed_out.shape[-1])
    if emb_hidden is not None and emb_hidden != hidden:
        raise failer("embed_tokens")(f"its hidden size {emb_hidden} differs from the language model's {hidden}")
    features_hidden = _static(encoder.specs["audio_features"].shape[-1])
    if features_hidden is not None and features_hidden != hidden:
        raise failer("speech_encoder")(
            f"its {encoder.audio_features} rows have width {features_hidden}, the language model takes {hidden}"
        )

    llama_embed = "position_ids" in embed and "exaggeration" in embed
    if "position_ids" in lm and "position_ids" not in embed and "exaggeration" not in embed:
        variant = "turbo"
    elif "position_ids" not in lm and llama_embed:
        variant = "multilingual" if is_multilingual else "original"
    else:
        raise ModelSignatureError(
            "bundle.variants_mixed", embed_file=paths["embed_tokens"].name, lm_file=paths["language_model"].name
        )

    dec_in, dec_out = io("conditional_decoder")
    dec_in = [t for t in dec_in if t.name != NOISE_SEED]  # added at load (seeded noise), fed by the speech decoder
    f = failer("conditional_decoder")
    decoder = _merge(
        _match("conditional_decoder", "input", _DECODER_IN, dec_in, f),
        _match("conditional_decoder", "output", _DECODER_OUT, dec_out[:1], f),
    )

    logits = lm.specs["logits"]
    return ModelInfo(
        variant=variant,
        layers=len(past_names) // 2,
        kv_heads=heads,
        head_dim=head_dim,
        hidden=hidden,
        logits_vocab=_static(logits.shape[-1]),
        kv_dtype=kv.dtype,
        embeds_dtype=embeds.dtype,
        embed_output_dtype=embed_out.dtype,
        logits_dtype=logits.dtype,
        past_names=past_names,
        present_names=present_names,
        encoder=encoder,
        embed=embed,
        lm=lm,
        decoder=decoder,
    )


_RANK = {"names": 0, "aliases": 1, "order": 2}


def _merge(inputs: GraphNames, outputs: GraphNames, *more: str) -> GraphNames:
    """One graph's input and output mapping together; ``matched_by`` is the loosest of the parts."""
    how = max([inputs.matched_by, outputs.matched_by, *more], key=_RANK.__getitem__)
    return GraphNames(inputs.graph, {**inputs.roles, **outputs.roles}, how, {**inputs.specs, **outputs.specs})
