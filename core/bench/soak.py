"""``python -m core soak``: many syntheses in one process, to show that long sessions neither leak nor drift.

The requests go through :class:`core.engine.InferenceWorker`, the same long-lived thread the desktop app
uses, one after the other with a fixed seed. After each request the garbage collector runs and the process's resident
memory is read. Two things are checked: every request gives the same speech tokens as the first, and resident memory
stops growing once the session is warm (the growth from request ``warmup`` to the last one stays under a limit).

Resident memory is process-wide, so it covers onnxruntime's native allocations as well as Python objects. It does not
cover GPU memory. Sources, best first: ``VmRSS`` from ``/proc/self/status`` (Linux), ``psutil`` when installed (its
current RSS), else ``resource.getrusage`` (the *peak* RSS: it can show growth but never a shrink). Without any of them
(Windows without psutil) the memory criterion cannot be checked and the soak fails it.
"""

from __future__ import annotations

import gc
import logging
import queue
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from core.engine import (
    SAMPLE_RATE,
    Cancelled,
    ChatterboxError,
    Failed,
    Finished,
    InferenceWorker,
    InvalidOptions,
    ModelFailed,
    ModelLoaded,
    Pipeline,
    RuntimeOptions,
    SynthesisOptions,
    SynthesisRequest,
    VoiceReference,
    load_voice,
    voice_from_array,
)
from core.wording import describe_failure, describe_notice

log = logging.getLogger(__name__)

DEFAULT_TEXT = "The quick brown fox jumps over the lazy dog, and then it takes a well earned rest."
DEFAULT_SEED = 1234
DEFAULT_REQUESTS = 50
DEFAULT_WARMUP = 10
DEFAULT_MAX_GROWTH_MB = 30.0
_MB = 1024 * 1024


# --- resident memory ---------------------------------------------------------------------------------------------
def _vmrss() -> float | None:
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024 / _MB  # reported in kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _psutil_rss() -> float | None:
    try:
        import psutil
    except ImportError:
        return None
    return psutil.Process().memory_info().rss / _MB


def _peak_rss() -> float | None:
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / _MB if sys.platform == "darwin" else peak * 1024 / _MB  # bytes on macOS, kB elsewhere


_RSS_SOURCES: tuple[tuple[str, Callable[[], float | None]], ...] = (
    ("VmRSS", _vmrss),
    ("psutil", _psutil_rss),
    ("ru_maxrss (peak)", _peak_rss),
)


def rss_reader() -> tuple[str, Callable[[], float | None]]:
    """The best way to read resident memory (MiB) on this machine, and its name; ``("none", ...)`` if there is none."""
    for name, read in _RSS_SOURCES:
        if read() is not None:
            return name, read
    return "none", lambda: None


# --- the report --------------------------------------------------------------------------------------------------
@dataclass
class SoakReport:
    """One soak. Request numbers are 1-based; lists hold one entry per request, in order."""

    requests: int
    warmup: int
    seed: int
    text: str
    voice: str
    """``default`` (the bundle's voice), ``synthetic`` (a fixed generated one) or the reference's file name."""
    bundle: str = ""
    variant: str = ""
    providers: dict = field(default_factory=dict)
    provider_notice: str | None = None
    identical_tokens: bool = False
    """Every request finished and gave exactly the tokens of the first one."""
    distinct_token_sequences: int = 0
    """How many different token sequences the finished requests gave (1 when there is no drift)."""
    mismatched_requests: list[int] = field(default_factory=list)
    """Finished requests whose tokens differ from request 1's."""
    tokens_per_request: list[int] = field(default_factory=list)
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    """``request N: message`` for each failed request."""
    rss_source: str = "none"
    rss_mb: list[float | None] = field(default_factory=list)
    """Resident memory (MiB) after each request, read after ``gc.collect()``."""
    growth_mb: float | None = None
    """``rss_mb`` at the last request minus at request ``warmup``; ``None`` when memory cannot be read."""
    request_ms: list[float] = field(default_factory=list)
    """Wall time from handing the request to the worker to its last event."""
    median_request_ms: float = 0.0
    timings_median: dict[str, float] = field(default_factory=dict)
    """Median of each :attr:`core.engine.streaming.synthesis.RequestReport.timings` entry over the finished requests."""
    load_ms: float = 0.0
    seconds: float = 0.0

    def problems(self, max_growth_mb: float = DEFAULT_MAX_GROWTH_MB) -> list[str]:
        """Why the soak fails its criteria (empty when it passes)."""
        problems = []
        if self.failed:
            problems.append(f"{self.failed} of {self.requests} requests failed")
        if not self.identical_tokens:
            problems.append(f"tokens differ: {self.distinct_token_sequences} distinct sequences")
        if self.growth_mb is None:
            problems.append("resident memory cannot be read on this platform (install psutil)")
        elif self.growth_mb > max_growth_mb:
            problems.append(f"memory grew {self.growth_mb:.1f} MB (limit {max_growth_mb:g} MB)")
        return problems

    def to_dict(self, max_growth_mb: float = DEFAULT_MAX_GROWTH_MB) -> dict:
        problems = self.problems(max_growth_mb)
        return {**asdict(self), "max_growth_mb": max_growth_mb, "passed": not problems, "problems": problems}


# --- running it --------------------------------------------------------------------------------------------------
def _next_event(worker: InferenceWorker, deadline: float, poll_s: float = 0.5):
    while True:
        try:
            return worker.events.get(timeout=poll_s)
        except queue.Empty:
            if not worker.alive:
                raise RuntimeError("the inference thread stopped unexpectedly") from None
            if time.monotonic() > deadline:
                raise RuntimeError("the inference thread gave no answer in time (see the log)") from None


def _reference(voice: VoiceReference | Path | str | None) -> tuple[VoiceReference | None, str]:
    if voice is None:
        return None, "default"
    if isinstance(voice, VoiceReference):
        return voice, Path(voice.source).name
    return load_voice(voice), Path(voice).name  # once, up front: a bad file is reported before any work


def _synthetic_voice() -> VoiceReference:
    from core.standin.build import synthetic_voice

    return voice_from_array(synthetic_voice(8.0, seed=2), SAMPLE_RATE, "soak-voice.wav")


def run_soak(
    bundle: Path | str,
    runtime: RuntimeOptions,
    text: str = DEFAULT_TEXT,
    voice: VoiceReference | Path | str | None = None,
    requests: int = DEFAULT_REQUESTS,
    seed: int = DEFAULT_SEED,
    progress: Callable[[int, int, float | None, float], None] | None = None,
    warmup: int = DEFAULT_WARMUP,
    options: SynthesisOptions | None = None,
    timeout_s: float = 900.0,
) -> SoakReport:
    """Speak ``text`` ``requests`` times through one :class:`InferenceWorker` with ``seed``; measure after each.

    ``voice=None`` uses the bundle's default voice, or a fixed synthetic one when the bundle has none (Turbo).
    ``progress(number, requests, rss_mb, request_ms)`` is called after each request. A bundle that cannot be loaded
    raises the loader's error; so does a first request that fails on the user's input (text, voice, options).
    Later failures are counted in the report. A load or request that gives no answer within ``timeout_s`` raises
    ``RuntimeError``. The worker is always shut down.
    """
    if requests < 2:
        raise InvalidOptions("soak.requests", requests=requests)
    if not 1 <= warmup < requests:
        raise InvalidOptions("soak.warmup", requests=requests, warmup=warmup)
    options = replace(options or SynthesisOptions(), seed=seed)
    reference, voice_name = _reference(voice)
    rss_source, read_rss = rss_reader()
    report = SoakReport(requests=requests, warmup=warmup, seed=seed, text=text, voice=voice_name, bundle=str(bundle))
    report.rss_source = rss_source

    load_errors: list[BaseException] = []

    def load(path, rt, **_load_options):  # fully loaded, no progress events: the soak measures requests
        try:
            return Pipeline.from_bundle(path, rt)
        except Exception as exc:
            load_errors.append(exc)
            raise

    started = time.perf_counter()
    worker = InferenceWorker(pipeline_factory=load)
    worker.start()
    try:
        worker.load(Path(bundle), runtime)
        loaded = _next_event(worker, time.monotonic() + timeout_s)
        if isinstance(loaded, ModelFailed):
            if load_errors:
                raise load_errors[0]
            raise ChatterboxError(loaded.code, **loaded.data)
        if not isinstance(loaded, ModelLoaded):
            raise RuntimeError(f"unexpected event while loading: {type(loaded).__name__}")
        report.load_ms = round((time.perf_counter() - started) * 1000, 2)
        report.variant, report.providers = loaded.variant, dict(loaded.capabilities.providers)
        report.provider_notice = describe_notice(loaded.notice, "cli")
        options.resolve(loaded.variant)  # InvalidOptions: refused before any request
        if reference is None and not loaded.capabilities.has_default_voice:
            reference, report.voice = _synthetic_voice(), "synthetic"
        _run_requests(worker, report, text, reference, options, read_rss, progress, timeout_s)
    finally:
        if not worker.shutdown():
            log.warning("the inference thread did not stop within 5 s")
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _run_requests(worker, report: SoakReport, text, reference, options, read_rss, progress, timeout_s) -> None:
    first: list[int] | None = None
    sequences: set[tuple[int, ...]] = set()
    timings: dict[str, list[float]] = {}
    for number in range(1, report.requests + 1):
        rid = worker.new_request_id()
        t0 = time.perf_counter()
        worker.speak(SynthesisRequest(text, reference, options, rid))
        deadline = time.monotonic() + timeout_s
        outcome = None
        while outcome is None:
            event = _next_event(worker, deadline)
            if getattr(event, "request_id", None) == rid and isinstance(event, (Finished, Failed, Cancelled)):
                outcome = event
            del event  # chunks carry audio: hold none of them past this point
        request_ms = (time.perf_counter() - t0) * 1000
        if isinstance(outcome, Finished):
            tokens = outcome.report.speech_tokens
            if first is None:
                first = list(tokens)
            elif tokens != first:
                report.mismatched_requests.append(number)
            sequences.add(tuple(tokens))
            report.tokens_per_request.append(len(tokens))
            for key, value in outcome.report.timings.items():
                timings.setdefault(key, []).append(value)
        else:
            if number == 1 and isinstance(outcome, Failed) and not outcome.internal:
                # bad text, voice or options: every request would fail the same way
                raise ChatterboxError(outcome.code, **outcome.data)
            message = describe_failure(outcome, "cli") if isinstance(outcome, Failed) else "cancelled"
            report.failed += 1
            report.failures.append(f"request {number}: {message}")
            report.tokens_per_request.append(0)
        del outcome
        gc.collect()
        rss = read_rss()
        report.rss_mb.append(None if rss is None else round(rss, 2))
        report.request_ms.append(round(request_ms, 2))
        log.info("soak request %d/%d: %.0f ms, RSS %s MB", number, report.requests, request_ms, rss)
        if progress is not None:
            progress(number, report.requests, rss, request_ms)

    report.distinct_token_sequences = len(sequences)
    report.identical_tokens = report.failed == 0 and len(sequences) == 1
    start, end = report.rss_mb[report.warmup - 1], report.rss_mb[-1]
    report.growth_mb = None if start is None or end is None else round(end - start, 2)
    report.median_request_ms = round(statistics.median(report.request_ms), 2)
    report.timings_median = {key: round(statistics.median(values), 3) for key, values in timings.items()}


def curve_rows(requests: int, warmup: int, every: int = 5) -> list[int]:
    """Request numbers worth printing: the first, every ``every``-th, the end of warm-up and the last."""
    rows = {1, warmup, requests} | set(range(every, requests + 1, every))
    return sorted(n for n in rows if 1 <= n <= requests)
