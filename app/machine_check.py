"""``python -m app --check``: what this machine has and lacks for the app, in plain words (no window needed).

Three questions: can the window open (Qt's platform plugin and its system libraries, a display), can sound play
(PortAudio, an output device, a microphone), and can the models run on the GPU (an NVIDIA GPU, onnxruntime's CUDA
provider, the CUDA libraries). Only the first is required; without sound or CUDA the app still works.
"""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass

from .platform_check import linux_family, window_problem


@dataclass(frozen=True)
class Finding:
    topic: str
    ok: bool
    text: str
    required: bool = False


def check_window() -> Finding:
    problem = window_problem()
    if problem is None:
        return Finding("Window", True, "Qt can open the window here.", required=True)
    return Finding("Window", False, problem.message(linux_family()), required=True)


def check_sound() -> list[Finding]:
    from core.wording import describe_error

    from .audio.device_errors import device_error, portaudio_missing

    try:
        import sounddevice as sd
    except OSError as exc:
        return [Finding("Sound", False, describe_error(portaudio_missing(exc)))]
    found = []
    for direction, kind in (("output", "output"), ("input", "microphone")):
        try:
            info = sd.query_devices(kind="output" if direction == "output" else "input")
            found.append(Finding("Sound", True, f"default {kind}: {info['name']}"))
        except Exception as exc:  # noqa: BLE001 - PortAudio raises its own error types
            found.append(Finding("Sound", False, describe_error(device_error(exc, direction))))
    return found


def check_gpu() -> Finding:
    try:
        import onnxruntime as ort
    except ImportError as exc:
        return Finding("GPU", False, f"onnxruntime cannot be imported ({exc}).", required=True)
    from core.engine import nvidia_gpu_present

    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return Finding("GPU", True, "this onnxruntime has no CUDA support: the models run on the CPU.")
    if not nvidia_gpu_present():
        return Finding("GPU", True, "no NVIDIA GPU found: the models run on the CPU (normal on this computer).")
    printed = io.StringIO()  # preload_dlls() reports what it cannot load with print()
    try:
        with contextlib.redirect_stdout(printed):
            if hasattr(ort, "preload_dlls"):
                ort.preload_dlls()
    except Exception as exc:  # noqa: BLE001 - any failure means CUDA is not usable
        return Finding("GPU", False, f"an NVIDIA GPU is present but CUDA is not usable ({exc}): the CPU is used.")
    missing = [line.strip() for line in printed.getvalue().splitlines() if "fail" in line.lower()]
    if missing:
        return Finding(
            "GPU",
            False,
            "an NVIDIA GPU is present but CUDA libraries are missing (install the .[gpu] extra or CUDA 13 and "
            f"cuDNN 9): {'; '.join(missing[:3])}. The CPU is used meanwhile.",
        )
    return Finding("GPU", True, "an NVIDIA GPU is present and onnxruntime's CUDA libraries load.")


def run_check(stream=None) -> int:
    """Print every finding; exit code 1 when something the app needs is missing, else 0."""
    stream = stream or sys.stdout
    findings = [check_window(), *check_sound(), check_gpu()]
    print("Chatterbox Desk — what this computer has:", file=stream)
    for f in findings:
        mark = "ok  " if f.ok else ("MISSING" if f.required else "note")
        lines = f.text.splitlines() or [""]
        print(f"  [{mark}] {f.topic}: {lines[0]}", file=stream)
        for line in lines[1:]:
            print(f"         {line}", file=stream)
    blocking = [f for f in findings if f.required and not f.ok]
    print(
        "The app cannot start until the MISSING items are fixed."
        if blocking
        else "The app can start here" + ("" if all(f.ok for f in findings) else " (without what is noted)") + ".",
        file=stream,
    )
    return 1 if blocking else 0
