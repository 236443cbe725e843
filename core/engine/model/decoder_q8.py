"""The int8 speech decoder: ``conditional_decoder`` with its weight matrix multiplications quantized to int8.

onnxruntime's dynamic quantization (``quantize_dynamic``, MatMul nodes with a constant weight only, int8 weights
per tensor, activations quantized per call) turns the decoder's 3,400 weight MatMuls into ``MatMulInteger``: about
a quarter to a third less time per call on a CPU, the output 61 dB (Original) and 67 dB (Turbo) from the float32
one's for the same noise, where two float32 calls differ by 27 dB by themselves (docs/PERFORMANCE-LOG.md, "Decoder
levers"). Convolutions, attention products and the vocoder's arithmetic stay float32; the convolutions are made
2-D in the file (:mod:`core.engine.model.blocked_convolutions`), for onnxruntime's blocked-layout kernel.

Where the file comes from, in order:
1. the bundle's own ``conditional_decoder_quantized.onnx`` (a hub repository that ships one);
2. ``conditional_decoder_q8.onnx`` made earlier beside the model (with a ``.json`` note of the file it was made from);
3. the same file made earlier in the user cache (``decoder-q8/<source identity>/``), for a read-only model folder;
4. made now (about a minute for the Original decoder, once) beside the model, or in the cache when the model
   folder cannot be written. Writes go through a temporary file, so a crash never leaves half a graph.
"""

from __future__ import annotations

import hashlib
import json
import logging
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from core.engine.files.atomic import atomic_path, write_json_atomic
from core.engine.model.bundle import SUFFIXES

log = logging.getLogger(__name__)
FORMAT_VERSION = 3
"""Raised when the quantization recipe changes: files made by an earlier recipe are then made again. 2: the noise
is seeded (:mod:`core.engine.model.seeded_noise`) in the made file, so a start need not parse it to rewrite it.
3: its convolutions are 2-D (:mod:`core.engine.model.blocked_convolutions`), for the same reason."""
MADE_NAME = "conditional_decoder_q8.onnx"
SHIPPED_NAME = f"conditional_decoder{SUFFIXES['q8']}.onnx"


def source_identity(source: Path) -> str:
    """What a made file depends on: the source graph (and its weights file) by size and modification time."""
    parts = [f"v{FORMAT_VERSION}"]
    for path in (source, source.with_name(source.name + "_data")):
        if path.is_file():
            st = path.stat()
            parts.append(f"{path.name}|{st.st_size}|{st.st_mtime_ns}")
    return "|".join(parts)


class DecoderQ8:
    """Finds or makes the int8 decoder for the float32 ``source`` graph; :attr:`path` is where it is (or will be)."""

    def __init__(self, source: Path, cache_dir: Path):
        self.source, self.identity = source, source_identity(source)
        key = hashlib.sha256(self.identity.encode()).hexdigest()[:32]
        self.cached = cache_dir / key / MADE_NAME
        shipped = source.with_name(SHIPPED_NAME)
        beside = source.with_name(MADE_NAME)
        if shipped.is_file():
            self.path, self.ready = shipped, True
        elif self._made_from_source(beside):
            self.path, self.ready = beside, True
        elif self._made_from_source(self.cached):
            self.path, self.ready = self.cached, True
        else:
            self.path, self.ready = (beside if _writable(source.parent) else self.cached), False

    @staticmethod
    def _note(path: Path) -> Path:
        return path.with_suffix(".json")

    def _made_from_source(self, path: Path) -> bool:
        try:
            note = json.loads(self._note(path).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return path.is_file() and isinstance(note, dict) and note.get("source") == self.identity

    def make(self) -> Path:
        """Make the file (when not made yet) and return its path. A model folder that refuses the write falls back
        to the cache."""
        if self.ready:
            return self.path
        try:
            self._make_at(self.path)
        except OSError as exc:
            if self.path == self.cached:
                raise
            log.warning("cannot write the int8 decoder beside the model (%s); making it in %s", exc, self.cached)
            self.path = self.cached
            self._make_at(self.path)
        self.ready = True
        return self.path

    def _make_at(self, target: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_scratch(target)
        # A scratch folder of its own: two processes making the same file at once each finish, and the last rename
        # wins (both files are the same).
        scratch = Path(tempfile.mkdtemp(prefix=f".{target.stem}.", suffix=".work", dir=target.parent))
        try:
            made = scratch / MADE_NAME
            # In a process of its own: the quantizer is Python work that would hold the GIL for a minute, and the
            # window's event loop (and the language model's steps) must go on meanwhile.
            code = _run_quantizer(self.source, made)
            if code != 0 or not made.is_file():
                raise DecoderQ8Failed(f"the quantizer ended with exit code {code}")
            with atomic_path(target) as tmp:
                os.replace(made, tmp)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        write_json_atomic(self._note(target), {"source": self.identity, "made_from": str(self.source)})
        log.info("made the int8 decoder %s from %s", target, self.source.name)


STALE_SCRATCH_S = 3600
"""A scratch folder untouched this long was left by a process that died while making the file."""


def _remove_stale_scratch(target: Path) -> None:
    for folder in target.parent.glob(f".{target.stem}.*.work"):
        try:
            if time.time() - folder.stat().st_mtime > STALE_SCRATCH_S:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            pass


def _run_quantizer(source: Path, target: Path) -> int | None:
    """Run :func:`quantize` in a child process; its exit code. A plain interpreter runs it with ``-c`` (nothing of
    the caller's main script is imported again); the frozen app, which has no ``-c``, through multiprocessing (its
    launcher calls ``freeze_support``)."""
    if not getattr(sys, "frozen", False):
        code = "import sys; from core.engine.model.decoder_q8 import quantize; quantize(sys.argv[1], sys.argv[2])"
        root = str(Path(__file__).resolve().parents[3])  # where ``core`` is, however the caller found it
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
        done = subprocess.run([sys.executable, "-c", code, str(source), str(target)], check=False, env=env)
        return done.returncode
    process = multiprocessing.get_context("spawn").Process(
        target=quantize, args=(str(source), str(target)), name="decoder-q8", daemon=True
    )
    process.start()
    process.join()
    return process.exitcode


class DecoderQ8Failed(RuntimeError):
    """The quantizer failed (not for want of a place to write): the float32 decoder is used instead."""


def quantize(source: str, target: str) -> None:
    """``onnxruntime.quantization.quantize_dynamic`` on the weight MatMuls (run in a child process); then the noise
    seeded and the convolutions made 2-D, as every CPU start would otherwise rewrite them."""
    logging.getLogger().setLevel(logging.ERROR)  # its advice ("consider pre-processing") is not for our users
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Given a path, the quantizer writes its shape-inferred copy beside it (``<name>-inferred.onnx``, deleted after):
    # a model folder would be written to, and a read-only one would fail the quantizer. Given the graph, it works in a
    # temporary folder of its own.
    quantize_dynamic(
        onnx.load(source),
        target,
        op_types_to_quantize=["MatMul"],
        weight_type=QuantType.QInt8,
        per_channel=False,
        reduce_range=False,
        extra_options={"MatMulConstBOnly": True},
    )
    from core.engine.model.blocked_convolutions import with_blocked_convolutions
    from core.engine.model.seeded_noise import with_seeded_noise

    model = onnx.load(target)
    seeded = with_seeded_noise(model)
    if with_blocked_convolutions(model) or seeded:
        onnx.save(model, target)


def _writable(folder: Path) -> bool:
    """The folder may be written and is not marked read-only (a root process could write into a folder whose mode
    says read-only, such as a shared model folder; it is left alone too)."""
    try:
        marked = bool(folder.stat().st_mode & 0o222)
    except OSError:
        return False
    return marked and os.access(folder, os.W_OK | os.X_OK)
