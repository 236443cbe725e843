"""Choosing the next speech token from the logits, in numpy (upstream order: penalty, temperature, top-k, top-p,
min-p). Only audio codes and STOP can be chosen: START and ids past STOP (the Llama head is 8194 wide) are masked."""

from __future__ import annotations

import numpy as np

from core.engine.constants import START_SPEECH, STOP_SPEECH
from core.engine.options import SamplingParams


class Sampler:
    def __init__(self, params: SamplingParams, seed: int, vocab: int):
        self.params = params
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self._blocked = np.zeros(vocab, dtype=bool)
        self._blocked[START_SPEECH] = True
        self._blocked[STOP_SPEECH + 1 :] = True
        self._seen = np.zeros(vocab, dtype=bool)
        self._seen[START_SPEECH] = True  # upstream's history starts with START

    def observe(self, token: int) -> None:
        self._seen[token] = True

    def __call__(self, logits: np.ndarray) -> int:
        p = self.params
        scores = np.array(logits, dtype=np.float32)  # a copy: the caller's buffer is reused next step
        if p.repetition_penalty != 1.0:
            seen = scores[self._seen]
            scores[self._seen] = np.where(seen < 0, seen * p.repetition_penalty, seen / p.repetition_penalty)
        scores[self._blocked] = -np.inf
        if p.greedy:
            return int(np.argmax(scores))
        scores /= p.temperature
        if p.top_k is not None and p.top_k < scores.size:
            kth = np.partition(scores, -p.top_k)[-p.top_k]
            scores[scores < kth] = -np.inf
        probs = np.exp(scores - scores.max())
        probs /= probs.sum()
        if p.top_p < 1.0:
            order = np.argsort(-probs, kind="stable")
            cumulative = np.cumsum(probs[order])
            # keep the smallest set whose mass reaches top_p (the token that crosses it included)
            cut = order[np.searchsorted(cumulative, p.top_p) + 1 :]
            probs[cut] = 0.0
        if p.min_p > 0.0:
            probs[probs < p.min_p * probs.max()] = 0.0
        probs /= probs.sum()
        return int(self.rng.choice(probs.size, p=probs))
