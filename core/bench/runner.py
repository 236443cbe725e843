"""``python -m core bench``: every optimisation measured against its own baseline, in one process.

Each comparison alternates its two sides (A, B, A, B, ...) so that machine drift and thermal effects hit both, and
reports medians and the ratio. No numbers are hard-coded here; ratios are what to compare between machines.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import onnxruntime as ort

import core.bench.pipeline_benches as bp
from core.bench.decoder_levers import blocked_convolutions, decoder_levers, output_difference
from core.bench.stats import alternate, summary
from core.engine import (
    LOGITS_VOCAB,
    SAMPLE_RATE,
    ChainedKV,
    CopiedKV,
    DecodeStats,
    Pipeline,
    RuntimeOptions,
    Sampler,
    SynthesisOptions,
    generate,
    step_overhead_share,
    voice_from_array,
)
from core.engine.model.sessions import spins_while_running
from core.standin.build import synthetic_voice
from core.wording import describe_notice

ONLY_WHEN_NAMED = ("decoder_levers",)
"""Comparisons that a plain run leaves out (several decoder sessions: minutes on a faithful bundle)."""
LONG_TEXT = (
    "It was a bright cold day in April, and the clocks were striking thirteen, while the hallway smelt of boiled "
    "cabbage and old rag mats and at one end of it a coloured poster, too large for indoor display, had been tacked "
    "to the wall."
)  # one sentence (< 300 characters): one utterance, capped at the benchmark's token count


@dataclass(frozen=True)
class BenchConfig:
    reps: int = 9
    steps: int = 24
    short_context: int = 150
    long_context: int = 800
    utterance_tokens: int = 250  # ~10 s of audio
    stream_reps: int = 2
    quick: bool = False

    @classmethod
    def quick_config(cls) -> BenchConfig:
        return cls(reps=3, steps=8, long_context=800, utterance_tokens=125, stream_reps=1, quick=True)


class Bench:
    def __init__(self, pipe: Pipeline, config: BenchConfig, log=print):
        self.pipe, self.config, self.log = pipe, config, log
        self.info = pipe.info
        if pipe.files.default_voice:
            self.voice = pipe.default_voice()
        else:  # Turbo ships no voice: a synthetic one, the same every run
            self.voice = voice_from_array(synthetic_voice(8.0, seed=2), SAMPLE_RATE, "bench-voice.wav")
        self.results: list[dict] = []
        self.extra: dict = {}
        self.report: dict = {}
        """Round-2 figures under stable keys (q4_int8, streaming, decoder, cold_start, book)."""

    # --- helpers -----------------------------------------------------------------------------------------------
    def _voice_file(self) -> Path:
        import soundfile as sf

        path = Path(os.environ.get("TMPDIR", "/tmp")) / "chatterbox-bench-voice.wav"
        sf.write(path, self.voice.samples, SAMPLE_RATE)
        return path

    def _runner(self, kind, batch: int = 1, session=None):
        return self.pipe.lm_runner(kind, batch, 0.5, session)

    def _prefix(self, kind, length: int, batch: int = 1):
        rng = np.random.default_rng(0)
        runner = self._runner(kind, batch)
        embeds = rng.standard_normal((batch, length, self.info.hidden), dtype=np.float32) * 0.1
        embeds[..., :2] = 0.0
        runner.prefill(embeds)
        return runner.past, runner.total

    def _time_steps(self, kind, prefix, batch: int = 1, session=None) -> float:
        """Median milliseconds of one decode step, starting from ``prefix`` (on ``session``: another LM session)."""
        runner = self._runner(kind, batch, session)
        runner.adopt(*prefix)
        runner.step(100)  # first step allocates; not timed
        times = []
        for i in range(self.config.steps):
            started = time.perf_counter()
            runner.step(101 + i)
            times.append((time.perf_counter() - started) * 1000)
        return statistics.median(times)

    def _add(self, result: dict) -> None:
        self.results.append(result)
        r = result
        self.log(
            f"{r['name']:<44} {r['a']}: {r['a_median']:9.2f} {r['unit']}  {r['b']}: {r['b_median']:9.2f} "
            f"{r['unit']}  ratio {r['ratio_b_over_a']:.3f}"
        )

    # --- measurements ------------------------------------------------------------------------------------------
    def kv_chaining(self) -> None:
        for label, length in (("short", self.config.short_context), ("long", self.config.long_context)):
            chained, plain = self._prefix(ChainedKV, length), self._prefix(CopiedKV, length)
            a, b = alternate(
                self.config.reps,
                lambda c=chained: self._time_steps(ChainedKV, c),
                lambda p=plain: self._time_steps(CopiedKV, p),
            )
            self._add(summary(f"LM step, {label} context ({length} positions)", "chained", a, "plain", b))

    def _graph_rewrite(self, key: str, name: str, before: dict, after: dict, labels: tuple[str, str]) -> None:
        """LM step on two language-model sessions of this bundle (runtime ``before`` vs ``after`` changes), from the
        same caches, alternating; ``report[key]``: per context, both medians and their ratio."""
        sessions = (self.pipe.language_model_variant(**before), self.pipe.language_model_variant(**after))
        steps = {}
        for label, length in (("short", self.config.short_context), ("long", self.config.long_context)):
            prefix = self._prefix(ChainedKV, length)
            a, b = alternate(
                self.config.reps,
                lambda p=prefix: self._time_steps(ChainedKV, p, session=sessions[0]),
                lambda p=prefix: self._time_steps(ChainedKV, p, session=sessions[1]),
            )
            result = summary(f"LM step, {label} context ({length}), {name}", labels[0], a, labels[1], b)
            self._add(result)
            steps[label] = {"positions": length, "before_ms": result["a_median"], "after_ms": result["b_median"]}
            steps[label]["ratio"] = result["ratio_b_over_a"]
        self.report[key] = {"steps": steps}

    def shape_folding(self) -> None:
        """The shape arithmetic folded (:mod:`core.engine.model.shape_folding`) vs the graph as exported."""
        off = {"shape_folding": False, "fused_attention": False}
        self._graph_rewrite(
            "shape_folding", "shape folding", off, {**off, "shape_folding": True}, ("exported", "folded")
        )

    def fused_attention(self) -> None:
        """Each layer's attention as one operator (:mod:`core.engine.model.fused_attention`) vs as exported, both
        folded (the cache appended by copying on both sides)."""
        folded = {"shape_folding": True, "fused_attention": False, "shared_kv_cache": False}
        fused = {**folded, "fused_attention": True}
        self._graph_rewrite("fused_attention", "fused attention", folded, fused, ("folded", "fused"))

    def shared_kv_cache(self) -> None:
        """The cache written in place (:mod:`core.engine.model.shared_cache`: the steps of a
        :class:`~core.engine.generation.lm_runners.SharedKV` in one buffer) vs appended by copying, both fused."""
        copied = {"shape_folding": True, "fused_attention": True, "shared_kv_cache": False}
        shared = {**copied, "shared_kv_cache": True}
        self._graph_rewrite("shared_kv_cache", "shared KV cache", copied, shared, ("copied", "shared"))

    def python_overhead(self) -> None:
        """The share of a step spent outside onnxruntime: greedy choices (``python_overhead_share``, the key's
        meaning since it was added) and the model's own sampling settings (``python_overhead_share_sampled``: top-k,
        top-p or min-p and the repetition penalty, as a request runs them)."""
        for key, label, options in (
            ("python_overhead_share", "Python overhead per step (share of step time)", SynthesisOptions(greedy=True)),
            ("python_overhead_share_sampled", "  the same, sampling as requests do", SynthesisOptions()),
        ):
            params = self.pipe.resolve(options)
            shares = []
            for _ in range(self.config.reps):
                runner = self._runner(ChainedKV)
                runner.adopt(*self._prefix(ChainedKV, self.config.short_context))
                stats = DecodeStats()
                embeds = np.zeros((1, 1, self.info.hidden), np.float32)
                tokens = generate(
                    runner,
                    [embeds],
                    Sampler(params, 0, self.info.logits_vocab or LOGITS_VOCAB),
                    self.config.steps * 2,
                    0.0,
                    stats,
                )
                for _ in tokens:
                    pass
                shares.append(step_overhead_share(stats))
            self.extra[key] = statistics.median(shares)
            self.log(f"{label:<44} {100 * statistics.median(shares):.2f} %")

    def bandwidth_floor(self) -> None:
        weight_bytes = lm_weight_bytes(self.pipe.files.graphs["language_model"])
        bandwidth = memory_bandwidth(threads=self.pipe.runtime.threads or max(1, os.cpu_count() or 1))
        prefix = self._prefix(ChainedKV, self.config.short_context)
        step_ms = statistics.median(self._time_steps(ChainedKV, prefix) for _ in range(self.config.reps))
        kv_bytes = self.config.short_context * self.info.kv_bytes_per_position
        floor_ms = weight_bytes / bandwidth * 1000
        self.extra.update(
            {
                "lm_weight_bytes": weight_bytes,
                "memory_bandwidth_gbs": bandwidth / 1e9,
                "step_ms": step_ms,
                "floor_ms": floor_ms,
                "floor_with_kv_ms": (weight_bytes + kv_bytes) / bandwidth * 1000,
                "step_over_floor": step_ms / floor_ms,
            }
        )
        self.log(
            f"{'Memory-bandwidth floor':<44} weights {weight_bytes / 1e6:.0f} MB at {bandwidth / 1e9:.1f} GB/s"
            f" = {floor_ms:.2f} ms; step {step_ms:.2f} ms = {step_ms / floor_ms:.2f}x the floor"
        )

    def prefix_cache(self) -> None:
        base = self.pipe.runtime
        options = SynthesisOptions(greedy=True, max_new_tokens=1, cfg_weight=0.0)
        text = "One short sentence to speak."
        on, off = replace(base, prefix_cache=True), replace(base, prefix_cache=False)
        self.pipe.update_runtime(on)
        self.pipe.synthesize(text, self.voice, options)  # build the prefix once

        def prefill(runtime):
            return self.pipe.synthesize(text, self.voice, options, runtime=runtime).timings["prefill_ms"]

        a, b = alternate(self.config.reps, lambda: prefill(on), lambda: prefill(off))
        self._add(summary("Prefill of a one-sentence request", "prefix cache", a, "full prefill", b))
        self.pipe.update_runtime(base)

    def conditioning_cache(self) -> None:
        base = self.pipe.runtime
        options = SynthesisOptions(greedy=True, max_new_tokens=1, cfg_weight=0.0)
        text = "One short sentence to speak."
        on, off = replace(base, conditioning_cache=True), replace(base, conditioning_cache=False)

        def total(runtime):
            return self.pipe.synthesize(text, self.voice, options, runtime=runtime).timings["total_ms"]

        total(on)  # warm the cache
        a, b = alternate(self.config.reps, lambda: total(on), lambda: total(off))
        self._add(summary("Short request, conditioning cache", "hit", a, "miss (encoder runs)", b))
        self.pipe.update_runtime(base)

    def streaming(self) -> None:
        base = self.pipe.runtime
        n = self.config.utterance_tokens
        options = SynthesisOptions(seed=1, max_new_tokens=n, trim_silence=False, cfg_weight=0.0)
        on, off = replace(base, stream=True), replace(base, stream=False)
        self.pipe.synthesize(LONG_TEXT, self.voice, options, runtime=on)  # warm caches
        runs: dict[str, list[dict[str, float]]] = {"stream": [], "one-shot": []}

        def run(runtime, label):
            result = self.pipe.synthesize(LONG_TEXT, self.voice, options, runtime=runtime)
            runs[label].append(result.timings)
            return result.timings["ttfa_ms"]

        a, b = alternate(self.config.stream_reps, lambda: run(on, "stream"), lambda: run(off, "one-shot"))
        self._add(summary(f"Time to first audio, {n / 25:.0f} s utterance", "streaming", a, "one-shot", b))
        total = statistics.median(t["total_ms"] for t in runs["stream"])
        rtf = statistics.median(t["rtf"] for t in runs["stream"])
        self.extra.update(
            {"stream_total_ms": total, "stream_rtf": rtf, "ttfa_share_of_total": statistics.median(a) / total}
        )
        self.log(
            f"{'Streaming: TTFA share of synthesis time':<44} {100 * statistics.median(a) / total:.1f} %"
            f" (total {total / 1000:.1f} s, RTF {rtf:.2f})"
        )
        self.pipe.update_runtime(base)

    def cfg_cost(self) -> None:
        if not self.info.supports_cfg:
            return
        one, two = (
            self._prefix(ChainedKV, self.config.short_context, 1),
            self._prefix(ChainedKV, self.config.short_context, 2),
        )
        a, b = alternate(
            self.config.reps, lambda: self._time_steps(ChainedKV, one, 1), lambda: self._time_steps(ChainedKV, two, 2)
        )
        self._add(summary("LM step, CFG", "batch 1 (no CFG)", a, "batch 2 (CFG)", b))

    def _session_variant(self, name: str, a_label: str, b_label: str, mine_is_b: bool = False, **changes) -> None:
        """Per-step time of this pipeline vs one whose sessions differ by ``changes`` (loaded side by side); this
        pipeline is side ``a`` unless ``mine_is_b``."""
        other = Bench(
            Pipeline.from_bundle(self.pipe.files.root, replace(self.pipe.runtime, **changes)),
            self.config,
            log=lambda *_: None,
        )
        mine = self._prefix(ChainedKV, self.config.short_context)
        theirs = other._prefix(ChainedKV, self.config.short_context)
        sides = (lambda: self._time_steps(ChainedKV, mine)), (lambda: other._time_steps(ChainedKV, theirs))
        a, b = alternate(self.config.reps, *(sides[::-1] if mine_is_b else sides))
        self._add(summary(name, a_label, a, b_label, b))

    def spinning(self) -> None:
        """Idle intra-op threads sleeping (``take_turns`` never) vs spinning (CPU sessions where the models take
        turns, the default; or ``spinning``)."""
        runtime = self.pipe.runtime
        if runtime.spinning or spins_while_running(runtime, cuda=self.pipe.providers["language_model"] != "cpu"):
            self._session_variant(
                "LM step, idle threads", "sleeping", "spinning", True, take_turns="never", spinning=False
            )
        else:
            self._session_variant("LM step, idle threads", "sleeping", "spinning", spinning=True)

    def threads(self) -> None:
        """onnxruntime's default thread count (one per physical core) vs a single thread."""
        if self.pipe.runtime.threads != 1:
            self._session_variant("LM step, intra-op threads", "default", "1 thread", threads=1)

    def decoder(self) -> None:
        bp.decoder_costs(self)
        output_difference(self)

    def run(self, only: tuple[str, ...] = ()) -> dict:
        started = time.perf_counter()
        steps = {
            "kv": self.kv_chaining,
            "overhead": self.python_overhead,
            "fold": self.shape_folding,
            "attention": self.fused_attention,
            "shared": self.shared_kv_cache,
            "floor": self.bandwidth_floor,
            "cfg": self.cfg_cost,
            "prefix": self.prefix_cache,
            "conditioning": self.conditioning_cache,
            "streaming": self.streaming,
            "spinning": self.spinning,
            "threads": self.threads,
            "decoder": self.decoder,
            "convs": lambda: blocked_convolutions(self),
            "decoder_levers": lambda: decoder_levers(self),
            "q4": lambda: bp.q4_int8(self),
            "plan": lambda: bp.streaming(self),
            "book": lambda: bp.book(self),
            "cold": lambda: bp.cold_start(self, self._voice_file()),
            "export": lambda: bp.export_finishing(self),
        }
        for name, step in steps.items():
            if (not only and name not in ONLY_WHEN_NAMED) or name in only:
                step()
        return {
            **self.report,
            "machine": machine_info(),
            "bundle": bp.bundle_kind(self.pipe.files.root),
            "variant": self.info.variant,
            "precisions": self.pipe.files.precisions,
            "providers": self.pipe.providers,
            "threads": self.pipe.runtime.threads,
            "config": self.config.__dict__,
            "comparisons": self.results,
            "figures": self.extra,
            "seconds": time.perf_counter() - started,
        }


def lm_weight_bytes(graph: Path) -> int:
    """Bytes of weights the language model reads per step: its initializers (external data included)."""
    import onnx

    model = onnx.load(str(graph), load_external_data=False)
    total = 0
    for tensor in model.graph.initializer:
        if tensor.data_location == onnx.TensorProto.EXTERNAL:
            total += int(next(e.value for e in tensor.external_data if e.key == "length"))
        else:
            total += len(tensor.raw_data) or onnx.numpy_helper.to_array(tensor).nbytes
    return total


def memory_bandwidth(threads: int = 2, megabytes: int = 512, reps: int = 5) -> float:
    """Bytes per second moved by large array copies on ``threads`` threads (read + write counted)."""
    n = megabytes * 1024 * 1024 // 8
    src = np.ones(n, dtype=np.float64)
    dst = np.empty_like(src)
    parts = np.array_split(np.arange(n), threads)
    bounds = [(p[0], p[-1] + 1) for p in parts]

    def copy(lo, hi):
        np.copyto(dst[lo:hi], src[lo:hi])

    best = 0.0
    for _ in range(reps):
        workers = [threading.Thread(target=copy, args=b) for b in bounds]
        started = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = max(best, 2 * src.nbytes / (time.perf_counter() - started))
    return best


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "onnxruntime": ort.__version__,
        "platform": platform.platform(),
    }


def bench_main(args) -> int:
    from core.standin import cached_standin

    bundle = args.bundle or cached_standin(
        args.standin, args.size, args.precision, announce=lambda message: print(message, flush=True)
    )
    precision = "q4" if (not args.bundle and args.precision == "q4") else args.precision
    runtime = RuntimeOptions(
        provider=args.provider,
        threads=args.threads,
        precision=precision,
        q4_compute=args.q4_compute,
        shape_folding=not args.no_shape_folding,
        fused_attention=not args.no_fused_attention,
        shared_kv_cache=not args.no_shared_kv_cache,
        decoder_precision=args.decoder_precision,
        decoder_flow_steps=args.decoder_flow_steps,
        blocked_convolutions=not args.no_blocked_convolutions,
        take_turns=args.take_turns,
        lm_batch=args.lm_batch,
        playback_policy=getattr(args, "playback_policy", "auto"),
        cache_dir=Path(os.environ.get("TMPDIR", "/tmp")) / "chatterbox-bench-cache",
    )
    pipe = Pipeline.from_bundle(bundle, runtime)
    if pipe.provider_notice:
        print(f"notice: {describe_notice(pipe.provider_notice, 'cli')}")
    print(
        f"{pipe.info.variant} bundle {bundle}: LM {pipe.files.precisions['language_model']} on "
        f"{pipe.providers['language_model']}, {pipe.info.layers} layers, hidden {pipe.info.hidden}"
    )
    only = tuple(n.strip() for n in args.only.split(",")) if args.only else ()
    config = BenchConfig.quick_config() if args.quick else BenchConfig()
    if getattr(args, "runs", None):
        config = replace(config, stream_reps=max(1, args.runs))
    report = Bench(pipe, config).run(only)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
        print(f"wrote {args.json}")
    return 0
