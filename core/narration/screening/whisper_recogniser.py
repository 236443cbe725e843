"""Speech recognition in the project's language with faster-whisper (CTranslate2), and its model, downloaded as the
speech models are.

The model (:data:`WHISPER_MODEL`, multilingual Whisper base converted for CTranslate2) is fetched through
:mod:`core.engine.model.hub_download`'s :class:`Downloader`: from the commit it is pinned to and never from a branch,
each file checked in a staging folder against the size and hash the hub reports for that commit before it is moved
into ``<models>/whisper-base``. Only :func:`download_whisper_model` touches the network; :func:`find_whisper_model`
only looks on disk. ``faster_whisper`` and ``ctranslate2`` are imported when a recogniser is made, never before.

The recogniser runs on CUDA in float16 when CTranslate2 sees a GPU, else on the CPU in int8, and decodes greedily
(``beam_size=1``), without voice activity detection and without carrying text from one window to the next: a take is
a sentence or a paragraph, and screening wants what was said, not a fluent guess.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from core.engine import Downloader, HubModel, user_data
from core.narration.screening.recognition_errors import INSTALL_WHISPER, RecognitionUnavailable
from core.narration.text.sentences import base_language

log = logging.getLogger(__name__)

RATE = 16_000
"""Whisper's sample rate."""
WHISPER_MODEL = HubModel(
    "Whisper base — speech recognition for take screening, 99 languages (~145 MB)",
    "Systran/faster-whisper-base",
    "float16",
    "whisper-base",
    "ebe41f70d5b6dfa9166e2c581c45c9c0cfc57b66",
)
"""Pinned to a commit as the speech models are; a newer upload means a new commit here."""
WHISPER_FILES = ("config.json", "model.bin", "tokenizer.json", "vocabulary.txt")
"""What faster-whisper loads from a model folder (the repository's README is not fetched)."""

Progress = Callable[[int, int], object]
"""Called with (bytes done, bytes in all) while a model downloads; returning ``True`` cancels the download."""


def models_root(models_dir: Path | None = None) -> Path:
    """The folder that holds the app's models (``<user data>/models``, as the model dialog uses), or ``models_dir``."""
    return Path(models_dir) if models_dir is not None else user_data() / "models"


def find_whisper_model(models_dir: Path | None = None) -> Path | None:
    """The downloaded Whisper model's folder under ``models_dir``, or ``None``; looks on disk only (files reach this
    folder only after their hashes were checked)."""
    folder = models_root(models_dir) / WHISPER_MODEL.folder
    complete = all((folder / name).is_file() and (folder / name).stat().st_size > 0 for name in WHISPER_FILES)
    return folder if complete else None


def whisper_installed() -> bool:
    """Whether faster-whisper can be imported (this imports it, with CTranslate2: call it only when needed)."""
    try:
        import faster_whisper  # noqa: F401 - only whether it imports
    except ImportError:
        return False
    return True


class WhisperDownloader(Downloader):
    """:class:`Downloader` for a Whisper model: the same pinned commit, staging folder and checks (its ``_download``),
    with the files faster-whisper needs instead of a Chatterbox bundle's."""

    any_answer_pinned = True

    def _files(self, available: list[str]) -> list[str]:
        absent = [name for name in WHISPER_FILES if name not in available]
        if absent:
            raise RuntimeError(f"{self.model.repo}@{self.model.revision[:12]} holds no {', '.join(absent)}")
        return list(WHISPER_FILES)


def download_whisper_model(
    models_dir: Path | None = None, progress: Progress | None = None, hub: Any = None, model: HubModel = WHISPER_MODEL
) -> Path:
    """Download the Whisper model into ``models_dir`` (default the app's) and return its folder; a model already there
    is checked against the hub and kept. :class:`RecognitionUnavailable` ``asr.model_missing`` (with the reason) when
    the download fails or is cancelled. ``hub`` stands in for ``huggingface_hub`` (tests)."""
    download = WhisperDownloader(model, models_root(models_dir), hub=hub)
    download.start()
    while True:
        download.join(0.2)
        done = download.finished
        if progress is not None and progress(download.progress(), download.total_bytes) is True:
            download.cancel()
        if done:
            break
    if download.error:
        raise RecognitionUnavailable(
            "asr.model_missing",
            model=model.repo,
            revision=model.revision,
            folder=str(download.target),
            reason=download.error,
            offline=download.offline,
        )
    return download.target


class WhisperRecogniser:
    """Transcribes takes with faster-whisper from a model folder (:class:`core.narration.screening.recognition.
    Recogniser`)."""

    name: str = "faster-whisper"
    languages: frozenset[str] | None = None

    def __init__(self, folder: Path, model: Any = None) -> None:
        """``model`` stands in for ``faster_whisper.WhisperModel`` (tests); by default the model in ``folder`` is loaded
        (``asr.not_installed`` without faster-whisper, ``asr.failed`` when the folder cannot be loaded)."""
        self.folder = Path(folder)
        self.device = "stand-in"
        if model is None:
            model, self.device = _load(self.folder)
        self._model = model
        self._lock = threading.Lock()

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str) -> str:
        """What Whisper hears in ``audio`` (mono float32 at ``sample_rate``), told the language is ``language``."""
        import soxr

        samples = np.asarray(audio, dtype=np.float32)
        if samples.ndim > 1:
            samples = samples.mean(axis=1, dtype=np.float32)
        if samples.size == 0:
            return ""
        if sample_rate != RATE:
            samples = soxr.resample(samples, sample_rate, RATE).astype(np.float32, copy=False)
        with self._lock:
            try:
                segments, _info = self._model.transcribe(
                    samples,
                    language=base_language(language),
                    beam_size=1,
                    vad_filter=False,
                    condition_on_previous_text=False,
                )
                return " ".join(segment.text.strip() for segment in segments).strip()
            except (RuntimeError, ValueError) as exc:
                raise RecognitionUnavailable("asr.failed", recogniser=self.name, reason=str(exc)) from exc


def _load(folder: Path) -> tuple[Any, str]:
    """faster-whisper's model from ``folder``: float16 on a GPU when CTranslate2 sees one (int8 on the CPU when that
    fails: CUDA libraries missing), else int8 on the CPU."""
    try:
        import ctranslate2
        from faster_whisper import WhisperModel
    except ImportError as exc:
        raise RecognitionUnavailable("asr.not_installed", package="faster-whisper", install=INSTALL_WHISPER) from exc
    choices = [("cuda", "float16")] if ctranslate2.get_cuda_device_count() > 0 else []
    choices.append(("cpu", "int8"))
    for device, compute in choices:
        started = time.perf_counter()
        try:
            model = WhisperModel(str(folder), device=device, compute_type=compute, local_files_only=True)
        except (RuntimeError, ValueError, OSError) as exc:
            log.warning("Whisper model %s on %s (%s) failed: %s", folder, device, compute, exc)
            failure = exc
            continue
        log.info("Whisper model %s on %s (%s) in %.1f s", folder, device, compute, time.perf_counter() - started)
        return model, device
    raise RecognitionUnavailable("asr.failed", recogniser="faster-whisper", reason=str(failure)) from failure
