"""The project and its store: segments, takes, voices and settings (``project.py``), kept in ``project.sqlite``
(``store.py``; earlier versions' ``project.json`` moved in by ``migration.py``; a folder opened by ``opening.py``), one
renderer or editor at a time (``lock.py``), undoable edits of its shape (``editing.py``), and its voices
(``voices.py``)."""

from core.narration.projects import editing
from core.narration.projects.editing import Edit, History, revert
from core.narration.projects.lock import LockHolder, ProjectLock, ProjectLocked
from core.narration.projects.opening import open_project
from core.narration.projects.project import (
    SPEED_RANGE,
    Chapter,
    Project,
    ProjectError,
    Refresh,
    Segment,
    Take,
    create_project,
    is_project,
    pause_seconds,
)
from core.narration.projects.voices import resolve_voices

__all__ = [
    "SPEED_RANGE",
    "Chapter",
    "Edit",
    "History",
    "LockHolder",
    "Project",
    "ProjectError",
    "ProjectLock",
    "ProjectLocked",
    "Refresh",
    "Segment",
    "Take",
    "create_project",
    "editing",
    "is_project",
    "open_project",
    "pause_seconds",
    "resolve_voices",
    "revert",
]
