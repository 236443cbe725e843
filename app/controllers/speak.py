"""What the Speak panel remembers about requests: the one running, its audio so far, the last result and how it
ended, and what a history entry records about it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine import ModelLoaded

from ..settings import Key, Settings

NO_TEXT = "Type some text to speak first."
NO_MODEL = "No model is loaded: choose one in the Models menu."
NO_VOICE = "This model has no built-in voice: drop a recording of 5–10 s of speech on the window."
HISTORY_SETTINGS = ("model/", "runtime/", "sampling/", "voice/")
"""The settings a history entry keeps (those that change what a request sounds like)."""


def speak_problem(text: str, model: ModelLoaded | None, has_voice: bool) -> str | None:
    """Why Speak cannot start (the message for the user), or None when it can."""
    if not text.strip():
        return NO_TEXT
    if model is None:
        return NO_MODEL
    if not has_voice and not model.capabilities.has_default_voice:
        return NO_VOICE
    return None


def history_fields(
    text: str, seed: int | None, model: ModelLoaded | None, voice: str, voice_source: str, settings: Settings
) -> dict[str, Any]:
    """What a history entry records about a request besides its audio (voice, model, seed, settings)."""
    return {
        "text": text,
        "seed": seed or 0,
        "voice": voice,
        "voice_source": voice_source,
        "variant": model.variant if model else "",
        "model": model.bundle.name if model else "",
        "precision": model.capabilities.lm_precision if model else "",
        "settings": {k.value: settings.get(k) for k in Key if k.value.startswith(HISTORY_SETTINGS)},
    }


@dataclass(frozen=True)
class PlaybackState:
    """What the status line about playback is made of (read from the player and the bridge on each tick)."""

    played_s: float
    lost: bool = False
    no_output: bool = False
    generating: bool = False
    holding_s: float = 0.0
    """Play smoothly: seconds until the planned start."""
    starved: bool = False
    """Generation is behind playback: the device has played everything it was given."""
    finished: bool = False
    ended: str = ""
    """"stopped" or "failed" until the next Speak."""


def playback_text(state: PlaybackState) -> str:
    """The status bar's playback text."""
    played = f"{state.played_s:.1f} s"
    if state.lost:
        return "audio output lost"
    if state.no_output:
        return "no audio output"
    if state.ended:
        return f"{state.ended} · played {played}"
    if state.holding_s > 0:
        return f"starting smoothly in {state.holding_s:.1f} s…"
    if state.generating and state.starved:
        return "buffering… (generation is behind playback)"
    if state.generating:
        return f"generating… · played {played}"
    if state.finished:
        return f"finished · played {played}"
    return f"playing · {played}"


class SpeakController:
    """The running request (its id and the history fields chosen when it started), its audio so far and the last
    result; no widgets."""

    def __init__(self) -> None:
        self.request: dict[str, Any] | None = None
        """The running request: ``rid`` and what its history entry records."""
        self.chunks: list[np.ndarray] = []
        self.last_audio: np.ndarray | None = None
        self.last_report: Any = None
        """The last finished request's :class:`RequestReport`."""
        self.ended = ""
        """How the last request ended when it did not finish: "stopped" or "failed" (kept until the next Speak)."""
        self.awaiting_playback = False

    @property
    def rid(self) -> int | None:
        return None if self.request is None else int(self.request["rid"])

    def begin(self, rid: int, fields: dict[str, Any]) -> None:
        self.request = {"rid": rid, **fields}
        self.chunks = []
        self.ended = ""
        self.awaiting_playback = True

    def add_chunk(self, samples: np.ndarray) -> None:
        self.chunks.append(samples)

    def audio(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros(0, np.float32)

    def owns(self, rid: int) -> bool:
        """The request ``rid`` is this panel's (not a project render or another front end's)."""
        return self.request is not None and self.request["rid"] == rid

    def finish(self, rid: int, report: Any, fallback: dict[str, Any]) -> dict[str, Any] | None:
        """The request ended with audio: keep it as the last result. Returns the history fields (with the seed it
        used) when there is audio to keep, else None. ``fallback``: the fields when the request is not known."""
        self.last_report = report
        self.last_audio = self.audio()
        self.ended = ""
        request, self.request = self.request, None
        if request is None or request.pop("rid") != rid:
            request = dict(fallback)
        if not self.last_audio.size:
            return None
        request["seed"] = report.seed
        return request

    def take_stopped(self, current: int | None) -> tuple[np.ndarray, dict[str, Any]] | None:
        """The request being stopped keeps what it produced: its audio and history fields, once (None when there is
        nothing to keep: no request, another request is current, or no audio yet)."""
        request, self.request = self.request, None
        if request is None or request.pop("rid") != current or not self.chunks:
            return None
        return self.audio(), request

    def stop(self) -> bool:
        """Stopped by the user: what arrived becomes the last result. True when there is audio to export."""
        self.ended = "stopped"
        if self.chunks:
            self.last_audio = self.audio()
            return True
        return False

    def interrupted(self) -> bool:
        """Cancelled by another request taking the player (a Re-voice): like :meth:`stop`, the request forgotten."""
        self.request = None
        return self.stop()

    def fail(self) -> None:
        self.request = None
        self.ended = "failed"

    def replayed(self, audio: np.ndarray) -> None:
        self.last_audio = audio
