"""Writing audio files safely (write-then-rename, so an interrupted export never leaves a partial file).

Every format is encoded by libsndfile (through ``soundfile``): WAV and FLAC (16-bit), OGG Vorbis, Opus (in Ogg) and
MP3 (LAME). Tags go in with the audio; :func:`write_audio_stream` can run a ``finish`` step on the complete
temporary file (chapter markers) before it takes the final name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile as sf

from core.engine.errors import ChatterboxError
from core.engine.files.atomic import atomic_path


@dataclass(frozen=True)
class AudioFormat:
    container: str
    subtype: str
    name: str


FORMATS = {
    ".wav": AudioFormat("WAV", "PCM_16", "WAV"),
    ".flac": AudioFormat("FLAC", "PCM_16", "FLAC"),
    ".ogg": AudioFormat("OGG", "VORBIS", "OGG Vorbis"),
    ".opus": AudioFormat("OGG", "OPUS", "Opus"),
    ".mp3": AudioFormat("MP3", "MPEG_LAYER_III", "MP3"),
}
SUFFIXES_TEXT = ", ".join(FORMATS)
TAG_NAMES = ("title", "artist", "album", "comment", "tracknumber", "date", "software")
"""The tags libsndfile writes (WAV INFO chunk, Vorbis comments, ID3 for MP3)."""


class AudioWriteError(ChatterboxError):
    """The audio file could not be written (folder missing, disk full, read-only...)."""


def audio_format(path: Path | str) -> AudioFormat:
    """The format a file name asks for (:class:`AudioWriteError` naming the choices for any other suffix)."""
    fmt = FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise AudioWriteError("audio.bad_suffix", name=Path(path).name, suffixes=list(FORMATS))
    return fmt


def write_audio(path: Path, audio: np.ndarray, sample_rate: int) -> None:
    """Write atomically: a temporary file in the same folder, renamed over the target only when complete."""
    write_audio_stream(path, [audio], sample_rate)


def write_audio_stream(
    path: Path,
    blocks: Iterable[np.ndarray],
    sample_rate: int,
    tags: dict[str, str] | None = None,
    finish: Callable[[Path], None] | None = None,
) -> int:
    """Write mono blocks as they come (memory stays flat for hours of audio); returns the samples written.

    The target appears only when every block is written (and ``finish(temporary_path)`` has run); an error or
    interruption while producing or writing the blocks leaves no file under ``path`` (and an existing one untouched).
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise AudioWriteError("audio.folder_missing", path=str(path), folder=str(folder))
    fmt = audio_format(path)
    written = 0
    try:
        with atomic_path(path) as tmp:
            with sf.SoundFile(tmp, "w", sample_rate, 1, format=fmt.container, subtype=fmt.subtype) as out:
                for name, value in (tags or {}).items():
                    if value and name in TAG_NAMES:
                        setattr(out, name, str(value))
                for block in blocks:
                    out.write(np.asarray(block, dtype=np.float32).reshape(-1))
                    written += block.size
            if finish is not None:
                finish(tmp)
    except OSError as exc:
        raise AudioWriteError("audio.write_failed", path=str(path), reason=str(exc.strerror or exc)) from exc
    except sf.LibsndfileError as exc:
        raise AudioWriteError("audio.write_failed", path=str(path), reason=str(exc)) from exc
    return written
