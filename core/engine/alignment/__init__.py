"""Forced alignment: the words of a recording's own text placed in time (word timings for subtitles and
read-along), offline.

pocketsphinx's US English acoustic model places the words of any language espeak-ng pronounces; faster-whisper is
used instead for other languages where it is installed and its model given. ``align()`` is the one way in;
:class:`AlignerProcess` (``process.py``) runs it in a child process, off the GIL of the caller's threads."""

from core.engine.alignment.align import align
from core.engine.alignment.errors import AlignmentError
from core.engine.alignment.phonemes import espeak_available
from core.engine.alignment.process import AlignerFailed, AlignerProcess, shared_aligner
from core.engine.alignment.words import Alignment, WordTime, split_words

__all__ = [
    "AlignerFailed",
    "AlignerProcess",
    "Alignment",
    "AlignmentError",
    "WordTime",
    "align",
    "espeak_available",
    "shared_aligner",
    "split_words",
]
