"""The words for the take screen's reasons (``Take.screen["reasons"]``: a ``code`` with its facts), as the studio's
review and the command line show them: short, in the terms of what a listener would hear."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Reason = Mapping[str, Any]


def _words(values: Any, limit: int = 6) -> str:
    items = [str(v) for v in list(values or [])]
    text = " ".join(items[:limit])
    return f"“{text}{' …' if len(items) > limit else ''}”"


def _duration(r: Reason) -> str:
    return f"{r['seconds']:.1f} s where this voice takes about {r['expected']:.1f} s for this text"


def _long(r: Reason) -> str:
    return f"Runs long: {_duration(r)} (babble, a repeat or a loop?)"


def _short(r: Reason) -> str:
    return f"Too short: {_duration(r)} (words skipped or the end cut off?)"


def _loop(r: Reason) -> str:
    return f"Repeats itself: a {r['period_s']:.1f} s pattern loops from {r['at']:.1f} s"


def _guard(r: Reason) -> str:
    return "Started repeating itself and was stopped: the end of the sentence may be missing"


def _cap(r: Reason) -> str:
    return "Reached the length limit for its text: it may run on or be cut off"


def _silence(r: Reason) -> str:
    return f"A silence of {r['seconds']:.1f} s inside the speech at {r['at']:.1f} s"


def _after(r: Reason) -> str:
    what = "Noise" if r.get("kind") == "noise" else "Sound after a pause"
    return f"{what} after the last word ({r['seconds']:.1f} s)"


def _cut(r: Reason) -> str:
    return "Ends abruptly, mid-sound: the end may be cut off"


def _clipping(r: Reason) -> str:
    return f"Clipped: {r['ms']:.0f} ms at full scale"


def _loudness(r: Reason) -> str:
    way = "louder" if r["db"] > 0 else "quieter"
    return f"{abs(r['db']):.0f} dB {way} than the rest of the book"


def _end(r: Reason) -> str:
    return f"The end is missing: {_words(r.get('missing'))} not heard"


def _asr(r: Reason) -> str:
    parts = [f"Says other words than its text (word error rate {r['wer']:.0%})"]
    if r.get("missing"):
        parts.append(f"missing {_words(r['missing'])}")
    if r.get("extra"):
        parts.append(f"extra {_words(r['extra'])}")
    return "; ".join(parts)


REASON_WORDS: dict[str, Callable[[Reason], str]] = {
    "loop": _loop,
    "stop_guard": _guard,
    "token_cap": _cap,
    "too_long": _long,
    "too_short": _short,
    "cut_off": _cut,
    "long_silence": _silence,
    "sound_after_end": _after,
    "clipping": _clipping,
    "loudness": _loudness,
    "end_missing": _end,
    "words": _asr,
}


def describe_reason(reason: Reason) -> str:
    """One reason in words (an unknown code, from a newer app, is named as it is)."""
    words = REASON_WORDS.get(str(reason.get("code")))
    if words is None:
        return str(reason.get("code") or "unknown reason")
    try:
        return words(reason)
    except (KeyError, TypeError, ValueError):
        return str(reason.get("code"))


def describe_reasons(reasons: Sequence[Reason] | None, joiner: str = "; ") -> str:
    return joiner.join(describe_reason(r) for r in reasons or [])
