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
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import onnxruntime as ort

from core.engine.model.model_info import ModelInfo

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
        for name, value in zip(self.info.past_names, self.past):
            io.bind_ortvalue_input(name, value)
        if step:
            io.bind_ortvalue_output(names.logits, self._logits_ov)
        else:
            io.bind_output(names.logits, "cpu")
        for name in self.info.present_names:
            io.bind_output(name, self.device, 0)
        started = time.perf_counter()
        self.lm.run_with_iobinding(io)
        self.ort_s += time.perf_counter() - started
        outputs = io.get_outputs()
        self.past = [outputs[i] for i in range(1, len(self._output_names))]
        self.total += length
        return list(outputs)

    def prefill(self, embeds: np.ndarray) -> np.ndarray:
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
        return self._run(embeds, self._prefill_positions(embeds.shape[1]))

    def step(self, token: Token) -> np.ndarray:
        feeds = self._embed_step_feeds(token)
        started = time.perf_counter()
        embeds = self.embed.run([self.embed_names.inputs_embeds], feeds)[0]
        self.ort_s += time.perf_counter() - started
        self.generated_fed += 1
        return self._run(embeds, self._step_positions().copy())
