"""Files shipped with the app (``resources/``, and the guide in ``docs/``), found both in a source checkout and in the
frozen build."""

from __future__ import annotations

import sys
from pathlib import Path


def _root() -> Path:
    frozen_root = getattr(sys, "_MEIPASS", None)  # PyInstaller unpacks data files here
    return Path(frozen_root) if frozen_root else Path(__file__).resolve().parents[1]


def resource_path(name: str) -> Path:
    return _root() / "resources" / name


def docs_path(name: str) -> Path:
    """A page of ``docs/`` (and its ``images/``): the source checkout's, or the copy the frozen build carries."""
    return _root() / "docs" / name
