"""Shared fixtures: tiny stand-in bundles (built once per run), reference recordings, and a thread-leak check."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time

import numpy as np
import pytest
import soundfile as sf

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Ray 2.60 ends a process whose GCS client has not reached its GCS for 60 s; once in eight full runs a client left
# behind by ray.shutdown() in a test worker did so a minute after the test, taking the worker's other tests with it.
# Nothing here waits on a GCS that went away (a render notices a lost raylet or actor, which this does not touch).
os.environ.setdefault("RAY_gcs_rpc_server_reconnect_timeout_s", "3600")
# Two test workers share the cores: sessions that spin while they run (the models taking turns on the CPU) would take
# them from each other (tests/engine: 1.3x as long). The plan still takes turns; tests of spinning unset this.
os.environ.setdefault("CHATTERBOX_NO_SPINNING", "1")
# Caches, settings and data of the code under test go to a throw-away home, never the developer's.
_HOME = tempfile.mkdtemp(prefix="chatterbox-desk-tests-")
for _var in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
    os.environ[_var] = os.path.join(_HOME, _var.lower())

from core.standin import make_standin, synthetic_voice  # noqa: E402 - after the environment is set

VARIANTS = ("turbo", "original", "multilingual")


QT_FIXTURES = {"qtbot", "qapp"}


def pytest_collection_modifyitems(items) -> None:
    """Every test that uses a QApplication is a ``qt`` test (tests that start the app in a subprocess say so)."""
    for item in items:
        if QT_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.qt)


RAY_MODULES = {
    "tests/app/test_render_on.py",
    "tests/app/studio/test_studio_cluster.py",
    "tests/narration/test_cluster_cli.py",
    "tests/narration/test_cluster_render.py",
}
"""The modules whose tests start a local Ray instance: one worker runs them all, one after the other (two Ray
instances at once made a cluster test 33 s instead of 3-4 s)."""


def pytest_xdist_make_scheduler(config, log):
    """The suite runs on every core, up to four (pytest-xdist; ``addopts``). A module's tests run on one worker, so
    a fixture a module shares (a render of 300 sentences, a Ray instance) is made once, not once per worker; the
    modules that start Ray share one worker. (pytest-xdist's own ``loadgroup`` marks do nothing with pytest 9.2,
    which no longer takes a test's id from the attribute xdist rewrites.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "ray" if module in RAY_MODULES else module

    return ModuleScheduling(config, log)


@pytest.fixture(scope="session")
def bundles(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("bundles")
    return {v: make_standin(root / v, v, size="tiny", seed=7) for v in VARIANTS}


@pytest.fixture(scope="session")
def broken(tmp_path_factory, bundles):
    """Damaged copies of the original stand-in, one per way a download or a user can break a bundle."""
    root = tmp_path_factory.mktemp("broken")

    def copy(name):
        return shutil.copytree(bundles["original"], root / name)

    cases = {}
    b = copy("missing_graph")
    (b / "onnx" / "conditional_decoder.onnx").unlink()
    cases["missing_graph"] = (b, "conditional_decoder.onnx is missing")
    b = copy("missing_data")
    (b / "onnx" / "language_model.onnx_data").unlink()
    cases["missing_data"] = (b, "language_model.onnx_data is missing")
    b = copy("truncated_data")
    data = b / "onnx" / "language_model.onnx_data"
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])
    cases["truncated_data"] = (b, "language_model.onnx")
    b = copy("garbled_graph")
    (b / "onnx" / "embed_tokens.onnx").write_bytes(b"\x00garbage" * 50)
    cases["garbled_graph"] = (b, "embed_tokens.onnx")
    b = copy("no_tokenizer")
    (b / "tokenizer.json").unlink()
    cases["no_tokenizer"] = (b, "tokenizer.json is missing")
    b = copy("garbled_tokenizer")
    (b / "tokenizer.json").write_text('{"version": "1.0", "model": 42', encoding="utf-8")
    cases["garbled_tokenizer"] = (b, "tokenizer")
    b = copy("wrong_variant")
    turbo = make_standin(root / "turbo_src", "turbo")
    for suffix in (".onnx", ".onnx_data"):
        shutil.copy(turbo / "onnx" / f"language_model{suffix}", b / "onnx" / f"language_model{suffix}")
    cases["wrong_variant"] = (b, "different Chatterbox variants")
    cases["not_a_folder"] = (root / "nope", "does not exist")
    return cases


@pytest.fixture(params=VARIANTS)
def variant_bundle(request, bundles):
    return request.param, bundles[request.param]


@pytest.fixture(scope="session")
def voice_wav(tmp_path_factory):
    path = tmp_path_factory.mktemp("voices") / "voice.wav"
    sf.write(path, synthetic_voice(6.0, seed=3, pitch_hz=170), 24000)
    return path


@pytest.fixture(scope="session")
def other_voice_wav(tmp_path_factory):
    path = tmp_path_factory.mktemp("voices2") / "other.wav"
    sf.write(path, 0.6 * synthetic_voice(7.0, seed=11, pitch_hz=110), 24000)
    return path


@pytest.fixture
def window(qtbot, tmp_path, bundles):
    """A main window with the original stand-in loaded, closed (and its worker stopped) afterwards."""
    from tests.app_support import make_window

    w = make_window(qtbot, tmp_path, bundles["original"])
    yield w
    w.close()
    assert not w.bridge.worker.alive


@pytest.fixture(autouse=True)
def stand_in_aligner(monkeypatch):
    """Every test's shared aligner (:func:`core.engine.shared_aligner`) is a stand-in: renders align their takes and
    the Speak tab its sentences without starting a child process (tests of the aligner start a real one)."""
    from core.engine.alignment import process
    from tests.aligner_fakes import StandInAligner

    aligner = StandInAligner()
    monkeypatch.setattr(process, "_shared", aligner)
    return aligner


@pytest.fixture(autouse=True)
def no_leaked_threads():
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        leaked = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not leaked:
            return
        time.sleep(0.02)
    pytest.fail(f"test left threads running: {[t.name for t in leaked]}")


def deny_reading(monkeypatch, path) -> None:
    """Make the voice reference loader see ``path`` as unreadable (permissions), also when the tests run as root."""
    real_open = open

    def guarded(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("core.engine.audio.voice_reference.open", guarded, raising=False)


def tone(seconds: float, rate: int = 24000, channels: int = 1, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    wave = amplitude * np.sin(2 * np.pi * 220 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
    return np.repeat(wave[:, None], channels, axis=1).astype(np.float32)


@pytest.fixture(scope="session")
def renamed(tmp_path_factory) -> dict:
    """Stand-ins written under the other names exports use, and with a float16 KV cache (same weights)."""
    root = tmp_path_factory.mktemp("renamed")
    out = {}
    for variant in ("turbo", "original"):
        for names in ("cond-emb", "positional"):
            out[variant, names] = make_standin(root / f"{variant}-{names}", variant, seed=7, names=names)
        out[variant, "fp16"] = make_standin(root / f"{variant}-fp16", variant, precision="fp16", seed=7)
    return out


@pytest.fixture(scope="session")
def rendered_book(tmp_path_factory, bundles):
    """A three-chapter project (``tests/export_support.BOOK3``), every segment rendered once per run on the tiny
    Original stand-in. Tests never change it: they take :func:`book_copy`."""
    from tests.export_support import rendered_project

    return rendered_project(tmp_path_factory.mktemp("book") / "Book.cbproj", bundles["original"])


@pytest.fixture
def book_copy(rendered_book, tmp_path):
    """A fresh copy of :func:`rendered_book` that a test may render, edit and export."""
    from tests.export_support import copy_project

    return copy_project(rendered_book.folder, tmp_path / "Book.cbproj")
