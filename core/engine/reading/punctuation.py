"""Upstream's ``punc_norm``, per variant: the punctuation clean-up every ``generate`` runs before tokenizing.

The three upstream copies differ (resemble-ai/chatterbox, ``tts.py``, ``tts_turbo.py`` and ``mtl_tts.py``):

- Original English: the full replacement list; a sentence ends with ``. ! ? - ,`` or gets a full stop.
- Turbo: no replacement of ``...``, `` - `` or ``;`` (its byte-level tokenizer reads them as they are).
- Multilingual: the Original's list, and the CJK enders ``、，。？！`` also count as an ending.

The steps run in upstream's order, on one sentence: capitalise the first character, collapse whitespace, replace,
strip trailing spaces, add the full stop. A replacement may leave two spaces (``"a... b"`` → ``"a,  b"``); upstream
keeps them, and so does this, since the model was trained on what upstream sends.
"""

from __future__ import annotations

EMPTY_TEXT = "You need to add some text for me to talk."
"""What upstream says for an empty text (never reached here: an empty request is refused before)."""

_FULL = (
    ("...", ", "),
    ("…", ", "),
    (":", ","),
    (" - ", ", "),
    (";", ", "),
    ("—", "-"),
    ("–", "-"),
    (" ,", ","),
    ("“", '"'),
    ("”", '"'),
    ("‘", "'"),
    ("’", "'"),
)
_TURBO = tuple(pair for pair in _FULL if pair[0] not in ("...", " - ", ";"))
_ENDERS = (".", "!", "?", "-", ",")
_CJK_ENDERS = ("、", "，", "。", "？", "！")

REPLACEMENTS: dict[str, tuple[tuple[str, str], ...]] = {"original": _FULL, "multilingual": _FULL, "turbo": _TURBO}
ENDERS: dict[str, tuple[str, ...]] = {
    "original": _ENDERS,
    "multilingual": _ENDERS + _CJK_ENDERS,
    "turbo": _ENDERS,
}


def punc_norm(text: str, variant: str = "original") -> str:
    """One sentence as the variant's upstream ``punc_norm`` leaves it."""
    if not text:
        return EMPTY_TEXT
    if text[0].islower():
        text = text[0].upper() + text[1:]
    text = " ".join(text.split())
    for old, new in REPLACEMENTS.get(variant, _FULL):
        text = text.replace(old, new)
    text = text.rstrip(" ")
    if not text.endswith(ENDERS.get(variant, _ENDERS)):
        text += "."
    return text
