"""The PyAV encoders: files appear only when complete, streams give bytes as audio arrives, settings are honoured."""

from __future__ import annotations

import io

import av
import mutagen
import numpy as np
import pytest

from core.engine import (
    SAMPLE_RATE,
    AudioEncoder,
    Chapter,
    EncodeError,
    EncodeSettings,
    StreamEncoder,
    encoding_for,
    parse_bitrate,
)


def tone(seconds: float, freq: float = 220.0) -> np.ndarray:
    t = np.arange(int(seconds * SAMPLE_RATE)) / SAMPLE_RATE
    return (0.2 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def decoded(data: bytes | str) -> tuple[np.ndarray, int]:
    with av.open(io.BytesIO(data) if isinstance(data, bytes) else data) as container:
        stream = container.streams.audio[0]
        frames = [f.to_ndarray().reshape(-1) for f in container.decode(stream)]
        return np.concatenate(frames), stream.rate


@pytest.mark.parametrize("suffix", [".mp3", ".m4b", ".m4a", ".opus", ".flac", ".wav"])
def test_a_file_appears_complete_with_its_length(tmp_path, suffix):
    path = tmp_path / f"book{suffix}"
    with AudioEncoder(path, EncodeSettings(), {"title": "Chapter One", "artist": "Ann"}) as encoder:
        for _ in range(5):
            encoder.write(tone(1.0))
    assert path.exists() and not list(tmp_path.glob(".*partial*"))
    info = mutagen.File(path)
    assert info.info.length == pytest.approx(5.0, abs=0.08)
    if suffix != ".wav":
        assert "Chapter One" in str(info.tags)


def test_mp3_takes_the_asked_rate_and_constant_bitrate(tmp_path):
    path = tmp_path / "acx.mp3"
    with AudioEncoder(path, EncodeSettings(sample_rate=44100, bitrate=192_000)) as encoder:
        encoder.write(tone(6.0))
    info = mutagen.File(path).info
    assert info.sample_rate == 44100 and info.channels == 1
    assert info.bitrate == pytest.approx(192_000, abs=1000)
    assert info.bitrate_mode in (mutagen.mp3.BitrateMode.CBR, mutagen.mp3.BitrateMode.UNKNOWN)


def test_mp3_vbr_is_variable(tmp_path):
    path = tmp_path / "vbr.mp3"
    with AudioEncoder(path, EncodeSettings(sample_rate=44100, vbr=True)) as encoder:
        encoder.write(np.concatenate([tone(3.0), np.zeros(3 * SAMPLE_RATE, np.float32), tone(3.0, 3000.0)]))
    assert mutagen.File(path).info.bitrate_mode == mutagen.mp3.BitrateMode.VBR


def test_m4b_holds_chapters_and_tags(tmp_path):
    path = tmp_path / "book.m4b"
    with AudioEncoder(path, EncodeSettings(sample_rate=44100, bitrate=64_000), {"genre": "Audiobook"}) as encoder:
        encoder.write(tone(4.0))
        encoder.set_chapters([Chapter("One", 0.0, 2.0), Chapter("Two", 2.0, 4.0)])
    with av.open(str(path)) as container:
        chapters = container.chapters()
        assert [c["metadata"]["title"] for c in chapters] == ["One", "Two"]
        assert [c["start"] * c["time_base"] for c in chapters] == [0, 2]
        assert container.metadata["genre"] == "Audiobook"
    assert mutagen.File(path).info.length == pytest.approx(4.0, abs=0.05)


def test_abort_and_errors_leave_nothing_under_the_final_name(tmp_path):
    path = tmp_path / "book.m4b"
    path.write_bytes(b"the previous export")
    with pytest.raises(RuntimeError), AudioEncoder(path) as encoder:
        encoder.write(tone(1.0))
        raise RuntimeError("cancelled")
    assert path.read_bytes() == b"the previous export"
    assert not list(tmp_path.glob(".*partial*"))


def test_a_finish_step_runs_on_the_complete_file_before_the_rename(tmp_path):
    path = tmp_path / "x.flac"
    seen = []
    encoder = AudioEncoder(path)
    encoder.write(tone(1.0))
    encoder.close(finish=lambda tmp: seen.append((tmp.exists(), path.exists())))
    assert seen == [(True, False)] and path.exists()


def test_bad_destinations_and_settings_are_refused_before_work(tmp_path):
    with pytest.raises(EncodeError) as missing:
        AudioEncoder(tmp_path / "nowhere" / "book.mp3")
    assert missing.value.code == "encode.folder_missing"
    with pytest.raises(EncodeError) as rate:
        AudioEncoder(tmp_path / "book.mp3", EncodeSettings(sample_rate=44000))
    assert rate.value.code == "encode.bad_rate"
    with pytest.raises(EncodeError) as kind:
        encoding_for("book.doc")
    assert kind.value.code == "encode.unknown_format"
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize(("text", "bits"), [("128k", 128_000), ("192000", 192_000), ("64", 64_000), (None, None)])
def test_bitrates_read_as_people_write_them(text, bits):
    assert parse_bitrate(text) == bits


@pytest.mark.parametrize("text", ["fast", "1k", "9000k"])
def test_impossible_bitrates_are_refused(text):
    with pytest.raises(EncodeError):
        parse_bitrate(text)


@pytest.mark.parametrize("fmt", ["mp3", "aac", "opus", "flac"])
def test_a_stream_gives_bytes_before_the_end_and_decodes_whole(fmt):
    encoder = StreamEncoder(fmt)
    early = b"".join(encoder.encode(tone(0.5)) for _ in range(4))
    assert early, "the first bytes come while audio is still arriving"
    data = early + encoder.finish()
    audio, rate = decoded(data)
    assert audio.size / rate == pytest.approx(2.0, abs=0.1)


def test_pcm_and_wav_streams_are_16_bit_at_the_model_rate():
    pcm = StreamEncoder("pcm")
    data = pcm.encode(tone(1.0)) + pcm.finish()
    assert len(data) == 2 * SAMPLE_RATE
    wav = StreamEncoder("wav")
    head = wav.encode(tone(0.1))
    assert head[:4] == b"RIFF" and head[8:12] == b"WAVE"
    assert int.from_bytes(head[24:28], "little") == SAMPLE_RATE


def test_a_stream_can_be_resampled():
    encoder = StreamEncoder("mp3", sample_rate=44100, bitrate=96_000)
    data = encoder.encode(tone(1.0)) + encoder.finish()
    audio, rate = decoded(data)
    assert rate == 44100 and audio.size / rate == pytest.approx(1.0, abs=0.08)


@pytest.mark.parametrize("fmt", ["mp3", "aac", "opus", "flac"])
def test_a_streams_first_second_is_playable_before_the_end(fmt):
    """What a client holds after one second of audio decodes to most of that second (Ogg pages are not held back)."""
    encoder = StreamEncoder(fmt)
    data = b"".join(encoder.encode(tone(0.1)) for _ in range(10))
    audio, rate = decoded(data)
    assert audio.size / rate >= 0.5
