from __future__ import annotations

import numpy as np
import pytest

from core.engine.generation.sampler import Sampler
from core.engine.generation.stop_guards import RunawayGuard, token_cap
from core.engine.options import SamplingParams, SynthesisOptions, upstream_defaults

V = 8194


def params(**kw):
    base = dict(
        temperature=1.0,
        top_k=None,
        top_p=1.0,
        min_p=0.0,
        repetition_penalty=1.0,
        cfg_weight=0.0,
        exaggeration=0.0,
        max_new_tokens=100,
        greedy=False,
    )
    return SamplingParams(**{**base, **kw})


def logits_with(peaks: dict[int, float]) -> np.ndarray:
    logits = np.zeros(V, np.float32)
    for i, v in peaks.items():
        logits[i] = v
    return logits


def test_greedy_is_argmax_and_never_picks_start_or_ids_past_stop():
    s = Sampler(params(greedy=True), 0, V)
    assert s(logits_with({17: 5.0})) == 17
    assert s(logits_with({6561: 50.0, 17: 1.0})) == 17  # START is masked
    assert s(logits_with({7000: 50.0, 18: 1.0})) == 18  # ids past STOP are masked
    assert s(logits_with({6562: 9.0})) == 6562  # STOP can be chosen


def test_repetition_penalty_divides_positive_and_multiplies_negative_scores():
    s = Sampler(params(greedy=True, repetition_penalty=2.0), 0, V)
    s.observe(5)
    assert s(logits_with({5: 3.0, 6: 2.0})) == 6  # 3/2 < 2
    logits = np.full(V, -10.0, np.float32)
    logits[5], logits[6] = -1.0, -1.5
    assert s(logits) == 6  # -1*2 < -1.5


def test_same_seed_same_choices_and_top_k_top_p_min_p_restrict_support():
    logits = np.random.default_rng(0).standard_normal(V).astype(np.float32) * 3
    a = [Sampler(params(), 42, V)(logits) for _ in range(1)]
    s1, s2 = Sampler(params(), 42, V), Sampler(params(), 42, V)
    assert [s1(logits) for _ in range(50)] == [s2(logits) for _ in range(50)]
    assert a
    top5 = set(np.argsort(-np.where(np.arange(V) > 6562, -np.inf, logits))[:5])
    s = Sampler(params(top_k=5), 1, V)
    assert {s(logits) for _ in range(200)} <= top5
    peaked = logits_with({10: 10.0, 11: 9.5, 12: 2.0})
    s = Sampler(params(top_p=0.5), 1, V)
    assert {s(peaked) for _ in range(100)} == {10}
    s = Sampler(params(min_p=0.5), 1, V)
    assert {s(peaked) for _ in range(200)} == {10, 11}


def test_options_resolve_to_upstream_defaults_and_reject_bad_values():
    assert SynthesisOptions().resolve("multilingual") == upstream_defaults("multilingual")
    turbo = SynthesisOptions(cfg_weight=0.7).resolve("turbo")
    assert turbo.cfg_weight == 0.0 and turbo.top_k == 1000
    for bad in (
        dict(temperature=0),
        dict(top_p=0),
        dict(min_p=2),
        dict(max_new_tokens=0),
        dict(top_k=0),
        dict(temperature=float("nan")),
    ):
        try:
            SynthesisOptions(**bad).resolve("original")
        except ValueError:
            continue
        raise AssertionError(f"{bad} accepted")


def test_runaway_guard():
    g = RunawayGuard(same_limit=10)
    assert not any(g.update(t) for t in range(50))
    g = RunawayGuard(same_limit=10)
    assert [g.update(7) for _ in range(10)] == [False] * 9 + [True]
    g = RunawayGuard(pattern_window=30)
    fired = [g.update(t) for t in [1, 2, 3] * 12]
    assert fired.index(True) == 29 and "3-token pattern" in g.reason
    g = RunawayGuard(same_limit=10, silence_limit=20)
    assert not any(g.update(4299) for _ in range(19)) and g.update(4299)


def test_token_cap_grows_with_text_and_respects_max():
    assert token_cap("original", 10, 1000) == 64
    assert token_cap("original", 100, 1000) == 600
    assert token_cap("turbo", 100, 1000) == 1000


class PlainSampler:
    """The sampler as first written: every step over the whole vocabulary (a stable argsort for top-p, numpy's own
    ``choice``). The fast one must choose exactly what this one chooses."""

    def __init__(self, params: SamplingParams, seed: int, vocab: int):
        self.params = params
        self.rng = np.random.Generator(np.random.PCG64(seed))
        self._blocked = np.zeros(vocab, dtype=bool)
        self._blocked[6561] = True
        self._blocked[6563:] = True
        self._seen = np.zeros(vocab, dtype=bool)
        self._seen[6561] = True

    def observe(self, token: int) -> None:
        self._seen[token] = True

    def __call__(self, logits: np.ndarray) -> int:
        p = self.params
        scores = np.array(logits, dtype=np.float32)
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
            probs[order[np.searchsorted(cumulative, p.top_p) + 1 :]] = 0.0
        if p.min_p > 0.0:
            probs[probs < p.min_p * probs.max()] = 0.0
        probs /= probs.sum()
        return int(self.rng.choice(probs.size, p=probs))


def _logits(rng: np.random.Generator, vocab: int, kind: str) -> np.ndarray:
    """Logits of the shapes a model gives: spread out, peaked, flat with many equal values, with far outliers (whose
    neighbours' probabilities underflow to zero)."""
    if kind == "spread":
        return (rng.standard_normal(vocab) * 3).astype(np.float32)
    if kind == "peaked":
        logits = (rng.standard_normal(vocab) * 0.5).astype(np.float32)
        logits[rng.integers(0, 6561, 4)] += 12.0
        return logits
    if kind == "ties":  # a few distinct values, so the top-p cut falls inside a run of equal probabilities
        return rng.integers(0, 4, vocab).astype(np.float32)
    logits = rng.standard_normal(vocab).astype(np.float32)  # "outlier"
    logits[rng.integers(0, 6561, 2)] = 120.0
    return logits


@pytest.mark.parametrize("vocab", [6563, 8194])
@pytest.mark.parametrize(
    "settings",
    [
        dict(temperature=0.8, top_k=1000, top_p=0.95, repetition_penalty=1.2),  # Turbo's defaults
        dict(temperature=0.8, min_p=0.05, repetition_penalty=1.2),  # Original's
        dict(temperature=0.8, min_p=0.05, repetition_penalty=2.0),  # Multilingual's
        dict(temperature=1.3, top_k=7, top_p=0.5, min_p=0.2),
        dict(temperature=0.5, top_p=0.3),
        dict(temperature=1.0, top_k=9000, top_p=0.999),  # top_k past the vocabulary
        dict(greedy=True, repetition_penalty=1.5),
    ],
)
def test_the_fast_sampler_chooses_exactly_what_the_plain_one_chooses(vocab, settings):
    sampling = params(**settings)
    fast, plain = Sampler(sampling, 1234, vocab), PlainSampler(sampling, 1234, vocab)
    rng = np.random.default_rng(vocab)
    kinds = ("spread", "peaked", "ties", "outlier")
    chosen = []
    for step in range(240):
        logits = _logits(rng, vocab, kinds[step % 4])
        token = fast(logits)
        assert token == plain(logits), (step, kinds[step % 4])
        fast.observe(token)
        plain.observe(token)
        chosen.append(token)
    assert len(set(chosen)) > 1 and all(t != 6561 and t <= 6562 for t in chosen)


def test_logits_that_are_not_numbers_are_refused_in_words():
    with pytest.raises(ValueError, match="not finite"):
        Sampler(params(top_k=10, top_p=0.9), 0, V)(np.full(V, np.nan, np.float32))
