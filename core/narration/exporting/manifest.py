"""What each chapter file was made from, kept beside the files (``.chatterbox-export.json``): a re-export encodes
again only the chapter files whose takes, pace, pauses, titles, tags or settings changed.

Each entry holds a digest of everything that goes into the file and what the export learnt while making it (the
length of each segment and its pause, the level report, the store check), so an unchanged file is kept as it is and
the whole-book timeline and reports are still complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path

from core.engine import write_json_atomic

MANIFEST = ".chatterbox-export.json"
VERSION = 1


def digest(parts: dict) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def load(folder: Path) -> dict[str, dict]:
    """File name → entry; an unreadable or foreign manifest counts as empty (every file is made again)."""
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("files"), dict):
        return {}
    return {k: v for k, v in data["files"].items() if isinstance(v, dict)}


def kept(entries: dict[str, dict], path: Path, wanted: str, extra: tuple[Path, ...] = ()) -> dict | None:
    """The entry of ``path`` if it was made from ``wanted`` and it (and ``extra`` files) are still there unchanged."""
    entry = entries.get(path.name)
    if entry is None or entry.get("digest") != wanted:
        return None
    try:
        if path.stat().st_size != entry.get("size"):
            return None
    except OSError:
        return None
    if not all(p.is_file() for p in extra):
        return None
    return entry


def save(folder: Path, entries: dict[str, dict]) -> None:
    present = {name: entry for name, entry in entries.items() if (folder / name).is_file()}
    with contextlib.suppress(OSError):  # without a manifest the next export simply makes every file again
        write_json_atomic(folder / MANIFEST, {"version": VERSION, "files": present})
