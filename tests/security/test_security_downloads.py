"""Security: downloads come from pinned commits and every file is checked against the hub's size and hash before it
is kept; the model dialog touches the hub only when Download is clicked."""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from core.engine.model.hub_download import COMMIT, HUB_MODELS, Downloader, HubModel, file_digests
from tests.security_support import block_network


# --- 3. downloads ----------------------------------------------------------------------------------------------------
def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class FakeHub:
    """Stands in for ``huggingface_hub``: answers ``HfApi().model_info(..., files_metadata=True)`` with the real
    ``RepoSibling``/``BlobLfsInfo`` types and serves files from memory, recording every call."""

    def __init__(
        self,
        files: dict[str, bytes],
        sha: str | None = None,
        deliver: dict[str, bytes] | None = None,
        report: dict[str, dict] | None = None,
    ):
        self.files, self.sha, self.deliver, self.report = files, sha, deliver or {}, report or {}
        self.calls: list[tuple] = []
        self.lock = threading.Lock()

    def HfApi(self):  # the hub's own name
        return self

    def _sibling(self, name: str, data: bytes):
        from huggingface_hub.hf_api import BlobLfsInfo, RepoSibling

        fields = {"size": len(data)}
        if name.endswith((".onnx", ".onnx_data", ".wav")):  # kept in LFS: the blob id names the pointer file
            sha256 = hashlib.sha256(data).hexdigest()
            pointer = f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {len(data)}\n".encode()
            fields.update(blob_id=git_blob_id(pointer), lfs={"size": len(data), "sha256": sha256})
        else:
            fields.update(blob_id=git_blob_id(data), lfs=None)
        fields.update(self.report.get(name, {}))
        lfs = fields.pop("lfs")
        lfs = BlobLfsInfo(size=lfs["size"], sha256=lfs["sha256"], pointer_size=130) if lfs else None
        return RepoSibling(rfilename=name, size=fields["size"], blob_id=fields["blob_id"], lfs=lfs)

    def model_info(self, repo, revision=None, files_metadata=False):
        with self.lock:
            self.calls.append(("model_info", repo, revision, files_metadata))
        siblings = [self._sibling(n, d) for n, d in self.files.items()]
        return SimpleNamespace(sha=self.sha or revision, siblings=siblings)

    def hf_hub_download(self, repo, filename, revision=None, local_dir=None):
        with self.lock:
            self.calls.append(("download", filename, revision))
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.deliver.get(filename, self.files[filename]))
        return str(target)

    def downloads(self) -> list[tuple]:
        return [c for c in self.calls if c[0] == "download"]


MODEL = HUB_MODELS[3]  # original, q4 LM: the stand-in has fp32 graphs only, so each graph falls back to fp32


@pytest.fixture
def hub_files(bundles) -> dict[str, bytes]:
    source = bundles["original"]
    files = {p.relative_to(source).as_posix(): p.read_bytes() for p in sorted(source.rglob("*")) if p.is_file()}
    files.update({"onnx/evil.pkl": pickle.dumps([1]), "hook.py": b"print()", "README.md": b"# model"})
    return files


def download(model: HubModel, root: Path, hub: FakeHub) -> Downloader:
    d = Downloader(model, root, hub=hub)
    d.start()
    d.join(30)
    assert d.finished
    return d


def test_hub_models_are_pinned_to_commits():
    assert HUB_MODELS and all(COMMIT.fullmatch(m.revision) for m in HUB_MODELS)


def test_a_download_is_verified_and_comes_from_the_pinned_commit(tmp_path, hub_files):
    hub = FakeHub(hub_files)
    d = download(MODEL, tmp_path, hub)
    assert d.error is None and d.revision == MODEL.revision
    assert hub.calls[0] == ("model_info", MODEL.repo, MODEL.revision, True)
    fetched = [name for _kind, name, _rev in hub.downloads()]
    assert {rev for _k, _n, rev in hub.downloads()} == {MODEL.revision}
    assert set(fetched) == {"tokenizer.json", "default_voice.wav"} | {
        f"onnx/{g}.onnx{x}"
        for g in ("speech_encoder", "embed_tokens", "language_model", "conditional_decoder")
        for x in ("", "_data")
    }
    for name in fetched:
        assert (d.target / name).read_bytes() == hub_files[name]
    assert not d.staging.exists() and d.progress() == d.total_bytes == sum(len(hub_files[n]) for n in fetched)
    again = FakeHub(hub_files)
    assert download(MODEL, tmp_path, again).error is None
    assert again.downloads() == []  # every file in place matched the hub's hash: nothing fetched again


@pytest.mark.parametrize(
    ("name", "how"),
    [
        ("onnx/language_model.onnx_data", "same size, other bytes"),  # SHA-256 (LFS)
        ("tokenizer.json", "same size, other bytes"),  # git blob id (not in LFS)
        ("onnx/speech_encoder.onnx", "one byte more"),  # size
        ("default_voice.wav", "the hub reports another hash"),
    ],
)
def test_a_file_that_does_not_match_the_hub_is_refused_and_not_kept(tmp_path, hub_files, name, how):
    data = hub_files[name]
    deliver, report = {}, {}
    if how == "same size, other bytes":
        deliver[name] = data[:-1] + bytes([data[-1] ^ 0xFF])
    elif how == "one byte more":
        deliver[name] = data + b"\0"
    else:
        report[name] = {"lfs": {"size": len(data), "sha256": "0" * 64}}
    target = tmp_path / MODEL.folder / name
    target.parent.mkdir(parents=True)
    target.write_bytes(b"left over from an older download")
    hub = FakeHub(hub_files, deliver=deliver, report=report)
    d = download(MODEL, tmp_path, hub)
    assert d.error is not None and name in d.error and "does not match the hub" in d.error, d.error
    assert "deleted" in d.error and "Try the download again" in d.error
    assert not target.exists() and not (d.staging / name).exists()  # nothing under the final name, no partial file
    fetched = [n for _k, n, _r in hub.downloads()]
    assert fetched[-1] == name  # it stopped at the bad file


def test_an_unpinned_model_or_another_commit_is_refused(tmp_path, hub_files):
    branch = HubModel("test", MODEL.repo, "q4", "test", "main")
    hub = FakeHub(hub_files)
    d = download(branch, tmp_path, hub)
    assert "not pinned to a commit" in d.error and hub.calls == []
    moved = FakeHub(hub_files, sha="f" * 40)
    d = download(MODEL, tmp_path, moved)
    assert "answered with commit" in d.error and moved.downloads() == []


def test_file_digests_agree_with_the_hub_library(tmp_path):
    from huggingface_hub.utils.sha import git_hash, sha_fileobj

    path = tmp_path / "blob"
    data = os.urandom(3 * (1 << 20) + 17)
    path.write_bytes(data)
    with path.open("rb") as fh:
        assert file_digests(path) == (sha_fileobj(fh).hex(), git_hash(data))


def test_the_model_dialog_uses_the_hub_only_when_download_is_clicked(qtbot, monkeypatch, tmp_path, hub_files):
    from app.widgets.model_dialog import ModelDialog

    attempts = block_network(monkeypatch)
    hub = FakeHub(hub_files)
    dialog = ModelDialog(tmp_path / "models", hub=hub)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.wait(50)
    assert hub.calls == []
    dialog.model_combo.setCurrentIndex(HUB_MODELS.index(MODEL))
    dialog.download_button.click()
    dialog.downloader.join(30)
    qtbot.waitUntil(lambda: dialog.chosen is not None, timeout=10000)
    assert hub.calls[0] == ("model_info", MODEL.repo, MODEL.revision, True) and dialog.downloader.error is None
    assert attempts == []  # the fake hub stood in for the network
