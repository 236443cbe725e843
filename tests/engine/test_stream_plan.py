"""The adaptive stream plan: few decoder calls, playback kept fed — on a simulated clock with the faithful decoder's
costs, and on the stand-ins end to end (same audio as one-shot, fewer calls than the fixed plan)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.engine.streaming.stream_plan import TOKEN_S, CostModel, StreamPlan
from core.engine.streaming.synthesis import SynthesisRequest

TEXT = (
    "The quick brown fox jumps over the lazy dog, and then it runs far away into the green hills. "
    "It was a bright cold day in April. The clocks were striking thirteen."
)


def simulate(fixed_s, per_token_s, step_s, sentences, prompt=250, context=20, warm=True):
    """Run the plan on a virtual clock: LM steps of ``step_s``, a decoder thread of ``fixed_s + per_token_s × n``.
    Returns (decoder calls, time to first audio, underruns after the first chunk, time the last chunk is ready)."""
    costs = CostModel()
    if warm:  # the model has decoded before (costs are learnt on the first request)
        for n in (30, 80, 150):
            costs.add_call(prompt, n, fixed_s + per_token_s * n)
        costs.add_steps([step_s * 1000] * 10)
    plan = StreamPlan("adaptive", 10, 25, context, costs, prompt)
    now, decoder_free = 0.0, 0.0
    ready: list[tuple[float, float]] = []  # (when the window is ready, seconds of audio), in order
    delivered = 0

    def deliver_until(t):
        nonlocal delivered
        while delivered < len(ready) and ready[delivered][0] <= t:
            plan.delivered(ready[delivered][0], first=delivered == 0)
            delivered += 1

    def decode(pending, decoded):
        nonlocal decoder_free
        plan.decoding(pending, now)
        decoder_free = max(now, decoder_free) + fixed_s + per_token_s * (pending + min(context, decoded))
        ready.append((decoder_free, pending * TOKEN_S))

    for number, length in enumerate(sentences):
        plan.new_sentence()
        pending, decoded = 0, 0
        for i in range(length):
            now += step_s
            deliver_until(now)
            pending += 1
            size = plan.window(pending, now, first_sentence=number == 0) if i < length - 1 else 0
            if size:
                decode(size, decoded)
                decoded, pending = decoded + size, pending - size
        split = plan.window(pending, now, first_sentence=number == 0, sentence_done=True)
        if split:
            decode(split, decoded)
            decoded, pending = decoded + split, pending - split
        decode(pending, decoded)
    clock, underruns = ready[0][0], 0
    for at, seconds in ready:
        if at > clock + 1e-9:
            underruns += 1
            clock = at
        clock += seconds
    return len(ready), ready[0][0], underruns, ready[-1][0]


def one_shot_total(fixed_s, per_token_s, step_s, sentences):
    now = free = 0.0
    for length in sentences:
        now += step_s * length
        free = max(now, free) + fixed_s + per_token_s * length
    return free


FIVE_SENTENCES = [110, 90, 140, 100, 125]


@pytest.mark.parametrize("fixed_s, per_token_s, step_s", [(0.6, 0.0125, 0.012), (0.3, 0.010, 0.015), (0.1, 0.02, 0.01)])
def test_few_calls_and_at_most_one_stall_when_faster_than_real_time(fixed_s, per_token_s, step_s):
    """A split that would avoid a stall only by paying more than a call's fixed cost is not made (total time wins)."""
    calls, ttfa, underruns, total = simulate(fixed_s, per_token_s, step_s, FIVE_SENTENCES)
    one_shot = one_shot_total(fixed_s, per_token_s, step_s, FIVE_SENTENCES)
    assert (fixed_s + per_token_s * 125 + step_s * 125) / (125 * TOKEN_S) < 0.8  # one-shot RTF below 0.8
    assert underruns <= 1
    assert calls <= 2 * len(FIVE_SENTENCES)  # the fixed plan makes 22
    assert total <= 1.25 * one_shot
    assert ttfa < 1.5


def test_the_fixed_plan_pays_the_fixed_cost_many_times():
    adaptive = simulate(0.9, 0.0125, 0.015, FIVE_SENTENCES)[0]
    costs = CostModel()
    plan = StreamPlan("fixed", 10, 25, 20, costs, 250)
    calls = 0
    for length in FIVE_SENTENCES:
        plan.new_sentence()
        pending = 0
        for i in range(length):
            pending += 1
            if i < length - 1 and plan.window(pending, 0.0, True):
                plan.decoding(pending, 0.0)
                calls, pending = calls + 1, 0
        calls += 1
    assert calls > 3 * adaptive


def test_slower_than_real_time_stops_splitting_sentences():
    # The faithful Original decoder on 2 cores: ~6.6 s per call plus 46 ms a token: never real time.
    calls, _ttfa, _underruns, _total = simulate(6.6, 0.046, 0.03, FIVE_SENTENCES)
    assert calls <= len(FIVE_SENTENCES) + 1


def test_when_a_token_takes_longer_to_make_than_to_play_the_first_window_is_the_smallest():
    """Faithful Original with the decoder defaults on 2 cores: the decoder alone is faster than real time (20 ms a
    token) but a step and a share of a call are not (45 ms > 40 ms): stalls come whatever the windows, so "start
    fast" starts with its smallest window instead of holding 1.5 s of speech back for nothing."""
    costs = CostModel()
    for n in (30, 80, 150):
        costs.add_call(250, n, 1.2 + 0.020 * n, alone=True)
    costs.add_steps([25.0] * 10, alone=True)
    assert StreamPlan("adaptive", 10, 25, 20, costs, 250).first_window() == 10
    faster = CostModel()  # the same decoder beside a language model twice as fast: the window covers the next call
    for n in (30, 80, 150):
        faster.add_call(250, n, 1.2 + 0.020 * n, alone=True)
    faster.add_steps([12.0] * 10, alone=True)
    assert StreamPlan("adaptive", 10, 25, 20, faster, 250).first_window() > 10


def test_the_cost_model_fits_fixed_and_per_token_costs():
    costs = CostModel()
    assert costs.decoder_line(250) is None and costs.lm_step_s is None
    costs.add_call(250, 30, 1.275)
    assert costs.decoder_line(250) == pytest.approx((0.0, 1.275 / 30))  # one size only: all per token (safe)
    for n in (60, 120, 220):
        costs.add_call(250, n, 0.9 + 0.0125 * n + (0.02 if n == 120 else 0.0))
    fixed, per = costs.decoder_line(250)
    assert fixed == pytest.approx(0.9, abs=0.1) and per == pytest.approx(0.0125, rel=0.15)
    assert costs.decoder_line(75) is None  # another prompt length is another line
    costs.add_steps([20.0, 30.0, 25.0])  # the medians are kept until new steps come
    assert costs.lm_step_s == pytest.approx(0.025) and costs.lm_step_alone_s == pytest.approx(0.020)
    costs.add_steps([10.0, 10.0], alone=True)
    assert costs.lm_step_s == pytest.approx(0.020) and costs.lm_step_alone_s == pytest.approx(0.010)


# --- end to end on the tiny stand-ins ---------------------------------------------------------------------------------
def _pipe(bundle, **runtime):
    return Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu", **runtime))


def test_adaptive_gives_the_one_shot_audio_with_fewer_decoder_calls(bundles, voice_wav):
    options = SynthesisOptions(seed=4)
    results, calls = {}, {}
    for name, runtime in (("adaptive", {}), ("fixed", {"stream_plan": "fixed"}), ("one-shot", {"stream": False})):
        # float32: the int8 decoder quantizes each call's activations by that call's own range, so windows are close
        # to one call but not equal (test_int8_streaming_stays_close_to_one_shot)
        pipe = _pipe(bundles["turbo"], decoder_precision="fp32", **runtime)
        pipe.synthesize("Warm up.", voice_wav, options)  # the costs are learnt on the first request
        before = pipe.decoder_calls
        results[name] = pipe.synthesize(TEXT, voice_wav, options)
        calls[name] = pipe.decoder_calls - before
    for name in ("adaptive", "fixed"):
        assert results[name].speech_tokens == results["one-shot"].speech_tokens
        assert np.allclose(results[name].audio, results["one-shot"].audio, atol=1e-6)
    assert calls["one-shot"] == 3 and calls["adaptive"] < calls["fixed"]


def _collapsed(kinds):
    """Chunk kinds with runs of speech merged: where the sentences and their gaps fall, not how they were split."""
    return [kind for i, kind in enumerate(kinds) if i == 0 or not kind == kinds[i - 1] == "speech"]


@pytest.mark.parametrize("plan", ["adaptive", "fixed"])
def test_the_decoder_thread_changes_nothing_but_the_timing(bundles, voice_wav, plan):
    """The same tokens and audio with or without the decoder thread. The adaptive plan splits a sentence by the
    clock (how far playback is ahead), so only the fixed plan's windows are the same call for call; the adaptive
    plan's sentences and gaps are."""
    options = SynthesisOptions(seed=4)
    # float32 decoder: the int8 one quantizes each call's activations with that call's own scale, so windows that
    # the timing moves change its output by a hair (see test_decoder_levers.py)
    runtime = {"decoder_precision": "fp32", "stream_plan": plan}
    a = _pipe(bundles["original"], decoder_thread=True, **runtime).synthesize(TEXT, None, options)
    b = _pipe(bundles["original"], decoder_thread=False, **runtime).synthesize(TEXT, None, options)
    assert a.speech_tokens == b.speech_tokens and np.array_equal(a.audio, b.audio)
    kinds_a, kinds_b = [c.kind for c in a.chunks], [c.kind for c in b.chunks]
    assert kinds_a.count("gap") == 2 and _collapsed(kinds_a) == _collapsed(kinds_b)  # three sentences
    if plan == "fixed":
        assert kinds_a == kinds_b and len(kinds_a) > 5  # windows within sentences, the same ones
    assert [c.index for c in a.chunks] == list(range(len(a.chunks)))  # in order


def test_a_shorter_decoder_prompt_reaches_the_decoder(bundles, voice_wav, monkeypatch):
    pipe = _pipe(bundles["turbo"], decoder_prompt_seconds=3.0)
    seen = []
    original = pipe._parts.decoder.decode

    def spy(cond, tokens, final=True, alone=False, seed=None):
        seen.append((cond.prompt_tokens, cond.speaker_features.shape[1]))
        return original(cond, tokens, final, alone, seed)

    monkeypatch.setattr(pipe._parts.decoder, "decode", spy)
    result = pipe.synthesize("Hello there.", voice_wav, SynthesisOptions(seed=1))
    assert result.audio.size and set(seen) == {(75, 150)}  # 3 s = 75 prompt tokens, 2 mel frames each
    assert pipe.condition(voice_wav).conditioning.prompt_tokens == 150  # 6 s voice


def test_cancel_interrupts_a_slow_decoder_call(bundles, voice_wav):
    """A cancelled request does not wait for a decoder call in progress (the Original decoder takes seconds)."""
    pipe = _pipe(bundles["turbo"])
    decoder = pipe._parts.decoder
    started = threading.Event()

    class SlowRun:
        def __init__(self, session):
            self.session = session

        def run(self, names, feeds, run_options=None):
            started.set()
            for _ in range(200):  # up to 10 s, unless terminated
                if run_options is not None and run_options.terminate:
                    raise RuntimeError("terminated")
                time.sleep(0.05)
            return self.session.run(names, feeds, run_options)

    decoder.session = SlowRun(decoder.session)
    cancel = threading.Event()
    stream = pipe.stream(SynthesisRequest(TEXT, voice_wav), cancelled=cancel.is_set)
    iterator = iter(stream)
    worker = threading.Thread(target=lambda: started.wait(10) and cancel.set())
    worker.start()
    t0 = time.perf_counter()
    with pytest.raises(Exception, match="cancelled"):
        for _ in iterator:
            pass
    worker.join()
    assert time.perf_counter() - t0 < 5
    assert not [t for t in threading.enumerate() if t.name.startswith("decoder")]


PROMPT = 75  # prompt tokens of the default 3 s decoder prompt


def test_the_learnt_costs_survive_a_restart_and_a_broken_file_is_ignored(bundles, voice_wav, tmp_path):
    runtime = {"costs_dir": tmp_path / "costs"}
    first = _pipe(bundles["turbo"], **runtime)
    assert first._parts.costs.decoder_line(PROMPT) is None
    first.synthesize(TEXT, voice_wav, SynthesisOptions(seed=4))
    assert first._parts.costs.decoder_line(PROMPT) is not None  # the default 3 s prompt: 75 prompt tokens
    files = list((tmp_path / "costs").glob("*.json"))
    assert len(files) == 1
    restarted = _pipe(bundles["turbo"], **runtime)
    assert restarted._parts.costs.decoder_line(PROMPT) == pytest.approx(first._parts.costs.decoder_line(PROMPT))
    assert restarted._parts.costs.lm_step_s is not None
    files[0].write_text('{"version": 1, "calls": {"75": [["x"]]}}', encoding="utf-8")
    broken = _pipe(bundles["turbo"], **runtime)
    assert broken._parts.costs.decoder_line(PROMPT) is None  # ignored, and rewritten after the next request
    broken.synthesize("Hello.", voice_wav, SynthesisOptions(seed=4))
    assert _pipe(bundles["turbo"], **runtime)._parts.costs.decoder_line(PROMPT) is not None
    other = _pipe(bundles["turbo"], costs_dir=tmp_path / "costs", threads=1)  # other session settings: other costs
    assert other._parts.costs.decoder_line(PROMPT) is None
