"""``python -m core align``: where each word of a recording's own text is heard in it.

``align AUDIO (--text T | --text-file F) [--language L] [--spoken S] [--json]`` places the words of the text in the
recording offline (pocketsphinx, with espeak-ng's pronunciations beyond English) and prints one line per word placed,
``start–end  word`` in seconds, then a summary. ``--spoken`` gives the text as it is spoken where it differs (numbers,
abbreviations: ``--text "Dr. Smith paid $5" --spoken "Doctor Smith paid five dollars"``); times are given on the
written words. With ``--json`` one object: ``{"words": [{"word", "start", "end"}], "duration", "language",
"aligner", "placed"}`` (``placed``: the share of the text's words placed).

Exit codes: 0 the recording matches its text; 2 a file that is not audio, a text that cannot be read, or a recording
that does not match its text (fewer than :data:`MATCH_SHARE` of its words heard: the words that were placed are
still printed, and stderr says how many).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.cli.errors import CliError
from core.cli.parser import Subparsers

EXIT_OK, EXIT_BAD_INPUT = 0, 2
MATCH_SHARE = 0.8
"""The share of a text's words that must be heard for a recording to match it."""


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "align",
        help="where each word of a recording's own text is heard: word times by forced alignment, offline",
        description="Places the words of a text in its recording (forced alignment with pocketsphinx; other "
        "languages than English through espeak-ng's pronunciations) and prints each word's start and end in "
        "seconds. Words that are not heard get no time: a recording that does not match its text exits 2.",
    )
    p.add_argument("audio", type=Path, help="the recording (WAV, FLAC, OGG…)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--text", help="the text that was spoken")
    source.add_argument("--text-file", type=Path, help="a UTF-8 file holding the text that was spoken")
    p.add_argument("--language", default="en", help="language code of the text (default en)")
    p.add_argument("--spoken", help="the text as it is spoken, where it differs (numbers, abbreviations)")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    from core.engine import align

    text = _text(args)
    audio, rate = _audio(args.audio)
    alignment = align(audio, rate, text, args.language, spoken=args.spoken)
    if args.json:
        print(json.dumps(alignment.to_dict(), ensure_ascii=False))
    else:
        for word in alignment.words:
            print(f"{word.start:7.3f}–{word.end:7.3f}  {word.word}")
        print(
            f"{len(alignment.words)} of {alignment.total_words} words placed ({alignment.placed_share:.0%}) in "
            f"{alignment.duration:.1f} s of audio, {alignment.aligner} ({alignment.language})"
        )
    if alignment.placed_share < MATCH_SHARE:
        print(
            f"error: {args.audio} does not match its text: only {len(alignment.words)} of its "
            f"{alignment.total_words} words ({alignment.placed_share:.0%}) were heard in it.",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    return EXIT_OK


def _text(args) -> str:
    if args.text is not None:
        return str(args.text)
    try:
        return Path(args.text_file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CliError(f"Cannot read {args.text_file} as UTF-8 text ({exc}).") from exc


def _audio(path: Path):
    import numpy as np
    import soundfile

    try:
        samples, rate = soundfile.read(str(path), dtype="float32", always_2d=True)
    except (OSError, RuntimeError, ValueError) as exc:  # soundfile.LibsndfileError is a RuntimeError
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CliError(
            f"{path} is not an audio file that can be read ({reason}). Give a WAV, FLAC or OGG file."
        ) from exc
    return np.asarray(samples.mean(axis=1), dtype=np.float32), int(rate)
