"""``python -m core bench-export``: the streaming export's speed and memory on projects of stand-in audio.

A project of any length is built without synthesis: a few dozen takes of speech-like stand-in audio are written
once and shared by all the segments (each segment reads its take as a real export does), in chapters of about
15 minutes. Speed is the export of the whole book as one file, with pace and loudness, in × real time. Memory is
measured in a fresh process per length: the peak resident memory (``ru_maxrss``) above what the process held with
the project loaded, so a 1-hour and a 10-hour book can be compared (a streaming export keeps them close).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

from core.engine import SAMPLE_RATE
from core.narration import ExportRequest, Project, create_project, export_project, open_project
from core.narration.projects.project import Chapter, Segment, Take
from core.standin import synthetic_voice

TAKES = 24
CHAPTER_S = 15 * 60
PAUSE_S = 0.35


def standin_project(folder: Path, hours: float, seed: int = 5) -> Project:
    """A rendered project of about ``hours`` of audio whose takes are written directly (no model)."""
    project = create_project(folder, f"Stand-in book, {hours:g} h")
    project.save()
    rng = np.random.default_rng(seed)
    takes = []
    for index in range(TAKES):
        seconds = float(rng.uniform(3.0, 11.0))
        audio = 0.5 * synthetic_voice(seconds, seed=seed + index, pitch_hz=float(rng.uniform(100, 190)))
        name = f"takes/standin-{index:02d}.flac"
        sf.write(project.path(name), audio.astype(np.float32), SAMPLE_RATE)
        takes.append((name, audio.size / SAMPLE_RATE))
    total, chapter_s = 0.0, 0.0
    while total < hours * 3600:
        if not project.chapters or chapter_s >= CHAPTER_S:
            project.chapters.append(Chapter(f"Chapter {len(project.chapters) + 1}"))
            chapter_s = 0.0
        name, seconds = takes[len(project.segments) % TAKES]
        segment = Segment(
            id=project.next_id,
            text=f"Sentence {project.next_id}.",
            chapter=len(project.chapters) - 1,
            paragraph=len(project.segments),
            pause_after=PAUSE_S,
        )
        project.next_id += 1
        segment.takes.append(Take(name, 0, [], seconds, project.render_key(segment)))
        segment.chosen = 0
        project.segments.append(segment)
        total += seconds + PAUSE_S
        chapter_s += seconds + PAUSE_S
    project.save()
    return project


def export_speed(project: Project, out: Path, pace: float = 1.1, loudness: float | None = -19.0) -> dict:
    project.set_speed(None, pace)
    started, cpu = time.perf_counter(), time.process_time()
    result = export_project(project, ExportRequest(out=out, loudness=loudness))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "format": out.suffix.lstrip("."),
        "audio_s": round(result.seconds, 1),
        "export_s": round(elapsed, 2),
        "x_realtime": round(result.seconds / elapsed, 1),
        "cpu_s": round(cpu, 2),
        "x_realtime_per_cpu_second": round(result.seconds / cpu, 1),
        "load_average": round(os.getloadavg()[0], 1),
        "pace": pace,
        "loudness": loudness,
        "bytes": out.stat().st_size,
    }


def _child(folder: str, out: str) -> None:
    """In a fresh process: load the project, note the resident memory, export, report the peak above it."""
    project = open_project(Path(folder))
    import av  # noqa: F401 - loaded before the baseline, as in the app
    import pedalboard  # noqa: F401

    base = _rss_mb()
    started = time.perf_counter()
    result = export_project(project, ExportRequest(out=Path(out), loudness=-19.0))
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "audio_h": round(result.seconds / 3600, 2),
                "base_mb": round(base, 1),
                "peak_mb": round(peak, 1),
                "above_base_mb": round(peak - base, 1),
                "x_realtime": round(result.seconds / elapsed, 1),
            }
        )
    )


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def export_memory(project: Project, out: Path) -> dict:
    code = "import sys; from core.bench.export_bench import _child; _child(sys.argv[1], sys.argv[2])"
    done = subprocess.run(
        [sys.executable, "-c", code, str(project.folder), str(out)], capture_output=True, text=True, check=True
    )
    out.unlink(missing_ok=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_export(hours: tuple[float, ...], formats: tuple[str, ...], folder: Path | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="chatterbox-bench-export-", dir=folder) as temporary:
        root = Path(temporary)
        report: dict = {"speed": [], "memory": []}
        projects = {h: standin_project(root / f"book-{h:g}h.cbproj", h) for h in hours}
        first = projects[hours[0]]
        for fmt in formats:
            row = export_speed(first, root / f"speed.{fmt}")
            (root / f"speed.{fmt}").unlink()
            report["speed"].append(row)
            print(f"export {row['audio_s'] / 3600:.2f} h to {fmt} (pace 1.1, -19 LUFS): {row['x_realtime']}x real time")
        first.set_speed(None, 1.0)
        first.save()
        for project in projects.values():
            row = export_memory(project, root / "memory.m4b")
            report["memory"].append(row)
            print(
                f"memory, {row['audio_h']} h to m4b: peak {row['peak_mb']} MB, {row['above_base_mb']} MB above the "
                f"{row['base_mb']} MB of the loaded project ({row['x_realtime']}x real time)"
            )
        if len(report["memory"]) > 1:
            low, high = report["memory"][0]["above_base_mb"], report["memory"][-1]["above_base_mb"]
            report["memory_ratio"] = round(high / max(low, 1e-6), 2)
            print(f"peak above base, longest / shortest: {report['memory_ratio']}")
        return report
