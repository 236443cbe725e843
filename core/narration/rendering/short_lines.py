"""Short lines ("Yes.", "Oh!", "Indeed."): a tighter token cap for the one- and two-word segments dialogue brings.

Chatterbox is known to generate badly on very short input: with few text positions to attend to it may not say STOP,
running on into babble or silence (contract §6; resemble-ai/chatterbox#97). Upstream guards against that with an
alignment analyser over the language model's attention, which the ONNX graphs do not expose; the engine's guard is a
cap by text length with a floor of 64 speech tokens (:func:`core.engine.generation.stop_guards.token_cap`), and for a
short line the floor is what counts: "Yes." may run on for 2.56 s before it is stopped (Turbo: up to 3.8 s for a
two-word line, whose cap is 16 tokens a text token).

A short line's request therefore carries a cap of its own (``max_new_tokens``): its sentence's text tokens (the ids
the model is given, the template's included) at the model's ordinary pace (:data:`PACE`: the engine's own figures, ~6
speech tokens a Turbo BPE token, ~2 a character for the Original and Multilingual tokenizers), plus
:data:`LEAD_TOKENS` for the start and end of an utterance: about 1.1-1.5 s for a word, 1.7-2 s for two, instead of
2.56 s or more. Every stand-in stays under it (they say STOP after 5, 2 and 2 tokens a text position, plus up to 6).
A take that ends by itself within the cap is not touched (the same seed gives the same tokens: the cap only ends
generation, it does not change what is sampled before); a take that runs past it stops there and is flagged
``token_cap`` by the take screen at once, without waiting for the voice's rate to be known (a ``--retakes`` render
makes it again). Measured: docs/PERFORMANCE-LOG.md, "Short lines" (``python -m core bench-short-lines``).

:func:`render_options` is how every render builds a segment's options — on this computer (:mod:`.render`), in the
look-ahead's batches (:mod:`.lookahead`) and for a cluster's actors (:mod:`core.narration.cluster.render`) — so all of
them cap a short line alike. The cap is not part of the render key (:meth:`Project.render_key
<core.narration.projects.project.Project.render_key>`): no segment becomes pending, and a take rendered before
stands (it is what the same seed gives now, unless it ran past the cap).

Lines written in Han characters, kana or Hangul are left alone: their words cannot be counted by spaces.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from typing import Protocol

from core.engine import ChatterboxError, Pause, Pipeline, SynthesisOptions, split_text

SHORT_WORDS = 2
"""A line of at most this many words is short."""
PACE = {"turbo": 6, "original": 2, "multilingual": 2}
"""Speech tokens a text token of each model takes at an ordinary pace (the engine's figures in
``core/engine/generation/stop_guards.py``, without their 2-3x slack)."""
LEAD_TOKENS = 12
"""What a short line may take besides its text's pace: 0.48 s for the start and the end of an utterance."""

_WORD = re.compile(r"\w+(?:['’]\w+)*")
_SYLLABIC_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")


class SegmentOptions(Protocol):
    """What :func:`render_options` asks of a project (a cluster actor's stand-in for one has the same)."""

    def spoken_text(self, segment, /) -> str: ...

    def synthesis_options(self, segment, seed: int, /) -> SynthesisOptions: ...


def words(text: str) -> int:
    """Words of ``text`` ("don't" is one)."""
    return len(_WORD.findall(text))


def sentences(text: str) -> list[str]:
    """The sentences the engine speaks one by one (pause tags left out; none when there is nothing to say)."""
    try:
        return [p.text.strip() for p in split_text(text) if not isinstance(p, Pause)]
    except ChatterboxError:
        return []


def is_short_line(text: str) -> bool:
    """A line of at most :data:`SHORT_WORDS` words, in a script whose characters are letters."""
    count = sum(words(s) for s in sentences(text))
    return 0 < count <= SHORT_WORDS and not any(_syllabic(c) for c in text)


def short_line_cap(text: str, pipeline: Pipeline, options: SynthesisOptions) -> int | None:
    """The speech tokens a short line may have in each of its sentences with ``pipeline``'s model (``None``: not a
    short line, or a model or text the engine will refuse anyway): the cap of its longest sentence in text tokens,
    :data:`PACE` for each plus :data:`LEAD_TOKENS`."""
    pace = PACE.get(pipeline.capabilities.variant)
    if pace is None or not is_short_line(text):
        return None
    try:
        rows = pipeline.request_rows(text, replace(options, seed=options.seed or 0))
    except ChatterboxError:
        return None  # the render reports it for the segment, as before
    if not rows:
        return None
    return pace * max(row.ids.shape[1] for row in rows.values()) + LEAD_TOKENS


def with_short_line_cap(text: str, options: SynthesisOptions, pipeline: Pipeline) -> SynthesisOptions:
    """``options`` for speaking ``text`` with ``pipeline``, with a short line's cap (a lower ``max_new_tokens`` of
    the book's own stays). The same options for anything else, and the same again when applied twice."""
    cap = short_line_cap(text, pipeline, options)
    if cap is None or (options.max_new_tokens is not None and options.max_new_tokens <= cap):
        return options
    return replace(options, max_new_tokens=cap)


def render_options(project: SegmentOptions, segment, seed: int, pipeline: Pipeline) -> SynthesisOptions:
    """The synthesis options a render speaks ``segment`` with on ``pipeline``: the project's, with a short line's
    cap."""
    return with_short_line_cap(project.spoken_text(segment), project.synthesis_options(segment, seed), pipeline)


def _syllabic(char: str) -> bool:
    if char.isascii() or not char.isalpha():
        return False
    return unicodedata.name(char, "").startswith(_SYLLABIC_SCRIPTS)
