"""Security: no pickle and no code from data, checked in the source (a static scan that is shown to catch each
forbidden construct) and at run time (a planted pickle in the conditioning cache is discarded, never executed)."""

from __future__ import annotations

import ast
import pickle

import numpy as np
import pytest

from core.engine.audio.voice_reference import load_voice
from core.engine.caches.conditioning_cache import ConditioningCache
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from tests.security_support import ROOT, Evil

# --- 2. no pickle, no code -------------------------------------------------------------------------------------------
FORBIDDEN_MODULES = {
    "pickle",
    "_pickle",
    "cPickle",
    "cloudpickle",
    "dill",
    "joblib",
    "marshal",
    "shelve",
    "torch",
    "importlib",
    "imp",
    "runpy",
    "code",
    "pydoc",
}
FORBIDDEN_OWNERS = FORBIDDEN_MODULES - {"code", "imp", "pydoc"}
"""Modules whose every function is suspect (``code``, ``imp`` and ``pydoc`` are also common variable names)."""
FORBIDDEN_BUILTINS = {"eval", "exec", "execfile", "compile", "__import__"}
FORBIDDEN_ATTRIBUTES = {"read_pickle", "register_custom_ops_library", "unsafe_load", "full_load", "load_all"}


def _allow_pickle(call: ast.Call):
    for kw in call.keywords:
        if kw.arg == "allow_pickle":
            return kw.value.value if isinstance(kw.value, ast.Constant) else "non-constant"
    return None


def scan_source(source: str, name: str = "<source>") -> list[str]:
    """What in this source could load a pickle or run code from data: imports, builtins and calls."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            found += [f"{where} import {a.name}" for a in node.names if a.name.split(".")[0] in FORBIDDEN_MODULES]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.split(".")[0] in FORBIDDEN_MODULES:
                found.append(f"{where} from {module} import")
            elif module in ("builtins", "yaml"):
                names = FORBIDDEN_BUILTINS | FORBIDDEN_ATTRIBUTES | {"load"}
                found += [f"{where} from {module} import {a.name}" for a in node.names if a.name in names]
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in FORBIDDEN_BUILTINS:
                found.append(f"{where} {func.id}()")
            if isinstance(func, ast.Attribute):
                owner = func.value.id if isinstance(func.value, ast.Name) else ""
                if owner in FORBIDDEN_OWNERS or func.attr in FORBIDDEN_ATTRIBUTES:
                    found.append(f"{where} {owner}.{func.attr}()")
                elif owner == "builtins" and func.attr in FORBIDDEN_BUILTINS:
                    found.append(f"{where} builtins.{func.attr}()")
                elif owner in ("yaml", "torch") and func.attr == "load":
                    found.append(f"{where} {owner}.load()")
                elif owner in ("np", "numpy") and func.attr == "load" and _allow_pickle(node) is not False:
                    found.append(f"{where} {owner}.load() without allow_pickle=False")
            if _allow_pickle(node) not in (None, False):
                found.append(f"{where} allow_pickle={_allow_pickle(node)}")
    return found


@pytest.mark.parametrize(
    "snippet",
    [
        "import pickle",
        "from pickle import loads",
        "import marshal",
        "import shelve",
        "import dill",
        "import joblib",
        "import torch\ntorch.load('m.pt')",
        "model.load_state_dict(torch.load(p))",
        "import importlib",
        "importlib.import_module(name)",
        "from importlib import util",
        "from importlib.util import find_spec",
        "import runpy",
        "eval(text)",
        "exec(code)",
        "compile(src, 'f', 'exec')",
        "__import__(name)",
        "import builtins\nbuiltins.exec(s)",
        "from builtins import eval",
        "np.load(path)",
        "np.load(path, allow_pickle=True)",
        "numpy.load(f, allow_pickle=flag)",
        "data = load(f, allow_pickle=True)",
        "yaml.load(text)",
        "yaml.unsafe_load(text)",
        "yaml.full_load(text)",
        "from yaml import load",
        "pd.read_pickle(p)",
        "options.register_custom_ops_library(path)",
    ],
)
def test_the_scanner_finds_each_forbidden_construct(snippet):
    assert scan_source(snippet), snippet


@pytest.mark.parametrize(
    "snippet",
    [
        "dialog.exec()",
        "app.exec()",
        "re.compile('x')",
        "np.load(fh, allow_pickle=False)",
        "yaml.safe_load(text)",
        "json.loads(s)",
        "sf.read(path)",
        "'no pickle, no eval(), no exec()'",
        "Tokenizer.from_file(path)",
        "code.strip()",
    ],
)
def test_the_scanner_allows_ordinary_code(snippet):
    assert scan_source(snippet) == []


def test_core_and_app_never_load_pickles_or_run_code_from_data():
    files = sorted(p for package in ("core", "app") for p in (ROOT / package).rglob("*.py"))
    assert ROOT / "core" / "engine" / "caches" / "conditioning_cache.py" in files and len(files) > 30
    found = [hit for p in files for hit in scan_source(p.read_text(encoding="utf-8"), str(p.relative_to(ROOT)))]
    assert found == []


def test_the_conditioning_cache_discards_a_pickle_instead_of_loading_it(tmp_path):
    marker = tmp_path / "PWNED"
    pickle.loads(pickle.dumps(Evil(marker)))  # the payload is live: loading it runs code
    assert marker.is_dir()
    marker.rmdir()
    cache = ConditioningCache(tmp_path / "cache", "identity", hidden=8)
    key = cache.key("voice")
    path = tmp_path / "cache" / f"{key}.npz"
    path.parent.mkdir()
    for payload in ("pickle", "object-array"):
        if payload == "pickle":
            path.write_bytes(pickle.dumps(Evil(marker)))
        else:
            with path.open("wb") as fh:  # a real .npz whose array needs unpickling
                evil = np.array([Evil(marker)], dtype=object)
                np.savez(fh, audio_features=evil, audio_tokens=evil, speaker_embeddings=evil, speaker_features=evil)
        assert cache.get(key) == (None, "miss"), payload
        assert not path.exists() and not marker.exists(), payload


def test_a_planted_pickle_in_the_cache_is_rebuilt_never_executed(tmp_path, bundles, voice_wav):
    marker = tmp_path / "PWNED"
    runtime = RuntimeOptions(provider="cpu", threads=1, cache_dir=tmp_path / "cache")
    pipeline = Pipeline.from_bundle(bundles["original"], runtime)
    voice = load_voice(voice_wav)
    path = tmp_path / "cache" / f"{pipeline._parts.voices.key(voice)}.npz"
    path.parent.mkdir()
    path.write_bytes(pickle.dumps(Evil(marker)))
    result = pipeline.synthesize("Hello.", voice=voice, options=SynthesisOptions(seed=1, max_new_tokens=30))
    assert result.audio.size > 0 and pipeline.encoder_runs == 1 and not marker.exists()
    with np.load(path, allow_pickle=False) as data:  # replaced by real conditioning
        assert set(data.files) == {"audio_features", "audio_tokens", "speaker_embeddings", "speaker_features"}
