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


def sentences(text: str, language: str | None = "en") -> list[str]:
    """The sentences of a run of text without pause tags (whitespace folded, nothing capped)."""
    text = " ".join(text.split())
    if not text:
        return []
    language = base_language(language)
    if language in PYSBD_LANGUAGES:
        parts = _segmenter(language).segment(text)
    else:
        parts = []
        for chunk in _EXTRA_ENDS.split(text):
            try:
                parts += [p.text for p in split_text(chunk, max_chars=len(chunk) + 1) if isinstance(p, Sentence)]
            except TextInputError:
                parts.append(chunk)
    return [" ".join(p.split()) for p in parts if p.strip()]


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
