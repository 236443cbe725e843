"""Japanese as the Multilingual model reads it (upstream's ``hiragana_normalize``), with ``pykakasi``.

``pykakasi`` cuts the text into segments. A segment that holds a kanji (U+4E00–U+9FFF) becomes its hiragana, with a
space in front when that reading starts with は or へ (the particles wa and e, so they stand apart); a segment that is
all katakana (U+30A1–U+30FA) stays as written; anything else stays as written. The result is NFKD-normalised again.
``pykakasi`` carries its dictionaries in its wheel: this works offline.
"""

from __future__ import annotations

import threading
import unicodedata
from typing import Any

_lock = threading.RLock()
_kakasi: Any = None


def _converter() -> Any:
    global _kakasi
    with _lock:
        if _kakasi is None:
            import pykakasi

            _kakasi = pykakasi.kakasi()  # type: ignore[no-untyped-call]
        return _kakasi


def is_kanji(char: str) -> bool:
    return 0x4E00 <= ord(char) <= 0x9FFF


def is_katakana(char: str) -> bool:
    return 0x30A1 <= ord(char) <= 0x30FA


def kana_text(text: str) -> str:
    """Kanji read as hiragana, katakana and the rest kept, then NFKD."""
    with _lock:  # one converter for the process; its segmentation keeps state while it runs
        segments = _converter().convert(text) if text else []
    out = []
    for segment in segments:
        written, hira = segment["orig"], segment["hira"]
        if any(is_kanji(c) for c in written):
            out.append(" " + hira if hira and hira[0] in ("は", "へ") else hira)
        else:  # all katakana stays as it is, and so does everything else
            out.append(written)
    return unicodedata.normalize("NFKD", "".join(out))
