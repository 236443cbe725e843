"""Screening rendered takes: measures of every take's tokens, audio and text (optionally what speech recognition
hears), a verdict with reasons and a score, the flagged takes a narrator should listen to (docs/REVIEW.md)."""

from core.narration.screening.check import (
    CheckedTake,
    CheckReport,
    Measured,
    TakeToCheck,
    check_takes,
    measure_again,
    store_checked,
    takes_to_check,
)
from core.narration.screening.judge import REASONS, BookContext, Verdict, judge
from core.narration.screening.measures import TakeMeasures, measure_take
from core.narration.screening.recognition import Recogniser, recogniser_for
from core.narration.screening.recognition_errors import RecognitionUnavailable
from core.narration.screening.screen import (
    Screener,
    accept,
    best_take,
    book_context,
    flagged_numbers,
    is_flagged,
    reasons_of,
    segment_flagged,
    set_thresholds,
)
from core.narration.screening.thresholds import Thresholds, parse_setting

__all__ = [
    "REASONS",
    "RecognitionUnavailable",
    "Recogniser",
    "recogniser_for",
    "BookContext",
    "CheckReport",
    "CheckedTake",
    "Screener",
    "TakeMeasures",
    "Thresholds",
    "Verdict",
    "accept",
    "best_take",
    "book_context",
    "check_takes",
    "flagged_numbers",
    "is_flagged",
    "judge",
    "measure_again",
    "store_checked",
    "takes_to_check",
    "Measured",
    "TakeToCheck",
    "measure_take",
    "parse_setting",
    "reasons_of",
    "segment_flagged",
    "set_thresholds",
]
