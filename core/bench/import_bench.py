"""``python -m core bench-import BOOK [--runs 3] [--json]``: importing a book (read, then cut into segments), each run
in a fresh interpreter: its wall time, its processor time and the process's peak resident memory.

The tests check only what a busy machine cannot change (the processor time's order of magnitude, that it grows with
the text and not faster, the memory); the figure itself (``docs/PERFORMANCE.md``: a 1 MB EPUB in at most 3 s and
300 MB) is this command's to measure, on a quiet machine."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_CODE = """\
import json, sys, time
def hwm():
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'):
            return int(line.split()[1]) / 1024
    return 0.0
from core.narration import read_document
from core.narration.importing.book_import import build_script
before = hwm(); t0 = time.perf_counter(); c0 = time.process_time()
doc = read_document(sys.argv[1]); t1 = time.perf_counter()
script = build_script(doc, None); t2 = time.perf_counter()
chars = sum(len(b.text) for b in doc.blocks)
print(json.dumps({'seconds': round(t2 - t0, 3), 'read_s': round(t1 - t0, 3),
    'cpu_s': round(time.process_time() - c0, 3), 'segments_s': round(t2 - t1, 3),
    'rss_before_mb': round(before, 1), 'max_rss_mb': round(hwm(), 1), 'chars': chars,
    'chapters': len(script.chapters), 'segments': len(script.segments)}))
"""


def measure_import(path: Path) -> dict:
    """Import ``path`` (read, then segments) in a fresh interpreter: wall times (``seconds``, ``read_s``,
    ``segments_s``), its processor time (``cpu_s``) and the process's peak resident memory (``VmHWM``, Linux; 0
    elsewhere; ``ru_maxrss`` would carry over the peak of the process that started it) before and after."""
    out = subprocess.run([sys.executable, "-c", _CODE, str(path)], capture_output=True, text=True, cwd=ROOT, check=True)
    figures: dict = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def bench_import(path: Path, runs: int = 3) -> dict:
    """``runs`` imports of ``path``: the medians, and every run's figures."""
    found = [measure_import(path) for _ in range(runs)]
    median = {key: statistics.median(run[key] for run in found) for key in ("seconds", "cpu_s", "max_rss_mb")}
    return {"book": str(path), "chars": found[0]["chars"], "segments": found[0]["segments"], **median, "runs": found}
