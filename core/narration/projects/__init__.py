"""The project and its store: segments, takes, voices and settings (``project.py``), kept in ``project.sqlite``
(``store.py``; earlier versions' ``project.json`` moved in by ``migration.py``; a folder opened by ``opening.py``), one
renderer or editor at a time (``lock.py``), undoable edits of its shape (``editing.py``), its voices
(``voices.py``), and its cast: the characters (``characters.py``), who says each segment (``attributing.py``), the
cast's undoable edits (``cast.py``) and library voices suggested for a character (``voice_suggestions.py``)."""

from core.narration.projects import cast, editing
from core.narration.projects.attributing import attribute_project
from core.narration.projects.characters import Character
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
from core.narration.projects.voice_suggestions import suggest_voices
from core.narration.projects.voices import resolve_voices

__all__ = [
    "SPEED_RANGE",
    "Chapter",
    "Character",
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
    "attribute_project",
    "cast",
    "create_project",
    "editing",
    "is_project",
    "open_project",
    "pause_seconds",
    "resolve_voices",
    "revert",
    "suggest_voices",
]
