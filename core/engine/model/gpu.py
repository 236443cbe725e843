"""Whether this computer has an NVIDIA GPU at all, decided cheaply and without loading any CUDA library.

The answer only decides whether "CUDA is not usable" is worth saying: on a machine without an NVIDIA GPU, running
on the CPU is the normal case and needs no notice. It never decides which provider is used.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
from pathlib import Path

LINUX_MARKERS = ("/proc/driver/nvidia/version", "/dev/nvidia0", "/dev/nvidiactl", "/usr/lib/wsl/lib/nvidia-smi")
"""Files the NVIDIA driver creates on Linux (the last one: WSL 2 with the Windows NVIDIA driver)."""
WINDOWS_DLLS = ("nvml.dll", "nvcuda.dll")
"""Libraries the NVIDIA display driver installs into System32 on Windows."""


def _windows_markers() -> list[Path]:
    root = Path(os.environ.get("SYSTEMROOT", r"C:\Windows"))
    program_files = Path(os.environ.get("PROGRAMFILES", r"C:\Program Files"))
    return [root / "System32" / dll for dll in WINDOWS_DLLS] + [
        program_files / "NVIDIA Corporation" / "NVSMI" / "nvml.dll"
    ]


def detect_nvidia_gpu(platform: str | None = None) -> bool:
    """An NVIDIA driver is installed: its device files, ``nvidia-smi`` on the PATH, or (Windows) its DLLs."""
    platform = platform or sys.platform
    if shutil.which("nvidia-smi"):
        return True
    if platform.startswith("win"):
        return any(path.is_file() for path in _windows_markers())
    if platform == "darwin":
        return False  # no CUDA on macOS
    return any(os.path.exists(marker) for marker in LINUX_MARKERS)


@functools.lru_cache(maxsize=1)
def nvidia_gpu_present() -> bool:
    """:func:`detect_nvidia_gpu`, asked once per process."""
    try:
        return detect_nvidia_gpu()
    except OSError:
        return False
