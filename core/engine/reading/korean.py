"""Korean as the Multilingual model reads it (upstream's ``korean_normalize``): each Hangul syllable as its jamo
(initial U+1100…, medial U+1161…, final U+11A8…), then the text stripped. NFKD, which runs before, already makes the
same decomposition; this keeps upstream's step for text that reaches it otherwise."""

from __future__ import annotations


def _decompose(char: str) -> str:
    if not "\uac00" <= char <= "\ud7af":  # upstream's range
        return char
    base = ord(char) - 0xAC00
    initial = chr(0x1100 + base // (21 * 28))
    medial = chr(0x1161 + (base % (21 * 28)) // 28)
    final = chr(0x11A7 + base % 28) if base % 28 else ""
    return initial + medial + final


def jamo_text(text: str) -> str:
    return "".join(_decompose(c) for c in text).strip()
