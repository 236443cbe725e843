"""The take screen's thresholds: where a measure becomes a reason to listen (docs/REVIEW.md lists them).

Every threshold has a default that suits Chatterbox's voices; a book may set its own (``project DIR --screen
NAME=VALUE``, kept in the project as :attr:`core.narration.projects.project.Project.screening`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Thresholds:
    loop_share: float = 0.7
    """A stretch of speech tokens repeating with a period of 2-150 tokens: the share of positions in a window of three
    periods (at least 2 s) that equal the token one period earlier. Natural speech stays under 0.2."""
    short_ratio: float = 0.65
    """Too short: the speech is under this share of what this voice takes for text of this length in this book."""
    long_ratio: float = 1.6
    """Too long: the speech is over this multiple of what this voice takes for text of this length in this book."""
    duration_margin_s: float = 0.6
    """Short texts vary most: a duration is judged only when it also differs from the expected one by this much."""
    utterance_s: float = 0.5
    """The start and end every utterance has, which a rate per letter measured on sentences spreads over their
    letters: a short line (:data:`~core.narration.screening.judge.SHORT_LETTERS` letters or fewer) is allowed this
    much on top of its letters before it is judged too long ("Yes." takes about 0.5 s more than three letters' worth;
    measured, docs/PERFORMANCE-LOG.md "Short lines")."""
    rate_takes: float = 8
    """Takes of a voice needed before its own rate is known (until then durations are not judged)."""
    end_db: float = 6.0
    """Cut off: the take's end stands this many dB above the fade-out every finished take ends with."""
    silence_s: float = 1.5
    """The longest silence allowed inside the speech, beyond the pauses the text itself asks for."""
    tail_s: float = 0.4
    """Sound after the last word: noise-like sound at the end, or sound after a pause near the end, this long."""
    clipped_ms: float = 2.0
    """Clipping: this many milliseconds of samples at full scale (in runs of at least 3)."""
    loudness_db: float = 6.0
    """Loudness: this many dB louder or quieter than the book's median take."""
    wer: float = 0.35
    """Speech recognition: a word error rate above this (the transcript against the text it should say)."""

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def of(cls, overrides: dict | None) -> Thresholds:
        """The defaults with a book's own values (unknown names are ignored: an older app's file)."""
        known = set(cls.names())
        return replace(cls(), **{k: float(v) for k, v in (overrides or {}).items() if k in known})


def parse_setting(text: str) -> tuple[str, float]:
    """``NAME=VALUE`` (the command line's ``--screen``) → the pair; ``ValueError`` with what is wrong."""
    name, sep, value = text.partition("=")
    name = name.strip()
    if not sep or name not in Thresholds.names():
        raise ValueError(f"use NAME=VALUE with NAME one of: {', '.join(Thresholds.names())}")
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"{name} needs a number, not {value.strip()!r}") from None
    if not number >= 0 or number == float("inf"):
        raise ValueError(f"{name} needs a positive number")
    return name, number
