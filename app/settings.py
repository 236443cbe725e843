"""The one QSettings wrapper: a key enum, typed access, and conversion to the core's option dataclasses."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from PySide6.QtCore import QSettings

from core.engine import (
    APP_NAME,
    DECODER_PRECISIONS,
    PLAYBACK_POLICIES,
    SESSION_FIELDS,
    STREAM_PLANS,
    TAKE_TURNS,
    RuntimeOptions,
    SynthesisOptions,
)


class Key(str, Enum):
    BUNDLE = "model/bundle"
    PROVIDER = "runtime/provider"
    THREADS = "runtime/threads"  # 0: onnxruntime's default
    PRECISION = "runtime/precision"
    Q4_COMPUTE = "runtime/q4_compute"
    KV_CHAINING = "runtime/kv_chaining"
    SHAPE_FOLDING = "runtime/shape_folding"
    FUSED_ATTENTION = "runtime/fused_attention"
    SHARED_KV_CACHE = "runtime/shared_kv_cache"
    CONDITIONING_CACHE = "runtime/conditioning_cache"
    PREFIX_CACHE = "runtime/prefix_cache"
    STREAM = "runtime/stream"
    FIRST_CHUNK_TOKENS = "runtime/first_chunk_tokens"
    CHUNK_TOKENS = "runtime/chunk_tokens"
    DECODER_PROMPT = "runtime/decoder_prompt_seconds"
    DECODER_PRECISION = "runtime/decoder_precision"
    DECODER_FLOW_STEPS = "runtime/decoder_flow_steps"  # 0: as exported
    BLOCKED_CONVOLUTIONS = "runtime/blocked_convolutions"
    STREAM_PLAN = "runtime/stream_plan"
    PLAYBACK_POLICY = "runtime/playback_policy"  # fast, smooth or auto
    DECODER_THREAD = "runtime/decoder_thread"
    TAKE_TURNS = "runtime/take_turns"  # auto, always or never
    LM_BATCH = "runtime/lm_batch"
    JOINED_DECODING = "runtime/joined_decoding"
    TEMPERATURE = "sampling/temperature"
    TOP_P = "sampling/top_p"
    TOP_K = "sampling/top_k"  # 0: off
    MIN_P = "sampling/min_p"
    REPETITION_PENALTY = "sampling/repetition_penalty"
    CFG_WEIGHT = "sampling/cfg_weight"
    EXAGGERATION = "sampling/exaggeration"
    SEED = "sampling/seed"
    RANDOM_SEED = "sampling/random_seed"
    LANGUAGE = "sampling/language"
    VOICE = "voice/current"  # a voice-library name or a file path; empty: the bundle's default voice
    GEOMETRY = "window/geometry"
    EXPORT_FOLDER = "studio/export_folder"
    EXPORT_CHOICES = "studio/export_choices"  # the export dialog's last choices (JSON: app.studio.export_choices)
    RETAKES = "studio/retakes"  # re-takes of flagged takes a studio render makes (0: none)
    CANDIDATES = "studio/candidates"  # takes of every segment a studio render makes, the best kept (1: one)
    RECENT_PROJECTS = "studio/recent_projects"  # newest first, one folder per line
    PROJECT = "studio/project"  # the project open when the window closed
    SPLITTER = "window/splitter"
    DISMISSED_NOTICE = "window/dismissed_notice"  # the provider notice the user closed: not shown again
    TAB = "window/tab"  # the side panel's selected tab
    MODE = "window/mode"  # the main area's selected tab (Speak or Project)
    TEXT = "editor/text"  # the text being typed, kept across restarts
    API_PORT = "api/port"  # the local API's port (0: any free one)
    API_KEY = "api/key"  # its key; empty: none (it listens on this computer only)
    API_START = "api/start_with_app"  # serve it as soon as the window opens
    WYOMING_ON = "wyoming/on"  # the Wyoming server (Home Assistant) was switched on: it starts with the window
    WYOMING_ADDRESS = "wyoming/address"  # where it listens, tcp://HOST:PORT
    RENDER_ON = "cluster/render_on"  # where the studio renders a project: "local" or "cluster" (a Ray cluster)
    CLUSTER_ADDRESS = "cluster/address"  # the Ray cluster: empty (a local Ray instance), "auto" or ray://HOST:PORT


SESSION_KEYS = frozenset(k for k in Key if k.value.startswith("runtime/") and k.value[8:] in SESSION_FIELDS)
"""Settings whose change reloads the model (the core's ``SESSION_FIELDS`` that have a setting)."""
_RUNTIME = RuntimeOptions()
_DEFAULTS = {
    Key.PROVIDER: _RUNTIME.provider,
    Key.THREADS: 0,
    Key.PRECISION: _RUNTIME.precision,
    Key.Q4_COMPUTE: _RUNTIME.q4_compute,
    Key.KV_CHAINING: _RUNTIME.kv_chaining,
    Key.SHAPE_FOLDING: _RUNTIME.shape_folding,
    Key.FUSED_ATTENTION: _RUNTIME.fused_attention,
    Key.SHARED_KV_CACHE: _RUNTIME.shared_kv_cache,
    Key.CONDITIONING_CACHE: _RUNTIME.conditioning_cache,
    Key.PREFIX_CACHE: _RUNTIME.prefix_cache,
    Key.STREAM: _RUNTIME.stream,
    Key.FIRST_CHUNK_TOKENS: _RUNTIME.first_chunk_tokens,
    Key.CHUNK_TOKENS: _RUNTIME.chunk_tokens,
    Key.DECODER_PROMPT: int(_RUNTIME.decoder_prompt_seconds),
    Key.DECODER_PRECISION: _RUNTIME.decoder_precision,
    Key.DECODER_FLOW_STEPS: _RUNTIME.decoder_flow_steps or 0,
    Key.BLOCKED_CONVOLUTIONS: _RUNTIME.blocked_convolutions,
    Key.STREAM_PLAN: _RUNTIME.stream_plan,
    Key.PLAYBACK_POLICY: _RUNTIME.playback_policy,
    Key.DECODER_THREAD: _RUNTIME.decoder_thread,
    Key.TAKE_TURNS: _RUNTIME.take_turns,
    Key.LM_BATCH: _RUNTIME.lm_batch,
    Key.JOINED_DECODING: _RUNTIME.joined_decoding,
    Key.DISMISSED_NOTICE: "",
    Key.SEED: 0,
    Key.RANDOM_SEED: True,
    Key.LANGUAGE: "en",
    Key.VOICE: "",
    Key.BUNDLE: "",
    Key.EXPORT_FOLDER: "",
    Key.EXPORT_CHOICES: "",
    Key.RETAKES: 0,
    Key.CANDIDATES: 1,
    Key.RECENT_PROJECTS: "",
    Key.PROJECT: "",
    Key.TAB: 0,
    Key.MODE: 0,
    Key.TEXT: "",
    Key.API_PORT: 8765,
    Key.API_KEY: "",
    Key.API_START: False,
    Key.WYOMING_ON: False,
    Key.WYOMING_ADDRESS: "tcp://127.0.0.1:10200",
    Key.RENDER_ON: "local",
    Key.CLUSTER_ADDRESS: "",
}
_SAMPLING = {
    Key.TEMPERATURE: "temperature",
    Key.TOP_P: "top_p",
    Key.TOP_K: "top_k",
    Key.MIN_P: "min_p",
    Key.REPETITION_PENALTY: "repetition_penalty",
    Key.CFG_WEIGHT: "cfg_weight",
    Key.EXAGGERATION: "exaggeration",
}


class Settings:
    """Typed access to QSettings. Sampling keys that were never set mean "the model's default" (``None``)."""

    def __init__(self, qsettings: QSettings | None = None):
        self.q = qsettings or QSettings(APP_NAME, APP_NAME)

    def get(self, key: Key):
        default = _DEFAULTS.get(key)
        value = self.q.value(key.value, default)
        if value is None:
            return None
        if isinstance(default, bool):
            return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes")
        if isinstance(default, int):
            try:
                return int(str(value))
            except (TypeError, ValueError):
                return default
        if key in _SAMPLING:
            try:
                return float(str(value))
            except (TypeError, ValueError):
                return None
        if isinstance(default, str) and isinstance(value, list):  # an INI file edited by hand: "a, b" reads as a list
            return ", ".join(map(str, value))
        return value

    def set(self, key: Key, value) -> None:
        if value is None:
            self.q.remove(key.value)
        else:
            self.q.setValue(key.value, value)
        self.q.sync()  # written at once (Qt replaces the file atomically): a crash loses no setting

    def reset_sampling(self) -> None:
        for key in _SAMPLING:
            self.q.remove(key.value)
        self.q.sync()

    def sync(self) -> None:
        self.q.sync()

    # --- conversions -------------------------------------------------------------------------------------------
    def runtime_options(self) -> RuntimeOptions:
        threads = self.get(Key.THREADS)
        return RuntimeOptions(
            provider=self.get(Key.PROVIDER),
            threads=threads or None,
            precision=self.get(Key.PRECISION),
            q4_compute=self.get(Key.Q4_COMPUTE),
            kv_chaining=self.get(Key.KV_CHAINING),
            shape_folding=self.get(Key.SHAPE_FOLDING),
            fused_attention=self.get(Key.FUSED_ATTENTION),
            shared_kv_cache=self.get(Key.SHARED_KV_CACHE),
            conditioning_cache=self.get(Key.CONDITIONING_CACHE),
            prefix_cache=self.get(Key.PREFIX_CACHE),
            stream=self.get(Key.STREAM),
            first_chunk_tokens=self.get(Key.FIRST_CHUNK_TOKENS),
            chunk_tokens=self.get(Key.CHUNK_TOKENS),
            decoder_prompt_seconds=float(self.get(Key.DECODER_PROMPT)),
            decoder_precision=(
                self.get(Key.DECODER_PRECISION) if self.get(Key.DECODER_PRECISION) in DECODER_PRECISIONS else "auto"
            ),
            decoder_flow_steps=min(10, max(0, int(self.get(Key.DECODER_FLOW_STEPS)))) or None,
            blocked_convolutions=self.get(Key.BLOCKED_CONVOLUTIONS),
            stream_plan=self.get(Key.STREAM_PLAN) if self.get(Key.STREAM_PLAN) in STREAM_PLANS else "adaptive",
            playback_policy=self.get(Key.PLAYBACK_POLICY)
            if self.get(Key.PLAYBACK_POLICY) in PLAYBACK_POLICIES
            else _RUNTIME.playback_policy,
            decoder_thread=self.get(Key.DECODER_THREAD),
            take_turns=self.get(Key.TAKE_TURNS) if self.get(Key.TAKE_TURNS) in TAKE_TURNS else _RUNTIME.take_turns,
            lm_batch=min(16, max(1, int(self.get(Key.LM_BATCH)))),
            joined_decoding=self.get(Key.JOINED_DECODING),
            spinning=False,  # where the models overlap (take_turns "never"): the GUI and audio callback need the cores
        )

    def synthesis_options(self, variant: str | None = None) -> SynthesisOptions:
        values = {field: self.get(key) for key, field in _SAMPLING.items()}
        if values["top_k"] is not None:
            values["top_k"] = int(values["top_k"]) or None
        seed = None if self.get(Key.RANDOM_SEED) else self.get(Key.SEED)
        language = self.get(Key.LANGUAGE) if variant == "multilingual" else None
        return SynthesisOptions(**values, seed=seed, language=language)

    @property
    def bundle(self) -> Path | None:
        value = self.get(Key.BUNDLE)
        return Path(value) if value else None
