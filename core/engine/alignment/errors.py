"""The aligner's refusals: a code and its facts, worded by the front ends (:mod:`core.wording`)."""

from __future__ import annotations

from core.engine.errors import ChatterboxError


class AlignmentError(ChatterboxError):
    """A recording and its text cannot be aligned.

    Codes: ``align.not_matching`` (no word of the text was heard: ``words``, ``language``), ``align.no_audio`` (the
    recording is empty: ``seconds``), ``align.language`` (no pronunciations for the language: ``language``,
    ``reason``), ``align.not_installed`` (pocketsphinx is missing: ``package``, ``install``)."""
