"""The language model and the speech decoder take turns on the CPU (``RuntimeOptions.take_turns``): no decoder call
runs while a language-model step does, whatever the playback policy, and the CPU sessions' idle threads spin while
they run (and stop when the run returns). ``never`` keeps the decoder beside the language model."""

from __future__ import annotations

import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest

from core.engine.model.sessions import SessionFactory
from core.engine.options import InvalidOptions, RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline

TEXT = "The first sentence is here. A second one follows it. And a third one ends the paragraph."
SPIN = "session.intra_op.allow_spinning"
STOP = "session.force_spinning_stop"


class _Runs:
    """Which tracked sessions are running now, and how many runs started while another tracked session ran."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.active: set[str] = set()
        self.overlaps = 0
        self.calls: Counter[str] = Counter()

    @contextmanager
    def running(self, name: str):
        with self.lock:
            self.overlaps += bool(self.active - {name})
            self.active.add(name)
            self.calls[name] += 1
        try:
            yield
        finally:
            with self.lock:
                self.active.discard(name)


class _Tracked:
    """A session whose runs are recorded; ``pause`` makes each run slower (a decoder call long enough for the
    language model to take steps beside it, where it may)."""

    def __init__(self, session: Any, name: str, runs: _Runs, pause: float = 0.0):
        self._session, self._name, self._runs, self._pause = session, name, runs, pause

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._session, attr)

    def run(self, *args: Any, **kwargs: Any) -> Any:
        with self._runs.running(self._name):
            time.sleep(self._pause)
            return self._session.run(*args, **kwargs)

    def run_with_iobinding(self, *args: Any, **kwargs: Any) -> Any:
        with self._runs.running(self._name):
            return self._session.run_with_iobinding(*args, **kwargs)


def _tracked_pipe(bundle, **runtime) -> tuple[Pipeline, _Runs]:
    pipe = Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu", **runtime))
    runs = _Runs()
    parts = pipe._parts
    parts.sessions["language_model"] = _Tracked(parts.sessions["language_model"], "language model", runs)
    parts.decoder.session = _Tracked(parts.decoder.session, "decoder", runs, pause=0.05)
    return pipe, runs


@pytest.mark.parametrize("policy", ["fast", "smooth"])
def test_on_the_cpu_no_decoder_call_runs_beside_a_language_model_step(bundles, voice_wav, policy):
    pipe, runs = _tracked_pipe(bundles["turbo"], playback_policy=policy)
    for _ in range(2):  # the second request plans from the costs the first one measured
        result = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=3, max_new_tokens=60))
        assert result.report.forecast["serial"] is True
    assert runs.calls["decoder"] >= 6 and runs.calls["language model"] > 100
    assert runs.overlaps == 0
    assert not pipe._parts.costs._beside  # every call was measured as made alone


def test_never_lets_the_decoder_run_beside_the_language_model(bundles, voice_wav):
    """The check above can fail: with the models overlapping, the language model steps during the slow calls."""
    pipe, runs = _tracked_pipe(bundles["turbo"], playback_policy="fast", take_turns="never")
    result = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=3, max_new_tokens=60))
    assert result.report.forecast["serial"] is False
    assert runs.overlaps > 0


def test_turns_give_the_same_tokens_and_audio(bundles, voice_wav):
    """Taking turns changes when things run, not what they make (float32 decoder: the int8 one scales each call's
    activations by that call's own range, and the windows may differ)."""
    import numpy as np

    options = SynthesisOptions(seed=5, max_new_tokens=60)
    results = [
        Pipeline.from_bundle(
            bundles["original"],
            RuntimeOptions(provider="cpu", take_turns=turns, decoder_precision="fp32", stream_plan="fixed"),
        ).synthesize(TEXT, voice_wav, options)
        for turns in ("auto", "never")
    ]
    assert results[0].speech_tokens == results[1].speech_tokens
    assert np.array_equal(results[0].audio, results[1].audio)


def test_cpu_sessions_spin_while_they_run_only_where_the_models_take_turns(bundles, monkeypatch):
    monkeypatch.delenv("CHATTERBOX_NO_SPINNING", raising=False)  # the test processes' setting (tests/conftest.py)
    pipe = Pipeline.from_bundle(bundles["turbo"], RuntimeOptions(provider="cpu"))
    for name in ("language_model", "conditional_decoder"):
        options = pipe._parts.sessions[name].get_session_options()
        assert (options.get_session_config_entry(SPIN), options.get_session_config_entry(STOP)) == ("1", "1")
    never = Pipeline.from_bundle(bundles["turbo"], RuntimeOptions(provider="cpu", take_turns="never"))
    options = never._parts.sessions["language_model"].get_session_options()
    assert options.get_session_config_entry(SPIN) == "0"
    assert pipe._parts.takes_turns(pipe.runtime) and not never._parts.takes_turns(never.runtime)


def test_auto_turns_need_both_models_on_the_cpu(bundles):
    parts = Pipeline.from_bundle(bundles["turbo"], RuntimeOptions(provider="cpu"))._parts
    for gpu in ("language_model", "conditional_decoder"):
        providers = {**parts.capabilities.providers, gpu: "cuda"}
        parts.capabilities = replace(parts.capabilities, providers=providers)
        assert not parts.takes_turns(RuntimeOptions())  # the GPU does its model's work: both may run at once
        assert parts.takes_turns(RuntimeOptions(take_turns="always"))


def test_a_session_made_for_cuda_does_not_spin():
    factory = SessionFactory(RuntimeOptions())
    assert factory.options(False).get_session_config_entry(SPIN) == "0"  # create() passes spin=False for CUDA
    spinning = factory.options(True, spin=True)
    assert (spinning.get_session_config_entry(SPIN), spinning.get_session_config_entry(STOP)) == ("1", "1")


def test_take_turns_is_checked_and_needs_a_reload():
    with pytest.raises(InvalidOptions):
        RuntimeOptions(take_turns="sometimes")
    assert RuntimeOptions(take_turns="never").session_changes(RuntimeOptions()) == ["take_turns"]


def test_a_process_sharing_its_cores_can_keep_its_sessions_from_spinning(bundles, monkeypatch):
    monkeypatch.setenv("CHATTERBOX_NO_SPINNING", "1")
    pipe = Pipeline.from_bundle(bundles["turbo"], RuntimeOptions(provider="cpu"))
    assert pipe._parts.sessions["language_model"].get_session_options().get_session_config_entry(SPIN) == "0"
    assert pipe._parts.takes_turns(pipe.runtime)  # the models still take turns
