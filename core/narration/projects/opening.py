"""Opening a project folder: its database checked and read into a :class:`~core.narration.projects.project.Project`,
or an earlier version's ``project.json`` moved into one (:mod:`core.narration.projects.migration`); then the take
files that no row names are removed while nobody else works on the project. Above the model, the store, the lock
and the migration, so that none of them needs another."""

from __future__ import annotations

import os
from pathlib import Path

from core.engine import remove_partial_files
from core.narration.projects.lock import ProjectLock
from core.narration.projects.migration import migrate
from core.narration.projects.project import (
    LEGACY_FILE,
    PROJECT_FILE,
    SOURCE_MARK,
    STALE_PARTIAL_S,
    TAKES_DIR,
    Project,
    ProjectError,
    parse_project,
    refused,
)
from core.narration.projects.store import STORE_FILE, ProjectStore, StoreRefused


def open_project(folder: Path) -> Project:
    """The project in ``folder``: its database checked and read, or an earlier version's ``project.json`` moved
    into one. Take files that no row names (a render killed between writing a take and storing it) are removed
    when nobody else is working on the project."""
    folder = Path(folder)
    file = folder / STORE_FILE
    if not file.is_file():
        if not (folder / LEGACY_FILE).is_file():
            raise ProjectError("project.not_a_project", folder=str(folder), file=PROJECT_FILE)
        project = migrate(folder)
    else:
        project = _read(folder, file)
    remove_orphans(project)
    return project


def _read(folder: Path, file: Path) -> Project:
    try:
        store = ProjectStore.open(file)
    except StoreRefused as exc:
        raise refused(file, exc) from exc
    try:
        data = store.read()
        project = parse_project(folder, data, file)
        store.prepare_for_writing()
    except StoreRefused as exc:
        store.close()
        raise refused(file, exc) from exc
    except BaseException:
        store.close()
        raise
    project.store = store
    project.history_records = data["history"]
    return project


def remove_orphans(project: Project) -> int:
    """Remove take files no row names (how many; the recordings performed takes were made from too), and stale
    temporary files; only when no other process holds the project's lock (a render there may be between writing a
    take and storing its row)."""
    folder = project.folder
    for sub in (folder / TAKES_DIR, folder):  # a render running in another process may be writing younger ones
        remove_partial_files(sub, older_than_s=STALE_PARTIAL_S)
    if project.store is None or not (folder / TAKES_DIR).is_dir():
        return 0
    try:
        holder = ProjectLock(folder).holder()
    except OSError:
        return 0
    if holder is not None and not (holder.is_here() and holder.pid == os.getpid()):
        return 0
    named = project.store.referenced_files()
    removed = 0
    takes = folder / TAKES_DIR
    for path in sorted({*takes.glob("*.flac"), *takes.glob(f"*{SOURCE_MARK}.*")}):
        if f"{TAKES_DIR}/{path.name}" not in named:
            try:
                path.unlink()
                removed += 1
            except OSError:
                continue
    return removed
