"""How fast each model speaks on a CPU, from measurements (docs/PERFORMANCE.md, its current figures), said where the
user picks one.

The figures are one-shot real-time factors (synthesis time ÷ audio time) of the faithful q4 bundles on a 2-core
AMD EPYC with onnxruntime 1.31.1, the slower of the last two runs (2026-11-27, with the defaults of that day's
decoder and language-model work): Turbo 0.65–0.70, Original 1.24–1.26 (2.34 before that work). Multilingual shares
Original's language model and decoder (with CFG) and was not measured separately, so it is said to be about as slow
as Original.
"""

from __future__ import annotations

import os

CPU_RTF = {"turbo": 0.70, "original": 1.26, "multilingual": 1.26}
MEASURED = {"turbo": True, "original": True, "multilingual": False}


def variant_of(label_or_folder: str) -> str:
    text = label_or_folder.lower()
    return next((v for v in ("turbo", "multilingual", "original") if v in text), "original")


def speed_estimate(variant: str, gpu: bool = False, cores: int | None = None) -> str:
    """One sentence: seconds of waiting per 10 s of speech on a CPU, and whether that is faster than real time."""
    rtf = CPU_RTF.get(variant, CPU_RTF["original"])
    seconds = round(10 * rtf)
    basis = "measured on a 2-core CPU" if MEASURED.get(variant) else "estimated from Original, same size"
    cores = cores or os.cpu_count() or 2
    pace = (
        "faster than real time: playback starts at once and keeps up"
        if rtf < 1
        else f"about {rtf:.1f}× slower than real time: playback pauses to wait, so use it for rendering a project"
    )
    more = f" This computer has {cores} cores; more cores are faster." if cores > 2 else ""
    gpu_note = " With the NVIDIA GPU (CUDA) it is many times faster." if gpu else ""
    return f"On a CPU: about {seconds} s to speak 10 s of text ({basis}) — {pace}.{more}{gpu_note}"
