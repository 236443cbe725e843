"""The speech decoder's levers, each with what it costs and how far its output moves, for one set of speech tokens.

The reference is the decoder as exported: float32, the full voice prompt (10 s at most), ten flow steps (the graph
unrolls them; see docs/PERFORMANCE-LOG.md for what fewer would take). Each lever is measured against it for the same
tokens: ms per call, and the waveform and log-mel SNR (:mod:`core.bench.output_snr`). ``decoder.output_snr_db`` is
the chosen defaults' difference (what a user gets unless they change a setting).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace

import numpy as np

from core.bench.output_snr import log_mel_snr_db, waveform_snr_db
from core.bench.stats import alternate, summary
from core.engine import SAMPLE_RATE, RuntimeOptions

FULL_PROMPT = 10.0
LEVER_TOKENS = 100
"""New tokens per measured call: 4 s of speech, a sentence."""


def _tokens() -> list[int]:
    return np.random.default_rng(0).integers(0, 6561, LEVER_TOKENS).tolist()


def _reference_runtime(runtime: RuntimeOptions) -> RuntimeOptions:
    return replace(runtime, decoder_precision="fp32", decoder_flow_steps=None, graph_optimization="all")


def _fresh(pipe, runtime: RuntimeOptions):
    """A new decoder session with repeatable noise (:mod:`core.engine.model.fixed_noise`): its n-th call draws the
    same noise as the reference's n-th call, so the difference measured is the lever's, not the model's own
    randomness."""
    return pipe.other_decoder(runtime, fixed_noise=True)


def _time(decode, cond, tokens, reps: int, first_ms: float | None = None) -> tuple[float, np.ndarray]:
    """Median ms of ``reps`` calls (with none, ``first_ms``: the first call's time, as ``--quick`` takes it)."""
    if reps == 0 and first_ms is not None:
        return first_ms, np.zeros(0, dtype=np.float32)
    times, wav = [], np.zeros(0, dtype=np.float32)
    for _ in range(max(1, reps)):
        started = time.perf_counter()
        wav = decode(cond, tokens)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), wav


def _timed(decode, cond, tokens) -> tuple[np.ndarray, float]:
    started = time.perf_counter()
    wav = decode(cond, tokens)
    return wav, (time.perf_counter() - started) * 1000


def _difference(reference: np.ndarray, wav: np.ndarray) -> dict:
    return {
        "waveform_snr_db": round(waveform_snr_db(reference, wav), 2),
        "log_mel_snr_db": round(log_mel_snr_db(reference, wav, SAMPLE_RATE), 2),
    }


def output_difference(bench) -> None:
    """``decoder.output_snr_db`` (and ``decoder.output_log_mel_snr_db``): the decoder as the pipeline runs it (its
    precision, flow steps and voice prompt) against the float32, 10-step decoder with the full prompt, for the same
    tokens and the same noise."""
    pipe = bench.pipe
    if pipe.info.variant == "turbo":
        return
    cond = pipe.condition(bench.voice).conditioning
    runtime = pipe.runtime
    tokens = _tokens()
    reference = _fresh(pipe, _reference_runtime(runtime))(cond, tokens)
    short = cond.with_decoder_prompt(runtime.decoder_prompt_seconds, runtime.decoder_prompt_window)
    ours = _fresh(pipe, runtime)(short, tokens)
    diff = _difference(reference, ours)
    decoder = bench.report.setdefault("decoder", {})
    decoder["output_snr_db"] = diff["waveform_snr_db"]
    decoder["output_log_mel_snr_db"] = diff["log_mel_snr_db"]
    decoder["output_settings"] = {
        "decoder_precision": pipe.files.precisions["conditional_decoder"],
        "decoder_flow_steps": runtime.decoder_flow_steps or 10,
        "decoder_prompt_seconds": runtime.decoder_prompt_seconds,
        "decoder_prompt_window": runtime.decoder_prompt_window,
    }
    settings = decoder["output_settings"]
    bench.log(
        f"{'Decoder output vs fp32 / 10 steps / full prompt':<44} waveform SNR {diff['waveform_snr_db']:.1f} dB, "
        f"log-mel SNR {diff['log_mel_snr_db']:.1f} dB ({settings['decoder_precision']}, "
        f"{settings['decoder_flow_steps']} steps, {runtime.decoder_prompt_seconds:g} s prompt)"
    )


def decoder_levers(bench) -> None:
    """Every lever on one set of tokens in one run: precision, flow steps, voice-prompt length and window, ORT
    settings. Each row is a fresh session with repeatable noise (:mod:`core.engine.model.fixed_noise`), warmed with
    the same short call, so its measured call draws the reference's noise: the flow's starting noise for the new
    speech is the same whatever the prompt's length, and the difference is the lever's alone. The yardstick is the
    model's own call-to-call difference: the decoder as users run it, on the same tokens."""
    pipe = bench.pipe
    runtime = pipe.runtime
    full = pipe.condition(bench.voice).conditioning
    tokens = _tokens()
    reps = 0 if bench.config.quick else 3  # --quick: each session's first call is its time
    audio_s = LEVER_TOKENS / 25
    reference_runtime = _reference_runtime(runtime)
    rows: list[dict] = []
    reference = np.zeros(0, dtype=np.float32)
    ref_ms = 0.0

    def measure(changes: dict, cond) -> tuple[np.ndarray, float]:
        decode = _fresh(pipe, replace(reference_runtime, **changes))
        decode(cond, tokens[:10])  # the first call allocates: not timed; every session's draws the same noise
        first, first_ms = _timed(decode, cond, tokens)
        ms, _ = _time(decode, cond, tokens, reps, first_ms)
        return first, ms

    def add(lever: str, ms: float, wav: np.ndarray) -> None:
        """One row, printed as soon as it is measured (a faithful Original run takes minutes)."""
        row = {"lever": lever, "ms": ms, **_difference(reference, wav), "ratio": ms / ref_ms}
        row["rtf"] = ms / 1000 / audio_s
        rows.append(row)
        bench.log(
            f"  {lever:<46} {ms:>7.0f} ms  ×{row['ratio']:.2f}  RTF {row['rtf']:.2f}  "
            f"waveform {row['waveform_snr_db']:6.1f} dB  log-mel {row['log_mel_snr_db']:6.1f} dB"
        )

    def row(label: str, prompt_s: float | None = None, window: str = "best", **changes) -> None:
        cond = full if prompt_s is None else full.with_decoder_prompt(prompt_s, window)
        wav, ms = measure(changes, cond)
        add(label, ms, wav)

    unrolled = pipe.info.variant != "turbo"  # Turbo's decoder has two flow steps of its own, nothing to cut
    reference, ref_ms = measure({}, full)
    add("fp32, 10 steps, full prompt (reference)" if unrolled else "fp32, full prompt (reference)", ref_ms, reference)
    # The yardstick: the same tokens through the decoder as users run it (its own noise on every call).
    add("fp32, the same call again (other noise)", ref_ms, pipe.other_decoder(reference_runtime)(full, tokens))
    row("q8", decoder_precision="q8")
    for steps in (5, 3) if unrolled else ():
        row(f"fp32, {steps} flow steps", decoder_flow_steps=steps)
    for steps in (7, 5, 4, 3, 2) if unrolled else ():
        row(f"q8, {steps} flow steps", decoder_precision="q8", decoder_flow_steps=steps)
    for seconds in (6.0, 4.5, 3.0):
        row(f"fp32, best {seconds:g} s of the prompt", seconds)
    row("fp32, first 3 s of the prompt", 3.0, "first")
    for seconds in (4.5, 3.0):
        label = f"q8{', 5 flow steps' if unrolled else ''}, best {seconds:g} s of the prompt"
        row(label, seconds, decoder_precision="q8", decoder_flow_steps=5)
    row("fp32, 1 thread", threads=1)
    row("fp32, graph optimisation basic", graph_optimization="basic")
    row("fp32, graph optimisation extended", graph_optimization="extended")
    bench.report.setdefault("decoder", {})["levers"] = {
        "tokens": LEVER_TOKENS,
        "prompt_tokens": full.prompt_tokens,
        "reps": reps,
        "rows": rows,
    }


CONV_CALLS = (10, LEVER_TOKENS)
"""New tokens per call in the blocked-convolutions comparison: the stream's first window, and a sentence."""


def blocked_convolutions(bench) -> None:
    """The decoder's convolutions 2-D, in onnxruntime's blocked layout (:mod:`core.engine.model.blocked_convolutions`),
    against 1-D as exported: two sessions of the decoder as the pipeline runs it (its precision, flow steps and voice
    prompt), the same tokens and noise, calls alternating; ``report["blocked_convolutions"]["calls"]``: per call
    size both medians, their ratio and the outputs' difference (float32 rounding: the arithmetic is the same)."""
    pipe = bench.pipe
    runtime = pipe.runtime
    sides = [pipe.other_decoder(replace(runtime, blocked_convolutions=on)) for on in (False, True)]
    cond = pipe.condition(bench.voice).conditioning.with_decoder_prompt(
        runtime.decoder_prompt_seconds, runtime.decoder_prompt_window
    )
    tokens = _tokens()
    for decode in sides:
        decode(cond, tokens[:10], seed=1)  # the first call allocates: not timed
    reps = 5 if bench.config.quick else bench.config.reps
    calls = {}
    for count in CONV_CALLS:
        a, b, outputs = _alternating_calls(sides, cond, tokens[:count], reps)
        result = summary(f"Decoder call, {count} new tokens, blocked convolutions", "1-D", a, "2-D", b)
        bench._add(result)
        calls[str(count)] = {
            "tokens": count,
            "before_ms": result["a_median"],
            "after_ms": result["b_median"],
            "ratio": result["ratio_b_over_a"],
            "waveform_snr_db": round(waveform_snr_db(outputs[0], outputs[1]), 1),
        }
    bench.report["blocked_convolutions"] = {"calls": calls, "reps": reps}


def _alternating_calls(sides, cond, tokens: list[int], reps: int) -> tuple[list[float], list[float], list[np.ndarray]]:
    """``reps`` timed calls of each decoder in ``sides`` (the same tokens and noise), alternating; the ms of each
    side's calls and each side's last output."""
    outputs: list[np.ndarray] = [np.zeros(0, dtype=np.float32)] * 2

    def call(side: int) -> float:
        wav, ms = _timed(lambda c, t: sides[side](c, t, seed=1), cond, tokens)
        outputs[side] = wav
        return ms

    a, b = alternate(reps, lambda: call(0), lambda: call(1))
    return a, b, outputs
