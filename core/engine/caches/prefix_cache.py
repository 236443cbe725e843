"""The voice-prefix KV cache: the language model's prefill of the conditioning rows, once per voice.

The conditioning rows lead every prompt and depend only on the voice, so their KV is computed once per voice and
batch size (2 with CFG: both rows see the same conditioning) and kept. A request starts its cache from a reference
to it — the OrtValues (or numpy arrays) are shared, never copied, and never written: every run allocates new
presents — and prefills only its text, with positions and the attention mask continuing after the prefix.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from core.engine.caches.conditioning import Conditioning
from core.engine.generation.lm_runners import KVRunner
from core.engine.model.embedding import PromptEmbedder
from core.engine.options import RuntimeOptions

PrefixKey = tuple[str, int, bool, str]
"""Voice key, batch size, KV chaining, device: what a prefix's tensors depend on."""


@dataclass(frozen=True)
class VoicePrefix:
    past: Any
    """What the KV runner's ``adopt`` takes: a list of OrtValues (chained) or a dict of arrays (plain loop)."""
    total: int
    """Positions in the prefix (the conditioning rows)."""


@dataclass(frozen=True)
class SentenceStart:
    """A KV runner ready for one sentence, the embedding blocks it still has to prefill, and the prefix outcome."""

    runner: KVRunner
    prompt: list[np.ndarray]
    prefix_hit: bool | None
    """``True``/``False`` for a prefix-cache hit/miss; ``None`` when the prefix cache is off."""
    prefix_build_ms: float = 0.0
    """Time spent prefilling the conditioning rows for the cache (0 on a hit)."""


def start_uncached(runner: KVRunner, features: np.ndarray, text: np.ndarray) -> SentenceStart:
    """Without the prefix cache: the runner prefills the conditioning rows and the text together."""
    return SentenceStart(runner, [np.concatenate([features, text], axis=1)], None)


class LoadedModel(Protocol):
    """What starting a sentence needs of the loaded model (:class:`~core.engine.model.model_parts.ModelParts`)."""

    embedder: PromptEmbedder
    runtime: RuntimeOptions
    prefixes: PrefixCache

    @property
    def device(self) -> str: ...

    def runner(self, batch: int, exaggeration: float) -> KVRunner: ...


def start_sentence(
    parts: LoadedModel,
    cond: Conditioning,
    voice_key: str,
    ids: np.ndarray,
    exaggeration: float,
    cfg: bool,
    report: dict[str, Any],
) -> SentenceStart:
    """The KV runner for one sentence of the loaded model ``parts``: from the voice's cached prefix, or prefilling the
    conditioning rows (prefix-cache outcomes are counted in ``report``)."""
    text = parts.embedder.text(ids, exaggeration, cfg)
    batch = text.shape[0]
    features = np.repeat(cond.audio_features.astype(text.dtype, copy=False), batch, axis=0)
    if not parts.runtime.prefix_cache:
        report["prefix"] = "off"
        return start_uncached(parts.runner(batch, exaggeration), features, text)
    key = (voice_key, batch, parts.runtime.kv_chaining, parts.device)
    start = parts.prefixes.start(key, features, text, lambda: parts.runner(batch, exaggeration))
    report["prefix_hits"] = report.get("prefix_hits", 0) + start.prefix_hit
    report["prefix_misses"] = report.get("prefix_misses", 0) + (not start.prefix_hit)
    return start


class PrefixCache:
    def __init__(self, capacity: int = 3):
        self.capacity = capacity
        self._items: OrderedDict[PrefixKey, VoicePrefix] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def start(
        self, key: PrefixKey, features: np.ndarray, text: np.ndarray, new_runner: Callable[[], KVRunner]
    ) -> SentenceStart:
        """A runner that starts from the voice's cached prefix (built with ``new_runner`` on a miss)."""
        prefix, hit, build_ms = self.prefix(key, features, new_runner)
        runner = new_runner()
        runner.adopt(prefix.past, prefix.total)
        return SentenceStart(runner, [text], hit, build_ms)

    def prefix(
        self, key: PrefixKey, features: np.ndarray, new_runner: Callable[[], KVRunner]
    ) -> tuple[VoicePrefix, bool, float]:
        """The voice's prefix, its hit/miss and the milliseconds spent building it (0 on a hit)."""
        prefix = self._items.get(key)
        if prefix is not None:
            self._items.move_to_end(key)
            self.hits += 1
            return prefix, True, 0.0
        self.misses += 1
        started = time.perf_counter()
        builder = new_runner()
        builder.prefill(features)
        build_ms = (time.perf_counter() - started) * 1000
        prefix = self._items[key] = VoicePrefix(builder.past, builder.total)
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)  # the KV is released with the last reference
        return prefix, False, build_ms

    def clear(self) -> None:
        self._items.clear()
