"""Which model folder a cluster node uses: the owner's, found on the node and checked to hold the same files.

The owner sends the folder's path and a fingerprint of the files its pipeline loaded (:func:`fingerprint`); each
actor looks for the folder on its own node — the same path (a shared or mirrored disk), then
``$CHATTERBOX_MODELS/<folder name>``, then ``<user data>/models/<folder name>`` — and takes the first one whose
files (chosen for the same precision by :func:`core.engine.locate_bundle`, the engine's own bundle resolution) have
the same fingerprint. When none has it and the folder is one the app downloads from the model hub (its name is a
:data:`core.engine.HUB_MODELS` folder, as the window's downloads are named), the node downloads it into its own
``<user data>/models`` through the same :class:`core.engine.Downloader` the window uses (pinned commit, every file
checked against the hub's size and hash) and checks the fingerprint again. A node that can find or fetch none
reports ``cluster.model_missing``.

The fingerprint of a file is its size and the SHA-256 of its first and last MiB (hashing a 3 GB model completely on
every actor start would take longer than loading it); ``tokenizer.json`` is hashed whole.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Any

from core.engine import HUB_MODELS, BundleError, Downloader, locate_bundle, user_data
from core.narration.cluster.connect import ClusterError

log = logging.getLogger(__name__)

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


def resolve_model(folder: str, precision: str, expected: dict[str, str], node: str = "", hub: Any = None) -> Path:
    """The first candidate folder on this node whose files match ``expected``, else the hub's copy downloaded here;
    :class:`ClusterError` ``cluster.model_missing`` (node, folder, what was tried) when none matches.
    ``hub`` stands in for ``huggingface_hub`` (tests)."""
    tried: list[str] = []
    for place in candidates(folder):
        if _matches(place, precision, expected, tried):
            return place
    model = next((m for m in HUB_MODELS if m.folder == Path(folder).name), None)
    if model is not None:
        download = Downloader(model, user_data() / "models", hub=hub)
        log.info("node %s: downloading %s@%s from the model hub", node, model.repo, model.revision[:12])
        download.start()
        download.join()
        if download.error:
            tried.append(f"the hub ({model.repo}): {download.error}")
        elif _matches(download.target, precision, expected, tried):
            return download.target
    raise ClusterError("cluster.model_missing", node=node, folder=folder, tried=tried)


def _matches(place: Path, precision: str, expected: dict[str, str], tried: list[str]) -> bool:
    try:
        files = locate_bundle(place, precision)
    except BundleError as exc:
        tried.append(f"{place}: {exc.code}")
        return False
    if fingerprint(files) == expected:
        return True
    tried.append(f"{place}: other files")
    return False


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
