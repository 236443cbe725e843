"""The streaming loudness meter and limiter that an export of hours runs block by block."""

from __future__ import annotations

import numpy as np
import pedalboard

from core.engine.audio.finishing import LoudnessMeter, StreamingLimiter, integrated_loudness
from core.engine.constants import SAMPLE_RATE


def tone(seconds: float, amplitude: float, hz: float = 997.0) -> np.ndarray:
    t = np.arange(round(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (amplitude * np.sin(2 * np.pi * hz * t)).astype(np.float32)


def test_a_full_scale_997_hz_tone_reads_minus_3_lufs_as_bs1770_says():
    assert abs(integrated_loudness(tone(5, 1.0)) - (-3.01)) < 0.1
    assert abs(integrated_loudness(tone(5, 0.1)) - (-23.01)) < 0.1


def test_the_meter_reads_the_same_block_by_block_as_at_once():
    rng = np.random.default_rng(1)
    audio = (rng.standard_normal(SAMPLE_RATE * 12) * 0.05 * np.repeat(rng.random(12), SAMPLE_RATE)).astype(np.float32)
    whole = LoudnessMeter()
    whole.add(audio)
    blocks = LoudnessMeter()
    for start in range(0, audio.size, 1234):
        blocks.add(audio[start : start + 1234])
    assert abs(whole.integrated() - blocks.integrated()) < 1e-9
    assert abs(blocks.rms_db() - 10 * np.log10(np.mean(audio.astype(np.float64) ** 2))) < 1e-6
    assert abs(blocks.peak_db() - 20 * np.log10(np.max(np.abs(audio)))) < 1e-6


def test_silence_and_short_audio_have_no_loudness():
    meter = LoudnessMeter()
    meter.add(np.zeros(SAMPLE_RATE, np.float32))
    assert meter.integrated() is None and meter.rms_db() is None and meter.peak_db() is None
    assert integrated_loudness(tone(0.2, 0.5)) is None


def test_the_streaming_limiter_gives_back_every_sample_in_place_as_the_whole_file_limiter_does():
    audio = tone(6, 0.95, 220.0) * (1 + 0.5 * np.sin(np.linspace(0, 20, SAMPLE_RATE * 6))).astype(np.float32)
    whole = pedalboard.BrickwallLimiter(ceiling_db=-3.0, true_peak=True)(audio[None, :], SAMPLE_RATE)[0]
    limiter = StreamingLimiter(-3.0)
    out = [limiter.process(audio[i : i + 4801]) for i in range(0, audio.size, 4801)]
    streamed = np.concatenate(out + [limiter.flush()])
    assert streamed.size == audio.size
    assert np.max(np.abs(streamed - whole)) < 1e-6
    assert 20 * np.log10(np.max(np.abs(streamed))) <= -2.99
    assert limiter.flush().size == 0


def test_the_true_peak_meter_reads_block_by_block_what_the_whole_file_check_reads():
    from core.engine.audio.finishing import TruePeakMeter, true_peak_db

    audio = tone(3, 0.7, 5000.0)
    meter = TruePeakMeter()
    for start in range(0, audio.size, 999):
        meter.add(audio[start : start + 999])
    meter.add(np.zeros(0, np.float32), last=True)
    assert abs(meter.peak_db() - true_peak_db(audio)) < 0.05
