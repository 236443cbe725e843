"""Projects of earlier versions: ``project.json`` (and the command line's ``history.json``) moved into
``project.sqlite`` on the first open.

The file is read and validated exactly as those versions read it (the same messages for a damaged, newer or invalid
file, which is then left as it was); the database is made complete under a temporary name and put in place, and only
then are the old files renamed (``project.json.migrated``, ``history.json.migrated``), kept beside it. A folder that
cannot be written (a read-only medium) opens from ``project.json`` without moving it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from core.narration.projects.editing import HISTORY_FILE as LEGACY_HISTORY_FILE
from core.narration.projects.project import LEGACY_FILE, MIGRATED_SUFFIX, Project, ProjectError, parse_project

log = logging.getLogger(__name__)


def read_legacy(folder: Path) -> Project:
    """The project of ``folder/project.json``, validated (not moved)."""
    file = folder / LEGACY_FILE
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ProjectError("project.unreadable", path=str(file), reason=str(exc)) from exc
    except ValueError as exc:
        raise ProjectError("project.damaged", path=str(file), reason=str(exc)) from exc
    return parse_project(folder, data, file)


def legacy_history(folder: Path) -> dict:
    """The undo records of ``history.json`` (a missing or damaged file: none, as earlier versions read it)."""
    try:
        data = json.loads((folder / LEGACY_HISTORY_FILE).read_text(encoding="utf-8"))
        undo, redo = data["undo"], data["redo"]
        if isinstance(undo, list) and isinstance(redo, list):
            return {"undo": undo, "redo": redo}
    except (OSError, ValueError, TypeError, KeyError):
        pass
    return {"undo": [], "redo": []}


def migrate(folder: Path) -> Project:
    """Open an earlier version's project, moving it into ``project.sqlite``."""
    folder = Path(folder)
    project = read_legacy(folder)
    history = legacy_history(folder)
    project.history_records = history
    try:
        project.save(history=history)
    except ProjectError as exc:
        log.warning("%s stays in %s: %s", folder, LEGACY_FILE, exc)
        return project
    for name in (LEGACY_FILE, LEGACY_HISTORY_FILE):
        old = folder / name
        if old.exists():
            try:
                old.replace(folder / f"{name}{MIGRATED_SUFFIX}")
            except OSError as exc:
                log.warning("could not rename %s after moving it into the database: %s", old, exc)
    return project
