"""How far a faster decoder's output is from the reference output for the same speech tokens, in dB.

Two figures, both "signal ÷ difference" ratios (higher is closer; :data:`SNR_CAP` for identical outputs):

- :func:`waveform_snr_db`: sample by sample. Strict: a small phase shift counts as a large difference.
- :func:`log_mel_snr_db`: on 80-band log-mel spectrograms (the representation the decoder itself produces before its
  vocoder, and the one mel-distance metrics of vocoder work use), in dB above a floor 80 dB under the reference's
  peak (as ``librosa.power_to_db(top_db=80)``), so silence and the overall level do not inflate the figure.
"""

from __future__ import annotations

import math

import numpy as np

SNR_CAP = 150.0
"""What identical outputs score (JSON has no infinity)."""
N_FFT, HOP, N_MELS, TOP_DB = 1024, 256, 80, 80.0


def _snr(reference: np.ndarray, test: np.ndarray) -> float:
    signal = float(np.sum(np.square(reference, dtype=np.float64)))
    noise = float(np.sum(np.square(reference.astype(np.float64) - test, dtype=np.float64)))
    if noise <= signal * 10 ** (-SNR_CAP / 10):
        return SNR_CAP
    if signal == 0.0:
        return -SNR_CAP
    return max(-SNR_CAP, 10 * math.log10(signal / noise))


def _aligned(reference: np.ndarray, test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    reference, test = np.asarray(reference, np.float64).reshape(-1), np.asarray(test, np.float64).reshape(-1)
    n = min(reference.size, test.size)
    return reference[:n], test[:n]


def waveform_snr_db(reference: np.ndarray, test: np.ndarray) -> float:
    """``10·log10(Σ ref² / Σ (ref − test)²)`` over the common length."""
    return _snr(*_aligned(reference, test))


def mel_filters(sample_rate: int, n_fft: int = N_FFT, n_mels: int = N_MELS) -> np.ndarray:
    """Triangular filters on the HTK mel scale, [n_mels, n_fft // 2 + 1]."""
    mel = np.linspace(0.0, 2595 * math.log10(1 + (sample_rate / 2) / 700), n_mels + 2)
    hz = 700 * (10 ** (mel / 2595) - 1)
    bins = np.fft.rfftfreq(n_fft, 1 / sample_rate)
    low, centre, high = hz[:-2, None], hz[1:-1, None], hz[2:, None]
    rising = (bins - low) / (centre - low)
    falling = (high - bins) / (high - centre)
    return np.maximum(0.0, np.minimum(rising, falling))


def log_mel_db(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """[frames, 80] mel power in dB (Hann window, 1024-point FFT, hop 256)."""
    audio = np.asarray(audio, np.float64).reshape(-1)
    if audio.size < N_FFT:
        audio = np.pad(audio, (0, N_FFT - audio.size))
    frames = 1 + (audio.size - N_FFT) // HOP
    idx = np.arange(N_FFT)[None, :] + HOP * np.arange(frames)[:, None]
    power = np.abs(np.fft.rfft(audio[idx] * np.hanning(N_FFT), axis=1)) ** 2
    return 10 * np.log10(np.maximum(power @ mel_filters(sample_rate).T, 1e-20))


def log_mel_snr_db(reference: np.ndarray, test: np.ndarray, sample_rate: int) -> float:
    """The SNR of the test's log-mel spectrogram against the reference's, both measured in dB above a floor
    :data:`TOP_DB` under the reference's peak band."""
    reference, test = _aligned(reference, test)
    ref, out = log_mel_db(reference, sample_rate), log_mel_db(test, sample_rate)
    floor = ref.max() - TOP_DB
    return _snr(np.maximum(ref, floor) - floor, np.maximum(out, floor) - floor)
