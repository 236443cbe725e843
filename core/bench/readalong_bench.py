"""The read-along export's speed (× real time) and peak memory, for a book of a given length.

``python -m core.bench.readalong_bench FOLDER --hours 1`` builds (once, in a child process) an EPUB 3 novel whose
narration lasts about that long, imports it into a project in ``FOLDER`` and gives every segment a take (eight
stand-in takes of 3–7 s of tone and noise, hard-linked, so preparing ten hours takes seconds of disk), then times
``export_project`` to ``FOLDER/book.epub`` in this process and reports the audio's length, the wall time, × real time,
the CPU time (the process's own, so a machine shared with other work does not count), and the process's peak
resident memory (``ru_maxrss``, which includes the interpreter and the libraries, about
the same for every length). Run it for 1 and 10 hours: the two peaks should be within 1.3× of each other.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import time
import zipfile
from pathlib import Path

SECONDS_PER_SENTENCE = 5.0
SENTENCES_PER_CHAPTER = 240
_WORDS = [
    "the",
    "sea",
    "was",
    "calm",
    "and",
    "grey",
    "under",
    "a",
    "low",
    "sky",
    "while",
    "the",
    "ship",
    "moved",
    "slowly",
    "toward",
    "the",
    "harbour",
    "where",
    "lights",
    "were",
    "burning",
    "in",
    "windows",
    "of",
    "old",
    "houses",
    "along",
    "the",
    "quay",
    "and",
    "somebody",
    "was",
    "singing",
    "a",
    "song",
    "about",
    "home",
]


def prepare(folder: Path, hours: float) -> None:
    """The book, its project, and a take for every segment."""
    import numpy as np
    import soundfile as sf

    from core.narration import create_project, import_document, read_document, source_identity
    from core.narration.projects.project import Take

    folder.mkdir(parents=True, exist_ok=True)
    sentences = max(1, round(hours * 3600 / SECONDS_PER_SENTENCE))
    book = _novel(folder / "novel.epub", sentences)
    project = create_project(folder / "project", "Bench")
    doc = read_document(book)
    import_document(project, doc, None, None, folder, source_identity(book.name, book.read_bytes(), None))
    project.save()
    takes = folder / "project" / "takes"
    takes.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    stock = []
    for number in range(8):
        seconds = 3.0 + number * 4.0 / 7
        t = np.arange(round(seconds * 24_000)) / 24_000
        audio = 0.2 * np.sin(2 * np.pi * (150 + 20 * number) * t) + 0.05 * rng.standard_normal(t.size)
        path = folder / f"stock-{number}.flac"
        sf.write(path, audio.astype(np.float32), 24_000, format="FLAC")
        stock.append((path, seconds))
    for index, segment in enumerate(project.audible()):
        source, seconds = stock[index % len(stock)]
        name = f"takes/{segment.id:05d}-1.flac"
        os.link(source, project.folder / name)
        segment.takes.append(Take(name, 1, [1], seconds, project.render_key(segment)))
        segment.chosen = 0
    project.save()


def run(folder: Path, hours: float) -> dict:
    if not (folder / "project" / "project.json").is_file():
        subprocess.run(
            [sys.executable, "-m", "core.bench.readalong_bench", str(folder), "--hours", str(hours), "--prepare"],
            check=True,
        )
    from core.narration import ExportRequest, export_project, open_project

    project = open_project(folder / "project")
    before = _peak_mib()
    started, cpu = time.perf_counter(), time.process_time()
    result = export_project(project, ExportRequest(out=folder / "book.epub"))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return {
        "hours": hours,
        "segments": len(project.segments),
        "audio_s": round(result.seconds, 1),
        "export_s": round(elapsed, 1),
        "x_real_time": round(result.seconds / elapsed, 1),
        "export_cpu_s": round(cpu, 1),
        "x_real_time_cpu": round(result.seconds / cpu, 1),
        "peak_rss_mib": round(_peak_mib(), 1),
        "rss_before_export_mib": round(before, 1),
        "epub_mib": round((folder / "book.epub").stat().st_size / 2**20, 1),
    }


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _novel(path: Path, sentences: int) -> Path:
    rng = random.Random(7)
    chapters = max(1, -(-sentences // SENTENCES_PER_CHAPTER))
    documents, left = [], sentences
    for number in range(1, chapters + 1):
        count = min(SENTENCES_PER_CHAPTER, left)
        left -= count
        paragraphs, body = [], []
        for _ in range(count):
            words = [rng.choice(_WORDS) for _ in range(rng.randint(10, 16))]
            body.append(" ".join(words).capitalize() + ".")
            if len(body) == 4:
                paragraphs.append("<p>" + " ".join(body) + "</p>")
                body = []
        if body:
            paragraphs.append("<p>" + " ".join(body) + "</p>")
        documents.append((f"c{number:03d}.xhtml", f"Chapter {number}", "\n".join(paragraphs)))
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        archive.writestr(
            "META-INF/container.xml",
            '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
            '<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
            "</rootfiles></container>",
        )
        items = "".join(
            f'<item id="c{i}" href="{n}" media-type="application/xhtml+xml"/>'
            for i, (n, _t, _b) in enumerate(documents)
        )
        spine = "".join(f'<itemref idref="c{i}"/>' for i in range(len(documents)))
        archive.writestr(
            "OEBPS/content.opf",
            '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
            'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">'
            "bench</dc:identifier><dc:title>Bench</dc:title><dc:language>en</dc:language>"
            '<meta property="dcterms:modified">2024-01-01T00:00:00Z</meta></metadata><manifest>'
            f'<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>{items}</manifest>'
            f"<spine>{spine}</spine></package>",
        )
        links = "".join(f'<li><a href="{n}">{t}</a></li>' for n, t, _b in documents)
        archive.writestr("OEBPS/nav.xhtml", _xhtml("Contents", f'<nav epub:type="toc"><ol>{links}</ol></nav>'))
        for name, title, text in documents:
            archive.writestr(f"OEBPS/{name}", _xhtml(title, f"<h1>{title}</h1>\n{text}"))
    return path


def _xhtml(title: str, body: str) -> str:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml" '
        f'xmlns:epub="http://www.idpf.org/2007/ops"><head><title>{title}</title></head><body>{body}</body></html>'
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--hours", type=float, default=1.0)
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.prepare:
        prepare(args.folder, args.hours)
        return 0
    print(json.dumps(run(args.folder, args.hours)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
