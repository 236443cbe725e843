"""What the take screen measures of one take: facts about its speech tokens, its audio and its text, no verdicts.

The measures are stored with the take (``Take.screen["measures"]``), so that a verdict can be made again against new
thresholds or a voice's rate learnt later without reading the audio again (:mod:`.judge`).

- Tokens: how each sentence's generation stopped (``stop_token``, ``token_cap``, ``runaway: ...`` from the engine's
  stop guard), and the strongest repetition left in the tokens (:func:`token_loop`).
- Audio, in frames of 20 ms: the speech's level, the longest silence between the first and the last sound, sound
  after the last word (a noise-like tail, or sound after a pause near the end), clipped samples, loudness (BS.1770).
- Text: letters and digits of the spoken text (what a voice's rate is counted in), the pauses it asks for.

Measuring a take costs a few milliseconds (docs/PERFORMANCE-LOG.md, "Screening takes").
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from core.engine import (
    FADE_OUT,
    SAMPLE_RATE,
    SENTENCE_GAP_S,
    SILENCE_TOKEN,
    ChatterboxError,
    LoudnessMeter,
    Pause,
    split_text,
)

FRAME = SAMPLE_RATE // 50
"""20 ms."""
FRAME_S = FRAME / SAMPLE_RATE
SILENCE_BELOW_DB = 35.0
"""A frame is silent when it is this far under the speech's level (its 90th percentile)..."""
SILENCE_FLOOR_DB = -60.0
"""...or under this level in any case."""
END_PAUSE_S = 0.6
"""Sound after a pause at least this long, in the last 30 % of the take, is sound after the last word."""
NOISE_FLATNESS = 0.45
"""Spectral flatness (0 a tone, 1 white noise) over which a frame sounds like noise rather than speech."""
CLIP_LEVEL = 0.995
LOOP_PERIODS = range(2, 151)
"""Token periods a loop is looked for at (80 ms to 6 s of speech)."""
LOOP_MIN_TOKENS = 50
"""The shortest stretch judged for a loop: 2 s of speech tokens."""


@dataclass
class TakeMeasures:
    seconds: float
    speech_seconds: float
    """The take's length less the pauses and sentence gaps its text asks for."""
    letters: int
    """Letters and digits of the spoken text."""
    pause_s: float
    """The longest pause the text asks for (a ``[pause]`` tag), 0 when none."""
    longest_silence_s: float
    """The longest silence between the first and the last sound."""
    silence_at_s: float
    """Where that silence starts, in seconds from the start."""
    noise_tail_s: float
    """Noise-like sound at the very end."""
    after_pause_s: float
    """Sound after a pause near the end (the last 30 %), 0 when none."""
    clipped_ms: float
    end_db: float
    """How far the take's last 8 ms stand above the fade-out every finished take ends with (dB; 0 or less: it fades
    out; a take cut off ends mid-sound, 10-30 dB above it)."""
    loudness_lufs: float | None
    tokens: int
    stop_reasons: list[str] = field(default_factory=list)
    loop_period: int = 0
    """The period (in tokens) of the strongest repetition, 0 when none was measured."""
    loop_share: float = 0.0
    """How much of the strongest repeating window matches itself one period back (see :class:`.Thresholds`)."""
    loop_at_s: float = 0.0
    performed: bool = False
    """The take was re-voiced from a person's recording (:attr:`core.narration.projects.project.Take.performed`): it
    has no speech tokens or stop reasons, keeps the person's pace, and does not end in the pipeline's fade-out."""

    def to_dict(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict) -> TakeMeasures:
        known = {"end_db": -120.0, **{k: v for k, v in data.items() if k in cls.__dataclass_fields__}}
        return cls(**known)


def measure_take(
    audio: np.ndarray, text: str, tokens: list[int], stop_reasons: list[str], performed: bool = False
) -> TakeMeasures:
    """Everything the screen judges, of one take's audio (mono float32 at 24 kHz), spoken text and speech tokens
    (none for a ``performed`` take)."""
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    letters, pause_s, asked = text_facts(text)
    seconds = audio.size / SAMPLE_RATE
    silence, silence_at, noise_tail, after_pause = _silences(audio)
    period, share, loop_at = token_loop(tokens)
    meter = LoudnessMeter()
    meter.add(audio)
    loudness = meter.integrated()
    return TakeMeasures(
        seconds=seconds,
        speech_seconds=max(0.0, seconds - asked),
        letters=letters,
        pause_s=pause_s,
        longest_silence_s=silence,
        silence_at_s=silence_at,
        noise_tail_s=noise_tail,
        after_pause_s=after_pause,
        clipped_ms=_clipped_ms(audio),
        end_db=_end_db(audio),
        loudness_lufs=None if loudness is None or not np.isfinite(loudness) else float(loudness),
        tokens=len(tokens),
        stop_reasons=list(stop_reasons),
        loop_period=period,
        loop_share=share,
        loop_at_s=loop_at,
        performed=performed,
    )


def text_facts(text: str) -> tuple[int, float, float]:
    """Letters and digits of ``text``, its longest asked-for pause, and all the silence it asks for (pauses and
    the gaps between its sentences)."""
    letters = sum(1 for c in text if c.isalnum())
    try:
        pieces = split_text(text)
    except ChatterboxError:
        return letters, 0.0, 0.0
    pauses = [p.seconds for p in pieces if isinstance(p, Pause)]
    sentences = len(pieces) - len(pauses)
    return letters, max(pauses, default=0.0), sum(pauses) + max(0, sentences - 1) * SENTENCE_GAP_S


def frame_levels(audio: np.ndarray) -> np.ndarray:
    """dBFS of each 20 ms frame."""
    count = audio.size // FRAME
    if count == 0:
        return np.zeros(0)
    frames = audio[: count * FRAME].reshape(count, FRAME).astype(np.float64)
    return 10 * np.log10(np.mean(frames * frames, axis=1) + 1e-12)


def _silences(audio: np.ndarray) -> tuple[float, float, float, float]:
    levels = frame_levels(audio)
    if levels.size == 0:
        return 0.0, 0.0, 0.0, 0.0
    floor = max(SILENCE_FLOOR_DB, float(np.percentile(levels, 90)) - SILENCE_BELOW_DB)
    sound = levels > floor
    where = np.flatnonzero(sound)
    if where.size == 0:
        return audio.size / SAMPLE_RATE, 0.0, 0.0, 0.0
    first, last = int(where[0]), int(where[-1])
    runs = _runs(~sound[first : last + 1])
    longest = max(runs, key=lambda r: r[1], default=(0, 0))
    after_pause = 0.0
    tail_from = first + 0.7 * (last - first)
    for start, length in runs:
        if length * FRAME_S >= END_PAUSE_S and first + start >= tail_from:
            after_pause = (last - (first + start + length) + 1) * FRAME_S  # the sound after the latest such pause
    return (
        longest[1] * FRAME_S,
        (first + longest[0]) * FRAME_S,
        _noise_tail(audio, sound, last) * FRAME_S,
        after_pause,
    )


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(start, length) of each run of ``True``."""
    if mask.size == 0:
        return []
    edges = np.diff(np.concatenate(([0], mask.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return [(int(s), int(e - s)) for s, e in zip(starts, ends)]


def _noise_tail(audio: np.ndarray, sound: np.ndarray, last: int) -> int:
    """Frames of noise-like sound (high spectral flatness, far above the speech's own) ending at the last sound."""
    frames = audio[: sound.size * FRAME].reshape(sound.size, FRAME).astype(np.float64)
    spectra = np.abs(np.fft.rfft(frames * np.hanning(FRAME), axis=1))[:, 1:] ** 2 + 1e-12
    flatness = np.exp(np.mean(np.log(spectra), axis=1)) / np.mean(spectra, axis=1)
    body = flatness[sound][:-25] if sound.sum() > 50 else flatness[sound]
    typical = float(np.median(body)) if body.size else 0.0
    noisy = (flatness > max(NOISE_FLATNESS, typical + 0.25)) & sound
    count, gap, index = 0, 0, last
    while index >= 0:
        if noisy[index]:
            count, gap = count + 1 + gap, 0
        elif gap < 2:  # a frame or two of speech-like sound inside the noise
            gap += 1
        else:
            break
        index -= 1
    return count


END_WINDOWS = (12, 24, 48, 96, 192)
"""The last 0.5-8 ms, each judged against the share of the fade-out it lies in."""


def _end_db(audio: np.ndarray) -> float:
    """The pipeline ends every sentence with a linear fade-out of :data:`core.engine.FADE_OUT` samples, so the last
    ``k`` samples stay under ``k / FADE_OUT`` of the level before it. The most any of the last windows exceeds that
    bound, in dB, against the peak of the 20 ms before the fade."""
    if audio.size < FADE_OUT + FRAME:
        return -120.0
    before = float(np.max(np.abs(audio[-FADE_OUT - FRAME : -FADE_OUT])))
    if before <= 1e-4:
        return -120.0  # the take ends in silence: nothing to cut
    worst = 0.0
    for k in END_WINDOWS:
        worst = max(worst, float(np.max(np.abs(audio[-k:]))) / (before * k / FADE_OUT))
    return float(20 * np.log10(max(worst, 1e-6)))


def _clipped_ms(audio: np.ndarray) -> float:
    """Milliseconds of samples at full scale, counted in runs of three or more (a lone full-scale sample is a
    peak, not clipping)."""
    at_top = np.abs(audio) >= CLIP_LEVEL
    if not at_top.any():
        return 0.0
    clipped = sum(length for _start, length in _runs(at_top) if length >= 3)
    return clipped * 1000.0 / SAMPLE_RATE


def token_loop(tokens: list[int]) -> tuple[int, float, float]:
    """The strongest repetition in the speech tokens: (period, share, where in seconds). The share is, over the
    best window of three periods (at least :data:`LOOP_MIN_TOKENS`), how many tokens equal the one a period
    earlier; silence tokens (pauses) do not count as repeating."""
    seq = np.asarray(tokens, dtype=np.int64)
    best = (0, 0.0, 0.0)
    if seq.size < LOOP_MIN_TOKENS:
        return best
    voiced = seq != SILENCE_TOKEN
    for period in LOOP_PERIODS:
        window = max(3 * period, LOOP_MIN_TOKENS)
        if seq.size - period < window:
            break
        same = ((seq[period:] == seq[:-period]) & voiced[period:]).astype(np.int32)
        running = np.concatenate(([0], np.cumsum(same)))
        sums = running[window:] - running[:-window]
        at = int(np.argmax(sums))
        share = float(sums[at]) / window
        if share > best[1] + 1e-9:
            best = (period, share, at / 25.0)
    return best
