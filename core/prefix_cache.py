"""The voice-prefix KV cache: the language model's prefill of the conditioning rows, once per voice.

The conditioning rows lead every prompt and depend only on the voice, so their KV is computed once per voice and
batch size (2 with CFG: both rows see the same conditioning) and kept. A request starts its cache from a reference
to it — the OrtValues (or numpy arrays) are shared, never copied, and never written: every run allocates new
presents — and prefills only its text, with positions and the attention mask continuing after the prefix.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass


@dataclass(frozen=True)
class VoicePrefix:
    past: object
    """What the KV runner's ``adopt`` takes: a list of OrtValues (chained) or a dict of arrays (plain loop)."""
    total: int
    """Positions in the prefix (the conditioning rows)."""


class PrefixCache:
    def __init__(self, capacity: int = 3):
        self.capacity = capacity
        self._items: OrderedDict[tuple, VoicePrefix] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get_or_build(self, key: tuple, build) -> VoicePrefix:
        if key in self._items:
            self._items.move_to_end(key)
            self.hits += 1
            return self._items[key]
        self.misses += 1
        prefix = build()
        self._items[key] = prefix
        while len(self._items) > self.capacity:
            self._items.popitem(last=False)  # the KV is released with the last reference
        return prefix

    def clear(self) -> None:
        self._items.clear()
