"""The language-model runners: the model with its KV cache, run two ways so they can be compared.

:class:`ChainedKV` (the default): every ``present.*`` stays an onnxruntime ``OrtValue`` on the session's device and
is bound as the next step's ``past_key_values.*`` through IOBinding; never converted to numpy. The step's token
embedding goes from ``embed_tokens`` straight into the language model through one preallocated ``OrtValue``; the
small per-step inputs (ids, positions, mask) are views of preallocated buffers; only the last position's logits are
read back, into a preallocated buffer.

:class:`CopiedKV` (``kv_chaining=False``): the plain loop of the model cards, ``session.run`` returning numpy arrays
that are fed back as the next past.

Both expose ``prefill(embeds)`` (callable more than once: conditioning rows, then text) and ``step(token)``, each
returning the last position's logits as a [batch, vocab] array, plus ``ort_s``, the seconds spent inside
onnxruntime, so Python overhead can be measured.

Several sentences can share one batch (:mod:`.batch_generate`): ``prefill_rows`` left-pads each row's text to the
longest, masks the padding out and keeps per-row positions (``step`` then takes one token per row). Only language
models with a ``position_ids`` input (Turbo) can do that: the others derive positions from the cache length.

:class:`SharedKV` (the default where the graph allows it, :mod:`core.engine.model.shared_cache`): :class:`ChainedKV`
whose steps bind one buffer per cache tensor as both the past and the present, so a step writes one position in
place instead of copying the cache. On such a graph every runner prefills several rows on top of a cache one row at
a time (the operator takes one row then).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import onnxruntime as ort

from core.engine.model.model_info import ModelInfo
from core.engine.model.shared_cache import shares_cache

Token = int | np.ndarray
"""One speech token for every row, or one per row."""


class KVRunner:
    past: Any
    """The cache: ``OrtValue``s (chained) or numpy arrays by name (copied)."""

    def __init__(self, lm: Any, embed: Any, info: ModelInfo, batch: int, exaggeration: float, device: str):
        self.lm, self.embed, self.info = lm, embed, info
        self.batch = batch
        self.device = device
        self.total = 0
        """Positions in the cache."""
        self.generated_fed = 0
        """Speech tokens fed back so far (original/multilingual step positions are this + 1)."""
        self.ort_s = 0.0
        self.exaggeration = np.full(batch, exaggeration, dtype=np.float32)
        self.ids = np.zeros((batch, 1), dtype=np.int64)
        self.step_pos = np.zeros((batch, 1), dtype=np.int64)
        self.lm_pos = np.zeros((batch, 1), dtype=np.int64)
        self._mask = np.ones(batch * 1024, dtype=np.int64)
        self.pads = np.zeros((batch, 1), dtype=np.int64)
        """Padding columns per row (``prefill_rows``): positions run that much behind the cache length."""
        self._row_mask: np.ndarray | None = None
        """[batch, columns] mask with the padding zeroed, once a row is padded; ``None`` while all ones."""
        self.names, self.embed_names = info.lm, info.embed
        self.rows_apart = shares_cache(lm)
        """Whether several rows on top of a cache are prefilled one row at a time (a graph sharing its cache)."""

    def _apart(self, length: int) -> bool:
        return self.rows_apart and self.batch > 1 and self.total > 0 and length > 1

    def _prefill_by_row(self, embeds: np.ndarray, pasts: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
        """``embeds`` [batch, S, H] on top of ``pasts`` (the cache as arrays, in ``past_names`` order), one row per
        run: the last position's logits [batch, vocab] and the presents as arrays. Advances ``total``."""
        length = embeds.shape[1]
        mask = self._mask_view(self.total + length)
        positions = self._prefill_positions(length) if self.info.lm_has_position_ids else None
        outputs = [self.names.logits, *self.info.present_names]
        logits: list[np.ndarray] = []
        presents: list[list[np.ndarray]] = [[] for _ in pasts]
        started = time.perf_counter()
        for row in range(self.batch):
            feeds = {
                self.names.inputs_embeds: np.ascontiguousarray(embeds[row : row + 1], dtype=self.info.embeds_dtype),
                self.names.attention_mask: np.ascontiguousarray(mask[row : row + 1]),
                **{name: past[row : row + 1] for name, past in zip(self.info.past_names, pasts, strict=True)},
            }
            if positions is not None:
                feeds[self.names.position_ids] = np.ascontiguousarray(positions[row : row + 1])
            result = self.lm.run(outputs, feeds)
            logits.append(result[0][:, -1, :])
            for kept, present in zip(presents, result[1:], strict=True):
                kept.append(present)
        self.ort_s += time.perf_counter() - started
        self.total += length
        return np.concatenate(logits, axis=0), [np.concatenate(kept, axis=0) for kept in presents]

    def _mask_view(self, length: int) -> np.ndarray:
        """``attention_mask`` [batch, length] as a contiguous view of one preallocated buffer of ones (a copy of
        the rows' mask once a row has padding)."""
        if self._row_mask is not None:
            if length > self._row_mask.shape[1]:
                grow = np.ones((self.batch, max(length, 2 * self._row_mask.shape[1])), dtype=np.int64)
                grow[:, : self._row_mask.shape[1]] = self._row_mask
                self._row_mask = grow
            return np.ascontiguousarray(self._row_mask[:, :length])
        needed = self.batch * length
        if needed > self._mask.size:
            self._mask = np.ones(max(needed, 2 * self._mask.size), dtype=np.int64)
        return self._mask[:needed].reshape(self.batch, length)

    def _embed_step_feeds(self, token: Token) -> dict[str, np.ndarray]:
        """``token``: one id for every row, or one per row."""
        names = self.embed_names
        self.ids[:, 0] = token
        if self.info.variant == "turbo":
            return {names.input_ids: self.ids}
        self.step_pos[:] = self.generated_fed + 1
        return {names.input_ids: self.ids, names.position_ids: self.step_pos, names.exaggeration: self.exaggeration}

    def _prefill_positions(self, length: int) -> np.ndarray:
        row = np.arange(self.total, self.total + length, dtype=np.int64)
        positions: np.ndarray = np.maximum(row[None, :] - self.pads, 0)  # padding columns (masked): any valid one
        return positions

    def _step_positions(self) -> np.ndarray:
        self.lm_pos[:] = self.total - self.pads
        return self.lm_pos

    def prefill_rows(self, blocks: list[np.ndarray]) -> np.ndarray:
        """Prefill one [1, S_i, H] block per row, each left-padded to the longest; the padding is masked out and
        each row's positions continue from its own text. Needs ``position_ids`` (see the module's docstring)."""
        if not self.info.lm_has_position_ids:
            raise ValueError("this language model derives positions from the cache length: rows cannot be padded")
        if len(blocks) != self.batch:
            raise ValueError(f"{len(blocks)} blocks for a batch of {self.batch}")
        longest = max(block.shape[1] for block in blocks)
        embeds = np.zeros((self.batch, longest, self.info.hidden), dtype=self.info.embeds_dtype)
        if self._row_mask is None:
            self._row_mask = np.ones((self.batch, max(1024, 2 * (self.total + longest))), dtype=np.int64)
        for row, block in enumerate(blocks):
            pad = longest - block.shape[1]
            embeds[row, pad:] = block[0]
            self._row_mask[row, self.total : self.total + pad] = 0
        self.pads += longest - np.array([[block.shape[1]] for block in blocks], dtype=np.int64)
        return self.prefill(embeds)  # positions now run behind the cache length by each row's padding

    def prefill(self, embeds: np.ndarray) -> np.ndarray:
        """Run [batch, S, H] embeddings through the model; the last position's logits [batch, vocab]."""
        raise NotImplementedError

    def step(self, token: Token) -> np.ndarray:
        """Feed one speech token per row; the logits [batch, vocab] for the next."""
        raise NotImplementedError

    def adopt(self, past: Any, total: int) -> None:
        """Start from an existing cache of ``total`` positions (shared, never mutated)."""
        raise NotImplementedError


class ChainedKV(KVRunner):
    _presents_are_new = True
    """onnxruntime allocates each run's presents (read back as the next past); not so in :class:`SharedKV`."""

    def __init__(self, lm: Any, embed: Any, info: ModelInfo, batch: int, exaggeration: float, device: str = "cpu"):
        super().__init__(lm, embed, info, batch, exaggeration, device)
        self._lm_io = lm.io_binding()
        self._embed_io = embed.io_binding()
        self._output_names = [info.lm.logits, *info.present_names]
        self.past = [self._empty(name) for name in info.past_names]
        vocab = info.logits_vocab or lm.get_outputs()[0].shape[-1]
        self.logits = np.empty((batch, 1, vocab), dtype=info.logits_dtype)
        self._logits_ov = ort.OrtValue.ortvalue_from_numpy(self.logits)  # read back on the CPU, no allocation
        self._chain_embeds = info.embed_output_dtype == info.embeds_dtype
        if self._chain_embeds:
            self._step_embeds = ort.OrtValue.ortvalue_from_shape_and_type(
                [batch, 1, info.hidden], info.embeds_dtype, device, 0
            )
            self._embed_io.bind_ortvalue_output(info.embed.inputs_embeds, self._step_embeds)

    def _empty(self, name: str) -> ort.OrtValue:
        shape = (self.batch, self.info.kv_heads, 0, self.info.head_dim)
        return ort.OrtValue.ortvalue_from_numpy(np.zeros(shape, dtype=self.info.kv_dtype), self.device, 0)

    def adopt(self, past: list[Any], total: int) -> None:
        """Start from an existing cache (shared, never mutated: each run allocates new presents)."""
        self.past, self.total = list(past), total

    def _run(self, length: int, step: bool) -> list[Any]:
        io = self._lm_io
        # Bound numpy arrays must outlive the run: keep a reference until the next one.
        self._bound = [self._mask_view(self.total + length)]
        names = self.names
        io.bind_cpu_input(names.attention_mask, self._bound[0])
        if self.info.lm_has_position_ids:
            if step:
                io.bind_cpu_input(names.position_ids, self._step_positions())
            else:
                self._bound.append(self._prefill_positions(length))
                io.bind_cpu_input(names.position_ids, self._bound[-1])
        if step:
            io.bind_ortvalue_output(names.logits, self._logits_ov)
        else:
            io.bind_output(names.logits, "cpu")
        self._bind_cache(io, length)
        started = time.perf_counter()
        self.lm.run_with_iobinding(io)
        self.ort_s += time.perf_counter() - started
        # A step's logits land in a buffer of our own; its presents are read only where they are new tensors.
        outputs = io.get_outputs() if not step or self._presents_are_new else []
        self._keep_cache(outputs)
        self.total += length
        return list(outputs)

    def _bind_cache(self, io: Any, length: int) -> None:
        """The cache in (``past``) and new presents out, allocated by onnxruntime."""
        for name, value in zip(self.info.past_names, self.past):
            io.bind_ortvalue_input(name, value)
        for name in self.info.present_names:
            io.bind_output(name, self.device, 0)

    def _keep_cache(self, outputs: Any) -> None:
        self.past = [outputs[i] for i in range(1, len(self._output_names))]

    def prefill(self, embeds: np.ndarray) -> np.ndarray:
        if self._apart(embeds.shape[1]):
            by_row, presents = self._prefill_by_row(embeds, [value.numpy() for value in self.past])
            self.past = [ort.OrtValue.ortvalue_from_numpy(p, self.device, 0) for p in presents]
            return by_row
        self._prefill_embeds: np.ndarray = np.ascontiguousarray(embeds, dtype=self.info.embeds_dtype)
        self._lm_io.bind_cpu_input(self.names.inputs_embeds, self._prefill_embeds)
        outputs = self._run(embeds.shape[1], step=False)
        logits: np.ndarray = outputs[0].numpy()[:, -1, :]
        return logits

    def step(self, token: Token) -> np.ndarray:
        feeds = self._embed_step_feeds(token)
        started = time.perf_counter()
        if self._chain_embeds:
            for name, value in feeds.items():
                self._embed_io.bind_cpu_input(name, value)
            self.embed.run_with_iobinding(self._embed_io)
            self._lm_io.bind_ortvalue_input(self.names.inputs_embeds, self._step_embeds)
        else:
            embeds: np.ndarray = self.embed.run([self.embed_names.inputs_embeds], feeds)[0]
            self._prefill_embeds = embeds.astype(self.info.embeds_dtype)
            self._lm_io.bind_cpu_input(self.names.inputs_embeds, self._prefill_embeds)
        self.ort_s += time.perf_counter() - started
        self.generated_fed += 1
        self._run(1, step=True)
        return self.logits[:, 0, :]


class CopiedKV(KVRunner):
    def __init__(self, lm: Any, embed: Any, info: ModelInfo, batch: int, exaggeration: float, device: str = "cpu"):
        super().__init__(lm, embed, info, batch, exaggeration, device)
        empty: np.ndarray = np.zeros((batch, info.kv_heads, 0, info.head_dim), dtype=info.kv_dtype)
        self.past = {name: empty for name in info.past_names}
        self._outputs = [info.lm.logits, *info.present_names]

    def adopt(self, past: dict[str, np.ndarray], total: int) -> None:
        self.past, self.total = dict(past), total

    def _run(self, embeds: np.ndarray, positions: np.ndarray | None) -> np.ndarray:
        length = embeds.shape[1]
        feeds: dict[str, np.ndarray | None] = {
            self.names.inputs_embeds: embeds.astype(self.info.embeds_dtype, copy=False),
            self.names.attention_mask: self._mask_view(self.total + length),
            **self.past,
        }
        if self.info.lm_has_position_ids:
            feeds[self.names.position_ids] = positions
        started = time.perf_counter()
        outputs = self.lm.run(self._outputs, feeds)
        self.ort_s += time.perf_counter() - started
        self.past = dict(zip(self.info.past_names, outputs[1:]))
        self.total += length
        logits: np.ndarray = outputs[0][:, -1, :]
        return logits

    def prefill(self, embeds: np.ndarray) -> np.ndarray:
        if self._apart(embeds.shape[1]):
            logits, presents = self._prefill_by_row(embeds, [self.past[name] for name in self.info.past_names])
            self.past = dict(zip(self.info.past_names, presents, strict=True))
            return logits
        return self._run(embeds, self._prefill_positions(embeds.shape[1]))

    def step(self, token: Token) -> np.ndarray:
        feeds = self._embed_step_feeds(token)
        started = time.perf_counter()
        embeds = self.embed.run([self.embed_names.inputs_embeds], feeds)[0]
        self.ort_s += time.perf_counter() - started
        self.generated_fed += 1
        return self._run(embeds, self._step_positions().copy())


class SharedKV(ChainedKV):
    """:class:`ChainedKV` on a graph whose attention writes its cache in place (:mod:`core.engine.model.shared_cache`):
    each cache tensor lives in one buffer with room to grow (:data:`GROW` positions, or half the cache, beyond what
    is needed), bound as both the past and the present, so a step writes one position per layer instead of copying
    the whole cache into new memory. A cache it adopts (the voice prefix) is copied into the buffer once, at the
    first run, and never written; several rows prefilled on top of a cache run apart (:meth:`KVRunner._apart`) and
    move into a buffer at the next step. ``past`` gives the positions in use as exact tensors."""

    GROW = 256
    _presents_are_new = False

    def __init__(self, lm: Any, embed: Any, info: ModelInfo, batch: int, exaggeration: float, device: str = "cpu"):
        self._rooms: list[np.ndarray] | None = None
        """The arrays behind :attr:`_shared` (onnxruntime writes into them); ``None`` until the first run."""
        self._shared: list[ort.OrtValue] = []
        self._bound_rooms: list[ort.OrtValue] | None = None
        """The buffers bound as past and present now (a binding lasts from run to run): bound again only when the
        buffers change (more room, an adopted cache), not at every step (48 binds a step for Turbo's 24 layers)."""
        super().__init__(lm, embed, info, batch, exaggeration, device)

    @property
    def past(self) -> list[Any]:
        if self._rooms is not None:  # leave the buffers: a reader (the prefix cache) wants the exact cache
            self._exact = [
                ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(room[:, :, : self.total]), self.device, 0)
                for room in self._rooms
            ]
            self._rooms, self._shared = None, []
        return self._exact

    @past.setter
    def past(self, value: list[Any]) -> None:
        self._exact = value
        self._rooms, self._shared = None, []

    @property
    def capacity(self) -> int:
        """Positions the shared buffers hold (0 before the first run)."""
        return 0 if self._rooms is None else self._rooms[0].shape[2]

    def _make_room(self, needed: int) -> None:
        if self._rooms is not None and self._rooms[0].shape[2] >= needed:
            return
        cached = self._rooms if self._rooms is not None else [value.numpy() for value in self._exact]
        capacity = needed + max(self.GROW, self.total // 2)
        rooms = []
        for old in cached:
            room = np.zeros((self.batch, old.shape[1], capacity, old.shape[3]), dtype=old.dtype)  # calloc: lazy
            room[:, :, : self.total] = old[:, :, : self.total]
            rooms.append(room)
        self._rooms = rooms
        self._shared = [ort.OrtValue.ortvalue_from_numpy(room) for room in rooms]

    def _bind_cache(self, io: Any, length: int) -> None:
        """One buffer per cache tensor, with room for this run, bound as both the past and the present."""
        self._make_room(self.total + length)
        if self._bound_rooms is self._shared:
            return
        for past, present, shared in zip(self.info.past_names, self.info.present_names, self._shared, strict=True):
            io.bind_ortvalue_input(past, shared)
            io.bind_ortvalue_output(present, shared)
        self._bound_rooms = self._shared

    def _keep_cache(self, outputs: Any) -> None:
        """Nothing to keep: onnxruntime wrote the new positions into the buffers."""
