"""``align()``: the words of a recording's own text placed in time, by the aligner that suits the language.

pocketsphinx with espeak-ng's pronunciations serves every language by default; faster-whisper serves languages
other than English when it is installed and its model folder is given (English keeps pocketsphinx, whose
dictionary is English's own). Words are placed as they are spoken (``spoken``, when the text was given a spoken
form: numbers, abbreviations, respellings) and reported as they are written (:mod:`core.engine.alignment.spoken`).
A word that was not heard gets no time: a recording that does not match its text has a low
:attr:`~core.engine.alignment.words.Alignment.placed_share`, and :class:`AlignmentError` ``align.not_matching`` is
raised only when not one word could be placed.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np

from core.engine.alignment.errors import AlignmentError
from core.engine.alignment.sphinx_aligner import SphinxAligner
from core.engine.alignment.spoken import spoken_spans
from core.engine.alignment.whisper_aligner import WhisperAligner, whisper_available
from core.engine.alignment.words import Aligner, Alignment, Placed, WordTime, split_words

log = logging.getLogger(__name__)

_aligners: dict[str, Aligner] = {}
_aligners_lock = threading.Lock()


def align(
    audio: np.ndarray,
    sample_rate: int,
    text: str,
    language: str = "en",
    spoken: str | None = None,
    whisper_model: Path | None = None,
) -> Alignment:
    """The words of ``text`` placed in ``audio`` (mono, or channels in the last axis, at ``sample_rate``).

    ``spoken``: the text as it is spoken where it differs from ``text``; ``whisper_model``: a faster-whisper model
    folder, used for languages other than English when faster-whisper is installed. Raises :class:`AlignmentError`
    (``align.no_audio``, ``align.not_matching``, ``align.language``, ``align.not_installed``)."""
    samples = np.asarray(audio, dtype=np.float32)
    if samples.ndim > 1:
        samples = samples.mean(axis=-1, dtype=np.float32)
    if sample_rate <= 0:
        raise AlignmentError("align.no_audio", seconds=0.0)
    duration = samples.size / sample_rate
    written = split_words(text)
    aligner = _aligner(language, whisper_model)
    if not written:
        return Alignment([], duration, language, aligner.name, 0)
    if not samples.size or not np.any(np.isfinite(samples) & (samples != 0)):
        raise AlignmentError("align.no_audio", seconds=round(duration, 3))
    said = split_words(spoken) if spoken is not None else written
    placed = aligner.place(samples, sample_rate, said, language)
    spans = spoken_spans(written, said) if spoken is not None else [(i, i + 1) for i in range(len(written))]
    words = [
        WordTime(word, times.start, times.end)
        for word, span in zip(written, spans)
        if (times := _covering(placed, span)) is not None
    ]
    if not words:
        raise AlignmentError("align.not_matching", words=len(written), language=language, seconds=round(duration, 3))
    return Alignment(words, duration, language, aligner.name, len(written))


def _covering(placed: list[Placed | None], span: tuple[int, int] | None) -> Placed | None:
    """A written word's times from the spoken words it covers: placed only when its first and last one are."""
    if span is None:
        return None
    first, last = placed[span[0]], placed[span[1] - 1]
    if first is None or last is None:
        return None
    return Placed(first.start, max(last.end, first.start), max(first.cost, last.cost))


def _aligner(language: str, whisper_model: Path | None) -> Aligner:
    english = language.lower().replace("_", "-").split("-")[0] == "en"
    key = "pocketsphinx"
    if whisper_model is not None and not english:
        if whisper_available():
            key = f"whisper:{Path(whisper_model).resolve()}"
        else:
            log.info("faster-whisper is not installed; aligning %s with pocketsphinx", language)
    with _aligners_lock:
        aligner = _aligners.get(key)
        if aligner is None:
            aligner = _aligners[key] = (
                SphinxAligner() if key == "pocketsphinx" else WhisperAligner(Path(str(whisper_model)))
            )
        return aligner
