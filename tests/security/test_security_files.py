"""Security: only ONNX/JSON/audio files are read from bundles and voice folders, never a decoy, and the app's own
folders stay confined.

File reads are watched twice: a Python audit hook sees every ``open`` made from Python, and, where ``strace`` can run,
a traced subprocess sees every ``open``/``connect`` syscall, including those made from C/C++/Rust (onnxruntime,
tokenizers, libsndfile, Qt) that no audit hook sees.
"""

from __future__ import annotations

import codecs
import functools
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from app.history import History
from core.engine.audio.voice_reference import load_voice
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.voices.library import AUDIO_SUFFIXES, VoiceLibrary
from tests.security_support import ROOT, Evil, audited, child_env

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
    # A model folder marked read-only, as a shared one is: the app writes nothing there (it makes its int8 decoder
    # in the user cache instead). A writable model folder gets that file beside the model (test_decoder_levers.py).
    for folder in (bundle / "onnx", bundle):
        folder.chmod(0o555)
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


@functools.cache  # asked at import (the skip marks) and by every traced run: probed once per flag set
def _strace_runs(*flags: str) -> bool:
    try:
        probe = subprocess.run([STRACE, "-f", "-qq", *flags, "-o", os.devnull, "true"], capture_output=True, timeout=30)
        return probe.returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def strace_usable() -> bool:
    return bool(STRACE) and _strace_runs()


def traced(command: list[str], trace: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run ``command`` under strace: every open and every connect/send, in every thread and child process. Where
    strace can filter in the kernel (``--seccomp-bpf``, strace 5.3+), the calls it does not trace run without
    stopping: the traced self-test takes a third of the time (the same files seen)."""
    calls = "trace=open,openat,openat2,creat,connect,sendto,sendmsg"
    fast = ["--seccomp-bpf"] if _strace_runs("--seccomp-bpf") else []
    strace = [STRACE, "-f", *fast, "-qq", "-y", "-e", calls, "-e", "signal=none", "-o", str(trace)]
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
    """connect/sendto/sendmsg towards an IP address other than loopback (the self-test calls its own local speech
    API on 127.0.0.1), or to the name-service cache (a DNS lookup)."""
    return [
        line
        for line in trace.read_text(errors="replace").splitlines()
        if re.search(r"\b(connect|sendto|sendmsg)\(", line)
        and ("sa_family=AF_INET" in line or "nscd/socket" in line)
        and not re.search(r'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"', line)
    ]


def _child_main(config: str) -> None:
    """Run in a traced subprocess: the file scenario, then the real app (window, worker, playback) on the bundle."""
    from app.self_test import run_self_test

    cfg = json.loads(Path(config).read_text())
    folders = {k: Path(v) for k, v in cfg["folders"].items()}
    print(json.dumps(exercise(folders, Path(cfg["voice"]))), flush=True)
    sys.exit(run_self_test(Path(cfg["out"]), folders["bundle"], timeout=120))


@pytest.mark.slow
@pytest.mark.qt
@pytest.mark.skipif(not strace_usable(), reason="needs strace (ptrace permitted) to see opens made outside Python")
def test_every_file_opened_by_core_and_app_is_onnx_json_or_audio_and_nothing_connects(watched):
    """The same scenario plus the real app's self-test, traced at the syscall level (onnxruntime, tokenizers,
    libsndfile and Qt included). ONNX Runtime's own telemetry is switched off here: it has its own test below."""
    config = watched.root / "child.json"
    out = watched.root / "selftest"
    config.write_text(
        json.dumps(
            {"folders": {k: str(v) for k, v in watched.folders.items()}, "voice": str(watched.voice), "out": str(out)}
        )
    )
    trace = watched.root / "trace.txt"
    code = "import sys; from tests.security.test_security_files import _child_main; _child_main(sys.argv[1])"
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
    for expected in (
        bundle / "tokenizer.json",
        bundle / "default_voice.wav",
        voices / "reference.wav",
        bundle / "onnx" / "language_model.onnx_data",
    ):
        assert expected.resolve() in seen, expected
    assert (out / "report.json").is_file()


@pytest.mark.skipif(not strace_usable(), reason="needs strace (ptrace permitted) to see opens made outside Python")
def test_the_syscall_trace_reports_a_decoy_opened_by_native_code(watched):
    trace = watched.root / "cat.txt"
    decoy = watched.folders["bundle"] / "onnx" / "model.bin"
    proc = traced(["cat", str(decoy)], trace)
    assert proc.returncode == 0
    assert any("bundle: opened the decoy" in p for p in violations(syscall_opens(trace), watched.folders))
