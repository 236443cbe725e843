"""Stand-in aligners: the stand-in models' audio is not speech, so tests that check where words land put a fake in
place of the aligner's process (:class:`core.engine.AlignerProcess`). Every test gets :class:`StandInAligner` as the
process's shared aligner (``tests/conftest.py``), so renders and the Speak tab start no child; tests of the aligner
itself start a real :class:`~core.engine.AlignerProcess`."""

from __future__ import annotations

import threading

import numpy as np

from core.engine import AlignerProcess, Alignment, ChatterboxError, WordTime


def even_words(audio: np.ndarray, sample_rate: int, text: str, language: str = "en", *_args, **_kwargs) -> Alignment:
    """Each written word given an equal share of the audio, in order."""
    words = [w.strip(".,!?;:\"'") for w in text.split()]
    words = [w for w in words if w]
    seconds = audio.size / sample_rate
    step = seconds / max(len(words), 1)
    placed = [WordTime(w, i * step, (i + 1) * step) for i, w in enumerate(words)]
    return Alignment(placed, seconds, language, "fake", len(words))


def failing(*_args, **_kwargs) -> Alignment:
    raise ChatterboxError("align.not_matching", words=3, language="en")


def crashing(*_args, **_kwargs) -> Alignment:
    raise RuntimeError("the aligner broke")


class Held:
    """An aligner that waits until :meth:`release` (at most ``limit`` s), then aligns as :func:`even_words`."""

    def __init__(self, limit: float = 30.0):
        self.released = threading.Event()
        self.limit = limit
        self.timed_out = False
        self.calls = 0

    def __call__(self, audio: np.ndarray, sample_rate: int, text: str, language: str = "en", *a, **k) -> Alignment:
        self.calls += 1
        if not self.released.wait(self.limit):
            self.timed_out = True
        return even_words(audio, sample_rate, text, language)

    def release(self) -> None:
        self.released.set()


class StandInAligner:
    """:func:`core.engine.shared_aligner` in tests: :func:`even_words` in the caller's process, counted."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None]] = []
        self.cpu_seconds = 0.0

    def align(
        self, audio: np.ndarray, sample_rate: int, text: str, language: str = "en", spoken: str | None = None
    ) -> Alignment:
        self.calls.append((text, language, spoken))
        return even_words(audio, sample_rate, text, language)

    def close(self) -> None:
        pass


def use(monkeypatch, aligner) -> None:
    """``aligner`` (with :func:`core.engine.align`'s arguments) in place of the process, in the server's own."""
    monkeypatch.setattr(AlignerProcess, "align", lambda _self, *args, **kwargs: aligner(*args, **kwargs))


class _Calling(StandInAligner):
    def __init__(self, aligner) -> None:
        super().__init__()
        self._aligner = aligner

    def align(self, audio, sample_rate, text, language="en", spoken=None):
        self.calls.append((text, language, spoken))
        return self._aligner(audio, sample_rate, text, language, spoken)


def share(monkeypatch, aligner) -> None:
    """``aligner`` (with :func:`core.engine.align`'s arguments) as the process's shared aligner
    (:func:`core.engine.shared_aligner`: renders, the studio, the Speak tab)."""
    from core.engine.alignment import process

    monkeypatch.setattr(process, "_shared", _Calling(aligner))
