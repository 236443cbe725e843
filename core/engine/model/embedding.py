"""``embed_tokens``: the prompt embeddings (with the unconditional CFG row) and the text table CFG needs."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np

from core.engine.constants import START_SPEECH, TEXT_START, TEXT_STOP
from core.engine.errors import ModelSignatureError
from core.engine.model.model_info import GraphNames

log = logging.getLogger(__name__)


def llama_positions(ids: np.ndarray) -> np.ndarray:
    """Original/multilingual prefill positions: ``where(id >= 6561, 0, arange(S) - 1)`` (contract §4.2)."""
    s = ids.shape[-1]
    return np.where(ids >= START_SPEECH, 0, np.arange(s, dtype=np.int64) - 1).astype(np.int64)


def text_span(ids: np.ndarray) -> np.ndarray:
    """Boolean mask of the text positions: from the text-start id 255 up to and including the first 0 after it."""
    row = ids[0]
    mask = np.zeros(row.shape, dtype=bool)
    starts = np.flatnonzero(row == TEXT_START)
    if starts.size:
        stops = np.flatnonzero((row == TEXT_STOP) & (np.arange(row.size) > starts[0]))
        end = stops[0] + 1 if stops.size else row.size
        mask[starts[0] : end] = True
    return mask


def load_text_table(path: Path, hidden: int) -> np.ndarray:
    """The text embedding table ([text_vocab, hidden]) stored as an initializer of ``embed_tokens``."""
    import onnx
    from onnx import numpy_helper
    from onnx.external_data_helper import load_external_data_for_tensor, uses_external_data

    model = onnx.load(str(path), load_external_data=False)
    tables = [t for t in model.graph.initializer if len(t.dims) == 2 and t.dims[1] == hidden]
    named = [t for t in tables if "text" in t.name.lower() and "pos" not in t.name.lower()]
    if len(named) != 1:
        raise ModelSignatureError("bundle.no_text_table", file=path.name, tables=[t.name for t in tables])
    tensor = named[0]
    if uses_external_data(tensor):
        load_external_data_for_tensor(tensor, str(path.parent))
    return numpy_helper.to_array(tensor).astype(np.float32, copy=False)


class PromptEmbedder:
    """Builds the prompt ``inputs_embeds`` for one sentence (batch 2 with CFG: row 1 is unconditional)."""

    def __init__(self, session: Any, variant: str, names: GraphNames, text_table: np.ndarray | None):
        self.session = session
        self.variant = variant
        self.names = names
        self.text_table = text_table

    def feeds(self, ids: np.ndarray, positions: np.ndarray | None, exaggeration: float) -> dict[str, np.ndarray]:
        names = self.names
        if self.variant == "turbo":
            return {names.input_ids: ids}
        batch = ids.shape[0]
        return {
            names.input_ids: ids,
            names.position_ids: llama_positions(ids) if positions is None else positions,
            names.exaggeration: np.full(batch, exaggeration, dtype=np.float32),
        }

    def text(self, ids: np.ndarray, exaggeration: float, cfg: bool) -> np.ndarray:
        embeds: np.ndarray = self.session.run([self.names.inputs_embeds], self.feeds(ids, None, exaggeration))[0]
        if not cfg:
            return embeds
        if self.text_table is None:
            raise ValueError("classifier-free guidance needs the text table (Capabilities.supports_cfg is False)")
        # Unconditional row: the same embeddings minus each text token's text-table row (position kept).
        span = text_span(ids)
        uncond = embeds.copy()
        uncond[0, span] -= self.text_table[ids[0, span]].astype(embeds.dtype)
        return np.concatenate([embeds, uncond], axis=0)
