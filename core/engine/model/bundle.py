"""Find the four graphs, ``tokenizer.json`` and the default voice in a bundle folder (contract §1).

A precision applies per graph with a fallback to fp32 (the original/multilingual repositories ship only the language
model quantized). Nothing here opens a graph; :mod:`core.engine.model.model_info` reads the signatures.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from core.engine.errors import ModelFilesMissing

log = logging.getLogger(__name__)

GRAPHS = ("speech_encoder", "embed_tokens", "language_model", "conditional_decoder")
SUFFIXES = {"fp32": "", "fp16": "_fp16", "q8": "_quantized", "q4": "_q4", "q4f16": "_q4f16"}


@dataclass(frozen=True)
class BundleFiles:
    root: Path
    graphs: dict[str, Path]
    """Graph name → the ``.onnx`` file chosen."""
    precisions: dict[str, str]
    """Graph name → the precision of the file chosen."""
    available: dict[str, tuple[str, ...]]
    """Graph name → every precision present in the folder."""
    tokenizer: Path
    default_voice: Path | None


def file_stamp(path: Path) -> str:
    """A file's identity for what is cached from it: where it is, its size and when it last changed."""
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"


def graph_dir(root: Path) -> Path:
    """Graphs live in ``<bundle>/onnx/``; some mirrors flatten them into the bundle folder itself."""
    return root / "onnx" if (root / "onnx").is_dir() else root


def locate_bundle(root: Path | str, precision: str = "fp32") -> BundleFiles:
    root = Path(root).expanduser()
    if not root.is_dir():
        raise ModelFilesMissing("bundle.not_a_folder", path=str(root))
    folder = graph_dir(root)
    graphs, chosen, available = {}, {}, {}
    for name in GRAPHS:
        present = tuple(p for p, suffix in SUFFIXES.items() if (folder / f"{name}{suffix}.onnx").is_file())
        available[name] = present
        order = [precision, "fp32", *[p for p in SUFFIXES if p not in (precision, "fp32")]]
        pick = next((p for p in order if p in present), None)
        if pick is None:
            raise ModelFilesMissing(
                "bundle.graph_missing", path=str(folder / (name + ".onnx")), graph=name, folder=str(folder)
            )
        if pick != precision:
            log.info("%s: no %s file, using %s", name, precision, pick)
        path = folder / f"{name}{SUFFIXES[pick]}.onnx"
        graphs[name], chosen[name] = path, pick
    tokenizer = root / "tokenizer.json"
    if not tokenizer.is_file():
        raise ModelFilesMissing("bundle.tokenizer_missing", path=str(tokenizer))
    voice = root / "default_voice.wav"
    return BundleFiles(root, graphs, chosen, available, tokenizer, voice if voice.is_file() else None)
