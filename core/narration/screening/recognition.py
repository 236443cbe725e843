"""Speech recognition for screening, as one small interface: a :class:`Recogniser` turns a take into words, and
:func:`recogniser_for` chooses one for the project's language.

Two recognisers, both optional:

- faster-whisper (``pip install '.[asr]'``) with the Whisper base model (about 145 MB, downloaded once into the app's
  models folder), for every language the projects use: :mod:`core.narration.screening.whisper_recogniser`;
- pocketsphinx (``pip install pocketsphinx``; its English model ships in the wheel), English only, smaller and less
  accurate: :mod:`core.narration.screening.sphinx_recogniser`.

Neither package is imported until a recogniser is asked for. Making one takes a moment (a model to load): make one per
screening run and give it every take.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

import core.narration.screening.sphinx_recogniser as sphinx_recogniser
import core.narration.screening.whisper_recogniser as whisper_recogniser
from core.narration.screening.recognition_errors import INSTALL_WHISPER, RecognitionUnavailable
from core.narration.screening.whisper_recogniser import WHISPER_MODEL, Progress
from core.narration.text.sentences import base_language

PREFERENCES = ("auto", "whisper", "sphinx")

__all__ = ["PREFERENCES", "Recogniser", "RecognitionUnavailable", "recogniser_for"]


class Recogniser(Protocol):
    """Turns a take into the words heard in it."""

    name: str
    """Which recogniser (``faster-whisper``, ``pocketsphinx``), for logs and screening results."""
    languages: frozenset[str] | None
    """The base language codes it knows (``{"en"}``), or ``None`` for many (Whisper's 99)."""

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str) -> str:
        """The words heard in ``audio`` (mono float32 samples at ``sample_rate``) spoken in ``language``; raises
        :class:`RecognitionUnavailable` (``asr.language``, ``asr.failed``)."""
        ...


def recogniser_for(
    language: str, prefer: str = "auto", models_dir: Path | None = None, progress: Progress | None = None
) -> Recogniser:
    """A recogniser for ``language`` (the project's code: ``en``, ``pt-BR``...), or :class:`RecognitionUnavailable`.

    - ``whisper``: faster-whisper with the Whisper model from ``models_dir`` (default the app's models folder); a model
      not there yet is downloaded now (the network's only use; ``progress`` gets its bytes and may cancel it).
      ``asr.not_installed`` without faster-whisper, ``asr.model_missing`` when the download fails.
    - ``sphinx``: pocketsphinx; ``asr.language`` for a language other than English, ``asr.not_installed`` without it.
    - ``auto``: faster-whisper when it is installed and its model is already downloaded (nothing is downloaded), else
      pocketsphinx for English, else ``asr.not_installed`` for faster-whisper (or ``asr.model_missing`` when it is
      installed without its model).
    """
    if prefer not in PREFERENCES:
        raise ValueError(f"prefer must be one of {', '.join(PREFERENCES)}, not {prefer!r}")
    lang = base_language(language)
    if prefer == "whisper":
        return _whisper(models_dir, progress)
    if prefer == "sphinx":
        return _sphinx(language)
    folder = whisper_recogniser.find_whisper_model(models_dir)
    if folder is not None and whisper_recogniser.whisper_installed():
        return whisper_recogniser.WhisperRecogniser(folder)
    if lang == "en":
        try:
            return sphinx_recogniser.SphinxRecogniser()
        except RecognitionUnavailable:
            pass  # neither recogniser: say what the Whisper one needs, which knows every language
    if not whisper_recogniser.whisper_installed():
        raise RecognitionUnavailable("asr.not_installed", package="faster-whisper", install=INSTALL_WHISPER)
    raise _model_missing(models_dir)


def _whisper(models_dir: Path | None, progress: Progress | None) -> Recogniser:
    if not whisper_recogniser.whisper_installed():
        raise RecognitionUnavailable("asr.not_installed", package="faster-whisper", install=INSTALL_WHISPER)
    folder = whisper_recogniser.find_whisper_model(models_dir)
    if folder is None:
        folder = whisper_recogniser.download_whisper_model(models_dir, progress)
    return whisper_recogniser.WhisperRecogniser(folder)


def _sphinx(language: str) -> Recogniser:
    recogniser = sphinx_recogniser.SphinxRecogniser
    if base_language(language) not in (recogniser.languages or ()):
        raise RecognitionUnavailable(
            "asr.language", recogniser="pocketsphinx", language=language, supported=sorted(recogniser.languages or ())
        )
    return recogniser()


def _model_missing(models_dir: Path | None) -> RecognitionUnavailable:
    return RecognitionUnavailable(
        "asr.model_missing",
        model=WHISPER_MODEL.repo,
        revision=WHISPER_MODEL.revision,
        folder=str(whisper_recogniser.models_root(models_dir) / WHISPER_MODEL.folder),
        reason="",
    )
