"""Write-then-rename: a crash, a full disk or a read-only folder never leaves a partial file under the final name.

Every file the project writes for the user (exports, history, voice library, the voice cache) goes through
:func:`atomic_path`: the data is written to a hidden temporary file in the same folder and renamed over the target
only when complete (``os.replace`` is atomic on one file system). A failure, or an exception of any kind, removes
the temporary file; a process killed mid-write leaves at most a hidden ``.*.partial.*`` file, which
:func:`remove_partial_files` clears on the next start.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PARTIAL = ".partial"


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_current_umask()
"""The mode a plain ``open()`` would give a new file (``mkstemp`` creates 0600 whatever the umask)."""
FILE_MODE = _FILE_MODE


@contextmanager
def atomic_path(path: Path | str) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (same suffix); it replaces ``path`` when the block succeeds."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f"{PARTIAL}{path.suffix}", dir=path.parent)
    os.close(fd)
    try:
        os.chmod(tmp, _FILE_MODE)
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path | str, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json_atomic(path: Path | str, data: object) -> None:
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False))


def copy_file_atomic(source: Path | str, target: Path | str) -> None:
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)


def remove_partial_files(folder: Path | str, older_than_s: float = 0.0) -> int:
    """Delete temporary files left by a process that was killed while writing; returns how many.

    ``older_than_s`` spares files that another live process may still be writing (a folder two processes share).
    """
    removed = 0
    now = time.time()
    try:
        for leftover in Path(folder).glob(f".*{PARTIAL}*"):
            try:
                if older_than_s and now - leftover.stat().st_mtime < older_than_s:
                    continue
                leftover.unlink(missing_ok=True)
            except OSError:
                continue
            removed += 1
    except OSError:
        pass
    return removed
