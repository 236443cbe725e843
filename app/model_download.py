"""Downloading a Chatterbox bundle from the model hub into the user data directory, with progress and cancel.

Only the files one precision needs are fetched (graphs with their ``.onnx_data``, ``tokenizer.json`` and the default
voice), from a pinned revision when one is given; the hub's reported sizes are checked after the download.
Nothing touches the network unless the user starts a download.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from core.bundle import GRAPHS, SUFFIXES


@dataclass(frozen=True)
class HubModel:
    label: str
    repo: str
    precision: str
    folder: str
    revision: str = "main"


HUB_MODELS = (
    HubModel("Turbo — English, fastest (q4, ~0.6 GB)", "ResembleAI/chatterbox-turbo-ONNX", "q4", "turbo-q4"),
    HubModel("Turbo — English (fp32, ~1.6 GB)", "ResembleAI/chatterbox-turbo-ONNX", "fp32", "turbo-fp32"),
    HubModel(
        "Multilingual — 23 languages (q4 LM, ~1.3 GB)",
        "onnx-community/chatterbox-multilingual-ONNX",
        "q4",
        "multilingual-q4",
    ),  # fmt: skip
    HubModel(
        "Original — English, CFG and exaggeration (q4 LM, ~1.2 GB)",
        "onnx-community/chatterbox-ONNX",
        "q4",
        "original-q4",
    ),  # fmt: skip
)


class DownloadCancelled(Exception):
    pass


def wanted_files(model: HubModel, available: list[str]) -> list[str]:
    """The repository files one precision needs (per graph: the requested precision, else fp32)."""
    names = set(available)
    out = [n for n in ("tokenizer.json", "default_voice.wav") if n in names]
    for graph in GRAPHS:
        for precision in (model.precision, "fp32"):
            base = f"onnx/{graph}{SUFFIXES[precision]}.onnx"
            if base in names:
                out += [base] + [n for n in (base + "_data",) if n in names]
                break
    return out


class Downloader:
    """Runs in a background thread; the dialog polls :attr:`done_bytes` / :attr:`total_bytes` on a timer."""

    def __init__(self, model: HubModel, target_root: Path, hub=None):
        self.model = model
        self.target = Path(target_root) / model.folder
        self.hub = hub
        self.total_bytes = 0
        self.done_bytes = 0
        self.error: str | None = None
        self.finished = False
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._run, name="download", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def progress(self) -> int:
        """Bytes on disk so far (partial files included), for a smooth progress bar."""
        if self.finished and not self.error:
            return self.total_bytes
        try:
            return min(self.total_bytes, sum(p.stat().st_size for p in self.target.rglob("*") if p.is_file()))
        except OSError:
            return self.done_bytes

    def _api(self):
        if self.hub is not None:
            return self.hub
        import huggingface_hub

        return huggingface_hub

    def _run(self) -> None:
        try:
            hub = self._api()
            info = hub.HfApi().model_info(self.model.repo, revision=self.model.revision, files_metadata=True)
            sizes = {s.rfilename: s.size or 0 for s in info.siblings}
            files = wanted_files(self.model, list(sizes))
            if not files:
                raise RuntimeError(f"{self.model.repo} holds no Chatterbox ONNX files")
            self.total_bytes = sum(sizes[f] for f in files)
            revision = getattr(info, "sha", None) or self.model.revision  # pin what we measured
            for name in files:
                if self._cancel.is_set():
                    raise DownloadCancelled
                path = Path(hub.hf_hub_download(self.model.repo, name, revision=revision, local_dir=self.target))
                if sizes[name] and path.stat().st_size != sizes[name]:
                    raise RuntimeError(f"{name} has {path.stat().st_size} bytes, the hub reports {sizes[name]}")
                self.done_bytes += sizes[name]
        except DownloadCancelled:
            self.error = "cancelled"
        except Exception as exc:  # noqa: BLE001 - shown to the user; a failed download must not crash the app
            self.error = f"Download failed: {exc}"
        finally:
            self.finished = True
