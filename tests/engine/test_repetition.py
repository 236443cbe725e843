"""The repetition penalty covers the whole history (START and every generated token), not only the last token.

The ordinary stand-ins never repeat a token under greedy decoding, so a penalty applied to the wrong set of tokens
would pass every other test. The repeating stand-in's language model prefers one "attractor" token per sentence a
little more than the step's own token: greedy decoding picks the attractor again unless the penalty still covers it.
"""

from __future__ import annotations

from collections import Counter

import pytest

import core.engine.streaming.synthesis
from core.engine.generation.sampler import Sampler
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.standin import make_standin

TEXT = "Hello there, how are you today my friend?"


@pytest.fixture(scope="module")
def repeating(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("repeating")
    return {v: make_standin(root / v, v, seed=3, repeating=True) for v in ("turbo", "original", "multilingual")}


class LastTokenOnly(Sampler):
    """The bug this test exists for: the penalty remembers only the most recent token."""

    def observe(self, token: int) -> None:
        self._seen[:] = False
        self._seen[token] = True


def greedy_tokens(bundle, voice, **options) -> list[int]:
    pipe = Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu"))
    return pipe.synthesize(TEXT, voice, SynthesisOptions(greedy=True, **options)).speech_tokens


def assert_no_repeats(tokens: list[int]) -> None:
    token, count = Counter(tokens).most_common(1)[0]
    assert count == 1, f"token {token} was generated {count} times in {len(tokens)}"


@pytest.mark.parametrize("variant", ["turbo", "original", "multilingual"])
def test_the_default_penalty_covers_the_whole_history(repeating, voice_wav, variant):
    tokens = greedy_tokens(repeating[variant], voice_wav)  # upstream default penalty: 1.2 (2.0 multilingual)
    assert len(tokens) > 40
    assert_no_repeats(tokens)


@pytest.mark.parametrize("variant", ["turbo", "original"])
def test_a_last_token_only_penalty_fails_the_check(repeating, voice_wav, variant, monkeypatch):
    monkeypatch.setattr(core.engine.streaming.synthesis, "Sampler", LastTokenOnly)
    tokens = greedy_tokens(repeating[variant], voice_wav)
    with pytest.raises(AssertionError, match="generated"):
        assert_no_repeats(tokens)
    assert Counter(tokens).most_common(1)[0][1] > len(tokens) // 3  # every other token is the attractor


def test_without_a_penalty_the_attractor_runs_away(repeating, voice_wav):
    tokens = greedy_tokens(repeating["turbo"], voice_wav, repetition_penalty=1.0)
    assert len(set(tokens)) == 1  # then the runaway guard stops the sentence


def test_the_repeating_mode_leaves_the_ordinary_stand_in_alone(bundles, voice_wav):
    assert_no_repeats(greedy_tokens(bundles["turbo"], voice_wav, repetition_penalty=1.0))
