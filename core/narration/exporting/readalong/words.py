"""A read-along book highlighting word by word: each segment's words as clips of its chapter's audio.

A segment's clip (its speech and the pause after it) is cut at the start of each of its words after the first: the
first word's clip begins where the sentence's does, the last one's ends where the sentence's does, so the words'
clips follow one another without a gap and the overlay lasts exactly as long as its sentence-level one (a reading
system plays the clips one after another; the pauses are heard as narrated). A word not placed by the aligner has
no clip of its own: the word before it stays highlighted while it is said. A segment whose words cannot be cut so
(none placed, or two words in the same millisecond) keeps its sentence's clip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.engine import SAMPLE_RATE
from core.narration.exporting.readalong.audio import Clip
from core.narration.exporting.readalong.smil import Par
from core.narration.exporting.word_times import export_scale, take_words
from core.narration.projects.project import Project, Segment


@dataclass(frozen=True)
class WordPlan:
    words: tuple[str, ...]
    """The placed words, as the take's alignment writes them."""
    bounds_ms: tuple[int, ...]
    """Where each word's clip begins, and where the last one ends (one more than ``words``), increasing."""


def clip_ms(samples: int) -> int:
    """A place in a chapter's audio, in whole milliseconds (as every clip of the overlays is written)."""
    return samples * 1000 // SAMPLE_RATE


def plan_words(project: Project, segment: Segment, clip: Clip) -> WordPlan | None:
    """The word clips of ``segment`` at ``clip`` (``None``: the segment is highlighted as a sentence)."""
    take = project.chosen_take(segment)
    words = take_words(take) if take is not None else None
    scale = export_scale(take, clip.speech_end - clip.start) if words else None
    if not words or scale is None:
        return None
    inner = [clip.start + round(word.start * scale) for word in words[1:]]
    if any(place >= clip.speech_end for place in inner):
        return None
    bounds = [clip_ms(clip.start), *(clip_ms(p) for p in inner), clip_ms(clip.end)]
    if not all(later > earlier for earlier, later in zip(bounds, bounds[1:])):
        return None
    return WordPlan(tuple(w.word for w in words), tuple(bounds))


def word_pars(plan: WordPlan, ids: Sequence[str], document: str, audio: str) -> list[Par]:
    """One par per word: ``document`` is the content document's href from the overlay, ``audio`` the chapter's."""
    return [Par(f"{document}#{ident}", audio, plan.bounds_ms[k], plan.bounds_ms[k + 1]) for k, ident in enumerate(ids)]
