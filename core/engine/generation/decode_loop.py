"""The decode loop: prefill, then run → sample → stop check → feed back, with timings and cancel checks."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from core.engine.constants import STOP_SPEECH
from core.engine.errors import SynthesisCancelled
from core.engine.generation.lm_runners import KVRunner
from core.engine.generation.sampler import Sampler
from core.engine.generation.stop_guards import RunawayGuard


@dataclass
class DecodeStats:
    """Timings of one utterance's loop. Python overhead = loop wall time not spent inside onnxruntime."""

    prefill_ms: float = 0.0
    first_token_ms: float = 0.0
    """From the start of the prefill to the first sampled token."""
    step_ms: list[float] = field(default_factory=list)
    loop_s: float = 0.0
    """Wall time of the whole loop (prefill included)."""
    ort_s: float = 0.0
    """Time spent inside onnxruntime during the loop."""
    prefill_ort_s: float = 0.0
    stop_reason: str = ""
    tokens: int = 0
    started_at: float = 0.0
    """``perf_counter()`` when the prefill started."""
    prefix_build_ms: float = 0.0
    """Time spent computing the voice prefix for this sentence (0 on a prefix-cache hit)."""
    suspended_s: float = 0.0
    """Time the loop spent suspended at ``yield`` (the consumer's work, e.g. decoding), not counted in ``loop_s``."""


def step_overhead_share(stats: DecodeStats) -> float:
    """Share of the decode steps' wall time (prefill excluded) spent outside onnxruntime."""
    loop = stats.loop_s - stats.prefill_ms / 1000
    inside = stats.ort_s - stats.prefill_ort_s
    return max(0.0, 1 - inside / loop) if loop > 0 else 0.0


def combine_cfg(logits: np.ndarray, cfg_weight: float) -> np.ndarray:
    """Row 0 conditional, row 1 unconditional: ``cond + w * (cond - uncond)``."""
    cond: np.ndarray = logits[0]
    if logits.shape[0] == 1:
        return cond
    uncond: np.ndarray = logits[1]
    combined: np.ndarray = cond + cfg_weight * (cond - uncond)
    return combined


def generate(
    kv: KVRunner,
    prompt: list[np.ndarray],
    sampler: Sampler,
    cap: int,
    cfg_weight: float,
    stats: DecodeStats,
    cancelled: Callable[[], bool] = lambda: False,
    guard: RunawayGuard | None = None,
) -> Iterator[int]:
    """Yield speech tokens (START/STOP excluded) until STOP, the cap, a runaway or a cancel.

    ``prompt`` is one or more embedding blocks prefilled in order (with a cached voice prefix, only the text).
    """
    guard = guard or RunawayGuard()
    started = stats.started_at = time.perf_counter()
    ort_before = kv.ort_s
    try:
        logits = kv.prefill(prompt[0])
        for block in prompt[1:]:
            logits = kv.prefill(block)
        stats.prefill_ms = (time.perf_counter() - started) * 1000
        stats.prefill_ort_s = kv.ort_s - ort_before
        stats.stop_reason = "token_cap"
        for i in range(cap):
            token = sampler(combine_cfg(logits, cfg_weight))
            if i == 0:
                stats.first_token_ms = (time.perf_counter() - started) * 1000
            if token == STOP_SPEECH:
                stats.stop_reason = "stop_token"
                break
            sampler.observe(token)
            stats.tokens += 1
            suspended = time.perf_counter()
            yield token  # the consumer may decode here: that time is not the loop's
            stats.suspended_s += time.perf_counter() - suspended
            if guard.update(token):
                stats.stop_reason = f"runaway: {guard.reason}"
                break
            if cancelled():
                stats.stop_reason = "cancelled"
                raise SynthesisCancelled()
            if i + 1 < cap:
                step_started = time.perf_counter()
                logits = kv.step(token)
                stats.step_ms.append((time.perf_counter() - step_started) * 1000)
    finally:
        stats.loop_s += time.perf_counter() - started - stats.suspended_s
        stats.ort_s += kv.ort_s - ort_before
