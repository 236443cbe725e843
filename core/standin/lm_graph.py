"""The stand-in ``language_model`` graph.

A real pre-norm transformer (random weights) so that per-step cost, KV growth and IO are those of the real model,
plus a small exact "control" path that makes the output behave like speech generation:

Layer 0's value cache carries four exact channels in head 0: ``[1, conditioning marker, decode-step marker, content
code]`` per position. Summing them over the cache positions the attention mask keeps (``present.0.value``) tells the
graph how many prompt text rows, conditioning rows and generated tokens it has seen, and an integer checksum of
their content. From these it picks a preferred token (a function of the checksum and the step, so a stale or wrong
past changes it) and says STOP once the generated count reaches a target that grows with the text length. Everything
in that path is exact integer arithmetic, so greedy tokens do not depend on float rounding (full prefill and prefix-
cached prefill agree).
"""

from __future__ import annotations

import math

import numpy as np

from core.engine import START_SPEECH as START_TOKEN
from core.engine import STOP_SPEECH as STOP_TOKEN
from core.standin.graph_builder import BOOL, F16, F32, I64, GraphBuilder
from core.standin.spec import StandinSpec

PREFERRED_BONUS = 8.0
STOP_LOGIT = 30.0
CONTROL_CHANNELS = 4
# Repeating mode: one "attractor" token per sentence beats the step's preferred token unless it is penalised.
ATTRACTOR_BONUS = 8.0
REPEAT_PREFERRED_BONUS = 7.0  # below the attractor, above the attractor divided by a penalty of 1.2 (6.67)
REPEAT_NOISE_SCALE = 0.01  # the random head's logits shrink so that only the bonuses decide


def linear(b: GraphBuilder, x: str, k: int, n: int, name: str, precision: str, rng: np.random.Generator) -> str:
    """``x @ W`` with W of shape [k, n]: fp32 MatMul, or int4 ``com.microsoft.MatMulNBits`` for q4."""
    if precision == "q4":
        block = 32 if k >= 32 else 16
        blocks = -(-k // block)
        packed = rng.integers(0, 256, size=(n, blocks, block // 2), dtype=np.uint8)
        # Nibbles are uniform on 0..15 around the default zero point 8 (std ~4.6): this scale gives std 1/sqrt(k).
        scales = np.full(n * blocks, 1.0 / (4.6 * math.sqrt(k)), dtype=np.float32)
        return b.op(
            "MatMulNBits",
            x,
            b.init(f"{name}.qweight", packed),
            b.init(f"{name}.scales", scales),
            domain="com.microsoft",
            K=k,
            N=n,
            bits=4,
            block_size=block,
        )
    w = rng.standard_normal((k, n), dtype=np.float32) / np.float32(math.sqrt(k))
    return b.matmul(x, b.init(f"{name}.weight", w))


def layer_norm(b: GraphBuilder, x: str, hidden: int, name: str) -> str:
    scale = b.init(f"{name}.weight", np.ones(hidden, np.float32))
    bias = b.init(f"{name}.bias", np.zeros(hidden, np.float32))
    return b.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=1e-5)


def build_language_model(spec: StandinSpec, precision: str, seed: int) -> GraphBuilder:
    """``precision``: ``fp32``; ``q4`` (int4 MatMulNBits weights); ``fp16`` (float16 KV inputs and outputs, as the
    fp16/q4f16 exports keep it, with float32 embeddings and logits)."""
    rng = np.random.default_rng(seed)
    H, heads, hd, L = spec.hidden, spec.heads, spec.head_dim, spec.layers
    if hd < CONTROL_CHANNELS:
        raise ValueError(f"head_dim must be at least {CONTROL_CHANNELS} for the stand-in's control channels")
    b = GraphBuilder("language_model")
    batch, seq, past, total = "batch_size", "sequence_length", "past_sequence_length", "total_sequence_length"

    embeds = b.input("inputs_embeds", F32, [batch, seq, H])
    mask = b.input("attention_mask", I64, [batch, total])
    pos_ids = b.input("position_ids", I64, [batch, seq]) if spec.has_position_ids else None
    kv_type = F16 if precision == "fp16" else F32
    pasts = []
    for i in range(L):
        pasts.append(
            (
                b.input(f"past_key_values.{i}.key", kv_type, [batch, heads, past, hd]),
                b.input(f"past_key_values.{i}.value", kv_type, [batch, heads, past, hd]),
            )
        )
    if kv_type == F16:  # attention runs in float32 on the cache read back from float16
        pasts = [(b.op("Cast", k, to=F32), b.op("Cast", v, to=F32)) for k, v in pasts]

    # Lengths and the attention bias (causal within this call, and the caller's mask), shared by every layer.
    s_len = b.dim(embeds, 1)
    past_len = b.dim(pasts[0][0], 2)
    t_len = b.add(past_len, s_len)
    zero_axis = b.const([0], np.int64)
    rows = b.op("Range", b.op("Squeeze", past_len, zero_axis), b.op("Squeeze", t_len, zero_axis), b.const(1, np.int64))
    cols = b.op("Range", b.const(0, np.int64), b.op("Squeeze", t_len, zero_axis), b.const(1, np.int64))
    causal = b.op("LessOrEqual", b.op("Unsqueeze", cols, zero_axis), b.op("Unsqueeze", rows, b.const([1], np.int64)))
    mask_ok = b.op("Unsqueeze", b.op("Cast", mask, to=BOOL), b.const([1, 2], np.int64))
    bias = b.op("Where", b.op("And", causal, mask_ok), b.const(0.0), b.const(-1e9))

    # Control channels of this call's rows: [1, conditioning marker, decode-step marker, content code].
    first = b.op("Slice", embeds, b.const([0], np.int64), b.const([1], np.int64), b.const([2], np.int64))
    second = b.op("Slice", embeds, b.const([1], np.int64), b.const([2], np.int64), b.const([2], np.int64))
    ones = b.add(b.mul(first, b.const(0.0)), b.const(1.0))
    is_step = b.op("Cast", b.op("Equal", s_len, b.const([1], np.int64)), to=F32)
    control = b.op("Concat", ones, first, b.mul(ones, is_step), second, axis=2)
    control = b.op(
        "Pad",
        b.op("Unsqueeze", control, b.const([1], np.int64)),
        b.const([0, 0, 0, 0, 0, heads - 1, 0, hd - CONTROL_CHANNELS], np.int64),
    )
    keep_values = np.ones((1, heads, 1, hd), np.float32)
    keep_values[0, 0, 0, :CONTROL_CHANNELS] = 0.0
    keep = b.init("control.keep", keep_values)

    x = embeds
    if pos_ids is not None:
        wpe = rng.standard_normal((spec.max_positions, H), dtype=np.float32) * np.float32(0.02)
        x = b.add(x, b.op("Gather", b.init("wpe.weight", wpe), pos_ids))

    split_heads = b.const([0, 0, heads, hd], np.int64)
    merge_heads = b.const([0, 0, H], np.int64)
    scale = b.const(1.0 / math.sqrt(hd))
    presents, outputs = [], []
    for i in range(L):
        h = layer_norm(b, x, H, f"layers.{i}.ln_1")
        qkv = linear(b, h, H, 3 * H, f"layers.{i}.attn.qkv", precision, rng)
        q, k, v = b.op("Split", qkv, b.const([H, H, H], np.int64), axis=2, n_out=3)
        q, k, v = (b.op("Transpose", b.op("Reshape", t, split_heads), perm=[0, 2, 1, 3]) for t in (q, k, v))
        if i == 0:
            v = b.add(b.mul(v, keep), control)
        if kv_type == F16:
            present_k, present_v = b.op("Concat", pasts[i][0], k, axis=2), b.op("Concat", pasts[i][1], v, axis=2)
            outputs.append(
                (
                    b.op("Cast", present_k, to=F16, out=f"present.{i}.key"),
                    b.op("Cast", present_v, to=F16, out=f"present.{i}.value"),
                )
            )
        else:
            present_k = b.op("Concat", pasts[i][0], k, axis=2, out=f"present.{i}.key")
            present_v = b.op("Concat", pasts[i][1], v, axis=2, out=f"present.{i}.value")
            outputs.append((present_k, present_v))
        presents.append((present_k, present_v))
        scores = b.mul(b.matmul(q, b.op("Transpose", present_k, perm=[0, 1, 3, 2])), scale)
        probs = b.op("Softmax", b.add(scores, bias), axis=-1)
        context = b.op("Reshape", b.op("Transpose", b.matmul(probs, present_v), perm=[0, 2, 1, 3]), merge_heads)
        x = b.add(x, linear(b, context, H, H, f"layers.{i}.attn.out", precision, rng))
        h = layer_norm(b, x, H, f"layers.{i}.ln_2")
        if spec.variant == "turbo":
            up = linear(b, h, H, spec.mlp_dim, f"layers.{i}.mlp.fc", precision, rng)
            act = b.mul(up, b.op("Sigmoid", b.mul(up, b.const(1.702))))  # GPT-2's GELU, sigmoid form
        else:
            gate = linear(b, h, H, spec.mlp_dim, f"layers.{i}.mlp.gate", precision, rng)
            up = linear(b, h, H, spec.mlp_dim, f"layers.{i}.mlp.up", precision, rng)
            act = b.mul(b.mul(gate, b.op("Sigmoid", gate)), up)
        x = b.add(x, linear(b, act, spec.mlp_dim, H, f"layers.{i}.mlp.down", precision, rng))

    x = layer_norm(b, x, H, "final_norm")
    logits = linear(b, x, H, spec.logits_vocab, "speech_head", precision, rng)
    if spec.repeating:
        logits = b.mul(logits, b.const(REPEAT_NOISE_SCALE))
    logits = b.add(logits, _control_logits(b, spec, presents[0][1], mask))

    b.output(logits, "logits", F32, [batch, seq, spec.logits_vocab])
    for pk, pv in outputs:
        b.output(pk, pk, kv_type, [batch, heads, total, hd])
        b.output(pv, pv, kv_type, [batch, heads, total, hd])
    return b


def _control_logits(b: GraphBuilder, spec: StandinSpec, present_v0: str, mask: str) -> str:
    """[B, 1, V] logits from the exact control channels summed over the cache positions the mask keeps (padding
    between a voice prefix and a shorter row's text is masked out, as attention ignores it)."""
    head0 = b.op(
        "Slice",
        present_v0,
        b.const([0, 0], np.int64),
        b.const([1, CONTROL_CHANNELS], np.int64),
        b.const([1, 3], np.int64),
    )
    head0 = b.mul(head0, b.op("Unsqueeze", b.op("Cast", mask, to=F32), b.const([1, 3], np.int64)))
    totals = b.op("Cast", b.op("ReduceSum", head0, b.const([1, 2], np.int64), keepdims=0), to=I64)  # [B, 4]
    n_all, n_cond, n_steps, code = b.op("Split", totals, b.const([1, 1, 1, 1], np.int64), axis=1, n_out=4)
    n_text = b.op("Sub", b.op("Sub", n_all, n_cond), n_steps)
    target = b.add(
        b.mul(n_text, b.const(spec.speech_tokens_per_text_token, np.int64)),
        b.op("Mod", code, b.const(7, np.int64)),
    )
    stop_now = b.op("GreaterOrEqual", n_steps, target)
    # In repeating mode the content code is left out so that both CFG rows prefer the same token (guidance then
    # leaves the bonuses as they are, and the penalty alone decides between attractor and preferred token).
    content = b.const(0, np.int64) if spec.repeating else b.mul(code, b.const(37, np.int64))
    mix = b.add(
        b.add(content, b.mul(n_steps, b.const(101, np.int64))),
        b.add(b.mul(n_text, b.const(13, np.int64)), b.const(17, np.int64)),
    )
    preferred = b.op("Mod", mix, b.const(6561, np.int64))  # always an audio code, never START/STOP
    depth = b.const(spec.logits_vocab, np.int64)
    if spec.repeating:
        # The attractor depends only on the prompt (text and conditioning rows), so it is the same every step:
        # greedy decoding picks it again and again unless the penalty covers every token generated so far.
        attractor = b.op(
            "Mod",
            b.add(
                b.add(b.mul(n_text, b.const(13, np.int64)), b.mul(n_cond, b.const(7, np.int64))), b.const(11, np.int64)
            ),
            b.const(6561, np.int64),
        )
        bonus = b.add(
            b.op("OneHot", preferred, depth, b.const([0.0, REPEAT_PREFERRED_BONUS]), axis=-1),
            b.op("OneHot", attractor, depth, b.const([0.0, ATTRACTOR_BONUS]), axis=-1),
        )
    else:
        bonus = b.op("OneHot", preferred, depth, b.const([0.0, PREFERRED_BONUS]), axis=-1)  # [B, 1, V]
    stop_logit = b.op("Where", stop_now, b.const(STOP_LOGIT), b.const(-STOP_LOGIT))  # [B, 1]
    stop_row = np.zeros(spec.logits_vocab, np.float32)
    stop_row[STOP_TOKEN] = 1.0
    stop_part = b.mul(b.op("Unsqueeze", stop_logit, b.const([2], np.int64)), b.init("control.stop_row", stop_row))
    fixed = np.zeros(spec.logits_vocab, np.float32)
    fixed[START_TOKEN] = -STOP_LOGIT
    return b.add(b.add(bonus, stop_part), b.init("control.fixed", fixed))
