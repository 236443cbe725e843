"""What the Re-voice tab remembers: the recording to convert, the conversion running (its id and audio so far), the
last converted audio and how it ended, and the words the tab shows about them. No widgets."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np

from core.engine import SAMPLE_RATE, ModelLoaded, SourceRecording

NO_SOURCE = "Open, drop or record a recording to re-voice first."
LOADING = "The recording is still being read: press Re-voice again in a moment."
NO_MODEL = "No model is loaded: choose one in the Models menu."
NO_VOICE = (
    "This model has no built-in voice: choose the voice to re-voice into (a library voice or a recording of 5–10 s "
    "of speech)."
)


def revoice_problem(
    source: SourceRecording | None, loading: bool, model: ModelLoaded | None, has_voice: bool
) -> str | None:
    """Why Re-voice cannot start (the message for the user), or None when it can."""
    if model is None:
        return NO_MODEL
    if loading:  # a newer recording is on its way: the one shown is not the one wanted
        return LOADING
    if source is None:
        return NO_SOURCE
    if not has_voice and not model.capabilities.has_default_voice:
        return NO_VOICE
    return None


def describe_source(source: SourceRecording) -> str:
    """``12.3 s · 44,100 Hz · stereo, mixed to mono``."""
    channels = "mono" if source.channels == 1 else "stereo" if source.channels == 2 else f"{source.channels} channels"
    if source.channels > 1:
        channels += ", mixed to mono"
    return f"{duration(source.seconds)} · {source.source_rate:,} Hz · {channels}"


def duration(seconds: float) -> str:
    """``12.3 s`` under a minute, ``4:05`` above."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    return f"{whole // 60}:{whole % 60:02d}"


def export_name(source: SourceRecording | None, voice: str) -> str:
    """``interview-as-Ada.wav``: the recording's name and the voice it became."""
    stem = Path(source.source).stem if source is not None else "recording"
    target = "".join(c if c.isalnum() or c in "-_" else "-" for c in voice).strip("-") or "voice"
    return f"{stem}-as-{target}.wav"


def timing_text(timings: dict[str, float]) -> str:
    """The status bar's speed words for a conversion."""
    return f"RTF {timings.get('rtf', 0.0):.2f} · first audio {timings.get('first_audio_ms', 0.0) / 1000:.2f} s"


def encoder_per_window(chunks: list[dict[str, Any]]) -> float:
    """The median speech-encoder time of a conversion's windows (its report's ``chunks``), in ms."""
    times = [float(c["encoder_ms"]) for c in chunks if "encoder_ms" in c]
    return statistics.median(times) if times else 0.0


class RevoiceController:
    """The source, the running conversion and the last result."""

    def __init__(self) -> None:
        self.source: SourceRecording | None = None
        self.rid: int | None = None
        """The conversion running (``None``: none)."""
        self.chunks: list[np.ndarray] = []
        self.converted: np.ndarray | None = None
        """The last conversion's audio (a stopped one keeps what had arrived)."""
        self.report: Any = None
        """The last finished conversion's :class:`RequestReport`."""
        self.ended = ""
        """How the last conversion ended when it did not finish: "stopped" or "failed" (kept until the next one)."""

    def set_source(self, source: SourceRecording) -> None:
        """A new recording: what was converted from the old one goes."""
        self.source = source
        self.converted, self.report, self.ended = None, None, ""

    def begin(self, rid: int) -> None:
        self.rid, self.chunks, self.ended = rid, [], ""
        self.converted, self.report = None, None

    def owns(self, rid: int) -> bool:
        return self.rid is not None and self.rid == rid

    def add_chunk(self, samples: np.ndarray) -> None:
        self.chunks.append(samples)

    def audio(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.float32)

    @property
    def converted_seconds(self) -> float:
        return sum(c.size for c in self.chunks) / SAMPLE_RATE

    def finish(self, report: Any) -> np.ndarray:
        """The conversion ended with all its audio: it becomes the last result."""
        self.rid, self.report, self.ended = None, report, ""
        self.converted = self.audio()
        return self.converted

    def stop(self) -> bool:
        """Stopped (by the user, or by a Speak taking the player): what arrived is kept. True when there is some."""
        if self.rid is None:
            return False
        self.rid, self.ended = None, "stopped"
        self.converted = self.audio() if self.chunks else None
        return self.converted is not None

    def fail(self) -> None:
        self.rid, self.ended = None, "failed"
        self.chunks = []


PLAYED = {"original": "the original", "converted": "the re-voiced audio"}


def playback_words(
    playing: str,
    at_s: float,
    converting: bool = False,
    lost: bool = False,
    no_output: bool = False,
    starved: bool = False,
) -> str:
    """The status bar's playback words while the tab plays: ``playing`` is "live" (the conversion as it streams),
    "original" or "converted"; ``at_s`` the place in the recording."""
    at = f"{at_s:.1f} s"
    if lost:
        return "audio output lost"
    if no_output:
        return "no audio output"
    if playing in PLAYED:
        return f"playing {PLAYED[playing]} · {at}"
    if converting and starved:
        return "buffering… (the conversion is behind playback)"
    if converting:
        return f"re-voicing… · played {at}"
    return f"playing · {at}"


def final_words(playing: str, at_s: float, ended: str = "") -> str:
    """The status bar's words once playback is over (they leave the status bar after a moment)."""
    if ended:
        return f"{ended} · played {at_s:.1f} s"
    if playing in PLAYED:
        return f"finished · played {PLAYED[playing]}"
    return f"finished · played {at_s:.1f} s"
