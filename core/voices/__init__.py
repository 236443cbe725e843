"""Voices above the engine: the voice library (saved recordings by name) and trimming a recording."""

from core.voices.library import (
    AUDIO_SUFFIXES,
    LibraryVoice,
    RemovedVoice,
    VoiceLibrary,
    VoiceLibraryError,
    safe_stem,
)
from core.voices.trimming import cut, speech_span

__all__ = [
    "AUDIO_SUFFIXES",
    "LibraryVoice",
    "RemovedVoice",
    "VoiceLibrary",
    "VoiceLibraryError",
    "cut",
    "safe_stem",
    "speech_span",
]
