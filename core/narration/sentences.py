"""Sentences of a book's paragraph, in the book's language, by ``pysbd`` (a rule-based segmenter for about twenty
languages that knows abbreviations and initials: "Mr.", "Dr.", "St.", "SIR T. BROWNE.", "N.E.", decimal numbers).

The engine's own splitter (:func:`core.engine.split_text`) stays for a Speak request; narration uses this one. A
language ``pysbd`` does not know falls back to the engine's rules, which also end a sentence at the Japanese
full-width "．" and the Arabic "؟" here. ``[pause]`` tags are taken out before segmenting and kept as pauses; every
sentence is capped at :data:`~core.engine.text.MAX_CHARS` characters (split at commas, then between words).
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.engine import Pause, Sentence, TextInputError, clean_text, find_pauses, fit_sentence, is_speakable, split_text

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
            word = before[-1].lstrip("“\"'‘(«[").lower() if before else ""
            if len(word) < 2 or word in known or not word.isalpha():
                return None
        parts.append(text[cursor : match.end()])
        cursor = match.end()
    parts.append(text[cursor:])
    return parts


def sentences(text: str, language: str | None = "en") -> list[str]:
    """The sentences of a run of text without pause tags (whitespace folded, nothing capped)."""
    text = " ".join(text.split())
    if not text:
        return []
    language = base_language(language)
    if language in PYSBD_LANGUAGES:
        parts = _unambiguous(text, language)
        if parts is None:
            parts = _segmenter(language).segment(text)
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
_LAST_WORD = re.compile(r"(?:^|\s)[(\[“\"']*([^\s.]+)\.$")
_INITIAL = re.compile(r"(?:^|[\s—–(])[A-Z]\.$")
_CLAUSE_ENDS = ("،", ",", ";", "؛", "、", "，")


def _mend(parts: list[str], language: str) -> list[str]:
    """Join back what pysbd cut after an abbreviation it does not know ("Vol. II", "approx. 4.5"), an initial
    before a name ("N. E. Primer") or a comma (the Arabic "،")."""
    known = _ABBREVIATIONS.get(language, frozenset())
    out: list[str] = []
    for part in parts:
        if out:
            last = out[-1]
            word = _LAST_WORD.search(last)
            joins = (
                last.endswith(_CLAUSE_ENDS)
                or part[:1].islower()
                or (
                    part[:1].isalnum()
                    and (
                        (word is not None and word.group(1).lower() in known)
                        or (_INITIAL.search(last) is not None and part[:1].isupper())
                    )
                )
            )
            if joins:
                out[-1] = f"{last} {part}"
                continue
        out.append(part)
    return out


def split_sentences(text: str, language: str | None = "en", whole: bool = False) -> list[Sentence | Pause]:
    """Sentences (each at most ``MAX_CHARS``) and ``[pause]`` tags of a paragraph, in order (``whole``: a heading,
    one sentence unless it is too long).

    Raises :class:`~core.engine.TextInputError` when nothing in it can be spoken, as :func:`core.engine.split_text`.
    """
    text = clean_text(text)
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
