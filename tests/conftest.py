"""Shared fixtures: tiny stand-in bundles (built once per run), reference recordings, and a thread-leak check."""

from __future__ import annotations

import os
import tempfile
import threading
import time

import numpy as np
import pytest
import soundfile as sf

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Caches, settings and data of the code under test go to a throw-away home, never the developer's.
_HOME = tempfile.mkdtemp(prefix="chatterbox-desk-tests-")
for _var in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
    os.environ[_var] = os.path.join(_HOME, _var.lower())

from core.standin import make_standin, synthetic_voice  # noqa: E402 - after the environment is set

VARIANTS = ("turbo", "original", "multilingual")


@pytest.fixture(scope="session")
def bundles(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("bundles")
    return {v: make_standin(root / v, v, size="tiny", seed=7) for v in VARIANTS}


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


def tone(seconds: float, rate: int = 24000, channels: int = 1, amplitude: float = 0.3) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    wave = amplitude * np.sin(2 * np.pi * 220 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 3 * t))
    return np.repeat(wave[:, None], channels, axis=1).astype(np.float32)
