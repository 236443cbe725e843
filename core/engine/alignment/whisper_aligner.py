"""Alignment by recognition with faster-whisper, where it is installed and its model is on disk (optional).

Whisper transcribes the audio with a time for each word (``word_timestamps=True``); the recognised words are then
matched to the text's (:class:`difflib.SequenceMatcher` over lower-cased words without punctuation). A text word
matched to a recognised one takes its times; a text word recognised differently takes them only where one text
word stands against one recognised word that is spelled much alike (a number written in digits, an accent lost).
Text words that were not heard stay unplaced. ``faster_whisper`` is imported when a model is first loaded.
"""

from __future__ import annotations

import difflib
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.alignment.words import Placed, split_words, word_key

log = logging.getLogger(__name__)

RATE = 16_000
"""Whisper's sample rate."""
ALIKE = 0.6
"""How alike (0–1, :class:`difflib.SequenceMatcher`'s ratio over letters) a recognised word must be spelled to a
text word that it does not equal, to lend it its times."""


def whisper_available() -> bool:
    """Whether faster-whisper can be imported (this imports it: call it only when a model is given)."""
    try:
        import faster_whisper  # noqa: F401 - only whether it imports
    except ImportError:
        return False
    return True


class WhisperAligner:
    """Places a text's words by recognising them with faster-whisper."""

    name = "faster-whisper"

    def __init__(self, model_dir: Path, model: Any = None) -> None:
        """``model_dir``: a faster-whisper (CTranslate2) model folder; ``model`` stands in for
        ``faster_whisper.WhisperModel`` (tests), made from the folder on first use otherwise."""
        self.model_dir = Path(model_dir)
        self._model = model
        self._lock = threading.Lock()

    def place(
        self, audio: np.ndarray, sample_rate: int, words: Sequence[str], language: str = "en"
    ) -> list[Placed | None]:
        """Each word's place in ``audio`` (mono float32 at ``sample_rate``), ``None`` for a word not heard; a placed
        word's ``cost`` is one minus Whisper's probability for it."""
        if not words:
            return []
        samples = _to_16k(audio, sample_rate)
        if not samples.size:
            return [None] * len(words)
        with self._lock:
            model = self._loaded()
            segments, _info = model.transcribe(
                samples,
                language=language.lower().replace("_", "-").split("-")[0],
                word_timestamps=True,
                beam_size=1,
                vad_filter=False,
                condition_on_previous_text=False,
            )
            heard = [
                (part, float(word.start), float(word.end), float(getattr(word, "probability", 1.0)))
                for segment in segments
                for word in (getattr(segment, "words", None) or [])
                for part in split_words(str(word.word))
            ]
        return match_words(words, heard)

    def _loaded(self) -> Any:
        if self._model is None:
            from faster_whisper import WhisperModel

            self._model = WhisperModel(str(self.model_dir), device="auto", compute_type="default")
        return self._model


def match_words(words: Sequence[str], heard: Sequence[tuple[str, float, float, float]]) -> list[Placed | None]:
    """The text's ``words`` placed at the recognised words (``(word, start, end, probability)``) they match."""
    placed: list[Placed | None] = [None] * len(words)
    text = [word_key(word) for word in words]
    said = [word_key(word) for word, *_ in heard]
    matcher = difflib.SequenceMatcher(None, text, said, autojunk=False)
    for tag, t_first, t_end, h_first, h_end in matcher.get_opcodes():
        if tag == "equal" or (
            tag == "replace"
            and t_end - t_first == h_end - h_first
            and all(_alike(text[t_first + k], said[h_first + k]) for k in range(t_end - t_first))
        ):
            for offset in range(t_end - t_first):
                _, start, end, probability = heard[h_first + offset]
                placed[t_first + offset] = Placed(start, max(end, start), 1.0 - probability)
    return placed


def _alike(written: str, heard: str) -> bool:
    return difflib.SequenceMatcher(None, written, heard).ratio() >= ALIKE


def _to_16k(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    import soxr

    samples = np.asarray(audio, dtype=np.float32)
    if samples.ndim > 1:
        samples = samples.mean(axis=1, dtype=np.float32)
    if samples.size and sample_rate != RATE:
        samples = np.asarray(soxr.resample(samples, sample_rate, RATE), dtype=np.float32)
    return samples
