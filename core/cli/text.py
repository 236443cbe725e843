"""``python -m core text``: what the model reads.

``text --bundle B [--language L] (--text T | --file F) [--json] [--spoken]`` prints, for each sentence, the text after
preparation, the tokens and the ids, exactly as the language model receives them; with ``--json`` one object:
``{"sentences": [{"text", "prepared", "tokens", "ids"}], "ids": [...]}``, the top-level ``ids`` being the first
sentence's. ``--spoken`` first gives the text its spoken form in the language, as a narration project reads it
(numbers, abbreviations, addresses). It opens only the tokenizer and the embedding graph's header: no sessions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.cli.notices import say_notices
from core.cli.parser import Subparsers
from core.engine import open_reader, read_text

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "text",
        help="show what the model reads: each sentence prepared, its tokens and ids",
        description="Prints what the model reads for each sentence of the text: the text after preparation "
        "(punctuation, case, NFKD, the language's own step: Chinese Cangjie codes, Japanese kana, Korean jamo), "
        "the tokens as strings, and the ids exactly as the language model receives them.",
    )
    p.add_argument("--bundle", type=Path, required=True)
    p.add_argument("--language", help="language code of the Multilingual model (default en)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--text")
    source.add_argument("--file", type=Path, help="a UTF-8 text file")
    p.add_argument("--spoken", action="store_true", help="first give the text its spoken form, as a book is read")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    if args.file is not None:
        try:
            text = Path(args.file).read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            print(f"error: {args.file} cannot be read as UTF-8 text ({exc})", file=sys.stderr)
            return EXIT_BAD_INPUT
    else:
        text = args.text
    if args.spoken:
        from core.narration.text import spoken_form

        text = spoken_form(text, args.language or "en")
    reader = open_reader(args.bundle)
    readings = read_text(reader, text, args.language)
    say_notices(reader.take_notices(), None)
    if args.json:
        sentences = [{"text": r.text, "prepared": r.prepared, "tokens": r.tokens, "ids": r.ids} for r in readings]
        print(json.dumps({"sentences": sentences, "ids": readings[0].ids}, ensure_ascii=False))
        return EXIT_OK
    for number, r in enumerate(readings, 1):
        print(f"{number}. {r.text}")
        print(f"   prepared: {r.prepared}")
        print(f"   tokens:   {' '.join(r.tokens)}")
        print(f"   ids:      {' '.join(map(str, r.ids))}")
        if r.dropped_tags:
            print(f"   skipped:  {' '.join(r.dropped_tags)}")
    return EXIT_OK
