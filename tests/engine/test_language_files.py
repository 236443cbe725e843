"""The language files: found on disk only, fetched pinned and checked (the Cangjie table from the Multilingual
model's commit, the segmenter's zip by URL and SHA-256), hostile archives refused, nothing installed on a mismatch."""

from __future__ import annotations

import hashlib
import io
import json
import os
import stat
import zipfile

import pytest

from core.engine.model.hub_download import MULTILINGUAL, wanted_files
from core.engine.reading import front_end, language_files
from core.engine.reading.language_files import (
    PKUSEG_SHA256,
    UrlFile,
    UrlZipDownloader,
    cangjie_downloader,
    find_cangjie,
    find_pkuseg,
    language_data,
)
from tests.security.test_security_downloads import FakeHub


def run(download):
    download.start()
    download.join(30)
    assert download.finished
    return download


class FakeResponse(io.BytesIO):
    def __init__(self, data: bytes):
        super().__init__(data)
        self.headers = {"Content-Length": str(len(data))}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def opener_for(data: bytes, seen: list | None = None):
    def opener(url, timeout):
        if seen is not None:
            seen.append(url)
        return FakeResponse(data)

    return opener


def zipped(members: dict[str, bytes], symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        if symlink:
            info = zipfile.ZipInfo(symlink)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return buffer.getvalue()


MODEL = {"features.msgpack": b"features" * 100, "weights.npz": b"weights" * 100}


def downloader(tmp_path, data: bytes, sha: str | None = None, seen=None) -> UrlZipDownloader:
    spec = UrlFile("https://example.invalid/spacy_ontonotes.zip", sha or hashlib.sha256(data).hexdigest(), "pkuseg/m")
    return UrlZipDownloader(spec, language_data(tmp_path), opener_for(data, seen))


def test_the_segmenter_model_is_pinned_as_spacy_pkuseg_pins_it():
    from spacy_pkuseg.config import Config

    assert Config.model_hash["spacy_ontonotes"] == PKUSEG_SHA256
    assert Config.model_urls["spacy_ontonotes"] == language_files.PKUSEG_URL


def test_the_segmenter_zip_is_checked_unpacked_and_found(tmp_path, monkeypatch):
    data = zipped(MODEL)
    seen: list = []
    sha = hashlib.sha256(data).hexdigest()
    spec = UrlFile("https://example.invalid/spacy_ontonotes.zip", sha, "pkuseg/spacy_ontonotes")
    download = run(UrlZipDownloader(spec, language_data(tmp_path), opener_for(data, seen)))
    assert download.error is None and download.progress() == download.total_bytes == len(data)
    monkeypatch.setenv("PKUSEG_HOME", str(tmp_path / "nowhere"))
    assert find_pkuseg(tmp_path) == language_data(tmp_path) / "pkuseg" / "spacy_ontonotes"
    assert (find_pkuseg(tmp_path) / "weights.npz").read_bytes() == MODEL["weights.npz"]
    assert seen == ["https://example.invalid/spacy_ontonotes.zip"]
    assert not any(p.name.endswith(".partial") for p in (language_data(tmp_path) / "pkuseg").iterdir())


def test_a_zip_in_one_folder_is_unpacked_from_inside_it(tmp_path):
    data = zipped({f"spacy_ontonotes/{k}": v for k, v in MODEL.items()})
    download = run(downloader(tmp_path, data))
    assert download.error is None
    assert (language_data(tmp_path) / "pkuseg" / "m" / "features.msgpack").is_file()


def test_a_download_that_does_not_match_its_hash_installs_nothing(tmp_path):
    data = zipped(MODEL)
    download = run(downloader(tmp_path, data, sha="0" * 64))
    assert "does not match its pinned SHA-256" in download.error
    assert not (language_data(tmp_path) / "pkuseg" / "m").exists()


@pytest.mark.parametrize(
    "members",
    [
        {"../escape.txt": b"x"},
        {"/etc/absolute.txt": b"x"},
        {"ok/..\\..\\windows.txt": b"x"},
    ],
)
def test_hostile_archives_are_refused(tmp_path, members):
    download = run(downloader(tmp_path, zipped({**MODEL, **members})))
    assert "unsafe member" in download.error
    assert not (tmp_path / "escape.txt").exists() and not (language_data(tmp_path) / "pkuseg" / "m").exists()


def test_a_link_in_the_archive_is_refused(tmp_path):
    download = run(downloader(tmp_path, zipped(MODEL, symlink="link")))
    assert "unsafe member" in download.error


def test_an_archive_that_unpacks_too_big_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(language_files.unpack_zip, "__defaults__", (100,))
    download = run(downloader(tmp_path, zipped(MODEL)))
    assert "unpacks to more than" in download.error


def test_offline_says_so(tmp_path):
    def offline(url, timeout):
        raise OSError(-2, "Name or service not known")

    spec = UrlFile("https://example.invalid/x.zip", "0" * 64, "pkuseg/m")
    download = run(UrlZipDownloader(spec, language_data(tmp_path), offline))
    assert download.offline and "No internet connection" in download.error


def test_a_model_spacy_pkuseg_downloaded_itself_is_used(tmp_path, monkeypatch):
    home = tmp_path / "pkuseg-home"
    (home / "spacy_ontonotes").mkdir(parents=True)
    for name, data in MODEL.items():
        (home / "spacy_ontonotes" / name).write_bytes(data)
    monkeypatch.setenv("PKUSEG_HOME", str(home))
    assert find_pkuseg(tmp_path / "models") == home / "spacy_ontonotes"


def test_the_cangjie_table_comes_from_the_multilingual_models_pinned_commit(tmp_path):
    bundle = tmp_path / "multilingual-q4"
    bundle.mkdir()
    table = json.dumps(["你\tonf", "好\tvnd"], ensure_ascii=False).encode()
    hub = FakeHub({"Cangjie5_TC.json": table, "tokenizer.json": b"{}", "onnx/language_model.onnx": b"x"})
    download = run(cangjie_downloader(bundle, hub=hub))
    assert download.error is None
    assert hub.calls[0] == ("model_info", MULTILINGUAL[0], MULTILINGUAL[1], True)
    assert [c for c in hub.calls if c[0] == "download"] == [("download", "Cangjie5_TC.json", MULTILINGUAL[1])]
    assert find_cangjie(bundle, tmp_path) == bundle / "Cangjie5_TC.json"
    assert sorted(os.listdir(bundle)) == ["Cangjie5_TC.json"]  # nothing else of the repository


def test_a_cangjie_table_that_does_not_match_the_hub_is_not_kept(tmp_path):
    bundle = tmp_path / "ml"
    bundle.mkdir()
    table = json.dumps(["你\tonf"]).encode()
    hub = FakeHub({"Cangjie5_TC.json": table}, deliver={"Cangjie5_TC.json": table + b" "})
    download = run(cangjie_downloader(bundle, hub=hub))
    assert "does not match the hub" in download.error and find_cangjie(bundle, tmp_path) is None


def test_a_multilingual_download_brings_the_table_with_the_model():
    from core.engine.model.hub_download import HUB_MODELS

    model = next(m for m in HUB_MODELS if m.repo == MULTILINGUAL[0])
    files = wanted_files(model, ["tokenizer.json", "Cangjie5_TC.json", "onnx/language_model_q4.onnx"])
    assert "Cangjie5_TC.json" in files


def test_after_a_download_the_files_are_looked_for_again(tmp_path):
    front_end._tables["x"] = object()
    language_files.after_download()
    assert front_end._tables == {}
