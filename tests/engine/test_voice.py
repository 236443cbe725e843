from __future__ import annotations

import os

import numpy as np
import pytest
import soundfile as sf

from core.engine.audio.voice_reference import load_voice
from core.engine.errors import Notice, VoiceReferenceError
from core.wording import describe_error, describe_notice
from tests.conftest import deny_reading, tone


def write(tmp_path, name, data, rate=24000, **kw):
    path = tmp_path / name
    sf.write(path, data, rate, **kw)
    return path


def test_stereo_48k_is_mixed_and_resampled(tmp_path):
    voice = load_voice(write(tmp_path, "s.flac", tone(6, 48000, channels=2), 48000))
    assert voice.channels == 2 and voice.source_rate == 48000
    assert abs(voice.samples.size - 6 * 24000) <= 2 and voice.samples.dtype == np.float32
    assert voice.warnings == ()


def test_8khz_8bit_is_accepted_with_a_warning(tmp_path):
    voice = load_voice(write(tmp_path, "n.wav", tone(6, 8000), 8000, subtype="PCM_U8"))
    assert abs(voice.samples.size - 6 * 24000) <= 3
    assert Notice("voice.low_rate", {"rate": 8000}) in voice.warnings
    assert any("8000 Hz" in describe_notice(w) for w in voice.warnings)


def test_short_clipped_and_long_recordings_warn(tmp_path):
    short = load_voice(write(tmp_path, "a.wav", tone(2))).warnings
    assert [w.code for w in short] == ["voice.short"] and short[0].data["seconds"] == pytest.approx(2)
    assert "short (2.0 s)" in describe_notice(short[0])
    clipped = load_voice(write(tmp_path, "b.wav", np.clip(tone(6) * 10, -1, 1))).warnings
    assert any(w.code == "voice.clipped" and "clipped" in describe_notice(w) for w in clipped)
    long = load_voice(write(tmp_path, "c.ogg", tone(40, 16000), 16000))
    assert any("first 30 s" in describe_notice(w) for w in long.warnings) and long.samples.size == 30 * 24000


def test_same_audio_same_digest_whatever_the_name(tmp_path):
    a = load_voice(write(tmp_path, "a.wav", tone(3)))
    b = load_voice(write(tmp_path, "b.wav", tone(3)))
    c = load_voice(write(tmp_path, "c.wav", tone(3, amplitude=0.2)))
    assert a.digest == b.digest != c.digest


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_unreadable_file(tmp_path):
    path = write(tmp_path, "locked.wav", tone(3))
    path.chmod(0)
    with pytest.raises(VoiceReferenceError) as caught:
        load_voice(path)
    assert caught.value.code == "voice.permission_denied"


def test_unreadable_file_for_any_user(tmp_path, monkeypatch):
    path = write(tmp_path, "locked.wav", tone(3))
    deny_reading(monkeypatch, path)
    with pytest.raises(VoiceReferenceError) as caught:
        load_voice(path)
    assert caught.value.code == "voice.permission_denied" and caught.value.data["name"] == "locked.wav"
    assert "locked.wav: permission denied" in describe_error(caught.value)


def test_a_ten_minute_recording_is_read_only_as_far_as_it_is_used(tmp_path, monkeypatch):
    path = write(tmp_path, "talk.flac", tone(600, 16000), 16000)
    read = []
    real_read = sf.SoundFile.read
    monkeypatch.setattr(
        sf.SoundFile, "read", lambda self, frames=-1, **kw: read.append(frames) or real_read(self, frames, **kw)
    )
    voice = load_voice(path)
    assert voice.duration_s == pytest.approx(600) and voice.samples.size == 30 * 24000
    assert read and max(read) <= 30 * 16000 + 1
    assert any("first 30 s of the 600 s" in describe_notice(w) for w in voice.warnings)


def test_nan_samples_are_refused(tmp_path):
    data = tone(3)
    data[100] = np.nan
    with pytest.raises(VoiceReferenceError) as caught:
        load_voice(write(tmp_path, "nan.wav", data, subtype="FLOAT"))
    assert caught.value.code == "voice.invalid_samples" and caught.value.data == {"name": "nan.wav"}


def test_noise_is_flagged_but_speech_with_gaps_is_not(tmp_path):
    from core.standin import synthetic_voice

    rng = np.random.default_rng(0)
    noisy = (tone(6)[:, 0] + 0.2 * rng.standard_normal(6 * 24000)).astype(np.float32) * 0.5
    assert Notice("voice.noisy") in load_voice(write(tmp_path, "n.wav", noisy)).warnings
    assert load_voice(write(tmp_path, "v.wav", synthetic_voice(6.0))).warnings == ()
