"""The verdict on a take: its reasons (each a code with its facts) and a score, from its measures, the book's context
(this voice's own rate, the book's loudness) and the thresholds.

The score ranks takes of one segment (re-takes and candidates keep the best): 100 for a take with nothing to say
against it, less for each reason (by how serious it is) and a little for how far its duration and silences stray
even under the thresholds. A take is *flagged* while it has a reason and nobody accepted it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from core.narration.screening.measures import TakeMeasures
from core.narration.screening.thresholds import Thresholds

MIN_RATE_LETTERS = 12
"""Takes of fewer letters say little about a voice's rate (their length is mostly the start and the end)."""
PENALTY = {
    "loop": 60,
    "stop_guard": 50,
    "token_cap": 45,
    "too_long": 40,
    "too_short": 40,
    "cut_off": 40,
    "end_missing": 40,
    "words": 35,
    "long_silence": 30,
    "sound_after_end": 30,
    "clipping": 25,
    "loudness": 20,
}
"""What each reason takes off the score (the more likely a listener hears it as wrong, the more)."""
REASONS = tuple(PENALTY)
LOOP_SHARE = Thresholds().loop_share
"""A take looping this much says nothing of its voice's rate (the default threshold: the rate is the book's own,
whatever a book sets for its flags)."""


@dataclass
class BookContext:
    """What a take is judged against: each voice's seconds per letter in this book, and its median loudness."""

    rates: dict[str, list[float]] = field(default_factory=dict)
    loudness: list[float] = field(default_factory=list)
    _medians: dict[str | None, float] = field(default_factory=dict, repr=False)
    """Medians computed since the last :meth:`add` (voice name, ``None`` for the loudness): judging a whole book
    again asks for them once per take."""

    def add(self, voice: str | None, measures: TakeMeasures) -> None:
        """Count a take in (a take whose generation ran away or hit its cap says nothing of the voice's rate, nor
        does a performed take: its pace is the person's)."""
        if measures.stop_reasons and any(r != "stop_token" for r in measures.stop_reasons):
            return
        if measures.loop_share >= LOOP_SHARE:
            return
        if measures.letters >= MIN_RATE_LETTERS and measures.speech_seconds > 0 and not measures.performed:
            self.rates.setdefault(voice or "", []).append(measures.speech_seconds / measures.letters)
            self._medians.pop(voice or "", None)
        if measures.loudness_lufs is not None:
            self.loudness.append(measures.loudness_lufs)
            self._medians.pop(None, None)

    def rate(self, voice: str | None, thresholds: Thresholds) -> float | None:
        """Median seconds per letter of ``voice`` (``None`` until :attr:`Thresholds.rate_takes` takes are known)."""
        rates = self.rates.get(voice or "", [])
        return self._median(voice or "", rates) if len(rates) >= max(1, thresholds.rate_takes) else None

    def book_loudness(self, thresholds: Thresholds) -> float | None:
        return self._median(None, self.loudness) if len(self.loudness) >= max(1, thresholds.rate_takes) else None

    def _median(self, key: str | None, values: list[float]) -> float:
        found = self._medians.get(key)
        if found is None:
            found = self._medians[key] = float(np.median(values))
        return found


@dataclass(frozen=True)
class Verdict:
    score: float
    reasons: list[dict]
    """``{"code": ..., facts}``: :data:`REASONS` in the order they were found."""

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)


SHORT_LETTERS = 14
"""A short line of dialogue ("Yes.", "Oh, indeed!"): at most this many letters, about two words."""


def judge(
    measures: TakeMeasures,
    thresholds: Thresholds,
    rate: float | None,
    book_loudness: float | None,
    asr: dict | None = None,
) -> Verdict:
    """The reasons to listen to a take and its score. ``rate``: this voice's seconds per letter in the book;
    ``book_loudness``: the book's median take loudness (``None``: not known yet, not judged); ``asr``: what speech
    recognition heard (:func:`core.narration.screening.word_errors.compare_words` as a dict).

    A performed take (``measures.performed``) has no tokens and no stop reasons (nothing of theirs is flagged), keeps
    the pace the person spoke at (not judged against the voice's rate) and ends as the recording ended, not in the
    pipeline's fade-out (not judged cut off); its silences, tail, clipping, loudness and words are judged as any
    take's."""
    reasons: list[dict] = []
    strain = 0.0
    _tokens(measures, thresholds, reasons)
    if rate is not None and measures.letters and not measures.performed:
        expected = rate * measures.letters
        ratio = measures.speech_seconds / expected if expected else 1.0
        off = abs(measures.speech_seconds - expected) >= thresholds.duration_margin_s
        facts = {"seconds": round(measures.speech_seconds, 2), "expected": round(expected, 2), "ratio": round(ratio, 2)}
        edges = thresholds.utterance_s if measures.letters <= SHORT_LETTERS else 0.0
        longest = expected + edges  # a short line's own start and end, which the rate per letter does not carry
        over = measures.speech_seconds / longest if longest else 1.0
        if over > thresholds.long_ratio and measures.speech_seconds - longest >= thresholds.duration_margin_s:
            reasons.append({"code": "too_long", **facts})
        elif ratio < thresholds.short_ratio and off:
            reasons.append({"code": "too_short", **facts})
        strain += 10 * abs(math.log(max(ratio, 1e-3)))
    allowed = thresholds.silence_s + measures.pause_s
    if measures.longest_silence_s > allowed:
        reasons.append(
            {
                "code": "long_silence",
                "seconds": round(measures.longest_silence_s, 2),
                "at": round(measures.silence_at_s, 2),
                "limit": round(allowed, 2),
            }
        )
    strain += 5 * max(0.0, measures.longest_silence_s - 0.5 - measures.pause_s)
    tail = max(measures.noise_tail_s, measures.after_pause_s)
    if tail >= thresholds.tail_s and measures.pause_s == 0:
        kind = "noise" if measures.noise_tail_s >= measures.after_pause_s else "after_pause"
        reasons.append({"code": "sound_after_end", "seconds": round(tail, 2), "kind": kind})
    if measures.end_db > thresholds.end_db and measures.noise_tail_s < thresholds.tail_s and not measures.performed:
        reasons.append({"code": "cut_off", "db": round(measures.end_db, 1)})
    if measures.clipped_ms >= thresholds.clipped_ms:
        reasons.append({"code": "clipping", "ms": round(measures.clipped_ms, 1)})
    if book_loudness is not None and measures.loudness_lufs is not None:
        difference = measures.loudness_lufs - book_loudness
        if abs(difference) > thresholds.loudness_db:
            reasons.append({"code": "loudness", "db": round(difference, 1), "book": round(book_loudness, 1)})
    if asr is not None:
        _words(asr, thresholds, reasons)
        strain += 20 * float(asr.get("wer", 0.0))
    score = 100.0 - sum(PENALTY[r["code"]] for r in reasons) - min(strain, 20.0)
    return Verdict(round(max(0.0, score), 1), reasons)


def _tokens(measures: TakeMeasures, thresholds: Thresholds, reasons: list[dict]) -> None:
    runaway = [r for r in measures.stop_reasons if r.startswith("runaway")]
    if runaway:
        reasons.append({"code": "stop_guard", "detail": runaway[0].partition(": ")[2], "sentences": len(runaway)})
    capped = sum(1 for r in measures.stop_reasons if r == "token_cap")
    if capped:
        reasons.append({"code": "token_cap", "sentences": capped})
    if measures.loop_share >= thresholds.loop_share:
        reasons.append(
            {
                "code": "loop",
                "period_s": round(measures.loop_period / 25.0, 2),
                "share": round(measures.loop_share, 2),
                "at": round(measures.loop_at_s, 2),
            }
        )


def _words(asr: dict, thresholds: Thresholds, reasons: list[dict]) -> None:
    at_end = int(asr.get("end_missing") or 0)
    expected = int(asr.get("expected_words") or 0)
    if at_end >= 2 or (at_end and expected and at_end >= expected / 4):
        reasons.append({"code": "end_missing", "words": at_end, "missing": list(asr.get("missing") or [])[-at_end:]})
    wer = float(asr.get("wer") or 0.0)
    if wer > thresholds.wer:
        reasons.append(
            {
                "code": "words",
                "wer": round(wer, 2),
                "missing": list(asr.get("missing") or [])[:12],
                "extra": list(asr.get("extra") or [])[:12],
            }
        )
