"""``python -m core bench-cast BOOK [--mb 1] [--runs 3] [--json]``: how long attributing every quotation of a book
takes, and its peak memory (issue 51: a 1 MB novel in at most 10 s on the project's 2-core machine).

``BOOK`` is a text file, paragraphs separated by blank lines (a Project Gutenberg novel as it is downloaded); it is
repeated until it is ``--mb`` megabytes of text, so a short excerpt measures a novel's length. The time is the median
of ``--runs`` runs; the peak is measured in a run of its own under ``tracemalloc`` (which slows it)."""

from __future__ import annotations

import statistics
import time
import tracemalloc
from pathlib import Path

from core.narration.attribution import UNSURE, attribute


def book_paragraphs(path: Path, megabytes: float) -> list[str]:
    text = Path(path).read_text("utf-8")
    paragraphs = [" ".join(block.split()) for block in text.split("\n\n") if block.strip()]
    if not paragraphs:
        raise ValueError(f"{path} holds no paragraphs")
    target = int(megabytes * 1_000_000)
    out: list[str] = []
    size = 0
    while size < target:
        for paragraph in paragraphs:
            out.append(paragraph)
            size += len(paragraph) + 2
            if size >= target:
                break
    return out


def bench_cast(path: Path, megabytes: float = 1.0, runs: int = 3, language: str = "en") -> dict:
    paragraphs = book_paragraphs(path, megabytes)
    times = []
    result = None
    for _ in range(runs):
        started = time.perf_counter()
        result = attribute(paragraphs, language)
        times.append(time.perf_counter() - started)
    tracemalloc.start()
    attribute(paragraphs, language)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert result is not None
    quotes = result.quotes
    return {
        "characters_of_text": sum(len(p) for p in paragraphs),
        "paragraphs": len(paragraphs),
        "quotes": len(quotes),
        "characters": len(result.characters),
        "unsure_share": round(sum(q.confidence < UNSURE for q in quotes) / max(1, len(quotes)), 3),
        "seconds": round(statistics.median(times), 3),
        "runs_s": [round(t, 3) for t in times],
        "peak_mb": round(peak / 1e6, 1),
    }
