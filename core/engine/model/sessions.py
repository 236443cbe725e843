"""The one place where onnxruntime sessions are created: provider choice, SessionOptions, fallback and reporting."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import onnxruntime as ort

import core.engine.model.gpu as gpu
from core.engine.errors import ModelFilesMissing, ModelLoadError, Notice, first_line
from core.engine.options import RuntimeOptions

log = logging.getLogger(__name__)

CUDA = "CUDAExecutionProvider"
CPU = "CPUExecutionProvider"
_OPT_LEVELS = {
    "disabled": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
    "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
}
_dlls_preloaded = False
NO_REUSE_PLAN = ("speech_encoder", "conditional_decoder")
"""Graphs loaded without onnxruntime's memory-reuse plan (see :meth:`SessionFactory.create`)."""


_preload_error: str | None = None


def _preload_cuda_libraries() -> str | None:
    """Load CUDA/cuDNN from the nvidia-* wheels or the system, once; return why that failed, or ``None``."""
    global _dlls_preloaded, _preload_error
    if _dlls_preloaded or not hasattr(ort, "preload_dlls"):
        return _preload_error
    _dlls_preloaded = True
    printed = io.StringIO()  # preload_dlls reports missing libraries with print(); keep stdout clean for --json
    try:
        with contextlib.redirect_stdout(printed):
            ort.preload_dlls()
    except Exception as exc:  # noqa: BLE001 - any loader failure just means "no CUDA here"
        _preload_error = str(exc)
        return _preload_error
    missing = re.findall(r"Failed to load (\S+?):", printed.getvalue())
    if missing:
        _preload_error = f"the CUDA libraries {', '.join(missing)} could not be loaded"
    return _preload_error


NO_SPINNING_ENV = "CHATTERBOX_NO_SPINNING"
"""``1``: no session spins, also where the models take turns — for a process that shares its cores with other busy
ones (parallel test workers; several renders at once), where spinning threads of the processes take the cores from
each other (the engine tests under two workers on 2 cores: 1.3x as long)."""


def spins_while_running(runtime: RuntimeOptions, cuda: bool) -> bool:
    """Whether a session's idle threads spin while it runs (and stop when it returns): a CPU session whose models take
    turns (:attr:`RuntimeOptions.take_turns`), unless :data:`NO_SPINNING_ENV` says the process shares its cores."""
    return not cuda and runtime.turns_on_cpu() and os.environ.get(NO_SPINNING_ENV) != "1"


@dataclass
class SessionFactory:
    runtime: RuntimeOptions
    providers: dict[str, str] = field(default_factory=dict)
    """Graph name → the execution provider that session really got."""
    notice: Notice | None = None
    """Why CUDA was not used although it was asked for (``None`` when nothing to say: also on ``auto`` without an
    NVIDIA GPU, where the CPU is expected)."""
    _cuda_ok: bool | None = None

    def _wants_cuda(self) -> bool:
        if self.runtime.provider == "cpu" or self._cuda_ok is False:
            return False
        if CUDA not in ort.get_available_providers():
            self._give_up_cuda("this onnxruntime build has no CUDA provider (install onnxruntime-gpu)")
            return False
        error = _preload_cuda_libraries()
        if error:
            self._give_up_cuda(
                f"{error} (CUDA 13 and cuDNN 9 are needed: install them, or the nvidia-* runtime wheels)"
            )
            return False
        return True

    def _give_up_cuda(self, reason: str) -> None:
        self._cuda_ok = False
        if self.runtime.provider == "auto" and not gpu.nvidia_gpu_present():
            # No NVIDIA GPU here: the CPU is the normal case, not something to tell the user about.
            log.info("Running on CPU (no NVIDIA GPU found): %s.", reason)
            return
        if self.runtime.provider == "auto" and self.notice is None:
            self.notice = Notice("provider.cpu_fallback", {"reason": reason})
        elif self.notice is None:
            self.notice = Notice("provider.cuda_unusable", {"reason": reason})
        log.info("%s", self.notice)

    def __post_init__(self) -> None:
        ort.set_default_logger_severity(3)  # our own log says which provider each session got, and why

    def options(self, dynamic_shapes: bool, spin: bool = False) -> ort.SessionOptions:
        """``spin``: idle intra-op threads spin while a run lasts, and stop when it returns (a CPU session whose
        models take turns, :attr:`RuntimeOptions.take_turns`); otherwise they sleep unless ``runtime.spinning``."""
        so = ort.SessionOptions()
        so.graph_optimization_level = _OPT_LEVELS[self.runtime.graph_optimization]
        if self.runtime.threads:
            so.intra_op_num_threads = self.runtime.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # Shapes change every decode step: a memory pattern planned for one step is wrong for the next.
        so.enable_mem_pattern = not dynamic_shapes
        so.log_severity_level = 3
        if spin:
            # The session has the cores to itself while it runs: its threads wait for the next operator's work
            # spinning (no wake-up per operator), and sleep as soon as the run returns, so that the other model's
            # run, the GUI and the audio callback get the cores back.
            so.add_session_config_entry("session.intra_op.allow_spinning", "1")
            so.add_session_config_entry("session.force_spinning_stop", "1")
        elif not self.runtime.spinning:
            # Idle intra-op threads sleep instead of spinning: leaves the cores to the other model, the GUI and the
            # audio callback.
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        return so

    def uses_cuda(self) -> bool:
        """Whether sessions are being created for CUDA (decided on the first call, with the reason kept)."""
        return self._wants_cuda()

    def create(
        self, name: str, path: Path, dynamic_shapes: bool = False, model_bytes: bytes | None = None
    ) -> ort.InferenceSession:
        """A session for the graph at ``path`` (or for ``model_bytes``, a rewritten copy of it whose weights are
        read from ``path``'s folder)."""
        if not path.is_file():
            raise ModelFilesMissing("bundle.file_missing", path=str(path))
        want_cuda = self._wants_cuda()
        providers = [(CUDA, {"device_id": 0}), CPU] if want_cuda else [CPU]
        options = self.options(dynamic_shapes, spin=spins_while_running(self.runtime, want_cuda))
        if name in NO_REUSE_PLAN:
            # onnxruntime's memory-reuse planner is quadratic in the graph's size: the Original decoder (22,000 nodes,
            # its flow steps unrolled) spent 74 of its 78 s of load there. Without it the load takes 5 s, and calls
            # are as fast and as large in memory as before (measured: docs/PERFORMANCE-LOG.md).
            options.enable_mem_reuse = False
        if model_bytes is not None:
            options.add_session_config_entry("session.model_external_initializers_file_folder_path", str(path.parent))
        try:
            model = model_bytes if model_bytes is not None else str(path)
            session = ort.InferenceSession(model, sess_options=options, providers=providers)
        except Exception as exc:
            raise _explain_load_failure(path, exc) from exc
        got = session.get_providers()
        if want_cuda and CUDA not in got:
            self._give_up_cuda(
                "the CUDA 13 / cuDNN 9 libraries could not be loaded (install them, or the nvidia-* runtime wheels)"
            )
        elif want_cuda:
            self._cuda_ok = True
        self.providers[name] = "cuda" if CUDA in got else "cpu"
        log.info("%s: %s on %s", name, path.name, self.providers[name])
        return session


def _explain_load_failure(path: Path, exc: Exception) -> ModelLoadError:
    text = str(exc)
    reason = first_line(text, default="unknown error")
    sidecar = path.with_name(path.name + "_data")
    if "external" in text.lower() or "_data" in text or (not sidecar.exists() and "size" in text.lower()):
        if not sidecar.exists():
            return ModelLoadError(
                "bundle.sidecar_missing", path=str(sidecar), graph_file=path.name, folder=str(path.parent)
            )
        return ModelLoadError("bundle.sidecar_truncated", path=str(sidecar), graph_file=path.name, reason=reason)
    return ModelLoadError("bundle.graph_unreadable", path=str(path), reason=reason)
