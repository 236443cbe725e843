"""Stand-in ``embed_tokens`` graphs.

Turbo: ``input_ids`` only, one table. Original/multilingual: ``input_ids``, ``position_ids`` and ``exaggeration``;
positions from the text-start id 255 up to and including the first text-stop id 0 are text (text table + text
positions), id 6563 gets the exaggeration vector, the rest is speech (speech table + speech positions). As in the
real graphs, an id past the end of a table is an error, not silently clamped.

Every row carries the stand-in LM's exact markers: channel 0 = 0 (not a conditioning row) and channel 1 = a small
integer code of the token id; position and exaggeration vectors leave both channels untouched.
"""

from __future__ import annotations

import numpy as np

from core.engine import EXAGGERATION_TOKEN as EXAGGERATION
from core.engine import TEXT_START, TEXT_STOP
from core.standin.graph_builder import F32, I64, GraphBuilder
from core.standin.spec import StandinSpec

TEXT_TABLE_NAME = "text_emb.weight"


def _table(rng: np.random.Generator, rows: int, hidden: int, scale: float, with_codes: bool) -> np.ndarray:
    table = rng.standard_normal((rows, hidden), dtype=np.float32) * np.float32(scale)
    table[:, 0] = 0.0
    table[:, 1] = (np.arange(rows) * 7 + 3) % 97 if with_codes else 0.0
    return table


def build_embed_tokens(spec: StandinSpec, seed: int) -> GraphBuilder:
    rng = np.random.default_rng(seed + 3)
    H = spec.hidden
    b = GraphBuilder("embed_tokens")
    ids = b.input("input_ids", I64, ["batch_size", "sequence_length"])
    if spec.variant == "turbo":
        table = b.init("wte.weight", _table(rng, spec.text_table_rows, H, 1.0, True))
        b.output(b.op("Gather", table, ids), "inputs_embeds", F32, ["batch_size", "sequence_length", H])
        return b

    pos = b.input("position_ids", I64, ["batch_size", "sequence_length"])
    exaggeration = b.input("exaggeration", F32, ["batch_size"])
    axis1 = b.const(1, np.int64)
    started = b.op(
        "Greater",
        b.op("CumSum", b.op("Cast", b.op("Equal", ids, b.const(TEXT_START, np.int64)), to=I64), axis1),
        b.const(0, np.int64),
    )
    is_stop = b.op("And", b.op("Equal", ids, b.const(TEXT_STOP, np.int64)), started)
    stops_before = b.op("CumSum", b.op("Cast", is_stop, to=I64), axis1, exclusive=1)
    is_text = b.op("And", started, b.op("Equal", stops_before, b.const(0, np.int64)))
    is_emo = b.op("Equal", ids, b.const(EXAGGERATION, np.int64))
    is_speech = b.op("Not", b.op("Or", is_text, is_emo))
    zero = b.const(0, np.int64)

    def lookup(table: str, index: str, where: str) -> str:
        return b.op("Gather", table, b.op("Where", where, index, zero))

    text_table = b.init(TEXT_TABLE_NAME, _table(rng, spec.text_table_rows, H, 1.0, True))
    text_pos = b.init("text_pos_emb.weight", _table(rng, spec.max_text_positions, H, 0.02, False))
    speech_table = b.init("speech_emb.weight", _table(rng, spec.logits_vocab, H, 1.0, True))
    speech_pos = b.init("speech_pos_emb.weight", _table(rng, spec.max_positions, H, 0.02, False))
    emo_vec = rng.standard_normal(H, dtype=np.float32)
    emo_vec[:2] = 0.0

    text = b.add(lookup(text_table, ids, is_text), lookup(text_pos, pos, is_text))
    speech = b.add(lookup(speech_table, ids, is_speech), lookup(speech_pos, pos, is_speech))
    emo = b.mul(b.op("Unsqueeze", exaggeration, b.const([1, 2], np.int64)), b.init("emotion.weight", emo_vec))
    unsq = b.const([2], np.int64)
    out = b.op(
        "Where", b.op("Unsqueeze", is_emo, unsq), emo, b.op("Where", b.op("Unsqueeze", is_text, unsq), text, speech)
    )
    b.output(out, "inputs_embeds", F32, ["batch_size", "sequence_length", H])
    return b
