"""English speech recognition with pocketsphinx: small, CPU-only, and nothing to download.

The ``pocketsphinx`` wheel (5.x) carries its US English acoustic model, pronouncing dictionary and language model, so
``Decoder()`` with its defaults recognises English at once. A take (float32, any rate) is resampled to the decoder's
16 kHz with ``soxr``, given a fixed, very low noise floor (see :data:`NOISE_FLOOR`) and decoded as one utterance.

The decoder takes about half a second to make, so a recogniser makes one and keeps it; pocketsphinx decoders are not
thread-safe, so a lock lets one take through at a time.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from core.narration.screening.recognition_errors import INSTALL_SPHINX, RecognitionUnavailable
from core.narration.text.sentences import base_language

RATE = 16_000
"""The sample rate of pocketsphinx's English acoustic model."""
NOISE_FLOOR = 1e-3
"""Standard deviation of the noise added to every take (−60 dBFS, a quiet room). Digital silence (exact zeros, as in
the pauses a take is given) breaks pocketsphinx's feature extraction, whose log energy of nothing swamps the rest: on
espeak-ng sentences, which pause in exact zeros, it heard "so that will" for "The cat sat on the mat and looked at the
door."; with this floor, every word. The noise is seeded, so a take is always heard the same way."""
DECODER_OPTIONS: dict[str, Any] = {"topn": 2, "maxhmmpf": 3000, "loglevel": "FATAL"}
"""Fewer Gaussians per frame (4 by default) and at most 3,000 active HMMs per frame (30,000): about half the time of
the defaults, with the same words heard on the tests' sentences; and no log lines on stderr."""


class SphinxRecogniser:
    """Transcribes English takes with pocketsphinx's bundled model (:class:`core.narration.screening.recognition.
    Recogniser`)."""

    name: str = "pocketsphinx"
    languages: frozenset[str] | None = frozenset({"en"})

    def __init__(self, decoder: Any = None) -> None:
        """``decoder`` stands in for ``pocketsphinx.Decoder()`` (tests); by default one is made here, which raises
        :class:`RecognitionUnavailable` ``asr.not_installed`` when pocketsphinx is missing."""
        if decoder is None:
            try:
                from pocketsphinx import Decoder
            except ImportError as exc:
                missing = RecognitionUnavailable("asr.not_installed", package="pocketsphinx", install=INSTALL_SPHINX)
                raise missing from exc
            decoder = Decoder(**DECODER_OPTIONS)
        self._decoder = decoder
        self._lock = threading.Lock()

    def transcribe(self, audio: np.ndarray, sample_rate: int, language: str = "en") -> str:
        """The words pocketsphinx hears in ``audio`` (mono float32 at ``sample_rate``), lower case, "" for none."""
        if base_language(language) not in (self.languages or ()):
            raise RecognitionUnavailable(
                "asr.language", recogniser="pocketsphinx", language=language, supported=sorted(self.languages or ())
            )
        pcm = to_pcm16(audio, sample_rate)
        if not pcm:
            return ""
        with self._lock:
            try:
                self._decoder.start_utt()
                self._decoder.process_raw(pcm, full_utt=True)
                self._decoder.end_utt()
                hypothesis = self._decoder.hyp()
            except RuntimeError as exc:
                raise RecognitionUnavailable("asr.failed", recogniser="pocketsphinx", reason=str(exc)) from exc
        return str(hypothesis.hypstr) if hypothesis is not None else ""


def to_pcm16(audio: np.ndarray, sample_rate: int) -> bytes:
    """``audio`` as pocketsphinx reads it: 16 kHz, 16-bit little-endian, with the seeded noise floor added."""
    import soxr

    samples = np.asarray(audio, dtype=np.float32)
    if samples.ndim > 1:
        samples = samples.mean(axis=1, dtype=np.float32)
    if samples.size == 0:
        return b""
    if sample_rate != RATE:
        samples = soxr.resample(samples, sample_rate, RATE).astype(np.float32, copy=False)
    noise = np.random.default_rng(0).standard_normal(samples.size, dtype=np.float32) * NOISE_FLOOR
    return (np.clip(samples + noise, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()
