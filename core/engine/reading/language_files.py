"""The files some languages' steps need, where they are looked for, and how the model manager fetches them.

- Chinese: ``Cangjie5_TC.json`` (1.9 MB) of the Multilingual repository, in the bundle folder beside
  ``tokenizer.json`` (where upstream keeps it), or in ``<models>/language-data/``; fetched from the commit the
  Multilingual model is pinned to and checked against the hub's size and hash (:class:`HubFileDownloader`).
- Chinese word boundaries: ``spacy_pkuseg``'s ``spacy_ontonotes`` model (a zip of 7 MB from its GitHub release),
  pinned by URL and SHA-256 (the values ``spacy_pkuseg`` itself pins) and unpacked, member by member, into
  ``<models>/language-data/pkuseg/spacy_ontonotes`` (:class:`UrlZipDownloader`). A model that ``spacy_pkuseg``
  downloaded itself (``$PKUSEG_HOME``, ``~/.pkuseg``) is used too.
- Russian stress: ``stressonnx``'s RUAccent files, from the commit ``stressonnx`` pins.

Only the downloaders touch the network, and only when a person starts one; everything else looks on disk.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import core.engine.reading.loaded_files as loaded_files
from core.engine.files.user_dirs import user_data
from core.engine.model.hub_download import (
    MULTILINGUAL,
    BackgroundDownload,
    DownloadCancelled,
    Downloader,
    HubModel,
)
from core.engine.reading.chinese import CANGJIE_FILE
from core.engine.reading.optional_steps import STRESS_SUBDIR, forget_steps, stress_folder

LANGUAGE_DATA = "language-data"
PKUSEG_MODEL = "spacy_ontonotes"
PKUSEG_URL = "https://github.com/explosion/spacy-pkuseg/releases/download/v0.0.26/spacy_ontonotes.zip"
PKUSEG_SHA256 = "b216e7f92de7ae285aeab8feba2faa8ea8216e5995ff6fb3d391cc8356db1bfe"
"""The release file ``spacy_pkuseg`` 1.0 itself downloads and checks (its ``Config.model_hash``)."""
PKUSEG_BYTES = 7 << 20
"""About the zip's size, for a progress bar before the server has said."""
PKUSEG_FILES = ("features.msgpack", "weights.npz")
"""What ``spacy_pkuseg`` loads from a model folder."""
PKUSEG_MAX_BYTES = 200 << 20
"""An archive that unpacks to more than this is not the segmenter's model (a zip bomb is refused)."""
STRESS_REPO = "TigreGotico/stressonnx-models", "b8ba7afdb78534afa1a7f4794b98d019c3866aef"
"""``stressonnx`` 0.0.2's model repository and the commit it pins (``registry.HF_REPO_REVISION``)."""


def language_data(models_dir: Path | None = None) -> Path:
    """``<models>/language-data`` (``<user data>/models`` unless given)."""
    return (Path(models_dir) if models_dir is not None else user_data() / "models") / LANGUAGE_DATA


def find_cangjie(bundle: Path | None, models_dir: Path | None = None) -> Path | None:
    """The Cangjie table beside the bundle's tokenizer, else in the language data folder; ``None`` when absent."""
    for folder in ([Path(bundle)] if bundle is not None else []) + [language_data(models_dir)]:
        path = folder / CANGJIE_FILE
        if path.is_file() and path.stat().st_size > 0:
            return path
    return None


def find_pkuseg(models_dir: Path | None = None) -> Path | None:
    """The segmenter's model folder: ours, or one ``spacy_pkuseg`` downloaded itself; ``None`` when absent."""
    homes = [language_data(models_dir) / "pkuseg"]
    if os.environ.get("PKUSEG_HOME"):
        homes.append(Path(os.environ["PKUSEG_HOME"]))
    homes.append(Path.home() / ".pkuseg")
    for home in homes:
        folder = home / PKUSEG_MODEL
        if all((folder / name).is_file() for name in PKUSEG_FILES):
            return folder
    return None


def stress_files() -> list[str]:
    """The repository paths of the Russian stress model (``stressonnx``'s list; raises ``ImportError`` without it)."""
    from stressonnx.backends.ruaccent import _RUACCENT_FILES

    return [f"{STRESS_SUBDIR}/{name}" for name in _RUACCENT_FILES]


def russian_stress_ready(models_dir: Path | None = None) -> bool:
    folder = stress_folder(language_data(models_dir))
    try:
        return all((folder / name).is_file() for name in stress_files())
    except ImportError:
        return False


class HubFileDownloader(Downloader):
    """:class:`Downloader` for named files of a pinned repository (same staging, size and hash checks)."""

    any_answer_pinned = True

    def __init__(self, model: HubModel, target_root: Path, names: list[str], hub: Any = None):
        super().__init__(model, target_root, hub)
        self.names = names

    def _files(self, available: list[str]) -> list[str]:
        absent = [name for name in self.names if name not in available]
        if absent:
            raise RuntimeError(f"{self.model.repo}@{self.model.revision[:12]} holds no {', '.join(absent)}")
        return list(self.names)


def cangjie_downloader(bundle: Path, hub: Any = None) -> HubFileDownloader:
    """Fetches ``Cangjie5_TC.json`` into ``bundle`` from the Multilingual model's pinned commit."""
    bundle = Path(bundle)
    model = HubModel("Chinese: Cangjie table (1.9 MB)", MULTILINGUAL[0], "fp32", bundle.name, MULTILINGUAL[1])
    return HubFileDownloader(model, bundle.parent, [CANGJIE_FILE], hub)


def stress_downloader(models_dir: Path | None = None, hub: Any = None) -> HubFileDownloader:
    """Fetches the Russian stress model into ``<models>/language-data/stressonnx`` (needs ``stressonnx``)."""
    folder = stress_folder(language_data(models_dir))
    model = HubModel("Russian: stress marks (RUAccent)", STRESS_REPO[0], "fp32", folder.name, STRESS_REPO[1])
    return HubFileDownloader(model, folder.parent, stress_files(), hub)


@dataclass(frozen=True)
class UrlFile:
    url: str
    sha256: str
    folder: str
    """Where it unpacks, under the language data folder."""


PKUSEG = UrlFile(PKUSEG_URL, PKUSEG_SHA256, f"pkuseg/{PKUSEG_MODEL}")


class UrlZipDownloader(BackgroundDownload):
    """A pinned zip from a URL (:class:`BackgroundDownload`: the same thread, progress, cancel and errors as a
    model's download, so one progress dialog serves both): downloaded into a staging file, checked against its
    SHA-256, unpacked member by member (no absolute paths, no ``..``, no links, bounded size) into a staging folder,
    then moved into place."""

    def __init__(self, spec: UrlFile, data_dir: Path, opener: Any = None):
        target = Path(data_dir) / spec.folder
        super().__init__(target, target.parent / f".{target.name}.partial")
        self.spec = spec
        self.opener = opener

    def _download(self) -> None:
        self.staging.mkdir(parents=True, exist_ok=True)
        archive = self.staging / "download.zip"
        digest = hashlib.sha256()
        opener = self.opener
        if opener is None:
            import urllib.request  # only here: importing the app opens no network client

            opener = urllib.request.urlopen
        with opener(self.spec.url, timeout=30) as response, archive.open("wb") as out:
            self.total_bytes = int(response.headers.get("Content-Length") or 0)
            while chunk := response.read(1 << 16):
                if self._cancel.is_set():
                    raise DownloadCancelled
                out.write(chunk)
                digest.update(chunk)
                self.done_bytes += len(chunk)
        if digest.hexdigest() != self.spec.sha256:
            raise RuntimeError(
                f"{self.spec.url} does not match its pinned SHA-256 (got {digest.hexdigest()}); nothing was installed"
            )
        unpacked = self.staging / "files"
        unpack_zip(archive, unpacked)
        if self.target.exists():
            shutil.rmtree(self.target)
        self.target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(_single_root(unpacked), self.target)


def unpack_zip(archive: Path, folder: Path, limit: int = PKUSEG_MAX_BYTES) -> None:
    """Unpack ``archive`` into ``folder``, refusing members that would land outside it, links and archives that
    unpack to more than ``limit`` bytes."""
    with zipfile.ZipFile(archive) as zf:
        members = zf.infolist()
        if sum(m.file_size for m in members) > limit:
            raise RuntimeError(f"{archive.name} unpacks to more than {limit >> 20} MB: not the expected model")
        for member in members:
            path = PurePosixPath(member.filename.replace("\\", "/"))
            if path.is_absolute() or ".." in path.parts or (member.external_attr >> 28) == 0xA:
                raise RuntimeError(f"{archive.name} holds an unsafe member: {member.filename!r}")
            if member.is_dir():
                continue
            target = folder.joinpath(*path.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(member) as src, target.open("wb") as dst:
                shutil.copyfileobj(src, dst)


def _single_root(folder: Path) -> Path:
    """The archive's one top folder when it has one (``spacy_ontonotes/…``), else the folder itself."""
    entries = list(folder.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def pkuseg_downloader(models_dir: Path | None = None, opener: Any = None) -> UrlZipDownloader:
    return UrlZipDownloader(PKUSEG, language_data(models_dir), opener)


class ModelWithLanguageFiles(Downloader):
    """The Multilingual model's download: the bundle (with its Cangjie table, which the repository holds), then the
    Chinese word segmenter's model into ``<models>/language-data``, in the same thread, progress and cancel. The
    segmenter is optional: when it cannot be fetched the model is still installed, and :attr:`language_error` says
    why (Chinese is then read without word boundaries, and the user is told)."""

    def __init__(self, model: HubModel, target_root: Path, hub: Any = None, opener: Any = None):
        super().__init__(model, target_root, hub)
        self.segmenter = pkuseg_downloader(Path(target_root), opener)
        self.language_error: str | None = None

    def progress(self) -> int:
        if self.finished and not self.error:
            return self.total_bytes
        return min(self.total_bytes, super().progress() + self.segmenter.done_bytes)

    def cancel(self) -> None:
        super().cancel()
        self.segmenter.cancel()

    def _download(self) -> None:
        super()._download()
        if find_pkuseg(self.target.parent) is not None:
            return
        segmenter, model_bytes = self.segmenter, self.total_bytes
        self.total_bytes = model_bytes + PKUSEG_BYTES  # until the server says how large it is
        segmenter._run()  # here, in this download's thread
        self.total_bytes = model_bytes + (segmenter.total_bytes or segmenter.done_bytes)
        if segmenter.error == "cancelled":
            raise DownloadCancelled
        self.language_error = segmenter.error
        after_download()


def model_downloader(model: HubModel, target_root: Path, hub: Any = None, opener: Any = None) -> Downloader:
    """The download of one of :data:`~core.engine.model.hub_download.HUB_MODELS` with what its languages need."""
    if model.repo == MULTILINGUAL[0]:
        return ModelWithLanguageFiles(model, target_root, hub, opener)
    return Downloader(model, target_root, hub)


def after_download() -> None:
    """Make the next sentence look for the files again (a step that was missing may now be there)."""
    forget_steps()
    loaded_files.forget()
