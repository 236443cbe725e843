"""Downloading a Chatterbox bundle from the model hub into the user data directory, with progress and cancel.

Only the files one precision needs are fetched (graphs with their ``.onnx_data``, ``tokenizer.json``, the default
voice and, where the repository has it, the Chinese Cangjie table: no code, no pickles), always from the commit each
model is pinned to, never from a branch. Every file is checked against what the hub reports for that commit — its
size, and its SHA-256 (files kept in Git LFS) or its git blob id (small files) — in a staging folder, before it is
moved to its final name; a file that does not match is deleted and the download fails with a message saying so.
``huggingface_hub`` is imported only when a download starts: nothing touches the network unless the user starts a
download.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.engine.model.bundle import GRAPHS, SUFFIXES

COMMIT = re.compile(r"[0-9a-f]{40}")
"""A full git commit hash: the only kind of revision a model may be pinned to."""
HASH_CHUNK = 1 << 20


@dataclass(frozen=True)
class HubModel:
    label: str
    repo: str
    precision: str
    folder: str
    revision: str
    """The commit the download is pinned to (40 hex digits, never a branch name)."""


# Each model is pinned to the commit of its repository that these bundles were published at; the hub's sizes and
# hashes for that commit are what every download is checked against. Moving to a newer upload means a new commit here.
TURBO = "ResembleAI/chatterbox-turbo-ONNX", "d21799bd0354adb85e348b8a0442a8405110a2cf"
MULTILINGUAL = "onnx-community/chatterbox-multilingual-ONNX", "452d3f434aa592098f1eedac9099f33642ab2da5"
ORIGINAL = "onnx-community/chatterbox-ONNX", "3cab09af388d3f02bba43443fce88c1f4525ac43"

HUB_MODELS = (
    HubModel("Turbo — English, fastest (q4, ~0.6 GB)", TURBO[0], "q4", "turbo-q4", TURBO[1]),
    HubModel("Turbo — English (fp32, ~1.6 GB)", TURBO[0], "fp32", "turbo-fp32", TURBO[1]),
    HubModel("Multilingual — 23 languages (q4 LM, ~1.3 GB)", MULTILINGUAL[0], "q4", "multilingual-q4", MULTILINGUAL[1]),
    HubModel(
        "Original — English, CFG and exaggeration (q4 LM, ~1.2 GB)", ORIGINAL[0], "q4", "original-q4", ORIGINAL[1]
    ),
)


class DownloadCancelled(Exception):
    pass


class IntegrityError(RuntimeError):
    """A downloaded file does not match the size or hash the hub reports for the pinned commit."""


OFFLINE_MESSAGE = (
    "No internet connection: the model cannot be downloaded. Open a folder that holds a downloaded model, "
    "or build the offline test model."
)
_NETWORK_ERRORS = {
    "gaierror",  # socket: the host name cannot be resolved ("[Errno -2] Name or service not known")
    "ConnectionError",  # the built-in one (refused, reset, aborted) and requests'
    "ConnectError",  # httpx / httpcore
    "ConnectTimeout",
    "NetworkError",
    "NewConnectionError",  # urllib3
    "NameResolutionError",
    "LocalEntryNotFoundError",  # huggingface_hub: the hub could not be reached and nothing is cached
    "OfflineModeIsEnabled",  # huggingface_hub with HF_HUB_OFFLINE=1
}
_NOT_OFFLINE = {"SSLError", "SSLCertVerificationError", "ProxyError"}
"""Connection errors that a working connection causes (a certificate or a proxy): their own message is clearer."""
_NETWORK_ERRNOS = {-2, -3, -5, errno.ENETUNREACH, errno.EHOSTUNREACH, errno.ENETDOWN, 11001, 11002}
"""getaddrinfo's EAI_NONAME, EAI_AGAIN and EAI_NODATA (Linux), no route or network, and Windows' WSAHOST_NOT_FOUND
and WSATRY_AGAIN."""


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """The exception, what it was raised from or during, and exceptions it wraps (requests and urllib3 keep them in
    ``args`` or ``reason``), without looping."""
    seen, todo = set(), [exc]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        linked = [current.__cause__, current.__context__, getattr(current, "reason", None), *current.args]
        todo += [e for e in linked if isinstance(e, BaseException)]


def is_offline_error(exc: BaseException) -> bool:
    """Whether ``exc`` means the hub could not be reached at all (no connection, no name resolution)."""
    causes = list(_causes(exc))
    names = {cls.__name__ for e in causes for cls in type(e).__mro__}
    if names & _NOT_OFFLINE:
        return False
    return bool(names & _NETWORK_ERRORS) or any(isinstance(e, OSError) and e.errno in _NETWORK_ERRNOS for e in causes)


def describe_failure(exc: BaseException) -> str:
    """What a failed download tells the user."""
    return OFFLINE_MESSAGE if is_offline_error(exc) else f"Download failed: {exc}"


@dataclass(frozen=True)
class Expected:
    """What the hub reports about one file at the pinned commit (``None``: not reported)."""

    size: int | None = None
    sha256: str | None = None
    """SHA-256 of the content, for files kept in Git LFS (every graph and ``.onnx_data``)."""
    git_sha1: str | None = None
    """The git blob id, for files kept in git itself (``tokenizer.json``); for LFS files it names the pointer."""

    @property
    def hashed(self) -> bool:
        return bool(self.sha256 or self.git_sha1)

    @classmethod
    def of(cls, sibling: Any) -> Expected:
        """From a ``RepoSibling`` of ``HfApi().model_info(..., files_metadata=True)``."""
        lfs = getattr(sibling, "lfs", None)
        if lfs:
            size = _field(lfs, "size") or getattr(sibling, "size", None)
            return cls(size=size, sha256=_lower(_field(lfs, "sha256")))
        return cls(size=getattr(sibling, "size", None), git_sha1=_lower(getattr(sibling, "blob_id", None)))


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _lower(value: object) -> str | None:
    return value.lower() if isinstance(value, str) and value else None


def file_digests(path: Path, cancelled: Callable[[], bool] = lambda: False) -> tuple[str, str]:
    """SHA-256 of the content and the git blob id (SHA-1 of ``blob <size>\\0`` + content), in one pass."""
    sha256 = hashlib.sha256()
    git = hashlib.sha1(f"blob {path.stat().st_size}\0".encode(), usedforsecurity=False)
    with path.open("rb") as fh:
        while chunk := fh.read(HASH_CHUNK):
            if cancelled():
                raise DownloadCancelled
            sha256.update(chunk)
            git.update(chunk)
    return sha256.hexdigest(), git.hexdigest()


def mismatch(path: Path, expected: Expected, cancelled: Callable[[], bool] = lambda: False) -> str | None:
    """Why ``path`` is not the file the hub reports, or ``None`` when it matches."""
    size = path.stat().st_size
    if expected.size is not None and size != expected.size:
        return f"it has {size:,} bytes, the hub reports {expected.size:,}"
    if not expected.hashed:
        return None
    sha256, git_sha1 = file_digests(path, cancelled)
    if expected.sha256 and sha256 != expected.sha256:
        return f"its SHA-256 is {sha256}, the hub reports {expected.sha256}"
    if expected.git_sha1 and git_sha1 != expected.git_sha1:
        return f"its git blob id is {git_sha1}, the hub reports {expected.git_sha1}"
    return None


def wanted_files(model: HubModel, available: list[str]) -> list[str]:
    """The repository files one precision needs (per graph: the requested precision, else fp32)."""
    names = set(available)
    out: list[str] = [n for n in ("tokenizer.json", "default_voice.wav", "Cangjie5_TC.json") if n in names]
    for graph in GRAPHS:
        for precision in (model.precision, "fp32"):
            base = f"onnx/{graph}{SUFFIXES[precision]}.onnx"
            if base in names:
                out += [base] + [n for n in (base + "_data",) if n in names]
                break
    return out


class BackgroundDownload:
    """A download in a thread of its own: the dialog polls :attr:`progress` and :attr:`total_bytes` on a timer,
    :attr:`finished`, :attr:`error` (``"cancelled"``, or what the user reads) and :attr:`offline` say how it ended.
    Subclasses fetch in :meth:`_download` into :attr:`staging`, which is removed once it is over, or, where
    :attr:`keep_staging` says so, only when it succeeded (a failed download then resumes)."""

    keep_staging = False

    def __init__(self, target: Path, staging: Path):
        self.target, self.staging = target, staging
        self.total_bytes = 0
        self.done_bytes = 0
        self.error: str | None = None
        self.offline = False
        """The network could not be reached (``error`` then says what to do instead)."""
        self.finished = False
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="download", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def progress(self) -> int:
        return self.done_bytes

    def _download(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        try:
            self._download()
        except DownloadCancelled:
            self.error = "cancelled"
        except Exception as exc:  # noqa: BLE001 - shown to the user; a failed download must not crash the app
            self.offline = is_offline_error(exc)
            self.error = describe_failure(exc)
        finally:
            if self.error is None or not self.keep_staging:
                shutil.rmtree(self.staging, ignore_errors=True)
            self.finished = True


class Downloader(BackgroundDownload):
    """A Chatterbox bundle from the hub, in a thread of its own (:class:`BackgroundDownload`).

    Files arrive in a hidden staging folder beside the bundle (``.<folder>.partial``, kept after a failure so the next
    attempt resumes) and are moved into the bundle folder only once they match the hub's size and hash.
    """

    any_answer_pinned = False
    """Refuse any answer of the hub that is not the pinned commit (by default only another full commit is refused:
    a hub stand-in may answer with a short name)."""

    keep_staging = True

    def __init__(self, model: HubModel, target_root: Path, hub: Any = None):
        super().__init__(Path(target_root) / model.folder, Path(target_root) / f".{model.folder}.partial")
        self.model = model
        self.hub = hub
        self.revision: str | None = None
        """The commit the files came from (set once the hub has answered)."""

    def progress(self) -> int:
        """Bytes on disk so far (partial files included), for a smooth progress bar."""
        if self.finished and not self.error:
            return self.total_bytes
        try:
            on_disk = sum(
                p.stat().st_size
                for folder in (self.target, self.staging)
                if folder.is_dir()
                for p in folder.rglob("*")
                if p.is_file()
            )
            return min(self.total_bytes, max(on_disk, self.done_bytes))
        except OSError:
            return self.done_bytes

    def _api(self) -> Any:
        if self.hub is not None:
            return self.hub
        import huggingface_hub  # only here: the app never touches the network unless a download starts

        return huggingface_hub

    def _download(self) -> None:
        model = self.model
        if not COMMIT.fullmatch(model.revision):
            raise RuntimeError(
                f"{model.repo} is not pinned to a commit (revision {model.revision!r}); downloads are only made from "
                "a fixed commit so that the hub's sizes and hashes can be checked."
            )
        hub = self._api()
        info = hub.HfApi().model_info(model.repo, revision=model.revision, files_metadata=True)
        revision = getattr(info, "sha", None) or model.revision
        if (self.any_answer_pinned or COMMIT.fullmatch(revision)) and revision != model.revision:
            raise RuntimeError(f"the hub answered with commit {revision} for {model.repo}@{model.revision}")
        self.revision = revision
        expected = {s.rfilename: Expected.of(s) for s in info.siblings}
        files = self._files(list(expected))
        self.total_bytes = sum(expected[f].size or 0 for f in files)
        for name in files:
            if self._cancel.is_set():
                raise DownloadCancelled
            self._fetch(hub, name, expected[name], revision)

    def _files(self, available: list[str]) -> list[str]:
        """The repository files to fetch, of those the pinned commit holds (a Chatterbox bundle's: one precision)."""
        files = wanted_files(self.model, available)
        if not files:
            raise RuntimeError(f"{self.model.repo} holds no Chatterbox ONNX files")
        return files

    def _fetch(self, hub: Any, name: str, expected: Expected, revision: str) -> None:
        final = self.target / name
        if final.is_file():
            if expected.hashed and mismatch(final, expected, self._cancel.is_set) is None:
                self.done_bytes += final.stat().st_size  # verified by hash earlier: no need to fetch it again
                return
            final.unlink()  # not the pinned file: it must not stay under the bundle's name
        path = Path(hub.hf_hub_download(self.model.repo, name, revision=revision, local_dir=self.staging))
        try:
            problem = mismatch(path, expected, self._cancel.is_set)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        if problem is not None:
            path.unlink(missing_ok=True)
            raise IntegrityError(
                f"{name} from {self.model.repo}@{revision[:12]} does not match the hub: {problem}. The file was "
                "deleted and nothing was installed under its name. Try the download again; if this keeps "
                "happening, a proxy or mirror on the way is altering the file."
            )
        final.parent.mkdir(parents=True, exist_ok=True)
        size = path.stat().st_size
        os.replace(path, final)
        self.done_bytes += size
