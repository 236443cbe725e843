"""Choosing the next speech token from the logits, in numpy (upstream order: penalty, temperature, top-k, top-p,
min-p). Only audio codes and STOP can be chosen: START and ids past STOP (the Llama head is 8194 wide) are masked.

Top-p's sort and the draw look only at the tokens still possible (at most ``top_k`` of them with Turbo's defaults),
and top-p sorts values, not indices: the same choices, bit for bit, as sorting and drawing over the whole vocabulary
(zeros add nothing to a running sum and are never drawn; equal values add up the same in any order, and the ones kept
where the cut falls among them are the lowest ids, as a stable sort keeps them). ``tests/engine/test_sampler.py``
holds the plain version and compares the two."""

from __future__ import annotations

import numpy as np

from core.engine.constants import START_SPEECH, STOP_SPEECH
from core.engine.options import SamplingParams


class Sampler:
    def __init__(self, params: SamplingParams, seed: int, vocab: int):
        self.params = params
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self._seen = np.zeros(vocab, dtype=bool)
        self._seen[START_SPEECH] = True  # upstream's history starts with START

    def observe(self, token: int) -> None:
        self._seen[token] = True

    def __call__(self, logits: np.ndarray) -> int:
        p = self.params
        scores = np.array(logits, dtype=np.float32)  # a copy: the caller's buffer is reused next step
        if p.repetition_penalty != 1.0:
            seen_at = np.flatnonzero(self._seen)
            seen = scores[seen_at]
            scores[seen_at] = np.where(seen < 0, seen * p.repetition_penalty, seen / p.repetition_penalty)
        scores[START_SPEECH] = -np.inf
        scores[STOP_SPEECH + 1 :] = -np.inf
        if p.greedy:
            return int(np.argmax(scores))
        scores /= p.temperature
        candidates = None  # ascending ids that may still be chosen; None: all of them
        if p.top_k is not None and p.top_k < scores.size:
            kth = np.partition(scores, -p.top_k)[-p.top_k]
            below = scores < kth
            np.putmask(scores, below, -np.inf)
            candidates = np.flatnonzero(~below)
        probs = np.exp(scores - scores.max())
        probs /= probs.sum()
        if p.top_p < 1.0:
            _top_p(probs, _possible(probs, candidates), p.top_p)
        if p.min_p > 0.0:
            np.putmask(probs, probs < p.min_p * probs.max(), 0.0)
        probs /= probs.sum()
        return self._draw(probs, _possible(probs, candidates))

    def _draw(self, probs: np.ndarray, possible: np.ndarray) -> int:
        """``rng.choice(probs.size, p=probs)``'s draw (a float64 running sum in id order, one uniform, the first sum
        above it), over the ``possible`` ids only."""
        if possible.size == 0:
            raise ValueError("no token can be chosen: the logits are not finite numbers")
        cdf = probs[possible].astype(np.float64).cumsum()
        cdf /= cdf[-1]
        return int(possible[cdf.searchsorted(self.rng.random(), side="right")])


def _possible(probs: np.ndarray, candidates: np.ndarray | None) -> np.ndarray:
    """The ascending ids with a probability above zero (among ``candidates`` when given)."""
    if candidates is None:
        return np.flatnonzero(probs > 0)
    possible: np.ndarray = candidates[probs[candidates] > 0]
    return possible


def _top_p(probs: np.ndarray, possible: np.ndarray, top_p: float) -> None:
    """Zero all but the smallest set of most likely tokens whose mass reaches ``top_p`` (the token that crosses it
    included; among equal probabilities the lowest ids first)."""
    kept = probs[possible]
    descending = np.sort(kept)[::-1]
    last = int(np.searchsorted(np.cumsum(descending), top_p))
    if last + 1 >= kept.size:
        return
    value = descending[last]
    drop = kept < value
    ties = np.flatnonzero(kept == value)
    drop[ties[last + 1 - np.count_nonzero(kept > value) :]] = True
    probs[possible[drop]] = 0.0
