"""Every reason the take screen gives has words a narrator reads (no code names, no braces, no token numbers)."""

from __future__ import annotations

from core.narration.screening import REASONS
from core.wording import REASON_WORDS, describe_reason, describe_reasons

FACTS = {
    "loop": {"period_s": 0.4, "share": 0.9, "at": 2.2},
    "stop_guard": {"detail": "token 3403 repeated 30 times", "sentences": 1},
    "token_cap": {"sentences": 1},
    "too_long": {"seconds": 9.4, "expected": 4.1, "ratio": 2.3},
    "too_short": {"seconds": 1.2, "expected": 4.1, "ratio": 0.3},
    "cut_off": {"db": 18.0},
    "end_missing": {"words": 2, "missing": ["and", "bright"]},
    "words": {"wer": 0.6, "missing": ["brother"], "extra": ["window"]},
    "long_silence": {"seconds": 3.1, "at": 1.0, "limit": 1.5},
    "sound_after_end": {"seconds": 2.0, "kind": "noise"},
    "clipping": {"ms": 12.0},
    "loudness": {"db": -7.5, "book": -20.0},
}


def test_every_reason_has_words_that_fit_its_facts():
    assert set(REASONS) == set(REASON_WORDS) == set(FACTS)
    for code, facts in FACTS.items():
        text = describe_reason({"code": code, **facts})
        assert text and text != code and "{" not in text and "token" not in text, (code, text)


def test_a_reason_from_a_newer_app_is_named_as_it_is():
    assert describe_reason({"code": "mumbling"}) == "mumbling"
    assert describe_reason({"code": "clipping"}) == "clipping"  # facts missing: the code, not a traceback
    assert describe_reasons([{"code": "clipping", "ms": 3.0}, {"code": "loudness", "db": 7.0, "book": -19.0}]) == (
        "Clipped: 3 ms at full scale; 7 dB louder than the rest of the book"
    )
