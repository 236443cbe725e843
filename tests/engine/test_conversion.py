"""Voice conversion: a recording re-voiced window by window, joined, streamed, and its bad inputs worded."""

from __future__ import annotations

import json
import queue
import time

import numpy as np
import onnxruntime as ort
import pytest
import soundfile as sf

from core.cli import main as cli_main
from core.engine import (
    SAMPLE_RATE,
    Cancelled,
    Chunk,
    ConversionRequest,
    Failed,
    Finished,
    InferenceWorker,
    ModelLoaded,
    Pipeline,
    RuntimeOptions,
    VoiceReferenceError,
    load_source,
    plan_windows,
    source_from_array,
)
from core.standin import synthetic_voice
from core.wording import describe_error

OVERLAP = 960
FULL_PROMPT = RuntimeOptions(decoder_prompt_seconds=10.0, decoder_precision="fp32")
"""The decoder sees the whole (6 s) target recording (the test's own conditioning needs no cutting), in float32."""


def speech_with_pauses(seconds: float, seed: int = 1, pauses: tuple[float, ...] = ()) -> np.ndarray:
    """Speech-like audio with silent gaps of 0.3 s at ``pauses`` (seconds)."""
    audio = synthetic_voice(seconds, seed=seed, pitch_hz=140).astype(np.float32)
    for at in pauses:
        audio[int(at * SAMPLE_RATE) : int((at + 0.3) * SAMPLE_RATE)] = 0.0
    return audio


@pytest.fixture(scope="module")
def source_wav(tmp_path_factory):
    path = tmp_path_factory.mktemp("sources") / "line.wav"
    sf.write(path, speech_with_pauses(14.0, pauses=(2.2, 9.0)), SAMPLE_RATE)
    return path


def independent_conversion(bundle, source: np.ndarray, target: np.ndarray, windows) -> list[np.ndarray]:
    """Each window through the bundle's own graphs, with onnxruntime directly: the encoder's tokens of the window's
    samples (padded to whole tokens), the decoder on [target prompt tokens + those tokens] with the target's
    speaker embedding and features (the encoder run on the target recording)."""
    encoder = ort.InferenceSession(str(bundle / "onnx" / "speech_encoder.onnx"), providers=["CPUExecutionProvider"])
    decoder = ort.InferenceSession(
        str(bundle / "onnx" / "conditional_decoder.onnx"), providers=["CPUExecutionProvider"]
    )
    _, prompt, speaker, features = encoder.run(None, {"audio_values": target[None, :]})
    out = []
    for w in windows:
        part = np.zeros(w.end - w.start, np.float32)
        piece = source[w.start : w.end]
        part[: piece.size] = piece
        tokens = encoder.run(["audio_tokens"], {"audio_values": part[None, :]})[0]
        feeds = {
            "speech_tokens": np.concatenate([prompt, tokens], axis=1).astype(np.int64),
            "speaker_embeddings": speaker,
            "speaker_features": features,
        }
        out.append(decoder.run(["waveform"], feeds)[0].reshape(-1))
    return out


@pytest.mark.parametrize("variant", ["turbo", "original", "multilingual"])
def test_a_conversion_is_the_decoder_on_each_windows_tokens_in_the_target_voice(
    bundles, voice_wav, source_wav, variant
):
    pipe = Pipeline.from_bundle(bundles[variant], FULL_PROMPT)
    stream = pipe.convert_stream(ConversionRequest(source_wav, voice_wav, seed=4))
    audio = np.concatenate([c.samples for c in stream])
    source, _ = sf.read(source_wav, dtype="float32")
    target, _ = sf.read(voice_wav, dtype="float32")
    windows = stream.windows
    assert len(windows) == 3
    assert audio.size == source.size
    expected = independent_conversion(bundles[variant], source, target, windows)
    for number, (window, decoded) in enumerate(zip(windows, expected)):
        own = OVERLAP if number else 0  # the first token of a later window is crossfaded with the one before
        np.testing.assert_allclose(
            audio[window.start + own : window.keep], decoded[own : window.keep - window.start], atol=1e-5
        )
        if number:  # the crossfade: from the earlier window's end to this window's start
            before = expected[number - 1][window.start - windows[number - 1].start :][:OVERLAP]
            blend = audio[window.start : window.start + OVERLAP]
            low, high = np.minimum(before, decoded[:OVERLAP]), np.maximum(before, decoded[:OVERLAP])
            assert np.all(blend >= low - 1e-5) and np.all(blend <= high + 1e-5)


def test_windows_cut_at_quiet_points_on_the_token_grid_and_fit_the_encoder():
    audio = speech_with_pauses(60.0, pauses=(2.0, 9.5, 17.0, 26.0, 33.0, 41.0, 50.0))
    windows = plan_windows(audio)
    assert windows[0].keep <= 3.0 * SAMPLE_RATE  # a quick first audio
    assert all(w.tokens <= 250 for w in windows)  # 10 s: what the encoder tokenises
    assert all(w.start % OVERLAP == 0 and w.end % OVERLAP == 0 for w in windows)
    assert windows[-1].keep == audio.size and windows[-1].end - windows[-1].start >= SAMPLE_RATE
    for earlier, later in zip(windows, windows[1:]):
        assert later.start == earlier.keep and earlier.end == earlier.keep + OVERLAP
        crossfade = audio[earlier.keep : earlier.end]
        assert np.max(np.abs(crossfade)) == 0.0  # every cut in one of the pauses


def test_a_two_minute_recording_keeps_its_length_and_its_joins_do_not_click(bundles, voice_wav, tmp_path):
    source = speech_with_pauses(120.0, seed=5, pauses=tuple(range(7, 120, 9)))
    source[int(40 * SAMPLE_RATE) : int(60 * SAMPLE_RATE)] *= 1.0  # no pauses to help here: cuts at the quietest
    source[int(40 * SAMPLE_RATE) : int(60 * SAMPLE_RATE)] = synthetic_voice(20.0, seed=9, pitch_hz=150)[: 20 * 24000]
    path = tmp_path / "long.flac"
    sf.write(path, source, SAMPLE_RATE)
    pipe = Pipeline.from_bundle(bundles["turbo"])
    stream = pipe.convert_stream(ConversionRequest(path, voice_wav, seed=1))
    audio = np.concatenate([c.samples for c in stream])
    assert abs(audio.size - source.size) <= 0.01 * source.size
    steps = np.abs(np.diff(audio))
    joins = [w.keep for w in stream.windows[:-1]]
    near = np.zeros(steps.size, bool)
    for at in joins:
        near[at - OVERLAP : at + 2 * OVERLAP] = True
    assert len(joins) >= 12
    assert steps[near].max() <= steps[~near].max()  # no step at a join larger than the signal's own


def test_streaming_gives_the_samples_of_one_shot_and_a_seed_repeats_them(tmp_path, voice_wav, source_wav):
    from core.standin import make_standin

    noisy = make_standin(tmp_path / "noisy", "turbo", seed=7, decoder_noise=True)
    pipe = Pipeline.from_bundle(noisy)
    chunks = []
    for chunk in pipe.convert_stream(ConversionRequest(source_wav, voice_wav, seed=11)):
        chunks.append(chunk.samples)
    streamed = np.concatenate(chunks)
    assert len(chunks) == 3
    one_shot = pipe.convert(source_wav, voice_wav, seed=11)
    np.testing.assert_array_equal(streamed, one_shot.audio)
    other = pipe.convert(source_wav, voice_wav, seed=12).audio
    assert np.max(np.abs(other - streamed)) > 1e-3  # a new seed is a new draw of the decoder's noise
    assert one_shot.report.seed == 11 and one_shot.report.timings["first_audio_ms"] > 0


def test_stereo_8_khz_is_mixed_resampled_and_converted_to_its_length(bundles, voice_wav, tmp_path):
    left = speech_with_pauses(4.0, seed=2)
    stereo = np.stack([left, 0.5 * left], axis=1)
    path = tmp_path / "phone.wav"
    sf.write(path, stereo[::3], 8000)  # 24 kHz → 8 kHz by taking every third sample (aliasing is fine here)
    source = load_source(path)
    assert source.channels == 2 and source.source_rate == 8000
    assert [w.code for w in source.warnings] == ["voice.low_rate"]
    result = Pipeline.from_bundle(bundles["turbo"]).convert(source, voice_wav)
    assert abs(result.audio.size / SAMPLE_RATE - 4.0) < 0.01
    assert "voice.low_rate" in [w.code for w in result.warnings]


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda p: sf.write(p, np.zeros(24000 * 3, np.float32), 24000), "voice.silent"),
        (lambda p: p.write_bytes(b"RIFF\x00\x00\x00\x00WAVEfmt " + bytes(range(200))), "voice.unreadable"),
        (lambda p: sf.write(p, speech_with_pauses(0.3), 24000), "source.too_short"),
        (lambda p: sf.write(p, np.zeros((0, 1), np.float32), 24000), "voice.empty"),
    ],
    ids=["silent", "corrupt", "too-short", "empty"],
)
def test_a_bad_recording_is_refused_with_words(tmp_path, make, code):
    path = tmp_path / "bad.wav"
    make(path)
    with pytest.raises(VoiceReferenceError) as caught:
        load_source(path)
    assert caught.value.code == code
    words = describe_error(caught.value, "window")
    assert "bad.wav" in words and "failed" not in words


def test_an_hour_long_recording_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "hour.wav"
    with sf.SoundFile(path, "w", 8000, 1, subtype="PCM_U8") as f:  # 29 MB, written in blocks
        block = (0.2 * np.sin(np.arange(8000 * 60) * 0.05)).astype(np.float32)
        for _ in range(60):
            f.write(block)
    started = time.perf_counter()
    with pytest.raises(VoiceReferenceError) as caught:
        load_source(path)
    assert time.perf_counter() - started < 1.0
    assert caught.value.code == "source.too_long"
    assert "60 minutes" in describe_error(caught.value, "cli") and "split" in describe_error(caught.value, "cli")
    with pytest.raises(VoiceReferenceError):
        source_from_array(np.zeros(8000 * 3601, np.float32), 8000)


def test_the_worker_converts_as_an_interactive_job_and_survives_a_bad_recording(
    bundles, voice_wav, source_wav, tmp_path
):
    worker = InferenceWorker()
    worker.start()
    try:
        worker.load(bundles["turbo"], RuntimeOptions())
        assert isinstance(_next(worker.events, (ModelLoaded,)), ModelLoaded)
        silent = tmp_path / "silent.wav"
        sf.write(silent, np.zeros(24000 * 2, np.float32), 24000)
        worker.convert(ConversionRequest(silent, voice_wav, request_id=worker.new_request_id()))
        failed = _next(worker.events, (Failed, Finished))
        assert isinstance(failed, Failed) and failed.code == "voice.silent" and not failed.internal
        rid = worker.new_request_id()
        worker.convert(ConversionRequest(source_wav, voice_wav, seed=3, request_id=rid))
        chunks, event = [], None
        while not isinstance(event, (Finished, Failed, Cancelled)):
            event = worker.events.get(timeout=30)
            if isinstance(event, Chunk) and event.request_id == rid:
                chunks.append(event.chunk.samples)
        assert isinstance(event, Finished)
        assert sum(c.size for c in chunks) == sf.info(source_wav).frames
        assert event.report.timings["audio_seconds"] == pytest.approx(14.0, abs=0.01)
    finally:
        worker.shutdown()


def _next(events: queue.Queue, kinds: tuple) -> object:
    while True:
        event = events.get(timeout=30)
        if isinstance(event, kinds):
            return event


def test_the_convert_command_writes_the_recording_in_the_target_voice(bundles, voice_wav, source_wav, tmp_path, capsys):
    out = tmp_path / "revoiced.flac"
    code = cli_main(
        ["convert", str(source_wav), "--voice", str(voice_wav), "--bundle", str(bundles["turbo"]), "--out", str(out)]
        + ["--seed", "5", "--json"]
    )
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["seed"] == 5 and report["audio_seconds"] == pytest.approx(14.0, abs=0.001)
    assert [w["index"] for w in report["windows"]] == [0, 1, 2]
    assert {"first_audio_ms", "rtf", "encoder_ms", "decoder_ms"} <= set(report["timings"])
    assert sf.info(out).frames == sf.info(source_wav).frames
    missing = cli_main(["convert", str(tmp_path / "nope.wav"), "--bundle", str(bundles["turbo"]), "--out", str(out)])
    assert missing == 2
    assert "nope.wav" in capsys.readouterr().err
