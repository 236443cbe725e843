"""Chinese as the Multilingual model reads it: every Han character as its Cangjie code (upstream's
``ChineseCangjieConverter``).

- Words are first separated with a blank by a word segmenter (upstream: ``spacy_pkuseg`` with its
  ``spacy_ontonotes`` model), so word boundaries become ``[SPACE]``. Without one, the characters are still converted.
- Each character of Unicode category ``Lo`` that the table knows becomes one ``[cj_x]`` token per letter of its code,
  then ``[cj_.]``. A code shared by several characters is followed by the character's index in that code's list, in
  file order, when the index is above 0 (``[cj_a][cj_a][cj_2][cj_.]``).
- Everything else stays as it is (Latin words, digits, punctuation, a character the table does not know).

The table is ``Cangjie5_TC.json`` of the Multilingual repository: a JSON array of ``"字\\tcode[\\t…]"`` lines; a
character with several lines takes its last code (the index counts every line of a code, as upstream's list does).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CANGJIE_FILE = "Cangjie5_TC.json"

Segmenter = Callable[[str], list[str]]
"""Cuts a text into words (``pkuseg().cut``)."""


@dataclass(frozen=True)
class CangjieTable:
    codes: dict[str, str]
    """Character → its code, with the index suffix already added (what is spelled out as tokens)."""

    @classmethod
    def from_lines(cls, lines: list[str]) -> CangjieTable:
        word_code: dict[str, str] = {}
        code_words: dict[str, list[str]] = {}
        for entry in lines:
            fields = entry.split("\t")
            if len(fields) < 2:
                raise ValueError(f"a line without a code: {entry!r}")
            word, code = fields[0], fields[1]
            word_code[word] = code
            code_words.setdefault(code, []).append(word)
        codes = {}
        for word, code in word_code.items():
            index = code_words[code].index(word)  # the first line of the character under that code, as upstream
            codes[word] = code + (str(index) if index > 0 else "")
        return cls(codes)

    @classmethod
    def load(cls, path: Path) -> CangjieTable:
        """Read ``Cangjie5_TC.json``; a file that is not such a table raises ``ValueError`` (or ``OSError``)."""
        data = json.loads(Path(path).read_text("utf-8"))
        if not isinstance(data, list) or not all(isinstance(line, str) for line in data):
            raise ValueError("not a JSON array of text lines")
        return cls.from_lines(data)

    def spell(self, char: str) -> str | None:
        """``[cj_x]…[cj_.]`` for one character, or ``None`` when the table does not know it."""
        code = self.codes.get(char)
        if code is None:
            return None
        return "".join(f"[cj_{letter}]" for letter in code) + "[cj_.]"


def cangjie_text(text: str, table: CangjieTable, segment: Segmenter | None) -> str:
    """The text with its words separated (when a segmenter is given) and its Han characters spelled in Cangjie."""
    if segment is not None:
        text = " ".join(segment(text))
    out = []
    for char in text:
        spelled = table.spell(char) if unicodedata.category(char) == "Lo" else None
        out.append(char if spelled is None else spelled)
    return "".join(out)
