"""Which model folder a cluster node uses: the owner's, found on the node and checked to hold the same files.

The owner sends the folder's path and a fingerprint of the files its pipeline loaded (:func:`fingerprint`); each
actor looks for the folder on its own node — the same path (a shared or mirrored disk), then
``$CHATTERBOX_MODELS/<folder name>``, then ``<user data>/models/<folder name>`` — and takes the first one whose
files (chosen for the same precision by :func:`core.engine.locate_bundle`, the engine's own bundle resolution) have
the same fingerprint. Nothing is downloaded: a node without the model reports ``cluster.model_missing``.

The fingerprint of a file is its size and the SHA-256 of its first and last MiB (hashing a 3 GB model completely on
every actor start would take longer than loading it); ``tokenizer.json`` is hashed whole.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from core.engine import BundleError, locate_bundle, user_data
from core.narration.cluster_connect import ClusterError

MODELS_ENV = "CHATTERBOX_MODELS"
EDGE = 1 << 20


def fingerprint(files) -> dict[str, str]:
    """``files`` (a :class:`core.engine.Pipeline`'s ``files``): graph file name → ``size:sha256`` of what is loaded."""
    found: dict[str, str] = {}
    for path in sorted(files.graphs.values()):
        for part in (path, path.with_name(path.name + "_data")):
            if part.is_file():
                found[part.name] = _file_print(part, whole=False)
    found[files.tokenizer.name] = _file_print(files.tokenizer, whole=True)
    return found


def candidates(folder: str) -> list[Path]:
    """Where a node looks for the owner's model folder, in order."""
    name = Path(folder).name
    places = [Path(folder)]
    if os.environ.get(MODELS_ENV):
        places.append(Path(os.environ[MODELS_ENV]) / name)
    places.append(user_data() / "models" / name)
    return places


def resolve_model(folder: str, precision: str, expected: dict[str, str], node: str = "") -> Path:
    """The first candidate folder on this node whose files match ``expected``; :class:`ClusterError`
    ``cluster.model_missing`` (node, folder, what was tried) when none does."""
    tried: list[str] = []
    for place in candidates(folder):
        try:
            files = locate_bundle(place, precision)
        except BundleError as exc:
            tried.append(f"{place}: {exc.code}")
            continue
        if fingerprint(files) == expected:
            return place
        tried.append(f"{place}: other files")
    raise ClusterError("cluster.model_missing", node=node, folder=folder, tried=tried)


def _file_print(path: Path, whole: bool) -> str:
    size = path.stat().st_size
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        if whole or size <= 2 * EDGE:
            digest.update(fh.read())
        else:
            digest.update(fh.read(EDGE))
            fh.seek(size - EDGE)
            digest.update(fh.read(EDGE))
    return f"{size}:{digest.hexdigest()}"
