"""Recordings whose word boundaries are known, for the aligner's tests: each word spoken alone by espeak-ng, its
silence trimmed, the words joined by pauses of known, varied length."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

RATE = 24_000
TRIM = 0.02
"""A word starts and ends where its amplitude first and last reaches this share of its peak."""
PAUSES_S = (0.12, 0.40)
LEAD_S = 0.3

needs_espeak = pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is not installed")

SENTENCES = {
    "en": (
        "The quick brown fox jumps over the lazy dog while seven happy children sing loudly near the old wooden "
        "bridge.",
        "She sells sea shells by the sea shore, and the shells she sells are surely seashells.",
        "My grandmother keeps a little garden behind her house with roses and tomatoes.",
    ),
    "fr": (
        "Les enfants jouent dans le jardin pendant que leur mère prépare un gâteau au chocolat.",
        "Aujourd'hui il fait beau, mais demain il pleuvra peut-être sur toute la région.",
        "Nous avons visité un petit village près de la mer avec nos meilleurs amis.",
        "Le chat noir dort tranquillement sur le canapé depuis ce matin.",
    ),
    "de": (
        "Die Kinder spielen im Garten, während ihre Mutter einen Kuchen backt.",
        "Schöne Grüße aus München und Zürich an alle Freunde in Österreich.",
        "Gestern Abend haben wir einen langen Spaziergang durch den Wald gemacht.",
        "Der alte Mann liest jeden Morgen die Zeitung und trinkt schwarzen Kaffee.",
    ),
}
"""About 50 words in each language."""
VOICES = {"en": "en-us", "fr": "fr", "de": "de"}


@cache
def word_audio(word: str, voice: str) -> np.ndarray:
    """``word`` spoken alone by espeak-ng at 24 kHz, from its first to its last sample above :data:`TRIM`."""
    import soxr

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "word.wav"
        subprocess.run(["espeak-ng", "-v", voice, "-w", str(path), word], check=True, capture_output=True)
        samples, rate = sf.read(path, dtype="float32")
    samples = np.asarray(soxr.resample(samples, rate, RATE), dtype=np.float32)
    loud = np.flatnonzero(np.abs(samples) > TRIM * np.abs(samples).max())
    return samples[loud[0] : loud[-1] + 1]


def recording(words: list[str], language: str, seed: int = 0) -> tuple[np.ndarray, list[tuple[str, float, float]]]:
    """The words spoken one after another with seeded pauses of 120–400 ms, and each word's true start and end."""
    rng = np.random.default_rng(seed)
    parts = [np.zeros(round(LEAD_S * RATE), dtype=np.float32)]
    at = parts[0].size
    truth = []
    for word in words:
        audio = word_audio(word.lower(), VOICES[language])
        truth.append((word, at / RATE, (at + audio.size) / RATE))
        pause = np.zeros(round(rng.uniform(*PAUSES_S) * RATE), dtype=np.float32)
        parts += [audio, pause]
        at += audio.size + pause.size
    return np.concatenate(parts), truth
