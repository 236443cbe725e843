"""Sentences of a book's paragraph, in the book's language, by ``pysbd`` (a rule-based segmenter for about twenty
languages that knows abbreviations and initials: "Mr.", "Dr.", "St.", "SIR T. BROWNE.", "N.E.", decimal numbers).

The engine's own splitter (:func:`core.engine.split_text`) stays for a Speak request; narration uses this one. A
language ``pysbd`` does not know falls back to the engine's rules, which also end a sentence at the Japanese
full-width "．" and the Arabic "؟" here. ``[pause]`` tags are taken out before segmenting and kept as pauses; every
sentence is capped at :data:`~core.engine.text.MAX_CHARS` characters (split at commas, then between words). Web and
e-mail addresses are kept whole (:func:`core.narration.text.spoken_links.address_spans`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.engine import (
    MAX_TEXT_CHARS,
    Pause,
    Sentence,
    TextInputError,
    clean_text,
    find_pauses,
    fit_sentence,
    is_speakable,
    split_text,
)
from core.narration.text.spoken_links import address_spans

PYSBD_LANGUAGES = frozenset(
    {"en", "hi", "mr", "zh", "es", "am", "ar", "el", "ru", "fa", "it", "pl", "bg", "ja", "ur", "da", "nl", "my"}
    | {"fr", "de", "sk", "kk", "hy"}
)
_EXTRA_ENDS = re.compile(r"(?<=[．؟])\s*")
"""Enders the engine's rules miss, for the fallback (pysbd knows them for Japanese and Arabic)."""


def base_language(language: str | None) -> str:
    """``en`` from ``en-GB``, ``pt`` from ``pt_BR``; ``en`` when none is known."""
    return (language or "en").replace("_", "-").split("-")[0].lower() or "en"


@lru_cache(maxsize=32)
def _segmenter(language: str):
    import pysbd

    return pysbd.Segmenter(language=language, clean=False)


_OPENERS = "([“‘‚„«‹\"'—–¿¡-"
"""What may stand before a word at the start of a sentence or a quote: an opening bracket or quote, a dash that opens
speech ("—Mr. Smith?"), Spanish "¿" and "¡"."""
_FAST_LANGUAGES = frozenset({"en", "de", "fr", "es", "it", "nl", "da", "pl", "ru", "bg", "el", "sk"})
_CANDIDATE = re.compile(r"([.!?])([\"')\]»”’]*)\s+(?=(\S))")
_TRICKY = re.compile(r"\.\.|…|\.\w|\w\.\w|\d\.")


@lru_cache(maxsize=16)
def _known_abbreviations(language: str) -> frozenset[str]:
    from pysbd.languages import LANGUAGE_CODES

    rules = LANGUAGE_CODES[language]
    names = getattr(getattr(rules, "Abbreviation", None), "ABBREVIATIONS", [])
    return frozenset(n.lower() for n in names) | _ABBREVIATIONS.get(language, frozenset())


def _unambiguous(text: str, language: str) -> list[str] | None:
    """The sentences of a paragraph whose every sentence end is plain (a word that is no abbreviation, then a
    capital), as pysbd would give them, without running pysbd (ten times faster); ``None`` when any end is not
    plain (an abbreviation, an initial, a number, an ellipsis, a lower-case word after "?")."""
    if language not in _FAST_LANGUAGES or _TRICKY.search(text):
        return None
    known = _known_abbreviations(language)
    parts, cursor = [], 0
    for match in _CANDIDATE.finditer(text):
        following = match.group(3)
        if following.islower():
            continue  # “Where is he?” asked the mate: one sentence (pysbd agrees)
        if not (following.isupper() or following in "“\"«‘'(¿¡"):
            return None
        if match.group(1) == ".":
            before = text[cursor : match.start()].split()
            word = before[-1].lstrip(_OPENERS).lower() if before else ""
            if len(word) < 2 or word in known or not word.isalpha():
                return None
        parts.append(text[cursor : match.end()])
        cursor = match.end()
    parts.append(text[cursor:])
    return parts


PYSBD_CHUNK = 2000
"""pysbd's time grows with the square of a paragraph's length (22,000 characters of "Mr. Smith said hello." take
0.4 s, 220,000 take 44 s): a longer paragraph is given to it in pieces of about this size, cut at plain ends."""
_HARD_ENDS = re.compile(r"[。．！？؟][」』”’\"')]*")


def _chunks(text: str, language: str) -> list[str]:
    """``text`` cut at sentence ends that are certain, in pieces of about :data:`PYSBD_CHUNK` characters."""
    if len(text) <= PYSBD_CHUNK:
        return [text]
    known = _known_abbreviations(language)
    ends: list[int] = []
    for match in _CANDIDATE.finditer(text):
        following = match.group(3)
        if not (following.isupper() or following in "“\"«‘'(¿¡"):
            continue
        if match.group(1) == ".":
            before = text[max(0, match.start() - 40) : match.start()].rsplit(None, 1)
            word = before[-1].lstrip(_OPENERS).lower() if before else ""
            if len(word) < 2 or word in known or not word.isalpha():
                continue
        ends.append(match.end())
    ends += [m.end() for m in _HARD_ENDS.finditer(text)]
    out, start, last = [], 0, 0
    for end in sorted(set(ends)):
        if end - start > PYSBD_CHUNK and last > start:
            out.append(text[start:last])
            start = last
        last = end
    out.append(text[start:])
    return out


def sentences(text: str, language: str | None = "en") -> list[str]:
    """The sentences of a run of text without pause tags (whitespace folded, nothing capped). Web and e-mail
    addresses are sheltered while it is cut: their dots and question marks end no sentence, and pysbd adds no
    space inside them ("errata.html? page=2")."""
    text = " ".join(text.split())
    if not text:
        return []
    sheltered, addresses = _shelter(text)
    if not addresses:
        return _sentences(text, language)
    return [_restore(part, addresses) for part in _sentences(sheltered, language)]


def _shelter(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with every address replaced by a word of letters (capital when the address begins with one, as a
    sentence's first word may), and the words → the addresses."""
    spans = address_spans(text)
    if not spans:
        return text, {}
    prefix = "zqlk"
    while prefix in text.lower():
        prefix += "q"
    addresses: dict[str, str] = {}
    pieces, cursor = [], 0
    for number, (start, end) in enumerate(spans):
        address = text[start:end]
        word = prefix + _letters(number)
        word = word.capitalize() if address[:1].isupper() else word
        addresses[word] = address
        pieces += [text[cursor:start], word]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces), addresses


def _letters(number: int) -> str:
    out = ""
    while True:
        number, digit = divmod(number, 26)
        out = chr(ord("a") + digit) + out
        if not number:
            return out


def _restore(part: str, addresses: dict[str, str]) -> str:
    if not any(word in part for word in addresses):
        return part
    pattern = "|".join(re.escape(w) for w in sorted(addresses, key=len, reverse=True))
    return re.sub(pattern, lambda m: addresses[m.group(0)], part)


def _sentences(text: str, language: str | None) -> list[str]:
    language = base_language(language)
    if language in PYSBD_LANGUAGES:
        parts = _unambiguous(text, language)
        if parts is None:
            segmenter = _segmenter(language)
            parts = [part for chunk in _chunks(text, language) for part in segmenter.segment(chunk)]
    else:
        parts = []
        for chunk in _EXTRA_ENDS.split(text):
            try:
                parts += [p.text for p in split_text(chunk, max_chars=len(chunk) + 1) if isinstance(p, Sentence)]
            except TextInputError:
                parts.append(chunk)
    return _mend([" ".join(p.split()) for p in parts if p.strip()], language)


_ABBREVIATIONS = {
    "en": frozenset(
        [
            "vol",
            "vols",
            "ch",
            "chap",
            "fig",
            "figs",
            "approx",
            "phil",
            "trans",
            "p",
            "pp",
            "no",
            "nos",
            "cf",
            "ed",
            "eds",
            "viz",
            "ibid",
            "esp",
            "dept",
            "est",
            "inc",
            "ltd",
            "co",
            "bros",
            "st",
            "mr",
            "mrs",
            "ms",
            "dr",
            "prof",
            "capt",
            "col",
            "gen",
            "lt",
            "sgt",
            "rev",
            "hon",
            "jr",
            "sr",
            "mt",
            "vs",
            "etc",
        ]
    )
}
_LAST_WORD = re.compile(rf"(?:^|\s)[{re.escape(_OPENERS)}]*([^\s.{re.escape(_OPENERS)}]+)\.$")
"""The word before a sentence end, without what opens it (‘Mr. → Mr, —St. → St, "Mrs. → Mrs)."""
_INITIAL = re.compile(rf"(?:^|[\s{re.escape(_OPENERS)}])[A-Z]\.$")
_STRAY_CLOSE = re.compile(r"[’”»›]+(?=\s|$)")
_STRAY_CLOSE_UNSPACED = re.compile(r"[’”»›」』）》〉】\"]+")
"""Chinese and Japanese put no space after a closing quote (他说：“你好！”然后走了。)."""
_CLAUSE_ENDS = ("،", ",", ";", "؛", "、", "，")


def _mend(parts: list[str], language: str) -> list[str]:
    """Join back what pysbd cut after an abbreviation it does not know ("Vol. II", "approx. 4.5") or one after an
    opening quote or dash (‘Mr. Smith, “Dr. Who, —St. Paul), an initial before a name ("N. E. Primer") or a comma
    (the Arabic "،"); a closing quote pysbd left at the start of the next sentence (‘…way?’ ‘You…) goes back to
    the sentence it closes."""
    known = _ABBREVIATIONS.get(language, frozenset())
    out: list[str] = []
    stray_close = _STRAY_CLOSE_UNSPACED if language in ("zh", "ja") else _STRAY_CLOSE
    for part in parts:
        stray = stray_close.match(part)
        if out and stray:
            out[-1] += stray.group(0)
            part = part[stray.end() :].strip()
            if not part:
                continue
        if out:
            last = out[-1]
            word = _LAST_WORD.search(last)
            joins = (
                last.endswith(_CLAUSE_ENDS)
                or part[:1].islower()
                or (
                    part[:1].isalnum()
                    and (
                        (word is not None and _abbreviates(word.group(1).lower(), part, known))
                        or (_INITIAL.search(last) is not None and part[:1].isupper())
                    )
                )
            )
            if joins:
                out[-1] = f"{last} {part}"
                continue
        out.append(part)
    return out


_BEFORE_NUMBERS = frozenset({"no", "nos"})
"""Abbreviations only before a number ("No. 5"): “No. I won't,” is an answer and a sentence."""


def _abbreviates(word: str, following: str, known: frozenset[str]) -> bool:
    return word in known and (word not in _BEFORE_NUMBERS or following[:1].isdigit())


def clean_paragraph(text: str) -> str:
    """:func:`~core.engine.clean_text` without its limit for one request: a paragraph of 1.5 million characters is
    cleaned in slices cut between words, and split into sentences like any other."""
    if len(text) <= MAX_TEXT_CHARS:
        return clean_text(text)
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + MAX_TEXT_CHARS // 2)
        if end < len(text):
            space = text.rfind(" ", start, end)
            end = space + 1 if space > start else end
        out.append(clean_text(text[start:end]))
        start = end
    return "".join(out)


def split_sentences(text: str, language: str | None = "en", whole: bool = False) -> list[Sentence | Pause]:
    """Sentences (each at most ``MAX_CHARS``) and ``[pause]`` tags of a paragraph, in order (``whole``: a heading,
    one sentence unless it is too long).

    Raises :class:`~core.engine.TextInputError` when nothing in it can be spoken, as :func:`core.engine.split_text`.
    """
    text = clean_paragraph(text)
    out: list[Sentence | Pause] = []
    cursor = 0

    def run(start: int, end: int) -> None:
        run_text = text[start:end]
        for sentence in [" ".join(run_text.split())] if whole else sentences(run_text, language):
            for piece in fit_sentence(sentence):
                if is_speakable(piece):
                    out.append(Sentence(piece, start, end))

    for pause in find_pauses(text):
        run(cursor, pause.start)
        out.append(pause)
        cursor = pause.end
    run(cursor, len(text))
    if not any(isinstance(p, Sentence) for p in out):
        raise TextInputError("text.nothing_to_say")
    return out
