"""Names for the language codes of the Multilingual model, so menus can say "French (fr)" rather than "fr"."""

from __future__ import annotations

LANGUAGE_NAMES = {
    "ar": "Arabic",
    "da": "Danish",
    "de": "German",
    "el": "Greek",
    "en": "English",
    "es": "Spanish",
    "fi": "Finnish",
    "fr": "French",
    "he": "Hebrew",
    "hi": "Hindi",
    "it": "Italian",
    "ja": "Japanese",
    "ko": "Korean",
    "ms": "Malay",
    "nl": "Dutch",
    "no": "Norwegian",
    "pl": "Polish",
    "pt": "Portuguese",
    "ru": "Russian",
    "sv": "Swedish",
    "sw": "Swahili",
    "tr": "Turkish",
    "zh": "Chinese",
}
"""The 23 languages of Chatterbox Multilingual, by the code its tokenizer uses."""


def language_label(code: str) -> str:
    """``"French (fr)"``; a code without a known name stays as it is."""
    name = LANGUAGE_NAMES.get(code.lower())
    return f"{name} ({code})" if name else code
