"""How a recording to re-voice is cut into turns and joined again, how ElevenLabs' ``output_format`` is read, and
how an upload is named and decoded: no model needed."""

from __future__ import annotations

import numpy as np
import pytest

from core.api.audio import Output, parse_output_format
from core.api.jobs import OVERLAP, PIECE_SECONDS, Seams, SourcePiece, plan_pieces
from core.api.sources import staging_name
from core.engine import SAMPLE_RATE
from core.standin import synthetic_voice


@pytest.mark.parametrize("seconds", [0.6, 5.0, 19.0, 27.0, 61.0, 185.0])
def test_pieces_cover_the_source_sharing_one_token_each(seconds):
    samples = synthetic_voice(seconds, seed=2)
    pieces = plan_pieces(samples)
    assert pieces[0].start == 0 and pieces[-1].end == samples.size
    for a, b in zip(pieces, pieces[1:], strict=False):
        assert a.end - b.start == OVERLAP  # neighbours share one token, on the token grid
        assert b.start % OVERLAP == 0
        assert a.end - a.start >= PIECE_SECONDS * SAMPLE_RATE  # turns are not needlessly short
    assert sum(p.end - p.start for p in pieces) - OVERLAP * (len(pieces) - 1) == samples.size
    if seconds > 2 * PIECE_SECONDS + 10:
        assert len(pieces) >= 2
    if seconds < PIECE_SECONDS:
        assert pieces == [SourcePiece(0, samples.size)]


def _join(pieces: list[np.ndarray], chunk: int) -> np.ndarray:
    """The pieces fed to :class:`Seams` as a stream of ``chunk``-sample chunks."""
    seams = Seams(len(pieces))
    out = []
    for number, piece in enumerate(pieces):
        for at in range(0, piece.size, chunk):
            out.append(seams.add(number, piece[at : at + chunk]))
    return np.concatenate(out)


@pytest.mark.parametrize("chunk", [100, 960, 5000, 10**6])
def test_seams_crossfade_the_shared_token_and_keep_the_length(chunk):
    rng = np.random.default_rng(1)
    pieces = [rng.standard_normal(n).astype(np.float32) for n in (30 * 960, 7 * 960 + 5, 12 * 960)]
    joined = _join(pieces, chunk)
    assert joined.size == sum(p.size for p in pieces) - 2 * OVERLAP
    a, b, c = pieces
    assert np.array_equal(joined[: a.size - OVERLAP], a[:-OVERLAP])  # untouched up to the seam
    ramp = np.linspace(0.0, 1.0, OVERLAP + 2, dtype=np.float32)[1:-1]
    seam = a[-OVERLAP:] + (b[:OVERLAP] - a[-OVERLAP:]) * ramp
    assert np.allclose(joined[a.size - OVERLAP : a.size], seam)
    start_b = a.size - OVERLAP
    assert np.array_equal(joined[start_b + OVERLAP : start_b + b.size - OVERLAP], b[OVERLAP:-OVERLAP])
    assert np.array_equal(joined[-(c.size - OVERLAP) :], c[OVERLAP:])


def test_one_piece_passes_through_unchanged():
    audio = np.arange(5000, dtype=np.float32)
    assert np.array_equal(_join([audio], 333), audio)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("mp3_44100_128", Output("mp3", 44100, 128_000)),
        ("mp3_22050_32", Output("mp3", 22050, 32_000)),
        ("pcm_16000", Output("pcm", 16000)),
        ("PCM_24000", Output("pcm", 24000)),
        ("opus_48000_64", Output("opus", 48000, 64_000)),
        ("wav_44100", Output("wav", 44100)),
        ("flac", Output("flac")),
        ("mp3", Output("mp3")),
    ],
)
def test_elevenlabs_output_formats(value, expected):
    assert parse_output_format(value) == expected


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("ulaw_8000", "not offered here"),
        ("alaw_8000", "not offered here"),
        ("mp3_44100_128_x", "codec_rate"),
        ("mp3_fast", "codec_rate"),
        ("pcm_16000_64", "no bitrate"),
        ("mp3_44100_999", "8–320"),
    ],
)
def test_output_formats_refused_with_a_reason(value, words):
    with pytest.raises(ValueError, match=words):
        parse_output_format(value)


def test_a_rate_the_codec_cannot_write_is_refused_before_any_work():
    from core.engine import EncodeError

    with pytest.raises(EncodeError):
        Output("mp3", 44000, 128_000).encoder()
    enc = Output("pcm", 16000).encoder()
    assert len(enc.encode(np.full(2400, 0.1, np.float32)) + enc.finish()) == 2 * 1600  # 0.1 s at 16 kHz


@pytest.mark.parametrize(
    ("filename", "staged"),
    [
        ("line.wav", "line.wav"),
        ("blob", "blob"),
        ("My Take (2).WEBM", "My_Take_2.webm"),
        ("../../etc/passwd", "passwd"),
        ("..", "recording"),
        (None, "recording"),
        ("x.tar.gz-long-suffix", "x_tar_gz-long-suffix"),
    ],
)
def test_an_upload_is_staged_under_a_safe_name(filename, staged):
    assert staging_name(filename) == staged


def test_raw_pcm_16k_is_taken_as_it_is(tmp_path):
    from core.api.sources import decode_source
    from core.api.voices import ApiVoices
    from core.voices import VoiceLibrary

    voices = ApiVoices(VoiceLibrary(tmp_path))
    samples = synthetic_voice(4.0, seed=4)[::3]  # 2 s at 16 kHz (a rough decimation: only the length counts)
    data = (samples * 32767).astype("<i2").tobytes()
    source = decode_source(voices, "mic.raw", data, "pcm_s16le_16")
    assert source.source_rate == 16000 and source.samples.size == 48000
