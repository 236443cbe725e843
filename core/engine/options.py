"""Configuration as frozen dataclasses.

- :class:`SynthesisOptions`: per-request knobs. ``None`` means "the model's upstream default" (contract §5).
- :class:`RuntimeOptions`: how the pipeline runs (provider, threads, precision, optimisation switches).
What the model itself declares lives in :class:`core.engine.model.model_info.ModelInfo`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from pathlib import Path

from core.engine.errors import InvalidOptions

PROVIDERS = ("auto", "cuda", "cpu")
PRECISIONS = ("fp32", "fp16", "q8", "q4", "q4f16")
GRAPH_OPTIMIZATION = ("disabled", "basic", "extended", "all")
STREAM_PLANS = ("adaptive", "fixed")
PLAYBACK_POLICIES = ("auto", "fast", "smooth")
Q4_COMPUTE = ("int8", "fp32")
DECODER_PRECISIONS = ("auto", "fp32", "q8")
DECODER_PROMPT_WINDOWS = ("best", "first")
TAKE_TURNS = ("auto", "always", "never")
SESSION_FIELDS = (
    "provider",
    "threads",
    "precision",
    "graph_optimization",
    "spinning",
    "take_turns",
    "q4_compute",
    "shape_folding",
    "fused_attention",
    "shared_kv_cache",
    "decoder_precision",
    "decoder_flow_steps",
    "blocked_convolutions",
)
"""RuntimeOptions fields that need new sessions (a model reload); the others apply to the next request."""


@dataclass(frozen=True)
class SamplingParams:
    """Fully resolved sampling settings for one request."""

    temperature: float
    top_k: int | None
    top_p: float
    min_p: float
    repetition_penalty: float
    cfg_weight: float
    exaggeration: float
    max_new_tokens: int
    greedy: bool


_UPSTREAM_DEFAULTS = {
    "turbo": SamplingParams(0.8, 1000, 0.95, 0.0, 1.2, 0.0, 0.0, 1000, False),
    "original": SamplingParams(0.8, None, 1.0, 0.05, 1.2, 0.5, 0.5, 1000, False),
    "multilingual": SamplingParams(0.8, None, 1.0, 0.05, 2.0, 0.5, 0.5, 1000, False),
}


def upstream_defaults(variant: str) -> SamplingParams:
    return _UPSTREAM_DEFAULTS[variant]


@dataclass(frozen=True)
class SynthesisOptions:
    """Per-request options; ``None`` takes the variant's upstream default."""

    temperature: float | None = None
    top_k: int | None = None
    top_p: float | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    cfg_weight: float | None = None
    """Classifier-free guidance weight (original/multilingual only); 0 turns CFG off."""
    exaggeration: float | None = None
    """Emotion exaggeration (original/multilingual only), upstream 0.5."""
    max_new_tokens: int | None = None
    seed: int | None = None
    """Same seed, same text, same voice and settings → same tokens. ``None`` picks one and reports it."""
    greedy: bool = False
    """Argmax decoding (deterministic without a seed)."""
    language: str | None = None
    """Multilingual only: a code such as ``en``, ``fr`` (default ``en``)."""
    trim_silence: bool = True
    """Cut trailing silence and stray end noise from each sentence (pauses and sentence gaps stay exact)."""

    def resolve(self, variant: str) -> SamplingParams:
        """Fill in upstream defaults and validate ranges (raises :class:`InvalidOptions` with a readable message)."""
        base = upstream_defaults(variant)
        values = {f.name: getattr(self, f.name) for f in fields(SamplingParams) if f.name != "greedy"}
        resolved = replace(base, greedy=self.greedy, **{k: v for k, v in values.items() if v is not None})
        if variant == "turbo":
            resolved = replace(resolved, cfg_weight=0.0, exaggeration=0.0)
        _check_range("temperature", resolved.temperature, 0.01, 5.0)
        _check_range("top_p", resolved.top_p, 0.0, 1.0, low_open=True)
        _check_range("min_p", resolved.min_p, 0.0, 1.0)
        _check_range("repetition_penalty", resolved.repetition_penalty, 0.1, 10.0)
        _check_range("cfg_weight", resolved.cfg_weight, 0.0, 10.0)
        _check_range("exaggeration", resolved.exaggeration, 0.0, 3.0)
        _check_range("max_new_tokens", resolved.max_new_tokens, 1, 4000)
        if resolved.top_k is not None and resolved.top_k < 1:
            raise InvalidOptions("options.top_k", value=resolved.top_k)
        return resolved


def _check_range(name: str, value: float, low: float, high: float, low_open: bool = False) -> None:
    if value != value or value > high or value < low or (low_open and value == low):  # value != value: NaN
        raise InvalidOptions("options.out_of_range", field=name, value=value, low=low, high=high, low_open=low_open)


@dataclass(frozen=True)
class RuntimeOptions:
    """How the pipeline runs. Every optimisation is a switch so its effect can be measured."""

    provider: str = "auto"
    """``auto`` (CUDA when it really loads, else CPU with a logged reason), ``cuda`` or ``cpu``."""
    threads: int | None = None
    """Intra-op threads per session; ``None`` lets onnxruntime use one per physical core."""
    precision: str = "fp32"
    """Preferred precision per graph; a graph missing in that precision falls back to fp32."""
    graph_optimization: str = "all"
    q4_compute: str = "int8"
    """4-bit language models on the CPU: ``int8`` (MatMulNBits accuracy level 4: activations quantised to int8,
    integer dot products) or ``fp32`` (the exported level: weights dequantised, float32 products)."""
    shape_folding: bool = True
    """Fold the language model's per-step shape arithmetic into constants at load
    (:mod:`core.engine.model.shape_folding`: checked against the graph as exported, made once per graph and kept in
    the user cache): fewer nodes per step, the same numbers."""
    fused_attention: bool = True
    """Each layer's attention as one ``com.microsoft.MultiHeadAttention`` node at load
    (:mod:`core.engine.model.fused_attention`: the cache appended and attended in one kernel instead of a copy of
    the whole cache and five passes over it every step; checked like the folding). CPU only: on CUDA the attention
    stays as exported."""
    shared_kv_cache: bool = True
    """With ``fused_attention``: each layer's cache written in place (:mod:`core.engine.model.shared_cache`: one
    ``GroupQueryAttention`` per layer, its past and present bound to one buffer that grows by a few hundred
    positions at a time, so a step writes one position instead of copying the cache; checked like the folding).
    Needs ``kv_chaining`` for its speed (the plain loop runs the same graph, copying)."""
    decoder_precision: str = "auto"
    """The speech decoder on the CPU: ``q8`` (its weight matrix multiplications in int8, a file made once from the
    float32 one, :mod:`core.engine.model.decoder_q8`), ``fp32`` (the file the ``precision`` choice picks, float32 for
    the published Original and Multilingual repositories) or ``auto`` (q8 where it was measured to pay: the
    Original/Multilingual decoder; see docs/PERFORMANCE-LOG.md, "Decoder levers"). On CUDA the file ``precision``
    picks."""
    decoder_flow_steps: int | None = 5
    """Flow-matching steps of the Original/Multilingual decoder: 5 by default (half the exported 10: 0.5× a decoder
    call, at most the exported solver's own step error again; docs/PERFORMANCE-LOG.md, "Chosen defaults"), ``None`` or
    10 as exported, fewer cut out of the unrolled graph at load (:mod:`core.engine.model.flow_steps`): faster, the
    mel less refined. Turbo keeps its 2."""
    blocked_convolutions: bool = True
    """The speech decoder's 1-D convolutions run as 2-D ones on the CPU (:mod:`core.engine.model.blocked_convolutions`),
    so onnxruntime gives them its blocked-layout (NCHWc) kernel: the same arithmetic, 0.91× a 100-token Turbo decoder
    call (docs/PERFORMANCE-LOG.md, "Blocked convolutions"). Made into the int8 decoder file; on CUDA the graph stays as
    exported."""
    spinning: bool = False
    """Let onnxruntime's idle intra-op threads spin in every session, also where the models overlap (``take_turns``
    ``never``). Off by default: spinning threads of two models running at once take the cores from each other (see
    docs/PERFORMANCE-LOG.md); where they take turns (:attr:`take_turns`) the CPU sessions spin anyway."""
    take_turns: str = "auto"
    """Whether the language model and the speech decoder take turns on the CPU: while a decoder call runs the language
    model waits, whatever the playback policy, and each CPU session's idle threads spin while it runs and stop when
    the run returns (``session.intra_op.allow_spinning`` with ``session.force_spinning_stop``), so each model has
    every core to itself without waking its threads at every operator. Two models at once on the same cores slow
    each other by more than their overlap gains: on faithful Turbo, 2 cores, steps and calls alone 0.70-0.90x, a
    smooth start 0.77x as late and without a stall, a book render 1.06x as fast; a one-shot request 1.05x as long
    (docs/PERFORMANCE-LOG.md, "The models take turns"). ``auto``: when both models run on the CPU; ``always``;
    ``never``: the decoder runs beside the language model where the plan lets it, the threads sleeping (unless
    :attr:`spinning`)."""
    kv_chaining: bool = True
    """Keep ``present.*`` as OrtValues bound as the next step's ``past_key_values.*`` (IOBinding, no copies)."""
    conditioning_cache: bool = True
    """Reuse the speech-encoder result per voice (memory LRU + disk), so a known voice skips the encoder."""
    prefix_cache: bool = True
    """Reuse the language model's KV of the conditioning rows per voice: each request prefills only its text."""
    stream: bool = True
    """Decode while the language model generates, in chunks; off: one decode per sentence."""
    first_chunk_tokens: int = 10
    """Speech tokens (25 per second) before the first chunk is decoded: small, so audio starts early."""
    chunk_tokens: int = 25
    """Speech tokens per following chunk."""
    decoder_context_tokens: int = 20
    """Already-decoded tokens each streaming decode sees again, so chunk seams sound continuous."""
    stream_plan: str = "adaptive"
    """``adaptive``: a first window, then as few decoder calls as keep playback fed (usually one per sentence);
    ``fixed``: ``first_chunk_tokens``, then every ``chunk_tokens`` (see :mod:`core.engine.streaming.stream_plan`)."""
    playback_policy: str = "auto"
    """When streamed playback starts (adaptive plan): ``fast`` with the first audio, accepting stalls later;
    ``smooth`` when the forecast from the measured costs says no later chunk will be late (one wait at the start
    instead of stalls mid-sentence); ``auto``: smooth when the measured real-time factor leaves no margin
    (:data:`core.engine.streaming.forecast.AUTO_SMOOTH_RTF`), fast otherwise."""
    decoder_thread: bool = True
    """Decode on a second thread while the language model goes on with the next tokens and sentences."""
    decoder_prompt_seconds: float = 3.0
    """Seconds of the reference the decoder sees as its voice prompt on every call: 3 by default (its most voiced
    stretch, :attr:`decoder_prompt_window`), up to 10 as upstream. The decoder was trained with prompts of at most
    30 % of an utterance; every second more costs every call (docs/PERFORMANCE-LOG.md, "Chosen defaults")."""
    decoder_prompt_window: str = "best"
    """Which part of a longer reference a shorter decoder prompt keeps: ``best`` (the most voiced, energetic stretch,
    :meth:`core.engine.caches.conditioning.Conditioning.with_decoder_prompt`) or ``first`` (its first seconds)."""
    lm_batch: int = 4
    """Sentences generated together in one language-model batch when a project renders and nobody listens
    (:mod:`core.engine.generation.batch_generate`; Turbo only). 1: one sentence at a time."""
    joined_decoding: bool = True
    """When a project renders and nobody listens: generate a few sentences ahead and decode up to 12 s of neighbouring
    sentences in one decoder call, so that the voice prompt's fixed cost is paid once for all of them
    (:mod:`core.narration.rendering.lookahead`,
    :meth:`core.engine.audio.speech_decoder.SpeechDecoder.decode_joined`)."""
    cache_dir: Path | None = None
    """Where the conditioning cache lives on disk; ``None``: the user cache directory."""
    costs_dir: Path | None = None
    """Where the decoder and LM costs the stream plan learnt are kept between sessions; ``None``: the user cache."""

    def turns_on_cpu(self) -> bool:
        """Whether CPU sessions take turns (and spin while they run): ``take_turns`` other than ``never``."""
        return self.take_turns != "never"

    def session_changes(self, other: RuntimeOptions) -> list[str]:
        """The fields that differ from ``other`` and need new sessions (a model reload)."""
        return [f for f in SESSION_FIELDS if getattr(self, f) != getattr(other, f)]

    def __post_init__(self) -> None:
        """Refuse a bad setting with :class:`InvalidOptions` (a ``ValueError``): ``options.invalid_choice`` or
        ``options.setting_range``."""
        choices = (
            ("provider", PROVIDERS),
            ("precision", PRECISIONS),
            ("q4_compute", Q4_COMPUTE),
            ("graph_optimization", GRAPH_OPTIMIZATION),
            ("stream_plan", STREAM_PLANS),
            ("decoder_precision", DECODER_PRECISIONS),
            ("decoder_prompt_window", DECODER_PROMPT_WINDOWS),
            ("playback_policy", PLAYBACK_POLICIES),
            ("take_turns", TAKE_TURNS),
        )
        for name, allowed in choices:
            value = getattr(self, name)
            if value not in allowed:
                raise InvalidOptions("options.invalid_choice", field=name, value=value, choices=list(allowed))
        if self.threads is not None:
            _check_setting("threads", self.threads, 1, 256, unset_ok=True)
        _check_setting("first_chunk_tokens", self.first_chunk_tokens, 1, 1000)
        _check_setting("chunk_tokens", self.chunk_tokens, 1, 1000)
        _check_setting("decoder_prompt_seconds", self.decoder_prompt_seconds, 1, 10)
        if self.decoder_flow_steps is not None:
            _check_setting("decoder_flow_steps", self.decoder_flow_steps, 1, 10, unset_ok=True)
        _check_setting("lm_batch", self.lm_batch, 1, 16)
        _check_setting("decoder_context_tokens", self.decoder_context_tokens, 0, 500)


def _check_setting(name: str, value: float, low: float, high: float, unset_ok: bool = False) -> None:
    if not low <= value <= high:
        raise InvalidOptions("options.setting_range", field=name, value=value, low=low, high=high, unset_ok=unset_ok)
