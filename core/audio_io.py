"""Writing audio files safely (write-then-rename, so an interrupted export never leaves a partial file)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import soundfile as sf

from .atomic import atomic_path
from .errors import ChatterboxError

FORMATS = {".wav": "WAV", ".flac": "FLAC", ".ogg": "OGG"}


class AudioWriteError(ChatterboxError):
    """The audio file could not be written (folder missing, disk full, read-only...)."""


def write_audio(path: Path, audio: np.ndarray, sample_rate: int) -> None:
    """Write atomically: a temporary file in the same folder, renamed over the target only when complete."""
    write_audio_stream(path, [audio], sample_rate)


def write_audio_stream(path: Path, blocks: Iterable[np.ndarray], sample_rate: int) -> int:
    """Write mono blocks as they come (memory stays flat for hours of audio); returns the samples written.

    The target appears only when every block is written; an error or interruption while producing or writing
    the blocks leaves no file under ``path`` (and an existing one untouched).
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise AudioWriteError(f"Cannot write {path}: the folder {folder} does not exist.")
    audio_format = FORMATS.get(path.suffix.lower())
    if audio_format is None:
        raise AudioWriteError(f"Cannot write {path.name}: use a .wav, .flac or .ogg file name.")
    written = 0
    try:
        with atomic_path(path) as tmp, sf.SoundFile(tmp, "w", sample_rate, 1, format=audio_format) as out:
            for block in blocks:
                out.write(np.asarray(block, dtype=np.float32).reshape(-1))
                written += block.size
    except OSError as exc:
        raise AudioWriteError(f"Cannot write {path}: {exc.strerror or exc}. Check free space and permissions.") from exc
    except sf.LibsndfileError as exc:
        raise AudioWriteError(f"Cannot write {path}: {exc}. Check free space and permissions.") from exc
    return written
