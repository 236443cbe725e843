"""Several sentences through the language model at once: the speech tokens of a project's next segments.

When a project renders and nobody listens, the language model need not finish one sentence before the next starts.
On a CPU a step of four rows costs about twice a step of one (faithful Turbo q4: 28.6 vs 15.4 ms), so generating
the tokens of four sentences together halves the language model's share of a book; the decoder then turns each
sentence into audio in one call, as before.

Each row is one sentence with its own sampler (seeded as if it were spoken alone: the request's seed + its piece
number), cap and runaway guard, so a row gets the tokens a one-at-a-time render would get (the parity tests compare
them). The voice prefix comes from the prefix cache and is repeated for every row; each row's text is left-padded to
the longest and the padding masked out (:meth:`.lm_runners.KVRunner.prefill_rows`). A row that has finished rides
along until the last one does. Only a language model with a ``position_ids`` input (Turbo) can pad rows; see
:func:`can_batch`. The other models generate a project's sentences one at a time ahead of decoding
(:func:`generate_alone`), so that the decoder can still join neighbours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnxruntime as ort

from core.engine.caches.conditioning import Conditioning
from core.engine.caches.prefix_cache import start_sentence
from core.engine.constants import LOGITS_VOCAB, STOP_SPEECH
from core.engine.errors import SynthesisCancelled
from core.engine.generation.decode_loop import DecodeStats, generate
from core.engine.generation.sampler import Sampler
from core.engine.generation.stop_guards import RunawayGuard, token_cap
from core.engine.model.model_parts import ModelParts
from core.engine.options import SamplingParams, SynthesisOptions
from core.engine.text import Pause, split_text


@dataclass(frozen=True)
class Row:
    """One sentence to generate."""

    ids: np.ndarray
    """Text token ids [1, S]."""
    params: SamplingParams
    seed: int
    cap: int


@dataclass
class Generated:
    """A sentence's speech tokens (runaway tail already dropped) and why generation stopped."""

    tokens: list[int]
    stop_reason: str = "token_cap"
    audio: np.ndarray | None = None
    """The sentence's samples when it was decoded beforehand (joined with its neighbours in one decoder call)."""
    seed: int | None = None
    """The row's seed (its sampler's): a joined decoder call takes its first sentence's as its noise seed."""


def can_batch(parts: ModelParts, options: SynthesisOptions) -> bool:
    """Whether sentences spoken with ``options`` can share a batch: rows need per-row positions (Turbo's language
    model takes ``position_ids``), one row per sentence (no classifier-free guidance) and a fixed seed."""
    params = options.resolve(parts.info.variant)
    cfg = parts.capabilities.supports_cfg and params.cfg_weight > 0
    return parts.info.lm_has_position_ids and not cfg and options.seed is not None


def sentence_ids(parts: ModelParts, text: str, language: str | None) -> np.ndarray:
    """The text token ids of one sentence, as the synthesis stream prepares them."""
    sentence, _dropped = parts.tokenizer.prepare(text)
    return parts.tokenizer.encode(sentence, language)


def request_rows(parts: ModelParts, text: str, options: SynthesisOptions) -> dict[int, Row]:
    """The sentences of one request, by piece number (pauses have none), as the synthesis stream would seed them."""
    params = options.resolve(parts.info.variant)
    seed = options.seed
    if seed is None:
        raise ValueError("a request batched ahead needs its seed (the stream would draw a new one)")
    rows = {}
    for number, piece in enumerate(split_text(text)):
        if isinstance(piece, Pause):
            continue
        ids = sentence_ids(parts, piece.text, options.language)
        cap = token_cap(parts.capabilities.variant, ids.shape[1], params.max_new_tokens)
        rows[number] = Row(ids, params, seed + number, cap)
    return rows


def generate_rows(
    parts: ModelParts,
    conditioning: Conditioning,
    voice_key: str,
    rows: list[Row],
    cancelled: Callable[[], bool] = lambda: False,
) -> list[Generated]:
    """Generate every row's tokens in one batch (``SynthesisCancelled`` when ``cancelled`` says so)."""
    batch = len(rows)
    exaggeration = rows[0].params.exaggeration  # the models that can batch (Turbo) take none
    texts = [parts.embedder.text(row.ids, exaggeration, False) for row in rows]
    features = conditioning.audio_features.astype(texts[0].dtype, copy=False)
    runner = parts.runner(batch, exaggeration)
    if parts.runtime.prefix_cache:
        key = (voice_key, 1, parts.runtime.kv_chaining, parts.device)
        prefix, _hit, _ms = parts.prefixes.prefix(key, features, lambda: parts.runner(1, exaggeration))
        past, total = prefix.past, prefix.total
    else:
        builder = parts.runner(1, exaggeration)
        builder.prefill(features)
        past, total = builder.past, builder.total
    runner.adopt(_repeat(past, batch, parts.device), total)

    vocab = parts.info.logits_vocab or LOGITS_VOCAB
    samplers = [Sampler(row.params, row.seed, vocab) for row in rows]
    guards = [RunawayGuard() for _ in rows]
    results = [Generated([], seed=row.seed) for row in rows]
    active = list(range(batch))
    fed = np.zeros(batch, dtype=np.int64)
    logits = runner.prefill_rows(texts)
    while active:
        still = []
        for i in active:
            result, row = results[i], rows[i]
            token = samplers[i](logits[i])
            if token == STOP_SPEECH:
                result.stop_reason = "stop_token"
                continue
            samplers[i].observe(token)
            result.tokens.append(token)
            fed[i] = token
            if guards[i].update(token):
                result.stop_reason = f"runaway: {guards[i].reason}"
                guards[i].trim(result.tokens)
                continue
            if len(result.tokens) < row.cap:
                still.append(i)
        active = still
        if cancelled():
            raise SynthesisCancelled()
        if active:
            logits = runner.step(fed)  # finished rows ride along with their last token
    return results


def generate_alone(
    parts: ModelParts,
    conditioning: Conditioning,
    voice_key: str,
    row: Row,
    cancelled: Callable[[], bool] = lambda: False,
) -> Generated:
    """One sentence through the ordinary decode loop (any model, guidance included), as the synthesis stream runs
    it, before anything is decoded."""
    params = row.params
    cfg = parts.capabilities.supports_cfg and params.cfg_weight > 0
    start = start_sentence(parts, conditioning, voice_key, row.ids, params.exaggeration, cfg, {})
    stats, guard = DecodeStats(), RunawayGuard()
    sampler = Sampler(params, row.seed, parts.info.logits_vocab or LOGITS_VOCAB)
    weight = params.cfg_weight if cfg else 0.0
    tokens = list(generate(start.runner, start.prompt, sampler, row.cap, weight, stats, cancelled, guard))
    guard.trim(tokens)
    return Generated(tokens, stats.stop_reason, seed=row.seed)


def _repeat(past: Any, batch: int, device: str) -> Any:
    """The prefix's KV (batch 1) repeated for ``batch`` rows: a new cache, the cached one is never written."""
    if batch == 1:
        return past
    if isinstance(past, dict):  # the plain loop keeps numpy arrays
        return {name: np.repeat(value, batch, axis=0) for name, value in past.items()}
    return [ort.OrtValue.ortvalue_from_numpy(np.repeat(value.numpy(), batch, axis=0), device, 0) for value in past]
