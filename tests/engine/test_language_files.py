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
    from core.engine.reading import loaded_files

    loaded_files.tables["x"] = object()
    language_files.after_download()
    assert loaded_files.tables == {}


# --- the optional steps, with stand-ins for their packages -----------------------------------------------------------


@pytest.fixture
def fake_packages(monkeypatch):
    """``stressonnx`` and ``phonikud_onnx`` as small modules that mark what they touched (the real ones are optional
    and need their models)."""
    import sys
    import types

    from core.engine.reading import optional_steps

    calls = []
    stress = types.ModuleType("stressonnx")
    stress.make_stressor = lambda model, lang, cache_dir: (
        calls.append((model, lang, cache_dir)) or (lambda text: text.replace("а", "а\u0301", 1))
    )
    backends = types.ModuleType("stressonnx.backends")
    ruaccent = types.ModuleType("stressonnx.backends.ruaccent")
    ruaccent._RUACCENT_FILES = ["nn_accent/model.onnx", "dictionary/omographs.json.gz"]
    phonikud = types.ModuleType("phonikud_onnx")

    class Phonikud:
        def __init__(self, path):
            calls.append(("phonikud", path))

        def add_diacritics(self, text):
            return text + "\u05b8"

    phonikud.Phonikud = Phonikud
    for name, module in {
        "stressonnx": stress,
        "stressonnx.backends": backends,
        "stressonnx.backends.ruaccent": ruaccent,
        "phonikud_onnx": phonikud,
    }.items():
        monkeypatch.setitem(sys.modules, name, module)
    optional_steps.forget_steps()
    yield calls
    optional_steps.forget_steps()


def test_russian_stress_downloads_from_stressonnx_pinned_commit_then_runs(tmp_path, fake_packages):
    from core.engine.reading.language_files import STRESS_REPO, russian_stress_ready, stress_downloader

    models = tmp_path / "models"
    front = front_end.TextFrontEnd("multilingual", tmp_path, models)
    assert front.model_text("мама", "ru") == "[ru]мама" and front.take_notices()[0].code == "text.step_not_installed"
    files = {
        f"ru_ruaccent/{name}": name.encode() * 10 for name in ("nn_accent/model.onnx", "dictionary/omographs.json.gz")
    }
    hub = FakeHub({**files, "README.md": b"readme"})
    download = run(stress_downloader(models, hub=hub))
    assert download.error is None and russian_stress_ready(models)
    assert hub.calls[0] == ("model_info", STRESS_REPO[0], STRESS_REPO[1], True)
    language_files.after_download()
    front = front_end.TextFrontEnd("multilingual", tmp_path, models)
    assert front.model_text("мама", "ru") == "[ru]ма\u0301ма" and front.take_notices() == []
    assert fake_packages[-1] == ("ruaccent", "ru", str(language_data(models) / "stressonnx"))


def test_hebrew_diacritics_run_when_the_package_and_its_model_are_there(tmp_path, fake_packages):
    models = tmp_path / "models"
    folder = language_data(models) / "hebrew"
    folder.mkdir(parents=True)
    (folder / "phonikud-1.0.int8.onnx").write_bytes(b"model")
    out = front_end.TextFrontEnd("multilingual", tmp_path, models).model_text("שלום", "he")
    assert out == "[he]שלום\u05b8" and fake_packages == [("phonikud", str(folder / "phonikud-1.0.int8.onnx"))]


def test_a_step_whose_package_fails_to_load_leaves_the_text_as_upstream_sends_it(tmp_path, fake_packages, monkeypatch):
    import sys

    folder = language_data(tmp_path / "models") / "hebrew"
    folder.mkdir(parents=True)
    (folder / "phonikud-1.0.int8.onnx").write_bytes(b"model")

    class Broken:
        def __init__(self, path):
            raise RuntimeError("not an ONNX model")

    monkeypatch.setattr(sys.modules["phonikud_onnx"], "Phonikud", Broken)
    front = front_end.TextFrontEnd("multilingual", tmp_path, tmp_path / "models")
    assert front.model_text("שלום", "he") == "[he]שלום"
    assert front.take_notices()[0].code == "text.step_not_installed"


# --- the Multilingual model's download brings the segmenter -----------------------------------------------------


def multilingual_hub():
    files = {
        "tokenizer.json": b"{}",
        "Cangjie5_TC.json": json.dumps(["你\tonf"]).encode(),
        "onnx/language_model_q4.onnx": b"graph",
        "onnx/language_model_q4.onnx_data": b"weights" * 10,
    }
    return FakeHub(files)


def test_the_multilingual_download_brings_the_table_and_the_segmenter(tmp_path, monkeypatch):
    from core.engine.model.hub_download import HUB_MODELS
    from core.engine.reading.language_files import ModelWithLanguageFiles, model_downloader

    monkeypatch.setenv("PKUSEG_HOME", str(tmp_path / "none"))
    data = zipped(MODEL)
    monkeypatch.setattr(
        language_files,
        "PKUSEG",
        UrlFile("https://x.invalid/s.zip", hashlib.sha256(data).hexdigest(), "pkuseg/spacy_ontonotes"),
    )
    model = next(m for m in HUB_MODELS if m.repo == MULTILINGUAL[0])
    download = run(model_downloader(model, tmp_path, hub=multilingual_hub(), opener=opener_for(data)))
    assert isinstance(download, ModelWithLanguageFiles) and download.error is None and download.language_error is None
    assert find_cangjie(download.target, tmp_path) == download.target / "Cangjie5_TC.json"
    assert find_pkuseg(tmp_path) == language_data(tmp_path) / "pkuseg" / "spacy_ontonotes"
    assert download.progress() == download.total_bytes
    assert type(model_downloader(HUB_MODELS[0], tmp_path)).__name__ == "Downloader"  # Turbo: the model only


def test_a_segmenter_that_cannot_be_fetched_leaves_the_model_installed(tmp_path, monkeypatch):
    from core.engine.model.hub_download import HUB_MODELS
    from core.engine.reading.language_files import model_downloader

    monkeypatch.setenv("PKUSEG_HOME", str(tmp_path / "none"))

    def offline(url, timeout):
        raise OSError(-2, "Name or service not known")

    model = next(m for m in HUB_MODELS if m.repo == MULTILINGUAL[0])
    download = run(model_downloader(model, tmp_path, hub=multilingual_hub(), opener=offline))
    assert download.error is None and "No internet connection" in download.language_error
    assert (download.target / "tokenizer.json").is_file() and find_pkuseg(tmp_path) is None
