"""The speech decoder's levers, each with what it costs and how far its output moves, for one set of speech tokens.

The reference is the decoder as exported: float32, the full voice prompt (10 s at most), ten flow steps (the graph
unrolls them; see docs/PERFORMANCE.md for what fewer would take). Each lever is measured against it for the same
tokens: ms per call, and the waveform and log-mel SNR (:mod:`core.bench.output_snr`). ``decoder.output_snr_db`` is
the chosen defaults' difference (what a user gets unless they change a setting).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace

import numpy as np

from core.bench.output_snr import log_mel_snr_db, waveform_snr_db
from core.engine import SAMPLE_RATE, RuntimeOptions

FULL_PROMPT = 10.0
LEVER_TOKENS = 100
"""New tokens per measured call: 4 s of speech, a sentence."""


def _tokens() -> list[int]:
    return np.random.default_rng(0).integers(0, 6561, LEVER_TOKENS).tolist()


def _reference_runtime(runtime: RuntimeOptions) -> RuntimeOptions:
    return replace(runtime, decoder_precision="fp32", graph_optimization="all")


def _time(decode, cond, tokens, reps: int) -> tuple[float, np.ndarray]:
    times, wav = [], np.zeros(0, dtype=np.float32)
    for _ in range(reps):
        started = time.perf_counter()
        wav = decode(cond, tokens)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), wav


def _difference(reference: np.ndarray, wav: np.ndarray) -> dict:
    return {
        "waveform_snr_db": round(waveform_snr_db(reference, wav), 2),
        "log_mel_snr_db": round(log_mel_snr_db(reference, wav, SAMPLE_RATE), 2),
    }


def output_difference(bench) -> None:
    """``decoder.output_snr_db`` (and ``decoder.output_log_mel_snr_db``): the decoder as the pipeline runs it (its
    precision, its voice prompt) against the float32 decoder with the full prompt, for the same tokens."""
    pipe = bench.pipe
    if pipe.info.variant == "turbo":
        return
    cond = pipe.condition(bench.voice).conditioning
    runtime = pipe.runtime
    tokens = _tokens()
    reference = pipe.other_decoder(_reference_runtime(runtime))(cond, tokens)
    ours = pipe.decode(cond.with_decoder_prompt(runtime.decoder_prompt_seconds, runtime.decoder_prompt_window), tokens)
    diff = _difference(reference, ours)
    decoder = bench.report.setdefault("decoder", {})
    decoder["output_snr_db"] = diff["waveform_snr_db"]
    decoder["output_log_mel_snr_db"] = diff["log_mel_snr_db"]
    decoder["output_settings"] = {
        "decoder_precision": pipe.files.precisions["conditional_decoder"],
        "decoder_prompt_seconds": runtime.decoder_prompt_seconds,
        "decoder_prompt_window": runtime.decoder_prompt_window,
        "flow_steps": 10,
    }
    bench.log(
        f"{'Decoder output vs fp32 / full prompt':<44} waveform SNR {diff['waveform_snr_db']:.1f} dB, "
        f"log-mel SNR {diff['log_mel_snr_db']:.1f} dB ({decoder['output_settings']['decoder_precision']}, "
        f"{runtime.decoder_prompt_seconds:g} s prompt)"
    )


def decoder_levers(bench) -> None:
    """Every lever on one set of tokens in one run: precision, voice-prompt length and window, ORT settings."""
    pipe = bench.pipe
    runtime = pipe.runtime
    cond = pipe.condition(bench.voice).conditioning
    tokens = _tokens()
    reps = 1 if bench.config.quick else 3
    audio_s = LEVER_TOKENS / 25
    reference_runtime = _reference_runtime(runtime)
    loaded = {"fp32": pipe.other_decoder(reference_runtime)}
    loaded["fp32"](cond, tokens[:10])  # the first call allocates: not timed
    ref_ms, reference = _time(loaded["fp32"], cond, tokens, reps)
    rows = [{"lever": "fp32, full prompt (reference)", "ms": ref_ms, **_difference(reference, reference)}]

    def measure(label: str, decode, prompt: float = FULL_PROMPT, window: str = "best") -> None:
        ms, wav = _time(decode, cond.with_decoder_prompt(prompt, window), tokens, reps)
        rows.append({"lever": label, "ms": ms, **_difference(reference, wav)})

    loaded["q8"] = pipe.other_decoder(replace(reference_runtime, decoder_precision="q8"))
    loaded["q8"](cond, tokens[:10])
    measure("q8, full prompt", loaded["q8"])
    for seconds in (6.0, 4.5, 3.0):
        measure(f"fp32, best {seconds:g} s of the prompt", loaded["fp32"], seconds)
    measure("fp32, first 3 s of the prompt", loaded["fp32"], 3.0, "first")
    for seconds in (6.0, 4.5, 3.0):
        measure(f"q8, best {seconds:g} s of the prompt", loaded["q8"], seconds)
    for label, changes in (
        ("fp32, 1 thread", {"threads": 1}),
        ("fp32, graph optimisation basic", {"graph_optimization": "basic"}),
        ("fp32, graph optimisation extended", {"graph_optimization": "extended"}),
        ("fp32, spinning threads", {"spinning": True}),
    ):
        decode = pipe.other_decoder(replace(reference_runtime, **changes))
        decode(cond, tokens[:10])
        measure(label, decode)
        del decode
    for row in rows:
        row["ratio"] = row["ms"] / ref_ms
        row["rtf"] = row["ms"] / 1000 / audio_s
        bench.log(
            f"  {row['lever']:<42} {row['ms']:>7.0f} ms  ×{row['ratio']:.2f}  RTF {row['rtf']:.2f}  "
            f"waveform {row['waveform_snr_db']:6.1f} dB  log-mel {row['log_mel_snr_db']:6.1f} dB"
        )
    bench.report.setdefault("decoder", {})["levers"] = {
        "tokens": LEVER_TOKENS,
        "prompt_tokens": cond.prompt_tokens,
        "reps": reps,
        "rows": rows,
    }
