"""Security hygiene, proven: only ONNX/JSON/audio files are read from bundles and voice folders (no pickle, no code),
downloads come from pinned commits and are checked against the hub's sizes and hashes, and nothing touches the network
unless the user starts a download.

File reads are watched twice: a Python audit hook sees every ``open`` made from Python, and, where ``strace`` can run,
a traced subprocess sees every ``open``/``connect`` syscall, including those made from C/C++/Rust (onnxruntime,
tokenizers, libsndfile, Qt) that no audit hook sees.
"""

from __future__ import annotations

import ast
import codecs
import contextlib
import hashlib
import json
import os
import pickle
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from app.history import History
from app.model_download import COMMIT, HUB_MODELS, Downloader, HubModel, file_digests
from app.voice_library import AUDIO_SUFFIXES, VoiceLibrary
from core.conditioning_cache import ConditioningCache
from core.options import RuntimeOptions, SynthesisOptions
from core.pipeline import Pipeline
from core.voice import load_voice

ROOT = Path(__file__).resolve().parent.parent
DECOYS = ("evil.pkl", "hook.py", "model.bin", "x.npy")
"""Placed in every watched folder; none of them may ever be opened."""
ALLOWED = {
    "bundle": {".onnx", ".onnx_data", ".json", ".wav"},  # graphs, their weights, tokenizer.json, default_voice.wav
    "voices": set(AUDIO_SUFFIXES),  # a folder the user picked a reference recording from
    "library": set(AUDIO_SUFFIXES) | {".json"},  # the app's voice library: copies of recordings and voices.json
    "history": {".flac", ".json"},
    "cache": {".npz"},  # the conditioning cache (np.load with allow_pickle=False)
}
READ_ONLY = ("bundle", "voices")
"""Folders the app must never write to."""
FAST = RuntimeOptions(provider="cpu", threads=1)


# --- watching Python-level events ------------------------------------------------------------------------------------
_AUDIT: list | None = None
"""Audit hooks cannot be removed: the hook records only while a test holds this list (see :func:`audited`)."""
_AUDIT_EVENTS = {
    "open", "socket.connect", "socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
    "socket.gethostbyaddr", "socket.sendto", "socket.sendmsg",
}  # fmt: skip


def _audit_hook(event: str, args: tuple) -> None:
    log = _AUDIT
    if log is not None and event in _AUDIT_EVENTS:
        log.append((event, args))


sys.addaudithook(_audit_hook)


@contextlib.contextmanager
def audited():
    global _AUDIT
    events: list = []
    _AUDIT = events
    try:
        yield events
    finally:
        _AUDIT = None


def audit_opens(events: list) -> list[tuple[Path, bool]]:
    """``(path, for_writing)`` of every ``open`` event that names a path (``os.fdopen`` names a descriptor)."""
    out = []
    for event, args in events:
        if event != "open" or not isinstance(args[0], str | bytes | os.PathLike):
            continue
        path, mode, flags = args[0], args[1], args[2]
        if isinstance(mode, str):
            writing = any(c in mode for c in "wax+")
        else:
            writing = bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        out.append((Path(os.fsdecode(path)), writing))
    return out


def violations(opened: list[tuple[Path, bool]], folders: dict[str, Path]) -> list[str]:
    problems = []
    roots = {kind: Path(folder).resolve() for kind, folder in folders.items()}
    for path, writing in opened:
        full = Path(os.path.abspath(path)).resolve()
        for kind, root in roots.items():
            if not full.is_relative_to(root):
                continue
            if full.name in DECOYS:
                problems.append(f"{kind}: opened the decoy {full}")
            elif full.suffix.lower() not in ALLOWED[kind]:
                problems.append(f"{kind}: opened {full} (not one of {sorted(ALLOWED[kind])})")
            elif writing and kind in READ_ONLY:
                problems.append(f"{kind}: opened {full} for writing")
    return sorted(set(problems))


class Evil:
    """Unpickling this creates ``marker``: proof that a pickle was loaded."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return os.makedirs, (self.marker,)


def plant_decoys(folder: Path, marker: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "evil.pkl").write_bytes(pickle.dumps(Evil(marker)))
    (folder / "hook.py").write_text(f"import os\nos.makedirs({str(marker)!r})\n")
    (folder / "model.bin").write_bytes(os.urandom(256))
    with (folder / "x.npy").open("wb") as fh:
        np.save(fh, np.array([Evil(marker)], dtype=object), allow_pickle=True)


@pytest.fixture
def watched(tmp_path, bundles, voice_wav) -> SimpleNamespace:
    """A copy of the stand-in bundle, a voice folder, a library, a history and a cache, each holding the decoys."""
    marker = tmp_path / "PWNED"
    bundle = shutil.copytree(bundles["original"], tmp_path / "bundle")
    voices = tmp_path / "voices"
    voices.mkdir()
    shutil.copyfile(voice_wav, voices / "reference.wav")
    folders = {"bundle": bundle, "voices": voices}
    for kind in ("library", "history", "cache"):
        folders[kind] = tmp_path / kind
    for folder in [*folders.values(), bundle / "onnx"]:
        plant_decoys(folder, marker)
    return SimpleNamespace(folders=folders, marker=marker, voice=voices / "reference.wav", root=tmp_path)


def exercise(folders: dict[str, Path], voice: Path) -> dict:
    """Everything that reads bundles, voice folders and the app's own folders: load, speak (a reference voice and the
    bundle's default voice), the conditioning cache from disk, the voice library and the history."""
    runtime = RuntimeOptions(provider="cpu", threads=1, cache_dir=folders["cache"])
    options = SynthesisOptions(seed=1, max_new_tokens=40)
    pipeline = Pipeline.from_bundle(folders["bundle"], runtime)
    spoken = pipeline.synthesize("Hello there.", voice=voice, options=options)
    pipeline.synthesize("Hello again.", options=options)
    again = Pipeline.from_bundle(folders["bundle"], runtime)  # a new pipeline reads the conditioning from disk
    again.synthesize("Hello there.", voice=voice, options=options)
    library = VoiceLibrary(folders["library"])
    library.add("Narrator", voice)
    reloaded = [load_voice(v.path) for v in VoiceLibrary(folders["library"]).voices()]
    history = History(folders["history"])
    history.add(spoken.audio, spoken.sample_rate, text="Hello there.", voice="Narrator", variant="original", seed=1)
    replayed, _rate = History(folders["history"]).audio(History(folders["history"]).entries[0])
    return {"disk_hits": again.encoder_runs == 0, "library": len(reloaded), "replayed": int(replayed.size)}


# --- 1. files read ---------------------------------------------------------------------------------------------------
def test_only_onnx_json_and_audio_files_are_opened_from_python(watched):
    with audited() as events:
        result = exercise(watched.folders, watched.voice)
    opened = audit_opens(events)
    assert violations(opened, watched.folders) == []
    assert not watched.marker.exists()
    assert result["disk_hits"] and result["library"] == 1 and result["replayed"] > 0
    # The hook is live where Python opens files (the rest is opened from C++/Rust: see the strace test).
    names = {p.name for p, _w in opened}
    assert {"embed_tokens.onnx", "voices.json", "history.json"} <= names
    assert any(p.suffix == ".npz" and not w and p.parent == watched.folders["cache"] for p, w in opened)


def test_the_audit_hook_reports_a_decoy_that_is_opened(watched):
    with audited() as events:
        Path(watched.folders["voices"] / "evil.pkl").read_bytes()
        with open(watched.folders["bundle"] / "tokenizer.json", "a"):
            pass
        with open(watched.folders["library"] / "notes.txt", "w"):
            pass
    found = violations(audit_opens(events), watched.folders)
    assert any("voices: opened the decoy" in p and "evil.pkl" in p for p in found)
    assert any("bundle: opened" in p and "for writing" in p for p in found)
    assert any("notes.txt (not one of" in p for p in found)


def test_a_tampered_library_index_cannot_reach_outside_its_folder(tmp_path):
    library = tmp_path / "library"
    plant_decoys(library, tmp_path / "PWNED")
    victim = tmp_path / "victim.wav"  # a recording outside the library
    victim.write_bytes(b"RIFF")
    index = {"Outside": {"file": str(victim)}, "Up": {"file": "../victim.wav"}, "Pickle": {"file": "evil.pkl"}}
    (library / "voices.json").write_text(json.dumps(index))
    voices = VoiceLibrary(library)
    listed = [v.name for v in voices.voices()]
    for name in index:
        voices.remove(name)
    assert victim.exists() and (library / "evil.pkl").exists()
    assert listed == []


STRACE = shutil.which("strace")
_OPEN = re.compile(r'\b(?:open|openat|openat2|creat)\((?:(?:AT_FDCWD|-?\d+)(?:<([^>]*)>)?, )?"((?:[^"\\]|\\.)*)"(.*)')


def strace_usable() -> bool:
    if not STRACE:
        return False
    try:
        probe = subprocess.run([STRACE, "-f", "-qq", "-o", os.devnull, "true"], capture_output=True, timeout=30)
        return probe.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def traced(command: list[str], trace: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``command`` under strace: every open and every connect/send, in every thread and child process."""
    calls = "trace=open,openat,openat2,creat,connect,sendto,sendmsg"
    strace = [STRACE, "-f", "-qq", "-y", "-e", calls, "-e", "signal=none", "-o", str(trace)]
    output = {"capture_output": True, "text": True, "errors": "replace"}
    return subprocess.run([*strace, *command], cwd=ROOT, env=env, timeout=300, **output)


def syscall_opens(trace: Path) -> list[tuple[Path, bool]]:
    out = []
    for line in trace.read_text(errors="replace").splitlines():
        m = _OPEN.search(line)
        if not m or "O_DIRECTORY" in m.group(3).split(")")[0]:
            continue
        name = os.fsdecode(codecs.escape_decode(m.group(2).encode())[0])  # strace writes odd bytes as octal escapes
        path = Path(name) if os.path.isabs(name) else Path(m.group(1) or ROOT) / name
        out.append((path, bool(re.search(r"O_WRONLY|O_RDWR|O_CREAT", m.group(3).split(")")[0]))))
    return out


def network_syscalls(trace: Path) -> list[str]:
    """connect/sendto/sendmsg towards an IP address, or to the name-service cache (a DNS lookup)."""
    return [line for line in trace.read_text(errors="replace").splitlines()
            if re.search(r"\b(connect|sendto|sendmsg)\(", line)
            and ("sa_family=AF_INET" in line or "nscd/socket" in line)]  # fmt: skip


def _child_main(config: str) -> None:
    """Run in a traced subprocess: the file scenario, then the real app (window, worker, playback) on the bundle."""
    from app.self_test import run_self_test

    cfg = json.loads(Path(config).read_text())
    folders = {k: Path(v) for k, v in cfg["folders"].items()}
    print(json.dumps(exercise(folders, Path(cfg["voice"]))), flush=True)
    sys.exit(run_self_test(Path(cfg["out"]), folders["bundle"], timeout=120))


def child_env(home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ORT_"))}
    env.update({"HOME": str(home), "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT), **extra})
    for var in ("XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        env[var] = str(home / var.lower())
    return env


@pytest.mark.slow
@pytest.mark.skipif(not strace_usable(), reason="needs strace (ptrace permitted) to see opens made outside Python")
def test_every_file_opened_by_core_and_app_is_onnx_json_or_audio_and_nothing_connects(watched):
    """The same scenario plus the real app's self-test, traced at the syscall level (onnxruntime, tokenizers,
    libsndfile and Qt included). ONNX Runtime's own telemetry is switched off here: it has its own test below."""
    config = watched.root / "child.json"
    out = watched.root / "selftest"
    config.write_text(json.dumps({"folders": {k: str(v) for k, v in watched.folders.items()},
                                  "voice": str(watched.voice), "out": str(out)}))  # fmt: skip
    trace = watched.root / "trace.txt"
    code = "import sys; from tests.test_security import _child_main; _child_main(sys.argv[1])"
    env = child_env(watched.root / "home", ORT_DISABLE_TELEMETRY="1")
    proc = traced([sys.executable, "-c", code, str(config)], trace, env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert json.loads(proc.stdout.splitlines()[0])["disk_hits"] is True
    opened = syscall_opens(trace)
    assert violations(opened, watched.folders) == []
    assert not watched.marker.exists()
    assert network_syscalls(trace) == []
    # The trace saw what only native code opens: the tokenizer, the recordings, the weights.
    seen = {p.resolve() for p, _w in opened}
    bundle, voices = watched.folders["bundle"], watched.folders["voices"]
    for expected in (bundle / "tokenizer.json", bundle / "default_voice.wav", voices / "reference.wav",
                     bundle / "onnx" / "language_model.onnx_data"):  # fmt: skip
        assert expected.resolve() in seen, expected
    assert (out / "report.json").is_file()


@pytest.mark.skipif(not strace_usable(), reason="needs strace (ptrace permitted) to see opens made outside Python")
def test_the_syscall_trace_reports_a_decoy_opened_by_native_code(watched):
    trace = watched.root / "cat.txt"
    decoy = watched.folders["bundle"] / "onnx" / "model.bin"
    proc = traced(["cat", str(decoy)], trace)
    assert proc.returncode == 0
    assert any("bundle: opened the decoy" in p for p in violations(syscall_opens(trace), watched.folders))


# --- 2. no pickle, no code -------------------------------------------------------------------------------------------
FORBIDDEN_MODULES = {"pickle", "_pickle", "cPickle", "cloudpickle", "dill", "joblib", "marshal", "shelve", "torch",
                     "importlib", "imp", "runpy", "code", "pydoc"}  # fmt: skip
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
    ["import pickle", "from pickle import loads", "import marshal", "import shelve", "import dill", "import joblib",
     "import torch\ntorch.load('m.pt')", "model.load_state_dict(torch.load(p))", "import importlib",
     "importlib.import_module(name)", "from importlib import util", "from importlib.util import find_spec",
     "import runpy", "eval(text)", "exec(code)", "compile(src, 'f', 'exec')", "__import__(name)",
     "import builtins\nbuiltins.exec(s)", "from builtins import eval", "np.load(path)",
     "np.load(path, allow_pickle=True)",
     "numpy.load(f, allow_pickle=flag)", "data = load(f, allow_pickle=True)", "yaml.load(text)",
     "yaml.unsafe_load(text)", "yaml.full_load(text)", "from yaml import load", "pd.read_pickle(p)",
     "options.register_custom_ops_library(path)"],
)  # fmt: skip
def test_the_scanner_finds_each_forbidden_construct(snippet):
    assert scan_source(snippet), snippet


@pytest.mark.parametrize(
    "snippet",
    ["dialog.exec()", "app.exec()", "re.compile('x')", "np.load(fh, allow_pickle=False)", "yaml.safe_load(text)",
     "json.loads(s)", "sf.read(path)", "'no pickle, no eval(), no exec()'", "Tokenizer.from_file(path)",
     "code.strip()"],
)  # fmt: skip
def test_the_scanner_allows_ordinary_code(snippet):
    assert scan_source(snippet) == []


def test_core_and_app_never_load_pickles_or_run_code_from_data():
    files = sorted(p for package in ("core", "app") for p in (ROOT / package).rglob("*.py"))
    assert ROOT / "core" / "conditioning_cache.py" in files and len(files) > 30
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
    path = tmp_path / "cache" / f"{pipeline.parts.voices.key(voice)}.npz"
    path.parent.mkdir()
    path.write_bytes(pickle.dumps(Evil(marker)))
    result = pipeline.synthesize("Hello.", voice=voice, options=SynthesisOptions(seed=1, max_new_tokens=30))
    assert result.audio.size > 0 and pipeline.encoder_runs == 1 and not marker.exists()
    with np.load(path, allow_pickle=False) as data:  # replaced by real conditioning
        assert set(data.files) == {"audio_features", "audio_tokens", "speaker_embeddings", "speaker_features"}


# --- 3. downloads ----------------------------------------------------------------------------------------------------
def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


class FakeHub:
    """Stands in for ``huggingface_hub``: answers ``HfApi().model_info(..., files_metadata=True)`` with the real
    ``RepoSibling``/``BlobLfsInfo`` types and serves files from memory, recording every call."""

    def __init__(self, files: dict[str, bytes], sha: str | None = None, deliver: dict[str, bytes] | None = None,
                 report: dict[str, dict] | None = None):  # fmt: skip
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
        f"onnx/{g}.onnx{x}" for g in ("speech_encoder", "embed_tokens", "language_model", "conditional_decoder")
        for x in ("", "_data")}  # fmt: skip
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


# --- 4. no network unless the user starts a download -----------------------------------------------------------------
def block_network(monkeypatch) -> list:
    attempts: list = []

    def refuse(name):
        def blocked(*args, **kwargs):
            attempts.append((name, args, kwargs))
            raise OSError(f"test: network access attempted ({name})")

        return blocked

    for name in ("connect", "connect_ex", "sendto", "sendmsg"):
        monkeypatch.setattr(socket.socket, name, refuse(f"socket.{name}"))
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
        monkeypatch.setattr(socket, name, refuse(name))
    return attempts


def socket_events(events: list) -> list:
    return [e for e in events if e[0] != "open"]


def test_synthesis_touches_no_network(monkeypatch, bundles, voice_wav):
    attempts = block_network(monkeypatch)
    with audited() as events:
        pipeline = Pipeline.from_bundle(bundles["original"], FAST)
        result = pipeline.synthesize("Hello there.", voice=voice_wav, options=SynthesisOptions(max_new_tokens=40))
    assert result.audio.size > 0
    assert attempts == [] and socket_events(events) == []


def test_the_blocker_and_the_hook_catch_connection_attempts(monkeypatch):
    attempts = block_network(monkeypatch)
    with pytest.raises(OSError, match="network access attempted"):
        socket.create_connection(("huggingface.co", 443), timeout=1)
    with socket.socket() as s, pytest.raises(OSError, match="network access attempted"):
        s.connect(("127.0.0.1", 9))
    assert [a[0] for a in attempts] == ["create_connection", "socket.connect"]
    monkeypatch.undo()
    with audited() as events, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("127.0.0.1", 9))  # UDP: nothing is sent, but the audit hook sees the attempt
    assert [e[0] for e in socket_events(events)] == ["socket.connect"]


def test_the_app_loads_and_speaks_without_the_network(qtbot, monkeypatch, tmp_path, bundles):
    from PySide6.QtCore import QSettings, Qt

    from app.audio.playback import Player
    from app.audio.virtual_device import VirtualSoundDevice
    from app.main_window import MainWindow
    from app.paths import AppPaths
    from app.settings import Settings

    attempts = block_network(monkeypatch)
    with audited() as events:
        settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        window = MainWindow(settings, AppPaths.under(tmp_path / "home"), player=Player(VirtualSoundDevice(speed=40)))
        qtbot.addWidget(window)
        window.show()
        try:
            with qtbot.waitSignal(window.bridge.model_loaded, timeout=30000):
                window.load_model(bundles["original"])
            window.text.set_text("Hello.")
            with qtbot.waitSignal(window.playback_finished, timeout=60000):
                qtbot.mouseClick(window.speak_button, Qt.MouseButton.LeftButton)
            assert window.last_audio is not None and window.last_audio.size > 0
        finally:
            window.close()
    assert attempts == [] and socket_events(events) == []


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


def test_importing_the_app_and_core_loads_no_network_client(tmp_path):
    clients = ["huggingface_hub", "requests", "httpx", "urllib3", "aiohttp", "hf_xet", "httpcore", "http.client",
               "urllib.request"]  # fmt: skip
    code = (
        "import sys, json\n"
        "import app.main_window, app.application, app.self_test, app.model_download, app.widgets.model_dialog\n"
        "import core.pipeline, core.cli, core.inference_worker\n"
        f"print(json.dumps(sorted(m for m in {clients!r} if m in sys.modules)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=child_env(tmp_path))  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_onnxruntime_telemetry_stays_off(tmp_path, bundles):
    home = tmp_path / "home"
    code = (
        "import sys\nfrom core.pipeline import Pipeline\nfrom core.options import RuntimeOptions\n"
        "Pipeline.from_bundle(sys.argv[1], RuntimeOptions(provider='cpu')).synthesize('Hi.')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code, str(bundles["original"])], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=child_env(home))  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    store = [str(p.relative_to(home)) for p in home.rglob("*") if ".onnxruntime" in p.parts]
    assert store == []
