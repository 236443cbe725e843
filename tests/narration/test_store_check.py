"""The store check measures exported files as ACX Check does: files made to pass, and files made to fail each rule."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core.engine import ChatterboxError
from core.narration import MASTERING, STORE_RULES, FileCheck, check_file, check_files, room_tone
from core.narration.exporting.store_check import _judge
from core.wording import describe_notice

av = pytest.importorskip("av")
RATE = 44_100
PRESET = MASTERING["acx"]


def _db(value: float) -> float:
    return 10.0 ** (value / 20.0)


def narration(
    head: float = PRESET.head_s,
    tail: float = PRESET.tail_s,
    rms_db: float = PRESET.rms_db,
    peak_db: float = PRESET.peak_db,
    tone_db: float | None = PRESET.room_tone_db,
    rate: int = RATE,
    words: float = 5.6,
    click_db: float | None = None,
) -> np.ndarray:
    """Stand-in speech (a voiced sound shaped into syllables, 0.4 s pauses between sentences) mastered the way the
    preset says: gain to ``rms_db`` over the whole file, a hard ceiling at ``peak_db``, room tone at the head, in
    the pauses and at the tail."""
    rng = np.random.default_rng(7)
    n = round(words * rate)
    t = np.arange(n) / rate
    syllables = np.clip(np.sin(2 * np.pi * 3.0 * t), 0, None) ** 0.5
    sentences = (t % 2.0) < 1.6  # 1.6 s of words, then a 0.4 s pause
    pitch = 2 * np.pi * np.cumsum(140.0 + 15.0 * np.sin(2 * np.pi * 0.7 * t)) / rate
    voiced = sum(np.sin(k * pitch + rng.uniform(0, 2 * np.pi)) / k for k in range(1, 24))  # a voice to ~3 kHz
    speech = voiced * syllables * sentences
    audio = np.concatenate([np.zeros(round(head * rate)), speech, np.zeros(round(tail * rate))])
    spoken = audio != 0
    for _ in range(3):  # the gain and the ceiling settle together
        rms = math.sqrt(float(np.mean(audio**2)))
        audio = np.clip(audio * (_db(rms_db) / rms), -_db(peak_db), _db(peak_db))
    if click_db is not None:  # a lip smack the limiter missed
        middle = audio.size // 2
        audio[middle : middle + 200] = _db(click_db) * np.sign(np.sin(np.arange(200) / 10))
    if tone_db is not None:
        audio = audio + np.where(spoken, 0.0, room_tone(audio.size, tone_db, seed=3))
    return audio.astype(np.float32)


def write(path: Path, audio: np.ndarray, codec: str = "libmp3lame", rate: int = RATE, bitrate=192_000, **extra):
    """``audio`` (mono, or channels × samples) encoded with PyAV as the export does."""
    planes = audio[None, :] if audio.ndim == 1 else audio
    layout = {1: "mono", 2: "stereo"}.get(planes.shape[0], f"{planes.shape[0]}c")
    with av.open(str(path), "w") as container:
        stream = container.add_stream(codec, rate=rate, layout=layout)
        if bitrate:
            stream.bit_rate = bitrate
        if extra.get("qscale"):
            stream.codec_context.qscale = extra["qscale"]
        fmt = stream.codec_context.format.name
        for start in range(0, planes.shape[1], 1152):
            chunk = planes[:, start : start + 1152]
            if fmt.startswith("s16"):
                chunk = (np.clip(chunk, -1, 1) * 32767).astype(np.int16)
            elif fmt.startswith("s32"):
                chunk = (np.clip(chunk, -1, 1) * (2**31 - 1)).astype(np.int32)
            else:
                chunk = chunk.astype(np.float32)
            if not fmt.endswith("p"):
                chunk = chunk.T.reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(chunk), format=fmt, layout=layout)
            frame.sample_rate = rate
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


@pytest.fixture(scope="module")
def passing(tmp_path_factory) -> FileCheck:
    return check_file(write(tmp_path_factory.mktemp("store") / "good.mp3", narration()))


def test_a_file_mastered_with_the_preset_passes_every_rule(passing):
    assert passing.passed, [describe_notice(p, "cli") for p in passing.problems]
    assert -20.5 < passing.rms_db < -19.5 and passing.peak_db <= -3.0
    assert -75 < passing.noise_floor_db < -65
    assert 0.7 <= passing.head_s <= 0.8 and 1.9 <= passing.tail_s <= 2.2
    assert (passing.sample_rate, passing.channels, passing.cbr, passing.codec) == (RATE, 1, True, "mp3")
    assert abs(passing.bitrate - 192_000) < 2_000
    report = passing.to_dict()
    assert report["passed"] is True and report["failures"] == [] and report["rms_db"] == round(passing.rms_db, 2)


@pytest.mark.parametrize(
    ("name", "audio", "code"),
    [
        ("quiet", lambda: narration(rms_db=-27.0), "acx.rms_low"),
        ("loud", lambda: narration(rms_db=-15.0, peak_db=-0.5), "acx.rms_high"),
        ("peaky", lambda: narration(click_db=-1.0), "acx.peak_high"),
        ("noisy", lambda: narration(tone_db=-55.0), "acx.noise_high"),
        ("gated", lambda: narration(tone_db=None), "acx.dead_silence"),
        ("no head", lambda: narration(head=0.2), "acx.head"),
        ("long head", lambda: narration(head=2.0), "acx.head"),
        ("no tail", lambda: narration(tail=0.4), "acx.tail"),
        ("long tail", lambda: narration(tail=7.0), "acx.tail"),
    ],
)
def test_a_file_that_breaks_a_level_or_room_tone_rule_fails_it(tmp_path, name, audio, code):
    check = check_file(write(tmp_path / f"{name}.mp3", audio()))
    assert code in check.failures and not check.passed
    text = describe_notice(next(p for p in check.problems if p.code == code), "cli")
    assert "{" not in text and "operation failed" not in text


def test_the_format_rules_bitrate_cbr_sample_rate_and_codec(tmp_path):
    audio = narration()
    assert check_file(write(tmp_path / "low.mp3", audio, bitrate=128_000)).failures == ["acx.bitrate_low"]
    vbr = check_file(write(tmp_path / "vbr.mp3", audio, bitrate=None, qscale=2))
    assert vbr.cbr is False and "acx.not_cbr" in vbr.failures
    rate = check_file(write(tmp_path / "48k.mp3", narration(rate=48_000), rate=48_000))
    assert rate.failures == ["acx.sample_rate"] and rate.sample_rate == 48_000
    flac = check_file(write(tmp_path / "book.flac", audio, codec="flac", bitrate=None))
    assert flac.failures == ["acx.not_mp3"] and flac.cbr is None


def test_the_engines_encoder_with_the_presets_format_writes_what_acx_takes(tmp_path):
    """Audio at the model's 24 kHz, mastered as the preset says, through the export's encoder (resampled to 44.1
    kHz, LAME CBR 192 kb/s): it passes; the same with VBR does not."""
    from core.engine import SAMPLE_RATE, AudioEncoder, EncodeSettings

    audio = narration(rate=SAMPLE_RATE)
    for vbr in (False, True):
        settings = EncodeSettings(sample_rate=PRESET.sample_rate, bitrate=PRESET.bitrate, vbr=vbr)
        encoder = AudioEncoder(tmp_path / f"vbr-{vbr}.mp3", settings)
        for start in range(0, audio.size, SAMPLE_RATE):
            encoder.write(audio[start : start + SAMPLE_RATE])
        check = check_file(encoder.close())
        assert (check.sample_rate, check.channels) == (44_100, 1)
        if not vbr:
            assert check.passed, check.failures
        else:  # LAME's VBR also drops the −72 dB room tone as inaudible (digital silence) and averages < 192 kb/s
            assert {"acx.not_cbr", "acx.bitrate_low"} <= set(check.failures)


def test_cbr_is_told_from_vbr_behind_a_large_id3_tag_with_a_cover(tmp_path):
    from mutagen.id3 import APIC, ID3

    audio = narration()
    for name, extra in (("cbr", {}), ("vbr", {"bitrate": None, "qscale": 2})):
        path = write(tmp_path / f"{name}.mp3", audio, **extra)
        tags = ID3()
        tags.add(APIC(encoding=3, mime="image/jpeg", type=3, desc="cover", data=bytes(range(256)) * 800))
        tags.save(path)
        assert path.stat().st_size > 200_000
        assert check_file(path).cbr is (name == "cbr")


def test_every_format_the_export_writes_is_measured_alike(tmp_path):
    """m4b, opus, flac and wav of the same audio: the same RMS, peak and room tone (lossy codecs shift the peak
    and the noise floor a little)."""
    audio = narration()
    reference = check_file(write(tmp_path / "ref.wav", audio, codec="pcm_s16le", bitrate=None))
    files = {
        "m4b": write(tmp_path / "book.m4b", audio, codec="aac", bitrate=128_000),
        "opus": write(tmp_path / "book.opus", narration(rate=48_000), codec="libopus", rate=48_000, bitrate=96_000),
        "flac": write(tmp_path / "book.flac", audio, codec="flac", bitrate=None),
    }
    for kind, path in files.items():
        check = check_file(path)
        assert abs(check.rms_db - reference.rms_db) < 0.3, kind
        assert abs(check.peak_db - reference.peak_db) < 1.0, kind
        assert abs(check.head_s - reference.head_s) < 0.05 and abs(check.tail_s - reference.tail_s) < 0.05, kind
        assert check.noise_floor_db < -60, kind


def test_stereo_counts_both_channels_and_a_book_keeps_one_layout(tmp_path):
    mono = narration()
    stereo = np.stack([mono, mono])
    one = write(tmp_path / "01.mp3", mono)
    two = write(tmp_path / "02.mp3", stereo)
    checks = check_files([one, two])
    assert checks[0].passed and checks[1].channels == 2
    assert checks[1].failures == ["acx.channels_mixed"]
    assert abs(checks[1].rms_db - checks[0].rms_db) < 0.3


def test_more_than_two_channels_and_files_over_two_hours_fail():
    base = FileCheck(Path("x.mp3"), -20.0, -4.0, -70.0, 0.7, 2.0, RATE, 192_000, True, 1, 60.0, "mp3")
    assert _judge(base, STORE_RULES["acx"]) == []
    assert [p.code for p in _judge(replace(base, channels=6), STORE_RULES["acx"])] == ["acx.channels"]
    assert [p.code for p in _judge(replace(base, seconds=121 * 60.0), STORE_RULES["acx"])] == ["acx.too_long"]


def test_a_file_that_cannot_be_read_or_unknown_rules_are_refused(tmp_path):
    junk = tmp_path / "junk.mp3"
    junk.write_bytes(b"not audio at all" * 10)
    with pytest.raises(ChatterboxError) as error:
        check_file(junk)
    assert error.value.code in ("store.unreadable", "store.no_audio")
    with pytest.raises(ChatterboxError) as error:
        check_file(junk, rules="spotify")
    assert error.value.code == "store.unknown_rules"


def test_a_file_shorter_than_one_window_still_has_a_noise_floor(tmp_path):
    check = check_file(write(tmp_path / "short.wav", np.full(RATE // 4, 0.01, np.float32), "pcm_s16le", bitrate=None))
    assert abs(check.noise_floor_db - (-40.0)) < 0.2 and abs(check.rms_db - (-40.0)) < 0.2
