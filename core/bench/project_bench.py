"""``python -m core bench-project``: what a book's bookkeeping costs at full size, on the project store.

- **Per take**: a book of N segments (texts and EPUB places as an imported novel has them) gets takes at places
  spread over the book; each take's bookkeeping is :meth:`Project.save` of its segment (the store's UPDATE and INSERT
  and the commit, fsync included), timed alone, beside the whole take (its FLAC file written first). The same run
  times what an earlier version did for every take, ``project.json`` rewritten whole, so the two sit side by side.
- **Flat render**: a render of every segment of a long project on the tiny stand-in, with a few tokens per segment
  so that the synthesis costs little and the bookkeeping would show: the time of each tenth of the book, and the last
  tenth against the first.
- **Open**: in a fresh process, the project opened and counted (as ``project DIR --list`` does) — its time and the
  process's peak memory; and the same project opened in the window's studio (``python -m app.open_bench``,
  when the GUI is installed).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from core.engine import SAMPLE_RATE, write_json_atomic
from core.narration import Project, create_project, render_pending
from core.narration.projects.project import Chapter, Segment
from core.narration.rendering.render import add_take

OPENING = (
    "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, "
    "and nothing particular to interest me on shore, I thought I would sail about a little."
)
WORDS = OPENING.split(" ")


def book(folder: Path, count: int, title: str = "Stand-in novel") -> Project:
    """A saved, unrendered project of ``count`` segments in chapters of 100, as an EPUB import makes them."""
    project = create_project(folder, title)
    project.chapters = [Chapter(f"Chapter {c + 1}") for c in range(max(1, (count + 99) // 100))]
    for index in range(count):
        start = index % len(WORDS)
        text = " ".join((WORDS * 2)[start : start + 8 + index % 12]).rstrip(",") + "."
        project.segments.append(
            Segment(
                id=index + 1,
                text=text[0].upper() + text[1:],
                chapter=index // 100,
                paragraph=index // 4,
                pause_after=0.35,
                source={
                    "file": f"OEBPS/ch{index // 100:03d}.xhtml",
                    "block": index % 100,
                    "start": 0,
                    "end": len(text),
                    "path": "/1/2",
                },
            )
        )
    project.next_id = count + 1
    project.save()
    return project


def per_take(project: Project, takes: int = 200) -> dict:
    """Bookkeeping of ``takes`` takes spread over the book (ms): the save alone and the whole take."""
    audio = np.zeros(SAMPLE_RATE // 10, np.float32)
    step = max(1, len(project.segments) // takes)
    saves, whole = [], []
    for segment in project.segments[::step][:takes]:
        started = time.perf_counter()
        add_take(project, segment, audio, 1, list(range(100)), {})
        written = time.perf_counter()
        project.save([segment])
        done = time.perf_counter()
        saves.append((done - written) * 1000)
        whole.append((done - started) * 1000)
    return {
        "segments": len(project.segments),
        "takes": len(saves),
        "save_ms_median": round(statistics.median(saves), 2),
        "save_ms_p95": round(_quantile(saves, 0.95), 2),
        "take_ms_median": round(statistics.median(whole), 2),
    }


def json_rewrite_ms(project: Project, folder: Path, runs: int = 3) -> float:
    """What an earlier version paid for every take: the whole project written as ``project.json`` (median ms)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        write_json_atomic(folder / "project.json", project.to_dict())
        times.append((time.perf_counter() - started) * 1000)
    (folder / "project.json").unlink(missing_ok=True)
    return round(statistics.median(times), 1)


def flat_render(folder: Path, count: int, bundle: Path, tokens: int = 8) -> dict:
    """Render ``count`` segments on ``bundle`` (a few tokens each); seconds per tenth of the book."""
    from core.engine.pipeline import Pipeline

    project = book(folder, count)
    project.settings = {"max_new_tokens": tokens}
    project.save()
    pipeline = Pipeline.from_bundle(bundle)
    stamps: list[float] = []
    started = time.perf_counter()
    render_pending(
        project, pipeline, progress=lambda e: stamps.append(time.perf_counter()) if e.kind != "chunk" else None
    )
    total = time.perf_counter() - started
    marks = [started] + stamps
    tenth = max(1, len(stamps) // 10)
    tenths = [round(marks[min((i + 1) * tenth, len(stamps))] - marks[i * tenth], 2) for i in range(10)]
    return {
        "segments": count,
        "rendered": project.counts()["rendered"],
        "seconds": round(total, 1),
        "ms_per_segment": round(total / max(count, 1) * 1000, 1),
        "tenths_s": tenths,
        "last_over_first": round(tenths[-1] / max(tenths[0], 1e-9), 2),
    }


OPEN_CHILD = """
import json, resource, sys, time
started = time.perf_counter()
from core.narration import open_project
imported = time.perf_counter()
project = open_project(sys.argv[1])
counts = project.counts()
done = time.perf_counter()
print(json.dumps({"open_s": round(done - imported, 3), "with_import_s": round(done - started, 3),
                  "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                  "segments": len(project.segments)}))
"""


def open_in_cli(folder: Path) -> dict:
    """A fresh process opens and counts the project; and ``project DIR --list --json`` end to end."""
    child = subprocess.run([sys.executable, "-c", OPEN_CHILD, str(folder)], capture_output=True, text=True, check=True)
    report = json.loads(child.stdout.strip().splitlines()[-1])
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "core", "project", str(folder), "--list", "--json"],
        capture_output=True,
        check=True,
    )
    report["list_command_s"] = round(time.perf_counter() - started, 2)
    return report


def open_in_window(folder: Path) -> dict | None:
    """The studio opens the project (``app.open_bench`` in a fresh, offscreen process); ``None`` without the
    GUI."""
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    child = subprocess.run(
        [sys.executable, "-m", "app.open_bench", str(folder)], capture_output=True, text=True, env=env
    )
    if "No module named 'app'" in child.stderr:
        return None
    if child.returncode != 0:
        return {"error": (child.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(child.stdout.strip().splitlines()[-1])


def bench_project(
    sizes: tuple[int, ...] = (1000, 10000),
    render_segments: int = 10000,
    bundle: Path | None = None,
    folder: Path | None = None,
) -> dict:
    with tempfile.TemporaryDirectory(prefix="chatterbox-bench-project-", dir=folder) as temporary:
        root = Path(temporary)
        report: dict = {"per_take": [], "open": [], "load_average": round(os.getloadavg()[0], 1)}
        books = {}
        for size in sizes:
            project = book(root / f"book-{size}.cbproj", size)
            row = per_take(project)
            row["project_json_rewrite_ms"] = json_rewrite_ms(project, root)
            report["per_take"].append(row)
            books[size] = project
            print(
                f"{size} segments: a take's bookkeeping {row['save_ms_median']} ms (p95 {row['save_ms_p95']} ms; the "
                f"whole take {row['take_ms_median']} ms); project.json rewritten: {row['project_json_rewrite_ms']} ms"
            )
        if len(sizes) > 1:
            first, last = report["per_take"][0], report["per_take"][-1]
            report["per_take_ratio"] = round(last["save_ms_median"] / max(first["save_ms_median"], 1e-9), 2)
            print(f"bookkeeping, {sizes[-1]} / {sizes[0]} segments: {report['per_take_ratio']}x")
        for size, project in books.items():
            project.close()
            row = {"segments": size, "cli": open_in_cli(project.folder), "window": open_in_window(project.folder)}
            report["open"].append(row)
            print(f"open {size} segments: command line {row['cli']}, window {row['window']}")
        if render_segments:
            if bundle is None:
                from core.standin import cached_standin

                bundle = cached_standin("original", "tiny", "fp32")
            row = flat_render(root / "render.cbproj", render_segments, bundle)
            report["render"] = row
            print(
                f"render of {row['segments']} segments: {row['seconds']} s ({row['ms_per_segment']} ms a segment); "
                f"tenths {row['tenths_s']}; last tenth / first: {row['last_over_first']}"
            )
        return report


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
