"""The playback forecast and the "play smoothly" policy: on synthetic costs (a virtual clock, no timing), and end to
end on the tiny stand-ins (same audio as "start fast", the forecast reported with the chunks)."""

from __future__ import annotations

from dataclasses import astuple, replace

import numpy as np
import pytest

from core.engine.errors import InvalidOptions
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.engine.streaming.forecast import (
    AUTO_SMOOTH_RTF,
    GROWTH,
    SMOOTH_MARGIN_S,
    SMOOTH_SLACK,
    Costs,
    Forecast,
    Piece,
    _shaped_forecast,
    choose_policy,
    fast_forecast,
    forecast,
    smooth_forecast,
)
from core.engine.streaming.stream_plan import TOKEN_S, CostModel, StreamPlan

# Faithful Turbo q4 on the 2-core CPU (docs/PERFORMANCE-LOG.md): a decoder call alone 0.61 s + 12.7 ms a token, beside
# the language model ~1.2 s + 22 ms a token; an LM step 20 ms alone, 30 ms beside the decoder.
SLOW = Costs(0.020, 0.61, 0.0127, 0.030, 1.2, 0.022)
FAST = Costs(0.004, 0.05, 0.001, 0.005, 0.06, 0.0012)
# The same with the models taking turns (2026-11-27): an LM step 12 ms, a decoder call 0.2 s + 13 ms a token, a
# sentence's prefill 0.15 s, nothing beside anything; a token is made in 25 ms and plays for 40.
TURNS = Costs(0.012, 0.2, 0.013, prefill_s=0.15)
PARAGRAPH = [Piece(125, 0.1)] * 4 + [Piece(125)]


def shaped_start(costs: Costs, pieces: list[Piece], low: int = 10) -> float:
    """The earliest serial start of the plan's usual shape (a first window, the rest of its sentence in one call, then
    one call per sentence): what "play smoothly" forecast before its windows could grow."""
    return min(_shaped_forecast(costs, pieces, 0.0, w, 20, True, generated=1).start_s for w in range(low, 126))


def sentence_windows(plan: Forecast, pieces: list[Piece]) -> list[list[int]]:
    """The forecast's windows, sentence by sentence."""
    out, sizes = [], iter(c.tokens for c in plan.chunks)
    for piece in pieces:
        windows = [next(sizes)]
        while sum(windows) < piece.tokens:
            windows.append(next(sizes))
        out.append(windows)
    return out


def test_a_slow_decoder_starts_later_and_predicts_no_stall():
    smooth = smooth_forecast(SLOW, PARAGRAPH, now=0.0, context=20, low=10)
    fast = fast_forecast(SLOW, PARAGRAPH, now=0.0, first_window=34, context=20)
    assert fast.underruns >= 1  # starting with the first window, the rest of the sentence comes too late
    assert smooth.underruns == 0 and all(c.arrive_s <= c.play_s for c in smooth.chunks)
    assert smooth.start_s > fast.start_s  # one wait at the start instead of stalls


def test_a_fast_decoder_starts_at_once():
    smooth = smooth_forecast(FAST, PARAGRAPH, now=0.0, context=20, low=10)
    assert smooth.underruns == 0
    first = smooth.chunks[0].arrive_s
    assert smooth.start_s == pytest.approx(first * (1 + SMOOTH_SLACK) + SMOOTH_MARGIN_S)


def test_the_forecast_adapts_to_the_measured_costs():
    """A decoder that becomes cheaper (a shorter voice prompt, a q8 decoder) gives an earlier start."""
    cheaper = Costs(SLOW.step_s, 0.3, 0.008, SLOW.step_beside_s, 0.6, 0.014)
    a = smooth_forecast(SLOW, PARAGRAPH, 0.0, 20, 10)
    b = smooth_forecast(cheaper, PARAGRAPH, 0.0, 20, 10)
    assert b.start_s < a.start_s


def test_serial_windows_grow_so_playback_starts_sooner_without_a_stall():
    """Where the models take turns, the forecast follows the plan's own rule (a window when one more token would be
    late) instead of taking the rest of the first sentence as one call: the windows grow with the audio ahead, and
    playback starts sooner. Every window in the middle of a sentence pays for its call GROWTH times over."""
    smooth = smooth_forecast(TURNS, PARAGRAPH, now=0.0, context=20, low=10, generated=1, serial_only=True)
    assert smooth.serial and smooth.underruns == 0
    assert smooth.start_s < 0.8 * shaped_start(TURNS, PARAGRAPH)
    windows = sentence_windows(smooth, PARAGRAPH)
    assert len(windows[0]) >= 3 and smooth.first_window == windows[0][0]  # not a first window and the rest
    break_even = (TURNS.fixed_s + TURNS.per_token_s * 20) / (TOKEN_S - TURNS.step_s - TURNS.per_token_s)
    middle = [n for sentence in windows for n in sentence[:-1]][1:]  # the first window is bound by the start
    assert middle and all(n >= GROWTH * break_even for n in middle)


def test_where_a_token_takes_longer_to_make_than_to_play_each_sentence_is_one_call():
    """Windows can never grow there: the forecast is the usual shape's, not an earlier start that would stall."""
    slow = Costs(0.025, 1.2, 0.020, prefill_s=0.4)  # faithful Original: 45 ms a token
    smooth = smooth_forecast(slow, PARAGRAPH, now=0.0, context=20, low=10, generated=1, serial_only=True)
    assert smooth.start_s == pytest.approx(shaped_start(slow, PARAGRAPH), abs=0.01)
    assert [len(w) for w in sentence_windows(smooth, PARAGRAPH)[1:]] == [1, 1, 1, 1]


def test_costs_at_the_edges_still_give_a_forecast():
    """A cost line fitted flat (no cost per token seen), a sentence shorter than the smallest first window, nothing
    left to say: a start, never an error."""
    flat = smooth_forecast(Costs(0.0, 0.3, 0.0), PARAGRAPH, now=0.0, context=20, low=10, serial_only=True)
    assert flat.underruns == 0 and flat.start_s > 0.3
    short = smooth_forecast(TURNS, [Piece(4)], now=1.0, context=20, low=10, generated=1, serial_only=True)
    assert [c.tokens for c in short.chunks] == [4] and short.start_s > short.chunks[0].arrive_s
    assert smooth_forecast(TURNS, [], now=2.0, context=20, low=10).start_s == 2.0
    # the last sentence ended right after a window: nothing of it is left to decode when the plan forecasts again
    done = forecast(TURNS, [Piece(0, 0.0, True)], now=1.0, first_window=0, context=20, serial=True)
    assert done.chunks == () and done.start_s == pytest.approx(1.0 + SMOOTH_MARGIN_S)


def test_auto_picks_by_the_measured_real_time_factor():
    assert SLOW.rtf() >= AUTO_SMOOTH_RTF > FAST.rtf()
    assert choose_policy("auto", SLOW) == "smooth"
    assert choose_policy("auto", FAST) == "fast"
    assert choose_policy("auto", None) == "fast"  # nothing measured yet: nothing to forecast from
    assert choose_policy("smooth", FAST) == "smooth" and choose_policy("fast", SLOW) == "fast"


def test_the_option_is_validated():
    assert RuntimeOptions().playback_policy == "auto"
    assert RuntimeOptions(playback_policy="smooth").playback_policy == "smooth"
    with pytest.raises(InvalidOptions) as caught:
        RuntimeOptions(playback_policy="soon")
    assert caught.value.code == "options.invalid_choice" and caught.value.data["field"] == "playback_policy"


# --- the plan on a virtual clock --------------------------------------------------------------------------------------
def _learnt(costs: Costs, prompt: int, beside: bool = True) -> CostModel:
    model = CostModel()
    for n in (30, 80, 150):
        model.add_call(prompt, n, costs.decode_s(n), alone=True)
        if beside:
            model.add_call(prompt, n, costs.decode_s(n, beside=True))
    model.add_steps([costs.step_s * 1000] * 10 + ([costs.step(beside=True) * 1000] * 30 if beside else []))
    if not beside:
        model.add_steps([costs.step_s * 1000] * 10, alone=True)
    for _ in range(3):
        model.add_prefill(costs.prefill_s * 1000)
    return model


def run_plan(
    costs: Costs,
    sentences: list[int],
    policy: str,
    prompt: int = 250,
    context: int = 20,
    turns: bool = False,
    slower: float = 1.0,
):
    """The plan on a virtual clock whose costs are those learnt (``slower``: every step and call takes that much
    longer): the LM steps, the decoder a second lane (the LM waits for it where the plan says so, always with
    ``turns``). Returns (plan, playback start, underruns, first chunk ready)."""
    model = _learnt(costs, prompt, beside=not turns)
    plan = StreamPlan("adaptive", 10, 25, context, model, prompt, policy=policy, turns=turns)
    costs = Costs(*(slower * v if isinstance(v, float) else v for v in astuple(costs)))
    plan.set_outline([(round(n / 1.8), 0.1) for n in sentences], cap=max(sentences))
    now, decoder_free = 0.0, 0.0
    ready: list[tuple[float, float]] = []
    delivered = 0

    def deliver_until(t):
        nonlocal delivered
        while delivered < len(ready) and ready[delivered][0] <= t:
            plan.delivered(ready[delivered][0], first=delivered == 0)
            delivered += 1

    def decode(pending, decoded, waits):
        nonlocal decoder_free, now
        plan.decoding(pending, now)
        beside = not waits and now < decoder_free + 1e9
        decoder_free = max(now, decoder_free) + costs.decode_s(pending + min(context, decoded), beside=beside)
        ready.append((decoder_free, pending * TOKEN_S))
        if waits:
            now = decoder_free
            deliver_until(now)

    for number, length in enumerate(sentences):
        plan.new_sentence(number)
        now += costs.prefill_s
        pending, decoded = 0, 0
        for i in range(length):
            now += costs.step(beside=decoder_free > now)
            deliver_until(now)
            pending += 1
            size = plan.window(pending, now, first_sentence=number == 0) if i < length - 1 else 0
            if size:
                decode(size, decoded, waits=not ready or plan.serial)
                decoded, pending = decoded + size, pending - size
        plan.sentence_done(length, round(length / 1.8), capped=True, now=now)
        split = plan.window(pending, now, first_sentence=number == 0, sentence_done=True)
        if split:
            decode(split, decoded, waits=plan.serial)
            decoded, pending = decoded + split, pending - split
        decode(pending, decoded, waits=plan.serial)
    deliver_until(float("inf"))
    start = plan.playback_start or ready[0][0]
    clock, underruns = max(ready[0][0], start), 0
    for at, seconds in ready:
        if at > clock + 1e-9:
            underruns += 1
            clock = at
        clock += seconds + 0.1
    return plan, start, underruns, ready[0][0]


def test_smooth_never_starts_before_the_forecast_and_does_not_stall():
    plan, start, underruns, first_ready = run_plan(SLOW, [125] * 5, "smooth")
    assert plan.forecast is not None and plan.planned_start is not None
    assert start >= plan.planned_start >= first_ready
    assert underruns == 0
    report = plan.forecast_report()
    assert report["policy"] == "smooth" and report["start_ms"] == pytest.approx(start * 1000, abs=0.1)
    assert report["chunks"] and all(c["arrive_ms"] <= c["play_ms"] for c in report["chunks"])


@pytest.mark.parametrize("slower", [1.0, 1.2])
def test_taking_turns_smooth_starts_sooner_and_does_not_stall(slower):
    """On the virtual clock with the models taking turns, the plan keeps playback fed from its earlier start, even
    where every step and call takes 20 % longer than learnt (twice the forecast's slack: the windows' growth keeps
    the rest; with windows that only pay GROWTH 1.5 times for their calls it stalls twice)."""
    plan, start, underruns, _first_ready = run_plan(TURNS, [125] * 5, "smooth", prompt=75, turns=True, slower=slower)
    assert plan.serial and underruns == 0
    assert start < 0.8 * shaped_start(TURNS, PARAGRAPH)


def test_fast_keeps_its_plan():
    """ "start fast" starts with the first chunk, as before the policy existed."""
    plan, start, underruns, first_ready = run_plan(SLOW, [125] * 5, "fast")
    assert plan.planned_start is None and plan.forecast is None and not plan.predictions
    assert start == pytest.approx(first_ready)
    assert underruns >= 1  # what "play smoothly" is for


def test_a_fast_machine_starts_smoothly_at_once():
    plan, start, underruns, first_ready = run_plan(FAST, [125] * 5, "smooth")
    assert underruns == 0 and start <= first_ready * (1 + SMOOTH_SLACK) + SMOOTH_MARGIN_S + 0.05


def test_finished_sentences_refine_the_estimate():
    model = CostModel()
    plan = StreamPlan("adaptive", 10, 25, 20, model, 250, policy="smooth")
    plan.set_outline([(50, 0.1), (100, 0.0)], cap=1000)
    before = plan.outline[1].tokens
    plan.sentence_done(150, 50, capped=False, now=0.0)  # 3 tokens a character, more than guessed
    assert plan.outline[0].tokens == 150 and plan.outline[0].done
    assert plan.outline[1].tokens == 300 > before
    assert model.tokens_per_char == pytest.approx(3.0)


def test_the_costs_file_keeps_the_new_figures_and_reads_old_ones():
    model = _learnt(replace(SLOW, prefill_s=0.18), 250)
    model.add_sentence(50, 90)
    again = CostModel()
    again.load_json(model.to_json())
    assert again.snapshot(250) == model.snapshot(250) and again.tokens_per_char == model.tokens_per_char
    assert again.prefill_s == pytest.approx(0.18) and again.snapshot(250).prefill_s == pytest.approx(0.18)
    dropped = ("beside", "steps_alone", "tokens_per_char", "prefills")
    old = {k: v for k, v in model.to_json().items() if k not in dropped}
    older = CostModel()
    older.load_json(old)  # written before the forecast: still read
    assert older.decoder_line(250) is not None


# --- end to end on the tiny stand-ins ---------------------------------------------------------------------------------
TEXT = "The quick brown fox jumps over the lazy dog. It was a bright cold day in April. The clocks struck thirteen."


def test_smooth_gives_the_same_audio_and_reports_its_forecast(bundles, voice_wav, tmp_path):
    # float32: the two policies' windows may differ, and the int8 decoder quantizes each call's activations by that
    # call's own range (test_stream_plan: windows give the one-shot audio through the float32 decoder)
    options = SynthesisOptions(seed=4)
    runtime = RuntimeOptions(provider="cpu", costs_dir=tmp_path, decoder_precision="fp32")
    pipe = Pipeline.from_bundle(bundles["turbo"], runtime)
    pipe.synthesize("Warm up. The costs are learnt here.", voice_wav, options)  # costs for the forecast
    fast = pipe.synthesize(TEXT, voice_wav, options, runtime=replace(runtime, playback_policy="fast"))
    smooth_runtime = replace(runtime, playback_policy="smooth")
    smooth = pipe.synthesize(TEXT, voice_wav, options, runtime=smooth_runtime)
    assert smooth.speech_tokens == fast.speech_tokens
    assert np.allclose(smooth.audio, fast.audio, atol=1e-6)
    forecast = smooth.report.forecast
    assert forecast["policy"] == "smooth" and forecast["requested"] == "smooth"
    assert forecast["start_ms"] is not None and forecast["chunks"]
    assert smooth.timings["play_start_ms"] >= smooth.timings["ttfa_ms"]
    speech = [c for c in smooth.chunks if c.kind == "speech"]
    assert all(c.play_start_ms is not None and c.forecast is not None for c in speech)
    assert fast.report.forecast["policy"] == "fast" and fast.report.forecast["start_ms"] is None
    assert fast.timings["play_start_ms"] == fast.timings["ttfa_ms"]
    assert all(c.play_start_ms is None for c in fast.chunks)


def test_a_start_still_ahead_when_every_chunk_is_ready_comes_at_once():
    """Costs measured on a busier machine over-state the wait: once all the audio exists, nothing can be late."""
    plan, start, _underruns, _first = run_plan(SLOW, [125] * 2, "smooth")
    late = plan.planned_start or 0.0
    plan.forecast = plan.forecast.shifted(late + 100.0) if plan.forecast else None
    plan.playback_start = late + 100.0
    plan.finished(late + 1.0)
    assert plan.planned_start == pytest.approx(late + 1.0) and plan.playback_start == pytest.approx(late + 1.0)
