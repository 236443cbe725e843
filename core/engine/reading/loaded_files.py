"""What the language steps have loaded, kept for the process (a Cangjie table by path, a word segmenter by folder);
forgotten after a download so that the next sentence looks for the files again."""

from __future__ import annotations

import threading

from core.engine.reading.chinese import CangjieTable, Segmenter

lock = threading.Lock()
tables: dict[str, CangjieTable] = {}
segmenters: dict[str, Segmenter] = {}


def forget() -> None:
    with lock:
        tables.clear()
        segmenters.clear()
