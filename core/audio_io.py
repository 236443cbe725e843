"""Writing audio files safely (write-then-rename, so an interrupted export never leaves a partial file)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from .atomic import atomic_path
from .errors import ChatterboxError


class AudioWriteError(ChatterboxError):
    """The audio file could not be written (folder missing, disk full, read-only...)."""


def write_audio(path: Path, audio: np.ndarray, sample_rate: int) -> None:
    """Write atomically: a temporary file in the same folder, renamed over the target only when complete."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise AudioWriteError(f"Cannot write {path}: the folder {folder} does not exist.")
    try:
        with atomic_path(path) as tmp:
            sf.write(tmp, audio, sample_rate)
    except OSError as exc:
        raise AudioWriteError(f"Cannot write {path}: {exc.strerror or exc}. Check free space and permissions.") from exc
    except sf.LibsndfileError as exc:
        raise AudioWriteError(f"Cannot write {path}: {exc}. Check free space and permissions.") from exc
