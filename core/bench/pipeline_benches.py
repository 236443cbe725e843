"""Benchmarks of the whole pipeline where a real user's time goes (round 2): the decoder's fixed and per-token cost,
int8 compute for 4-bit weights, the streaming plan, whole-book throughput and cold start.

Each function takes the :class:`core.bench.runner.Bench` it runs in, alternates the two sides of a comparison in one
process (A, B, B, A …) and records medians; run them on a faithful bundle (``../shared/faithful``), whose decoder,
encoder and load cost like the real models'.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from core.bench.stats import alternate, summary
from core.engine import SAMPLE_RATE, SynthesisOptions

PARAGRAPH = (
    "The quick brown fox jumps over the lazy dog, and then it runs far away into the green hills. "
    "It was a bright cold day in April, and the clocks were striking thirteen. "
    "Winston Smith slipped quickly through the glass doors of Victory Mansions. "
    "The hallway smelt of boiled cabbage and old rag mats. "
    "At one end of it a coloured poster, too large for indoor display, had been tacked to the wall."
)
BOOK = " ".join(
    f"Sentence {word} of the book goes on for a little while before it ends."
    for word in ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")
)


def bundle_kind(root: Path) -> dict:
    """Where the figures come from: a faithful bundle (real architectures), a stand-in, or a real export."""
    faithful, standin = (root / "faithful.json").is_file(), (root / "standin.json").is_file()
    return {"path": str(root), "faithful": faithful, "standin": standin}


def decoder_costs(bench) -> None:
    """Decoder call time at 25/100/200 new tokens with the 10 s prompt → fixed + per-token cost; and the cost of a
    100-token call with a 10, 6 and 3 s voice prompt."""
    pipe = bench.pipe
    cond = pipe.condition(bench.voice).conditioning
    rng = np.random.default_rng(0)
    sizes = (25, 100, 200) if not bench.config.quick else (25, 100)
    points: list[tuple[int, float]] = []
    pipe.decode(cond, rng.integers(0, 6561, 10).tolist())  # the first call allocates: not timed
    for _ in range(max(1, bench.config.reps // 3)):
        for n in sizes:
            tokens = rng.integers(0, 6561, n).tolist()
            started = time.perf_counter()
            pipe.decode(cond, tokens)
            points.append((n, (time.perf_counter() - started) * 1000))
    per_token, fixed = statistics.linear_regression([n for n, _ in points], [ms for _, ms in points])
    by_size = {n: statistics.median(ms for k, ms in points if k == n) for n in sizes}
    prompts = {}
    tokens = rng.integers(0, 6561, 100).tolist()
    for seconds in (10.0, 6.0, 3.0):
        short = cond.with_decoder_prompt(seconds, "first")
        started = time.perf_counter()
        pipe.decode(short, tokens)
        prompts[f"{seconds:g}s"] = (time.perf_counter() - started) * 1000
    bench.report.setdefault("decoder", {}).update(
        {
            "fixed_ms": fixed,
            "per_token_ms": per_token,
            "prompt_tokens": cond.prompt_tokens,
            "call_ms": by_size,
            "call_100_tokens_by_prompt_ms": prompts,
        }
    )
    bench.log(
        f"{'Decoder call (10 s prompt)':<44} fixed {fixed:.0f} ms + {per_token:.1f} ms/token; "
        + ", ".join(f"{n} tokens {ms:.0f} ms" for n, ms in by_size.items())
    )
    bench.log(
        f"{'Decoder call, 100 tokens, by voice prompt':<44} "
        + ", ".join(f"{k} {ms:.0f} ms" for k, ms in prompts.items())
    )


def q4_int8(bench) -> None:
    """4-bit language model: int8 compute (accuracy level 4) vs fp32 compute, per step at batch 1 and 2 (CFG), and
    greedy-token agreement over a paragraph."""
    from core.engine import ChainedKV, Pipeline

    pipe = bench.pipe
    if pipe.capabilities.q4_compute is None:
        bench.log(f"{'q4 int8 compute':<44} skipped: the language model in use has no 4-bit weights")
        return
    other_mode = "fp32" if pipe.runtime.q4_compute == "int8" else "int8"
    other = type(bench)(
        Pipeline.from_bundle(pipe.files.root, replace(pipe.runtime, q4_compute=other_mode)),
        bench.config,
        log=lambda *_: None,
    )
    int8, fp32 = (bench, other) if other_mode == "fp32" else (other, bench)
    result = {}
    for batch, key in ((1, "step_ratio"), (2, "cfg_step_ratio")):
        if batch == 2 and not pipe.capabilities.supports_cfg:
            continue
        a_prefix = int8._prefix(ChainedKV, bench.config.short_context, batch)
        b_prefix = fp32._prefix(ChainedKV, bench.config.short_context, batch)
        a, b = alternate(
            bench.config.reps,
            lambda p=a_prefix, n=batch: int8._time_steps(ChainedKV, p, n),
            lambda p=b_prefix, n=batch: fp32._time_steps(ChainedKV, p, n),
        )
        bench._add(summary(f"q4 LM step, batch {batch}", "fp32 compute", b, "int8 compute", a))
        result[key] = statistics.median(a) / statistics.median(b)
    logits = []
    for side in (int8, fp32):  # the same prompt through both: how far apart are the logits of one step?
        runner = side._runner(ChainedKV)
        runner.adopt(*side._prefix(ChainedKV, bench.config.short_context))
        logits.append(np.array(runner.step(100), dtype=np.float32))
    result["max_logit_diff"] = float(np.abs(logits[0] - logits[1]).max())
    result["max_abs_logit"] = float(np.abs(logits[1]).max())
    options = SynthesisOptions(greedy=True, max_new_tokens=60 if bench.config.quick else 150)
    text = PARAGRAPH if not bench.config.quick else PARAGRAPH.split(". ")[0] + "."
    ta = int8.pipe.synthesize(text, bench.voice, options).speech_tokens
    tb = fp32.pipe.synthesize(text, bench.voice, options).speech_tokens
    same = sum(x == y for x, y in zip(ta, tb))
    result["token_agreement"] = same / max(len(ta), len(tb), 1)
    first = next((i for i, (x, y) in enumerate(zip(ta, tb)) if x != y), min(len(ta), len(tb)))
    result["tokens_before_first_difference"] = first
    bench.report["q4_int8"] = result
    bench.log(
        f"{'q4 int8: greedy token agreement':<44} {100 * result['token_agreement']:.1f} % "
        f"({first} tokens before the first difference); logits differ by at most "
        f"{result['max_logit_diff']:.3f} (largest logit {result['max_abs_logit']:.1f})"
    )


def _underruns(chunks: list[dict], start_ms: float | None = None) -> tuple[int, float]:
    """Playback from the first audio on (or from ``start_ms`` when that is later: a smooth start), chunk after chunk:
    how often (and how long in all) it had to wait."""
    audio = [c for c in chunks if c["samples"]]
    if not audio:
        return 0, 0.0
    clock, count, waited = max(audio[0]["at_ms"], start_ms or 0.0), 0, 0.0
    for c in audio:
        if c["at_ms"] > clock + 1:
            count, waited = count + 1, waited + c["at_ms"] - clock
            clock = c["at_ms"]
        clock += c["samples"] / SAMPLE_RATE * 1000
    return count, waited


def _rounds(reps: int, sides: dict) -> dict[str, list]:
    """Each side once per round, the order rotating from round to round (drift hits every side alike)."""
    names = list(sides)
    out: dict[str, list] = {name: [] for name in sides}
    for i in range(reps):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            out[name].append(sides[name]())
    return out


def _policy_runs(reports: list) -> list[dict]:
    """Per run: when playback started, how often and how long it stalled after that."""
    runs = []
    for r in reports:
        start = r.timings.get("play_start_ms", r.timings["ttfa_ms"])
        count, waited = _underruns(r.chunks, start)
        runs.append({"ttfa_ms": round(start, 1), "underruns": count, "underrun_s": round(waited / 1000, 3)})
    return runs


def streaming(bench, tokens_per_sentence: int = 125) -> None:
    """A five-sentence paragraph (each sentence capped at ``tokens_per_sentence``: a random-weight model does not
    stop by itself): streaming with the adaptive plan, playback started fast and smoothly, vs one-shot decoding per
    sentence; the three alternate in one process."""
    pipe, base = bench.pipe, bench.pipe.runtime
    options = SynthesisOptions(seed=1, max_new_tokens=tokens_per_sentence, cfg_weight=0.0)
    on = replace(base, stream=True, stream_plan="adaptive", playback_policy="fast")
    smooth, off = replace(on, playback_policy="smooth"), replace(base, stream=False)
    pipe.synthesize(PARAGRAPH, bench.voice, options, runtime=on)  # warm: caches, and the plan learns the costs
    runs: dict[str, list] = {"stream": [], "smooth": [], "one-shot": []}

    def run(runtime, label):
        def once():
            result = pipe.synthesize(PARAGRAPH, bench.voice, options, runtime=runtime)
            runs[label].append(result.report)
            return result.timings["total_ms"]

        return once

    totals = _rounds(
        bench.config.stream_reps,
        {"stream": run(on, "stream"), "smooth": run(smooth, "smooth"), "one-shot": run(off, "one-shot")},
    )
    a, b = totals["stream"], totals["one-shot"]
    bench._add(summary("Five-sentence paragraph, total", "one-shot", b, "adaptive streaming", a))
    ttfa = statistics.median(r.timings["ttfa_ms"] for r in runs["stream"])
    under = [_underruns(r.chunks) for r in runs["stream"]]
    calls = statistics.median(sum(1 for c in r.chunks if c["kind"] == "speech") for r in runs["stream"])
    audio_s = runs["stream"][0].samples / SAMPLE_RATE
    one_shot_rtf = statistics.median(b) / 1000 / audio_s
    fast_runs, smooth_runs = _policy_runs(runs["stream"]), _policy_runs(runs["smooth"])
    bench.report["streaming"] = {
        "ttfa_ms": ttfa,
        "total_ratio": statistics.median(a) / statistics.median(b),
        "underruns_after_first": max(u[0] for u in under),
        "underrun_ms": max(u[1] for u in under),
        "decoder_calls": calls,
        "sentences": 5,
        "audio_seconds": audio_s,
        "one_shot_rtf": one_shot_rtf,
        "one_shot_ttfa_ms": statistics.median(r.timings["ttfa_ms"] for r in runs["one-shot"]),
        "runs": fast_runs,
    }
    forecasts = [r.forecast for r in runs["smooth"]]
    bench.report["streaming_smooth"] = {
        "ttfa_ms": statistics.median(r["ttfa_ms"] for r in smooth_runs),
        "underruns_after_first": max(r["underruns"] for r in smooth_runs),
        "underrun_s": max(r["underrun_s"] for r in smooth_runs),
        "runs_without_underrun": sum(1 for r in smooth_runs if not r["underruns"]),
        "total_ratio": statistics.median(totals["smooth"]) / statistics.median(b),
        "decoder_calls": statistics.median(sum(1 for c in r.chunks if c["kind"] == "speech") for r in runs["smooth"]),
        "serial": [f.get("serial") for f in forecasts],
        "forecast_start_ms": [f.get("start_ms") for f in forecasts],
        "predicted_rtf": [f.get("rtf") for f in forecasts],
        "runs": smooth_runs,
    }
    bench.report["oneshot"] = {"rtf": one_shot_rtf, "total_ms": statistics.median(b), "audio_seconds": audio_s}
    bench.log(
        f"{'Streaming (adaptive): time to first audio':<44} {ttfa:.0f} ms; {calls:g} decoder calls for 5 "
        f"sentences; underruns after the first chunk: {max(u[0] for u in under)} "
        f"({max(u[1] for u in under):.0f} ms); one-shot RTF {one_shot_rtf:.2f}"
    )
    _log_policies(bench, fast_runs, smooth_runs)
    pipe.update_runtime(base)


def _log_policies(bench, fast: list[dict], smooth: list[dict]) -> None:
    """Both playback policies side by side: first audio, runs with a stall, stalls and stalled seconds per run."""
    bench.log(f"{'Playback policy, five sentences':<44} {'first audio (median)':>21} {'runs stalled':>13}  per run")
    for label, runs in (("start fast", fast), ("play smoothly", smooth)):
        median = statistics.median(r["ttfa_ms"] for r in runs) / 1000
        stalled = sum(1 for r in runs if r["underruns"])
        each = ", ".join(f"{r['ttfa_ms'] / 1000:.2f} s/{r['underruns']}x/{r['underrun_s']:.1f} s" for r in runs)
        bench.log(f"  {label:<42} {median:>19.2f} s {stalled:>6} of {len(runs):<4}  {each}")


def book(bench, tokens_per_sentence: int = 75) -> None:
    """Twelve sentences (eight with ``--quick``) rendered as a narration project with nobody listening: the render's
    look-ahead (:mod:`core.narration.rendering.lookahead`: ``lm_batch`` sentences in one language-model batch where the
    model can, ahead one at a time where it cannot, neighbours joined in the decoder) vs one segment at a time (one
    decoder call per sentence). Throughput = audio seconds per second of rendering."""
    import tempfile

    from core.narration import create_project, import_document, parse_text, render_pending, source_identity

    pipe, base = bench.pipe, bench.pipe.runtime
    sentences = BOOK.split(". ")
    sentences = [s if s.endswith(".") else s + "." for s in sentences]
    if bench.config.quick:
        sentences = sentences[:8]
    text = "\n\n".join(sentences)
    voice = str(bench._voice_file())
    batch = base.lm_batch
    batched = replace(base, stream=False, lm_batch=batch, joined_decoding=True)
    serial = replace(base, stream=False, lm_batch=1, joined_decoding=False)

    def render(runtime):
        def run():
            pipe.update_runtime(runtime)
            with tempfile.TemporaryDirectory(prefix="chatterbox-bench-book-") as folder:
                project = create_project(Path(folder) / "book.cbproj", "Book")
                import_document(
                    project, parse_text(text, "Book"), voice, None, None, source_identity("book", text, voice)
                )
                project.settings.update({"max_new_tokens": tokens_per_sentence, "cfg_weight": 0.0})
                project.seed = 2
                project.save()
                result = render_pending(project, pipe)
            return result.audio_seconds / result.elapsed_s

        return run

    a, b = alternate(max(2, bench.config.stream_reps), render(batched), render(serial))
    lm_batched = batch > 1 and pipe.can_batch(SynthesisOptions(seed=2, cfg_weight=0.0))
    label = f"LM batch of {batch} + joined" if lm_batched else "ahead + joined decoding"
    bench._add(summary(f"Book of {len(sentences)} sentences, audio s per s", "one at a time", b, label, a, unit="x"))
    bench.report["book"] = {
        "throughput_ratio": statistics.median(a) / statistics.median(b),
        "audio_per_second": statistics.median(a),
        "serial_audio_per_second": statistics.median(b),
        "sentences": len(sentences),
        "lm_batch": batch,
        "lm_batched": lm_batched,
        "samples": {"batched": a, "serial": b},
    }
    pipe.update_runtime(base)


COLD_START = """
import sys, time
started = float(sys.argv[4])
from core.engine import RuntimeOptions, SynthesisOptions
from core.engine import Pipeline
from core.engine import SynthesisRequest
pipe = Pipeline.from_bundle(sys.argv[1], RuntimeOptions(precision=sys.argv[2], provider=sys.argv[3]),
                            background=True)
loaded = time.time()
for chunk in pipe.stream(SynthesisRequest("Hello there, this is the first sentence.", sys.argv[5] or None,
                                          SynthesisOptions(seed=1, max_new_tokens=60))):
    if chunk.kind == "speech" and chunk.samples.size:
        print(f"{(loaded - started) * 1000:.0f} {(time.time() - started) * 1000:.0f}", flush=True)
        break
"""


def cold_start(bench, voice_file: Path | None) -> None:
    """From process start (a new Python) to the first audio of one sentence, and how much of it is loading."""
    pipe = bench.pipe
    started = time.time()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            COLD_START,
            str(pipe.files.root),
            pipe.runtime.precision,
            pipe.runtime.provider,
            repr(started),
            str(voice_file or ""),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0 or not proc.stdout.strip():
        bench.log(f"cold start failed: {proc.stderr.strip().splitlines()[-1:]}")
        return
    load_ms, first_ms = (float(x) for x in proc.stdout.split()[:2])
    bench.report["cold_start"] = {"first_audio_ms": first_ms, "load_ms": load_ms}
    bench.log(
        f"{'Cold start: process start to first audio':<44} {first_ms:.0f} ms (of which {load_ms:.0f} ms "
        "until the model was loaded)"
    )


def export_finishing(bench) -> None:
    """A project of the book's sentences rendered through the pipeline, then exported with pace 1.25, loudness
    -16 LUFS and MP3 encoding: the export's share of the synthesis time of the same text (target < 3 %)."""
    import tempfile

    from core.narration import (
        ExportRequest,
        create_project,
        export_project,
        import_document,
        parse_text,
        render_pending,
        source_identity,
    )

    text = BOOK if not bench.config.quick else " ".join(BOOK.split(". ")[:6]) + "."
    with tempfile.TemporaryDirectory(prefix="chatterbox-bench-export-") as temporary:
        folder = Path(temporary)
        project = create_project(folder / "bench.cbproj", "Bench")
        voice = str(bench._voice_file())
        import_document(project, parse_text(text, "Bench"), voice, None, None, source_identity("bench", text, voice))
        project.settings.update({"max_new_tokens": 75, "cfg_weight": 0.0})
        project.seed = 2
        project.save()
        summary_ = render_pending(project, bench.pipe)
        project.set_speed(None, 1.25)
        started = time.perf_counter()
        result = export_project(project, ExportRequest(out=folder / "book.mp3", loudness=-16.0))
        finishing_s = time.perf_counter() - started
    share = finishing_s / summary_.elapsed_s
    bench.log(
        f"  export (pace 1.25 + loudness + MP3) {finishing_s * 1000:.0f} ms for {result.seconds:.1f} s of "
        f"audio; synthesis {summary_.elapsed_s:.1f} s: share {share * 100:.2f} %"
    )
    bench.report["export"] = {
        "finishing_share": share,
        "finishing_ms": finishing_s * 1000,
        "synthesis_s": summary_.elapsed_s,
        "audio_seconds": result.seconds,
        "segments": len(project.segments),
    }
