"""``bench-convert``: voice conversion's speed and first audio, and what the seeded decoder noise changes.

Two parts, one model load:

1. **Conversion.** A short warm-up conversion (sessions allocate on their first call), then conversions of the
   source, alternately with the decoder on its own thread (the encoder reads the next window meanwhile:
   ``overlapped``) and without (``sequential``): time to the first converted audio, the whole time, × real time
   (audio seconds ÷ wall seconds), the encoder's and decoder's time, and the ratio of the two sides.
2. **Seeded noise against the graph's own.** The same speech tokens (the source's first window) decoded in the target
   voice, alternately by the float32 decoder as exported (unseeded random nodes) and by the same decoder with its
   noise drawn from the seed (:mod:`core.engine.model.seeded_noise`), each call a new draw. Reported: how far two of
   the graph's own draws are from each other, how far a seeded draw is from a graph draw, and two seeded draws from
   each other (waveform and log-mel SNR, :mod:`core.bench.output_snr`), the level and spectral difference, and each
   call's time. Seeded noise that is "just another draw" scores as the graph's own draws do.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from core.bench.output_snr import log_mel_db, log_mel_snr_db, waveform_snr_db
from core.engine import (
    SAMPLE_RATE,
    ConversionRequest,
    Pipeline,
    RuntimeOptions,
    load_source,
    plan_windows,
    source_from_array,
)
from core.standin import synthetic_voice


def bench_convert(
    bundle: Path,
    voice: Path | None,
    source: Path | None = None,
    seconds: float = 30.0,
    runtime: RuntimeOptions | None = None,
    noise_calls: int = 3,
    say=print,
    runs: int = 1,
) -> dict[str, Any]:
    runtime = runtime or RuntimeOptions()
    say(f"loading {bundle} ...")
    started = time.perf_counter()
    pipe = Pipeline.from_bundle(bundle, runtime)
    load_s = time.perf_counter() - started
    recording = (
        load_source(source)
        if source is not None
        else source_from_array(synthetic_voice(seconds, seed=5, pitch_hz=140), SAMPLE_RATE, "synthetic speech")
    )
    warm = source_from_array(recording.samples[: int(1.5 * SAMPLE_RATE)], SAMPLE_RATE, "warm-up")
    pipe.convert(warm, voice, seed=0)  # first calls allocate; the target's conditioning is cached as for Speak
    sides: dict[str, list[dict[str, Any]]] = {"overlapped": [], "sequential": []}
    tokens: list[int] = []
    for run in range(runs):
        for side in sides:  # alternated, so that both see the same machine
            pipe.update_runtime(replace(runtime, decoder_thread=side == "overlapped"))
            say(f"converting {recording.seconds:.1f} s ({side}, run {run + 1} of {runs}) ...")
            found, tokens = _convert_once(pipe, recording, voice)
            sides[side].append(found)
            say(
                f"  first audio {found['first_audio_ms']:.0f} ms, {found['x_real_time']:.2f}x real time "
                f"({found['windows']} windows)"
            )
    pipe.update_runtime(runtime)
    conversion = {side: _median_run(found) for side, found in sides.items()}
    conversion["overlapped_over_sequential"] = round(
        conversion["overlapped"]["total_s"] / conversion["sequential"]["total_s"], 3
    )
    first_window = plan_windows(recording.samples)[0].tokens
    noise = _noise_comparison(pipe, voice, tokens[:first_window], runtime, noise_calls, say)
    return {
        "bundle": str(bundle),
        "variant": pipe.info.variant,
        "decoder_precision": pipe.files.precisions["conditional_decoder"],
        "decoder_prompt_seconds": pipe.runtime.decoder_prompt_seconds,
        "threads": runtime.threads,
        "load_s": round(load_s, 2),
        "conversion": conversion,
        "noise": noise,
    }


def _convert_once(pipe: Pipeline, recording: Any, voice: Path | None) -> tuple[dict[str, Any], list[int]]:
    stream = pipe.convert_stream(ConversionRequest(recording, voice, seed=1))
    started = time.perf_counter()
    first_ms = None
    for _chunk in stream:
        first_ms = first_ms if first_ms is not None else (time.perf_counter() - started) * 1000
    wall = time.perf_counter() - started
    report = stream.report
    found = {
        "source_seconds": round(recording.seconds, 3),
        "windows": len(stream.windows),
        "first_window_seconds": round(stream.windows[0].keep / SAMPLE_RATE, 3),
        "first_audio_ms": round(first_ms or 0.0, 1),
        "total_s": round(wall, 3),
        "x_real_time": round(recording.seconds / wall, 3),
        "rtf": round(wall / recording.seconds, 3),
        "encoder_ms": report.timings["encoder_ms"],
        "decoder_ms": report.timings["decoder_ms"],
    }
    return found, report.speech_tokens


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median total time (its own figures, not a mix of runs)."""
    ordered = sorted(runs, key=lambda found: found["total_s"])
    return {**ordered[(len(ordered) - 1) // 2], "runs": len(runs)}


def _noise_comparison(
    pipe: Pipeline, voice: Path | None, tokens: list[int], runtime: RuntimeOptions, calls: int, say
) -> dict[str, Any]:
    fp32 = replace(runtime, decoder_precision="fp32")
    say("loading the float32 decoder twice: as exported (its own noise) and with seeded noise ...")
    graph = pipe.other_decoder(fp32, graph_noise=True)
    seeded = pipe.other_decoder(fp32)
    cond = pipe.condition(voice).conditioning.with_decoder_prompt(
        runtime.decoder_prompt_seconds, runtime.decoder_prompt_window
    )
    graph(cond, tokens[:10]), seeded(cond, tokens[:10], seed=0)  # first calls allocate
    outputs: dict[str, list[np.ndarray]] = {"graph": [], "seeded": []}
    times: dict[str, list[float]] = {"graph": [], "seeded": []}
    for i in range(calls + 1):
        for name, decode in (("graph", graph), ("seeded", seeded)):
            started = time.perf_counter()
            outputs[name].append(decode(cond, tokens) if name == "graph" else decode(cond, tokens, seed=100 + i))
            times[name].append((time.perf_counter() - started) * 1000)
    g, s = outputs["graph"], outputs["seeded"]

    def pairs(a: list[np.ndarray], b: list[np.ndarray], offset: int) -> dict[str, float]:
        wave = [waveform_snr_db(a[i], b[i + offset]) for i in range(calls)]
        mel = [log_mel_snr_db(a[i], b[i + offset], SAMPLE_RATE) for i in range(calls)]
        return {
            "waveform_snr_db": round(statistics.median(wave), 2),
            "log_mel_snr_db": round(statistics.median(mel), 2),
        }

    rms = {name: float(np.sqrt(np.mean(np.concatenate(v) ** 2))) for name, v in outputs.items()}
    spectra = {name: _spectrum(found) for name, found in outputs.items()}
    result = {
        "tokens": len(tokens),
        "graph_vs_graph": pairs(g, g, 1),
        "seeded_vs_graph": pairs(s, g, 0),
        "seeded_vs_seeded": pairs(s, s, 1),
        "level_difference_db": round(20 * np.log10(rms["seeded"] / rms["graph"]), 3),
        "largest_band_difference_db": round(float(np.max(np.abs(spectra["seeded"] - spectra["graph"]))), 3),
        "largest_band_difference_db_graph_halves": round(
            float(np.max(np.abs(_spectrum(g[0::2]) - _spectrum(g[1::2])))), 3
        ),
        "max_abs_difference_graph_vs_graph": round(float(np.max(np.abs(g[0] - g[1]))), 4),
        "call_ms": {name: round(statistics.median(v), 1) for name, v in times.items()},
    }
    say(
        f"noise: graph vs graph {result['graph_vs_graph']['log_mel_snr_db']} dB log-mel, seeded vs graph "
        f"{result['seeded_vs_graph']['log_mel_snr_db']} dB, level {result['level_difference_db']:+.2f} dB, "
        f"call {result['call_ms']['graph']} → {result['call_ms']['seeded']} ms"
    )
    return result


def _spectrum(outputs: list[np.ndarray]) -> np.ndarray:
    """The mean level of each of the 80 mel bands over ``outputs``, in dB."""
    return np.mean([log_mel_db(x, SAMPLE_RATE).mean(axis=0) for x in outputs], axis=0)
