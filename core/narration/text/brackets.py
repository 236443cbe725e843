"""Square brackets in a book's text: only the tags the app knows are tags; any other bracket is text to be spoken.

The engine skips every ``[word]`` the model does not know (a tag such as ``[laugh]`` is meant for it), so a book's
"[A BURST OF REVELRY]" or "[sic]" would vanish without a word. Body text from every importer goes through
:func:`speakable_brackets`: the known tags stay (``[pause…]``, ``[voice:…]``, ``[chapter…]`` and the model's
paralinguistic tags), every other ``[`` and ``]`` becomes ``(`` and ``)``, which the model reads as the text they hold.
"""

from __future__ import annotations

import re

PARALINGUISTIC_TAGS = frozenset(
    {
        "[angry]", "[fear]", "[surprised]", "[whispering]", "[advertisement]", "[dramatic]", "[narration]",
        "[crying]", "[happy]", "[sarcastic]", "[clear throat]", "[sigh]", "[shush]", "[cough]", "[groan]", "[sniff]",
        "[gasp]", "[chuckle]", "[laugh]",
    }
)  # fmt: skip
"""The tags of Chatterbox Turbo's vocabulary (the only variant that speaks tags; the others skip them)."""

_KNOWN_TAG = re.compile(
    r"\[(?:pause(?:\s*:[^\[\]\n]{0,20})?|voice\s*:[^\[\]\n]{1,80}|chapter(?:\s*:[^\[\]\n]{0,200})?)\]"
    r"|\[[a-z][a-z ]{0,38}[a-z]\]",
    re.IGNORECASE,
)


def speakable_brackets(text: str) -> str:
    """``text`` with every square bracket that is not part of a known tag turned into a parenthesis."""
    if "[" not in text and "]" not in text:
        return text
    out, cursor = [], 0
    for match in _KNOWN_TAG.finditer(text):
        tag = match.group(0)
        if tag not in PARALINGUISTIC_TAGS and not _is_directive(tag):
            continue  # a bracketed word that merely looks like a tag ("[sic]")
        out.append(_as_parentheses(text[cursor : match.start()]))
        out.append(tag)
        cursor = match.end()
    out.append(_as_parentheses(text[cursor:]))
    return "".join(out)


def _is_directive(tag: str) -> bool:
    return re.match(r"\[(pause|voice|chapter)\b", tag, re.IGNORECASE) is not None


def _as_parentheses(text: str) -> str:
    return text.replace("[", "(").replace("]", ")")
