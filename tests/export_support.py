"""Helpers for the export tests (the rendered three-chapter book itself is a fixture in tests/conftest.py)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import struct
import zlib
from pathlib import Path

BOOK3 = """[chapter: Arrival]
The train came in late. Nobody was waiting on the platform.

[chapter: The Middle]
She walked into town. The shops were closing one by one.

A dog followed her home.

[chapter: Departure]
In the morning she left. The road was empty and bright.
"""


def rendered_project(folder: Path, bundle: Path, text: str = BOOK3):
    from core.engine.pipeline import Pipeline
    from core.narration.importing.book_import import parse_text
    from core.narration.importing.build import import_document, source_identity
    from core.narration.projects.project import create_project
    from core.narration.rendering.render import render_pending

    project = create_project(folder, "The Book")
    import_document(project, parse_text(text, "The Book"), None, None, folder.parent, source_identity("b", text, None))
    project.save()
    render_pending(project, Pipeline.from_bundle(bundle))
    return project


def copy_project(source: Path, target: Path):
    from core.narration.projects.opening import open_project

    shutil.copytree(source, target)
    return open_project(target)


def tiny_png() -> bytes:
    """A valid 1×1 PNG (a cover image needs no library to make)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x80\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


def run_cli(*argv) -> tuple[int, object, str]:
    """``python -m core`` in this process: the exit code, stdout (parsed when it is JSON) and stderr."""
    from core.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in argv])
    try:
        return code, json.loads(out.getvalue()), err.getvalue()
    except ValueError:
        return code, out.getvalue(), err.getvalue()


def decoded_seconds(path: Path) -> float:
    """Length of the audio a player decodes (PyAV), encoder priming and padding excluded."""
    import av

    with av.open(str(path)) as container:
        return float(container.duration / 1_000_000)
