"""``python -m core bench-words``: what finding each take's words costs beside rendering it, in one run.

The same sentences are rendered twice with the model given (the faithful Turbo bundle is where a real user's time
goes, docs/PERFORMANCE.md; each sentence capped at ``max_new_tokens``, as random weights never say STOP): once
without word times, once with them, as every render now does (:class:`core.narration.TakePolicy` ``words``: the
aligner's process works on a take while the model speaks the next). The report gives

- ``align_share``: the aligner's wall time on the takes as a share of the render without it (on a busy machine it
  waits for the CPU: an upper bound);
- ``align_cpu_share``: the aligner's CPU time (its child's own) against the render's (this process's, every
  onnxruntime thread included): what finding the words costs the machine;
- ``render_ratio``: the render with words against the render without, end to end (what the user waits, the end's
  wait for the last take's words included);
- ``speech``: the aligner's seconds per second of audio on real speech — espeak-ng speaking the same sentences, when
  it is installed — since random weights make noise, not speech, and the aligner's work depends on what it hears;
  ``speech_share`` and ``speech_cpu_share`` project that rate onto the render's audio, against the render's wall and
  CPU time.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from core.bench.screen_bench import first_sentences, text_project
from core.engine import SAMPLE_RATE, AlignerProcess, ChatterboxError, Pipeline, RuntimeOptions, shared_aligner
from core.narration import TakePolicy, render_pending


def bench_words(
    bundle: Path,
    voice: Path | None,
    sentences: int = 12,
    runtime: RuntimeOptions | None = None,
    folder: Path | None = None,
    max_new_tokens: int = 100,
) -> dict:
    work = Path(folder or tempfile.mkdtemp(prefix="bench-words-"))
    text = first_sentences(sentences)
    pipe = Pipeline.from_bundle(bundle, runtime or RuntimeOptions())
    runs: dict[str, dict[str, Any]] = {}
    for name, words in (("warm", False), ("without", False), ("with", True)):
        shown = text if name != "warm" else first_sentences(1)
        project = text_project(work / f"{name}.cbproj", f"Words bench ({name})", shown, voice, max_new_tokens)
        aligner_cpu, render_cpu = shared_aligner().cpu_seconds, time.process_time()
        summary = render_pending(project, pipe, policy=TakePolicy(words=words))
        render_cpu = time.process_time() - render_cpu
        takes = [project.chosen_take(s) for s in project.segments]
        placed = [t.alignment.get("placed", 0.0) for t in takes if t is not None and t.alignment]
        runs[name] = {
            "render_s": round(summary.elapsed_s, 3),
            "audio_s": round(summary.audio_seconds, 2),
            "render_cpu_s": round(render_cpu, 3),
            "align_s": round(summary.align_s, 3),
            "align_cpu_s": round(shared_aligner().cpu_seconds - aligner_cpu, 3),
            "aligned": len(placed),
            "placed": round(float(np.mean(placed)), 3) if placed else None,
        }
        print(f"{name:>8}: {runs[name]}", flush=True)
        project.close()
    without, with_words = runs["without"], runs["with"]
    report: dict[str, Any] = {
        "bundle": str(bundle),
        "variant": pipe.capabilities.variant,
        "takes": sentences,
        "audio_s": without["audio_s"],
        "render_s": without["render_s"],
        "render_rtf": round(without["render_s"] / without["audio_s"], 3) if without["audio_s"] else None,
        "render_with_words_s": with_words["render_s"],
        "render_ratio": round(with_words["render_s"] / without["render_s"], 3) if without["render_s"] else None,
        "align_s": with_words["align_s"],
        "align_share": round(with_words["align_s"] / without["render_s"], 4) if without["render_s"] else None,
        "render_cpu_s": without["render_cpu_s"],
        "align_cpu_s": with_words["align_cpu_s"],
        "align_cpu_share": (
            round(with_words["align_cpu_s"] / without["render_cpu_s"], 4) if without["render_cpu_s"] else None
        ),
        "aligned": with_words["aligned"],
        "placed": with_words["placed"],
        "speech": speech_rate(text),
    }
    if report["speech"] and without["render_s"]:
        speech = report["speech"]
        report["speech_share"] = round(speech["align_s_per_audio_s"] * without["audio_s"] / without["render_s"], 4)
        report["speech_cpu_share"] = round(
            speech["align_cpu_s_per_audio_s"] * without["audio_s"] / max(without["render_cpu_s"], 1e-9), 4
        )
    print(_summary(report), flush=True)
    return report


def speech_rate(text: str) -> dict | None:
    """The aligner's seconds per second of real speech: espeak-ng reading each sentence of ``text``, aligned in the
    aligner's process (``None`` without espeak-ng)."""
    if shutil.which("espeak-ng") is None:
        return None
    import soxr

    aligner = AlignerProcess()
    seconds = audio_s = cpu = 0.0
    placed = []
    try:
        for index, sentence in enumerate(s.strip() + "." for s in text.rstrip(".").split(". ")):
            with tempfile.TemporaryDirectory() as folder:
                path = Path(folder) / "s.wav"
                subprocess.run(["espeak-ng", "-w", str(path), sentence], check=True, capture_output=True)
                audio, rate = sf.read(path, dtype="float32")
            audio = np.asarray(soxr.resample(audio, rate, SAMPLE_RATE), dtype=np.float32)
            if index == 0:
                aligner.align(audio, SAMPLE_RATE, sentence)  # the child started and warm
            started, cpu_before = time.perf_counter(), aligner.cpu_seconds
            try:
                placed.append(aligner.align(audio, SAMPLE_RATE, sentence).placed_share)
            except ChatterboxError:
                placed.append(0.0)
            seconds += time.perf_counter() - started
            cpu += aligner.cpu_seconds - cpu_before
            audio_s += audio.size / SAMPLE_RATE
    finally:
        aligner.close()
    return {
        "audio_s": round(audio_s, 2),
        "align_s": round(seconds, 3),
        "align_s_per_audio_s": round(seconds / audio_s, 4),
        "align_cpu_s_per_audio_s": round(cpu / audio_s, 4),
        "placed": round(float(np.mean(placed)), 3),
    }


def _summary(report: dict) -> str:
    lines = [
        f"{report['takes']} takes, {report['audio_s']} s of audio rendered in {report['render_s']} s "
        f"(RTF {report['render_rtf']}) on {report['variant']} without word times, {report['render_with_words_s']} s "
        f"with them (× {report['render_ratio']})",
        f"aligning the takes: {report['align_s']} s = {report['align_share']:.1%} of the render; CPU "
        f"{report['align_cpu_s']} s against the render's {report['render_cpu_s']} s = {report['align_cpu_share']:.1%} "
        f"({report['aligned']} takes, {report['placed']} of their words placed: random weights make noise)",
    ]
    speech = report.get("speech")
    if speech:
        lines.append(
            f"on speech (espeak-ng, {speech['audio_s']} s): {speech['align_s_per_audio_s']} s of aligning a second "
            f"of audio ({speech['align_cpu_s_per_audio_s']} s of CPU), {speech['placed']:.0%} of words placed; at "
            f"that rate, {report['speech_share']:.1%} of this render's time, {report['speech_cpu_share']:.1%} of its "
            "CPU time"
        )
    return "\n".join(lines)
