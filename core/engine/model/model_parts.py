"""The loaded model: every part that stays the same across requests, in one object that per-request code receives.

:func:`load_parts` opens a bundle (files, the four sessions, the signatures, tokenizer, CFG text table) and builds the
parts that live as long as the model: the prompt embedder, the speech decoder, the conditioning cache behind the
speech encoder, the voice-prefix KV cache and the runtime switches. :class:`Capabilities` is the one record of what
the loaded model can do, read by the worker, the CLI, synthesis and the window. Not thread-safe: one inference thread
owns it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.audio.speech_decoder import SpeechDecoder
from core.engine.audio.voice_reference import VoiceReference, load_voice
from core.engine.caches.conditioning_cache import VoiceConditioner, bundle_identity
from core.engine.caches.prefix_cache import PrefixCache
from core.engine.errors import InvalidOptions, ModelSignatureError, Notice, VoiceReferenceError
from core.engine.files.user_dirs import (
    conditioning_cache_dir,
    decoder_costs_dir,
    decoder_q8_cache_dir,
    folded_graph_cache_dir,
    q4_graph_cache_dir,
)
from core.engine.generation.lm_runners import ChainedKV, CopiedKV, KVRunner, SharedKV
from core.engine.model.blocked_convolutions import with_blocked_convolutions, without_blocked_convolutions
from core.engine.model.bundle import BundleFiles, file_stamp, locate_bundle
from core.engine.model.decoder_q8 import MADE_NAME, DecoderQ8, DecoderQ8Failed
from core.engine.model.embedding import PromptEmbedder, load_text_table
from core.engine.model.fixed_noise import with_comparison_noise
from core.engine.model.flow_steps import exported_steps, with_flow_steps
from core.engine.model.model_info import ModelInfo, graph_signature, read_model_info
from core.engine.model.q4_compute import has_4bit_weights, int8_graph
from core.engine.model.seeded_noise import with_seeded_noise
from core.engine.model.sessions import SessionFactory
from core.engine.model.shape_folding import folded_graph
from core.engine.model.shared_cache import shares_cache
from core.engine.options import PRECISIONS, RuntimeOptions
from core.engine.streaming.stream_plan import CostFile, CostModel
from core.engine.tokenizer import TextTokenizer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Capabilities:
    """What the loaded model can do and how it runs: the one answer for the worker, CLI, synthesis and window."""

    variant: str
    supports_cfg: bool
    """Classifier-free guidance: an original/multilingual model whose text table was found."""
    supports_exaggeration: bool
    languages: tuple[str, ...]
    """Language codes the tokenizer knows (Multilingual); empty for the English-only models."""
    has_default_voice: bool
    providers: dict[str, str]
    """Graph → the execution provider its session really got."""
    provider_notice: Notice | None
    """Why CUDA was not used although it was asked for (an NVIDIA GPU is there, or ``cuda`` was chosen)."""
    precisions: dict[str, str]
    """Graph → the precision of the file in use."""
    precisions_present: tuple[str, ...]
    """Precisions the bundle holds for the language model (the graph a precision choice is about), in menu order."""
    q4_compute: str | None = None
    """How the 4-bit language model computes: ``int8`` or ``fp32``; ``None`` when it has no 4-bit weights."""
    tags: tuple[str, ...] = ()
    """Paralinguistic ``[tags]`` the model speaks (Turbo: ``[laugh]``, ``[sigh]``…); other tags are skipped."""

    @property
    def device(self) -> str:
        return "cuda" if self.providers.get("language_model") == "cuda" else "cpu"

    @property
    def on_gpu(self) -> bool:
        return any(p != "cpu" for p in self.providers.values())

    @property
    def lm_precision(self) -> str:
        return self.precisions.get("language_model", "fp32")


class ModelParts:
    def __init__(
        self,
        files: BundleFiles,
        sessions: dict[str, Any],
        info: ModelInfo,
        tokenizer: TextTokenizer,
        text_table: np.ndarray | None,
        runtime: RuntimeOptions,
        factory: SessionFactory | None = None,
        q4_compute: str | None = None,
    ):
        self.files, self.sessions, self.info, self.tokenizer = files, sessions, info, tokenizer
        providers = dict(factory.providers) if factory else dict.fromkeys(sessions, "cpu")
        for graph in sessions:  # a graph still loading: the provider it is being created for
            providers.setdefault(graph, "cuda" if factory and factory.uses_cuda() else "cpu")
        lm_present = files.available.get("language_model", ())
        self.capabilities = Capabilities(
            variant=info.variant,
            supports_cfg=info.supports_cfg and text_table is not None,
            supports_exaggeration=info.variant != "turbo",
            languages=tuple(tokenizer.languages),
            has_default_voice=files.default_voice is not None,
            providers=providers,
            provider_notice=factory.notice if factory else None,
            precisions=dict(files.precisions),
            precisions_present=tuple(p for p in PRECISIONS if p in lm_present) or ("fp32",),
            q4_compute=q4_compute,
            tags=tokenizer.speakable_tags,
        )
        self.embedder = PromptEmbedder(sessions["embed_tokens"], info.variant, info.embed, text_table)
        self.costs = CostModel()
        """Decoder and LM step costs measured on this model: what the stream plan decides from."""
        self.cost_file = CostFile(runtime.costs_dir or decoder_costs_dir(), _cost_identity(files, runtime))
        self.cost_file.load_into(self.costs)
        self.decoder = SpeechDecoder(sessions["conditional_decoder"], info, self.costs)
        self.voices = VoiceConditioner(
            sessions["speech_encoder"],
            info.encoder,
            bundle_identity(files.graphs["speech_encoder"], info.variant),
            info.hidden,
        )
        self.prefixes = PrefixCache()
        self.runtime = runtime
        self.voices.configure(runtime.conditioning_cache, runtime.cache_dir or conditioning_cache_dir())

    @property
    def device(self) -> str:
        return self.capabilities.device

    def takes_turns(self, runtime: RuntimeOptions) -> bool:
        """Whether the language model waits while the decoder runs a call (:attr:`RuntimeOptions.take_turns`):
        ``always``, or ``auto`` with both models on the CPU, whose sessions then spin while they run."""
        if runtime.take_turns != "auto":
            return runtime.take_turns == "always"
        providers = self.capabilities.providers
        return all(providers.get(graph, "cpu") == "cpu" for graph in ("language_model", "conditional_decoder"))

    def update_runtime(self, runtime: RuntimeOptions) -> None:
        """Apply switches for the next request. Session settings (provider, threads, precision) need a reload."""
        changed = runtime.session_changes(self.runtime)
        if changed:
            raise InvalidOptions("options.needs_reload", fields=list(changed))
        self.voices.configure(runtime.conditioning_cache, runtime.cache_dir or conditioning_cache_dir())
        if not runtime.prefix_cache or runtime.kv_chaining != self.runtime.kv_chaining:
            self.prefixes.clear()
        self.runtime = runtime

    def runner(self, batch: int, exaggeration: float) -> KVRunner:
        """A fresh language-model runner: KV chained through IOBinding (its steps in one shared buffer where the
        graph writes its cache in place), or the plain copying loop."""
        kind = runner_kind(self.sessions["language_model"], self.runtime.kv_chaining)
        return kind(
            self.sessions["language_model"], self.sessions["embed_tokens"], self.info, batch, exaggeration, self.device
        )

    def reference(self, voice: VoiceReference | Path | str | None) -> VoiceReference:
        """A loaded reference recording: the one given, a file, or the bundle's default voice for ``None``."""
        if isinstance(voice, VoiceReference):
            return voice
        if voice is not None:
            return load_voice(voice)
        if self.files.default_voice is None:
            raise VoiceReferenceError("voice.no_default", variant=self.capabilities.variant)
        return load_voice(self.files.default_voice)


def runner_kind(session: Any, kv_chaining: bool) -> type[ChainedKV] | type[CopiedKV]:
    """The runner for a language-model ``session``: :class:`SharedKV` where its graph writes the cache in place
    (:mod:`core.engine.model.shared_cache`), else :class:`ChainedKV`; :class:`CopiedKV` without KV chaining."""
    if not kv_chaining:
        return CopiedKV
    return SharedKV if shares_cache(session) else ChainedKV


LoadProgress = Callable[[str, "float | None"], None]
"""``progress(graph, seconds)``: called with ``None`` when a graph starts loading and its load time when done."""


def _cost_identity(files: BundleFiles, runtime: RuntimeOptions) -> str:
    """What the measured costs depend on: the decoder and language-model files and how the sessions run."""
    decoder = files.graphs["conditional_decoder"]
    stamps = [file_stamp(decoder) if decoder.is_file() else str(decoder), file_stamp(files.graphs["language_model"])]
    switches = [runtime.provider, str(runtime.threads), runtime.q4_compute, str(runtime.spinning)]
    if runtime.turns_on_cpu():
        switches.append("turns")  # spinning sessions, and no call beside the language model
    if runtime.shape_folding:
        switches.append("folded")
    if runtime.fused_attention:
        switches.append("fused")
        if runtime.shared_kv_cache:
            switches.append("shared")
    if runtime.decoder_flow_steps is not None:
        switches.append(f"steps={runtime.decoder_flow_steps}")
    if runtime.blocked_convolutions:
        switches.append("blocked")
    return "|".join([*stamps, *switches])


def language_model_bytes(
    graph: Path, runtime: RuntimeOptions, factory: SessionFactory, progress: LoadProgress | None = None
) -> tuple[bytes | None, str | None]:
    """The language model's graph as it is run (``None``: the file as it is) and its 4-bit compute (``int8``,
    ``fp32``, or ``None`` without 4-bit weights): int8 compute where asked for on the CPU, then the shape
    arithmetic folded (:mod:`core.engine.model.shape_folding`) where ``runtime.shape_folding``, its attention
    fused (:mod:`core.engine.model.fused_attention`) where ``runtime.fused_attention`` and its cache written in
    place (:mod:`core.engine.model.shared_cache`) where also ``runtime.shared_kv_cache``. The rewrite's first
    making (seconds, once per graph) is reported to ``progress`` as :data:`LM_REWRITE_PROGRESS`."""
    data, q4 = None, None
    if runtime.q4_compute == "int8" and not factory.uses_cuda():  # the CUDA kernel has no int8 path to choose
        data = int8_graph(graph, q4_graph_cache_dir())
        q4 = "int8" if data is not None else None
    elif has_4bit_weights(graph):
        q4 = "fp32"
    # The fused operator was checked and measured on the CPU kernel: CUDA keeps the attention as exported.
    fuse = runtime.fused_attention and not factory.uses_cuda()
    share = fuse and runtime.shared_kv_cache
    if runtime.shape_folding or fuse:
        started: list[float] = []

        def working() -> None:
            started.append(time.perf_counter())
            if progress is not None:
                progress(LM_REWRITE_PROGRESS, None)

        data = folded_graph(graph, data, folded_graph_cache_dir(), runtime.shape_folding, fuse, working, share) or data
        if started and progress is not None:
            progress(LM_REWRITE_PROGRESS, time.perf_counter() - started[0])
    return data, q4


def language_model_session(files: BundleFiles, runtime: RuntimeOptions) -> Any:
    """A language-model session of ``files`` as :func:`load_parts` would make it with ``runtime``."""
    factory = SessionFactory(runtime)
    graph = files.graphs["language_model"]
    data, _ = language_model_bytes(graph, runtime, factory)
    return factory.create("language_model", graph, dynamic_shapes=True, model_bytes=data)


def load_parts(
    path: Path | str, runtime: RuntimeOptions, progress: LoadProgress | None = None, background: bool = False
) -> ModelParts:
    """Open a bundle: files, sessions (one factory), signatures, tokenizer and the CFG text table.

    The four graphs load in parallel (onnxruntime builds sessions without holding the GIL), so the wait is the
    slowest graph's, not the sum. With ``background`` this returns as soon as the language model and the embedding
    are ready: the decoder (the slowest to load) goes on loading while the first sentence's language model runs,
    and the speech encoder while a cached voice does not need it; their first call waits for them.
    """
    files = locate_bundle(path, runtime.precision)
    factory = SessionFactory(runtime)
    lm_graph = files.graphs["language_model"]
    lm_bytes, q4 = language_model_bytes(lm_graph, runtime, factory, progress)
    signature_paths = dict(files.graphs)
    q8 = _decoder_q8(files, runtime, factory)
    if q8 is not None:
        files = replace(
            files,
            graphs={**files.graphs, "conditional_decoder": q8.path},
            precisions={**files.precisions, "conditional_decoder": "q8"},
        )

    def load(name: str, graph: Path) -> Any:
        if name == "conditional_decoder" and q8 is not None and not q8.ready:
            # Made once (about a minute for the Original decoder), here on a loading thread: the model is usable
            # meanwhile, and the first decoder call waits for it.
            if progress is not None:
                progress(DECODER_Q8_PROGRESS, None)
            started = time.perf_counter()
            try:
                graph = q8.make()
            except DecoderQ8Failed as exc:
                log.warning("no int8 decoder (%s): the float32 decoder is used", exc)
                graph = q8.source
            if progress is not None:
                progress(DECODER_Q8_PROGRESS, time.perf_counter() - started)
        started = time.perf_counter()
        model_bytes = lm_bytes if name == "language_model" else None
        if name == "conditional_decoder":
            model_bytes = decoder_graph_bytes(
                graph, runtime.decoder_flow_steps, source=signature_paths[name], blocked=_blocked(runtime, factory)
            )
        session = factory.create(name, graph, dynamic_shapes=name == "language_model", model_bytes=model_bytes)
        if progress is not None:
            progress(name, time.perf_counter() - started)
        return session

    if progress is not None:  # every graph's start is told here, before the model can be usable without it
        for name in files.graphs:
            progress(name, None)
    pool = ThreadPoolExecutor(len(files.graphs), thread_name_prefix="load")
    futures = {name: pool.submit(load, name, graph) for name, graph in files.graphs.items()}
    pool.shutdown(wait=False)  # the threads end with their load
    try:
        sessions = {name: f.result() for name, f in futures.items() if name not in BACKGROUND or not background}
    except BaseException:
        for f in futures.values():
            f.cancel()
        raise
    if background:
        for name in BACKGROUND:
            sessions[name] = LoadingSession(futures[name], signature_paths[name])
    info = read_model_info(sessions, signature_paths, TextTokenizer.is_multilingual(files.tokenizer))
    text_table = None
    if info.variant != "turbo":
        try:
            text_table = load_text_table(files.graphs["embed_tokens"], info.hidden)
        except ModelSignatureError as exc:
            log.warning("classifier-free guidance unavailable: %s", exc)
    rows = text_table.shape[0] if text_table is not None else None
    tokenizer = TextTokenizer(files.tokenizer, info.variant, rows)
    return ModelParts(files, sessions, info, tokenizer, text_table, runtime, factory, q4)


def load_decoder(
    path: Path | str, runtime: RuntimeOptions, info: ModelInfo, fixed_noise: bool = False, graph_noise: bool = False
) -> SpeechDecoder:
    """Only a bundle's speech decoder, chosen and loaded as :func:`load_parts` would with ``runtime``. With
    ``fixed_noise`` its noise is repeatable (:mod:`core.engine.model.fixed_noise`), for comparisons; with
    ``graph_noise`` it draws the exported graph's own unseeded noise (float32 only: the int8 file is made seeded)."""
    files = locate_bundle(path, runtime.precision)
    factory = SessionFactory(runtime)
    q8 = _decoder_q8(files, runtime, factory)
    graph = q8.make() if q8 is not None else files.graphs["conditional_decoder"]
    model_bytes = decoder_graph_bytes(
        graph,
        runtime.decoder_flow_steps,
        fixed_noise,
        files.graphs["conditional_decoder"],
        graph_noise,
        _blocked(runtime, factory),
    )
    return SpeechDecoder(factory.create("conditional_decoder", graph, model_bytes=model_bytes), info)


def decoder_graph_bytes(
    graph: Path,
    steps: int | None,
    fixed_noise: bool = False,
    source: Path | None = None,
    graph_noise: bool = False,
    blocked: bool = False,
) -> bytes | None:
    """The decoder graph as it is run: its noise drawn from the fed seed (:mod:`core.engine.model.seeded_noise`),
    with ``steps`` flow steps (:mod:`core.engine.model.flow_steps`), or, with ``fixed_noise``, the comparisons'
    repeatable noise instead, and with ``blocked`` its convolutions 2-D
    (:mod:`core.engine.model.blocked_convolutions`; without, 1-D as exported); ``None`` to load the file as it is
    (nothing to change).

    ``source``: the float32 graph ``graph`` was made from. The int8 file holds its weights inline (260 MB) and is
    made with its noise already seeded and its convolutions 2-D (:mod:`core.engine.model.decoder_q8`), so whether
    there are steps to cut is read from the source's small graph first: a Turbo start does not parse its whole int8
    decoder (1.7 s)."""
    made_q8 = graph.name == MADE_NAME
    uncut = steps is None or (source not in (None, graph) and steps >= exported_steps(source))
    as_loaded = (made_q8 and blocked) or (graph_noise and not made_q8 and not blocked)
    if as_loaded and not fixed_noise and uncut:
        return None
    import onnx

    model = onnx.load(str(graph), load_external_data=False)
    # First: the fixed noise finds the flow noise by the whole solver, before the steps are cut.
    if fixed_noise:
        changed = with_comparison_noise(model) > 0
    else:
        changed = not made_q8 and not graph_noise and with_seeded_noise(model) > 0
    exported = with_flow_steps(model, steps) if steps is not None else 0
    changed = changed or (bool(exported) and steps is not None and steps < exported)
    relaid = with_blocked_convolutions(model) if blocked else without_blocked_convolutions(model)
    if not changed and not relaid:
        return None
    data: bytes = model.SerializeToString()
    return data


DECODER_Q8_PROGRESS = "conditional_decoder_q8"
LM_REWRITE_PROGRESS = "language_model_rewrite"
"""The name :data:`LoadProgress` reports while the language model's graph is folded and checked (once per graph)."""
"""The name :data:`LoadProgress` reports while the int8 decoder is being made (once per decoder file)."""


def _blocked(runtime: RuntimeOptions, factory: SessionFactory) -> bool:
    """Whether the decoder's convolutions run 2-D (:mod:`core.engine.model.blocked_convolutions`): a CPU layout."""
    return runtime.blocked_convolutions and not factory.uses_cuda()


def _decoder_q8(files: BundleFiles, runtime: RuntimeOptions, factory: SessionFactory) -> DecoderQ8 | None:
    """The int8 decoder to load instead of the float32 one, or ``None`` (the choice, CUDA, or already int8).
    ``auto`` takes it for every variant on the CPU: 0.68–0.76× per Original decoder call and 0.77× per Turbo one,
    both far under the model's own call-to-call difference (docs/PERFORMANCE-LOG.md, "Decoder levers")."""
    if runtime.decoder_precision not in ("q8", "auto"):
        return None
    if files.precisions["conditional_decoder"] != "fp32" or factory.uses_cuda():
        return None
    return DecoderQ8(files.graphs["conditional_decoder"], decoder_q8_cache_dir())


BACKGROUND = ("speech_encoder", "conditional_decoder")
"""Graphs that may go on loading after the model is usable (see :func:`load_parts`)."""


class LoadingSession:
    """A session still being created on another thread. Its signature is read from the graph file meanwhile (so
    the model's interface can be checked at once); ``run`` waits for the session."""

    def __init__(self, future: Future[Any], path: Path):
        self._future, self._path = future, path
        self._signature: tuple[list[Any], list[Any]] | None = None

    @property
    def ready(self) -> bool:
        return self._future.done()

    def session(self) -> Any:
        return self._future.result()  # raises the load error (a clear ModelLoadError) to the request that waits

    def loaded(self) -> Any:
        """The session, once loaded (waits)."""
        return self.session()

    def _io(self) -> tuple[list[Any], list[Any]]:
        if self._future.done() and self._future.exception() is None:
            s = self._future.result()
            return s.get_inputs(), s.get_outputs()
        if self._signature is None:
            try:
                self._signature = graph_signature(self._path)
            except Exception:  # noqa: BLE001 - an unreadable graph: the session's own load error says it best
                session = self.session()
                return session.get_inputs(), session.get_outputs()
        return self._signature

    def get_inputs(self) -> list[Any]:
        return self._io()[0]

    def get_outputs(self) -> list[Any]:
        return self._io()[1]

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self.session().run(*args, **kwargs)
