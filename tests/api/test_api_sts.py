"""ElevenLabs' speech-to-speech route on a real server: multipart uploads as requests, httpx and a browser's FormData
send them, every output format, streaming, the errors, the key and the limits, turns with speech, disconnects."""

from __future__ import annotations

import io
import threading
import time

import httpx
import numpy as np
import pytest
import requests
import soundfile as sf

from core.standin import synthetic_voice
from tests.api_support import decoded_samples, long_text, occupy, same_length, serving, wait_idle

KEY = "sts-key-7"
ORIGIN = "http://localhost:5173"
BOUNDARY = "----WebKitFormBoundaryq4Zt8XbN2fKpLm9W"


def _wav(seconds: float, rate: int = 24000, seed: int = 5, channels: int = 1) -> bytes:
    audio = synthetic_voice(seconds, seed=seed, pitch_hz=190)
    if rate != 24000:
        import soxr

        audio = soxr.resample(audio, 24000, rate).astype(np.float32)
    if channels > 1:
        audio = np.repeat(audio[:, None], channels, axis=1)
    out = io.BytesIO()
    sf.write(out, audio, rate, format="WAV")
    return out.getvalue()


def _webm(seconds: float) -> bytes:
    """What Chrome's MediaRecorder records: Opus at 48 kHz in WebM."""
    import av

    audio = synthetic_voice(seconds, seed=6, pitch_hz=150)
    out = io.BytesIO()
    with av.open(out, "w", format="webm") as container:
        stream = container.add_stream("libopus", rate=48000)
        stream.layout = "mono"
        frame = av.AudioFrame.from_ndarray(audio[None, :], format="flt", layout="mono")
        frame.sample_rate = 24000
        for resampled in av.AudioResampler(format="s16", layout="mono", rate=48000).resample(frame):
            for packet in stream.encode(resampled):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return out.getvalue()


def _form_data(parts: list[tuple[str, str | None, str | None, bytes]]) -> bytes:
    """A multipart body byte for byte as Chrome writes ``fetch(url, {body: formData})``: (name, filename,
    content type, data) per part; a Blob appended without a name is sent as ``filename="blob"``."""
    body = b""
    for name, filename, content_type, data in parts:
        body += f"--{BOUNDARY}\r\n".encode()
        disposition = f'Content-Disposition: form-data; name="{name}"'
        if filename is not None:
            disposition += f'; filename="{filename}"'
        body += disposition.encode() + b"\r\n"
        if content_type is not None:
            body += f"Content-Type: {content_type}\r\n".encode()
        body += b"\r\n" + data + b"\r\n"
    return body + f"--{BOUNDARY}--\r\n".encode()


@pytest.fixture(scope="module")
def server(worker, tmp_path_factory, voice_wav):
    with serving(worker, tmp_path_factory.mktemp("sts-voices")) as server:
        server.app.state.api.library.add("Narrator One", voice_wav)
        yield server


def _record(server, response):
    return server.jobs.record(int(response.headers["x-request-id"]))


class _Slow:
    """A conversion whose windows take ``delay`` seconds each (the stand-in converts a minute in milliseconds)."""

    def __init__(self, stream, delay: float):
        self.stream, self.delay = stream, delay

    def __iter__(self):
        for chunk in self.stream:
            time.sleep(self.delay)
            yield chunk

    @property
    def report(self):
        return self.stream.report


def _slow_conversion(monkeypatch, worker, delay: float) -> None:
    pipeline = worker.pipeline
    real = pipeline.convert_stream
    monkeypatch.setattr(pipeline, "convert_stream", lambda *a, **k: _Slow(real(*a, **k), delay))


# --- real clients' uploads ----------------------------------------------------------------------------------------
def test_requests_upload_as_the_elevenlabs_docs_show(server):
    """``requests.post(url, files={"audio": …}, data={…})`` with ElevenLabs' fields and query: the recording comes back
    exactly as long, in the library voice named in the path (any case, spaces escaped)."""
    data = _wav(6.5)
    r = requests.post(
        server.url + "/speech-to-speech/narrator%20one",
        params={"output_format": "pcm_24000", "enable_logging": "false", "optimize_streaming_latency": "0"},
        files={"audio": ("line.wav", data, "audio/wav")},
        data={
            "model_id": "eleven_multilingual_sts_v2",
            "seed": "7",
            "remove_background_noise": "false",
            "voice_settings": '{"stability": 0.5, "similarity_boost": 0.75}',
        },
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "audio/pcm"
    ignored = {f.strip() for f in r.headers["x-ignored-fields"].split(",")}
    assert ignored == {"enable_logging", "optimize_streaming_latency", "remove_background_noise", "voice_settings"}
    assert len(r.content) // 2 == 6.5 * 24000 == _record(server, r).samples
    again = requests.post(
        server.url + "/speech-to-speech/Narrator One",
        params={"output_format": "pcm_24000"},
        files={"audio": ("line.wav", data, "audio/wav")},
        data={"seed": "7"},
        timeout=60,
    )
    assert again.content == r.content  # a seed gives the same audio
    assert "x-ignored-fields" not in again.headers


def test_httpx_upload_in_the_models_own_voice_at_another_rate(server):
    """A 44.1 kHz stereo WAV, httpx ``files=``, ``voice_id`` "default" (the model's own voice): 24 kHz audio of the
    same length (within 1 %)."""
    data = _wav(5.0, rate=44100, channels=2)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        r = client.post(
            "/speech-to-speech/default",
            files={"audio": ("take 3.wav", data, "audio/x-wav")},
            data={"response_format": "wav"},
        )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "audio/wav"
    assert decoded_samples(r.content, "wav") == pytest.approx(5.0 * 24000, rel=0.01)
    assert decoded_samples(r.content, "wav") == _record(server, r).samples


@pytest.mark.parametrize(("content_type", "make"), [("audio/webm;codecs=opus", _webm), ("audio/wav", _wav)])
def test_browser_form_data_from_media_recorder(worker, tmp_path, content_type, make):
    """``fd.append("audio", blob); fetch(url, {method: "POST", headers: {"xi-api-key": KEY}, body: fd})`` from a page
    on another origin: the preflight, then the body as Chrome writes it (boundary, ``filename="blob"``)."""
    recording = make(4.0)
    with serving(worker, tmp_path / "voices", api_key=KEY, cors=(ORIGIN,)) as server:
        url = server.url + "/speech-to-speech/default/stream?output_format=mp3_44100_128"
        preflight = httpx.options(
            url,
            headers={
                "Origin": ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "xi-api-key",
            },
        )
        assert preflight.status_code == 200 and preflight.headers["access-control-allow-origin"] == ORIGIN
        assert "xi-api-key" in preflight.headers["access-control-allow-headers"].lower()
        body = _form_data(
            [("audio", "blob", content_type, recording), ("model_id", None, None, b"eleven_english_sts_v2")]
        )
        headers = {
            "Content-Type": f"multipart/form-data; boundary={BOUNDARY}",
            "Accept": "*/*",
            "Origin": ORIGIN,
            "Referer": ORIGIN + "/",
            "Sec-Fetch-Mode": "cors",
            "Sec-Fetch-Site": "same-site",
            "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0",
            "xi-api-key": KEY,
        }
        r = httpx.post(url, content=body, headers=headers, timeout=60)
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "audio/mpeg"
        assert r.headers["access-control-allow-origin"] == ORIGIN
        assert "x-request-id" in r.headers["access-control-expose-headers"].lower()
        import av

        with av.open(io.BytesIO(r.content)) as container:
            assert container.streams.audio[0].rate == 44100
        samples = _record(server, r).samples
        assert samples == pytest.approx(4.0 * 24000, rel=0.01)
        assert same_length(decoded_samples(r.content, "mp3"), samples, "mp3")


@pytest.mark.parametrize("response_format", ["mp3", "opus", "aac", "flac", "wav", "pcm"])
def test_every_format_is_as_long_as_the_recording(server, response_format):
    r = httpx.post(
        server.url + "/speech-to-speech/default",
        files={"audio": ("line.flac", _flac(3.0))},
        data={"response_format": response_format},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    samples = _record(server, r).samples
    assert samples == 3.0 * 24000
    assert same_length(decoded_samples(r.content, response_format), samples, response_format)


def _flac(seconds: float) -> bytes:
    out = io.BytesIO()
    sf.write(out, synthetic_voice(seconds, seed=8), 24000, format="FLAC")
    return out.getvalue()


def test_output_format_sets_the_rate(server):
    r = httpx.post(
        server.url + "/speech-to-speech/default",
        params={"output_format": "pcm_16000"},
        files={"audio": ("line.wav", _wav(3.0))},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert len(r.content) // 2 == pytest.approx(3.0 * 16000, rel=0.01)


# --- streaming, turns, disconnects ----------------------------------------------------------------------------------
def test_streams_chunked_while_it_converts(worker, tmp_path, monkeypatch):
    """A 50 s recording (pieces, each of several windows) whose windows take 0.15 s: its first bytes arrive while the
    rest is still being converted, chunked."""
    _slow_conversion(monkeypatch, worker, 0.15)
    seconds = 50.0
    with serving(worker, tmp_path / "voices") as server:
        started, first_at, data = time.monotonic(), None, b""
        with httpx.stream(
            "POST",
            server.url + "/speech-to-speech/default/stream",
            params={"output_format": "pcm_24000"},
            files={"audio": ("long.flac", _flac(seconds))},
            timeout=120,
        ) as r:
            assert r.status_code == 200
            assert r.headers.get("transfer-encoding") == "chunked"
            for part in r.iter_bytes():
                first_at = first_at or time.monotonic()
                data += part
        record = _record(server, r)
        assert first_at - started < record.finished_at - started - 0.3  # audio arrived while it was converted
        assert len(data) // 2 == record.samples == seconds * 24000


def test_speech_is_served_between_the_pieces_of_a_long_conversion(worker, tmp_path, monkeypatch):
    """Fair turns: a short speech request that arrives while a long recording is re-voiced finishes first; ``/health``
    shows the conversion's pieces."""
    _slow_conversion(monkeypatch, worker, 0.3)
    with serving(worker, tmp_path / "voices") as server:
        out: dict = {}

        def convert() -> None:
            with httpx.stream(
                "POST",
                server.url + "/speech-to-speech/default/stream",
                params={"output_format": "pcm"},
                files={"audio": ("long.flac", _flac(70.0))},
                timeout=120,
            ) as r:
                out["rid"] = int(r.headers["x-request-id"])
                for part in r.iter_bytes():
                    out.setdefault("first", time.monotonic())
                    out["data"] = out.get("data", b"") + part

        thread = threading.Thread(target=convert)
        thread.start()
        deadline = time.monotonic() + 60
        while "first" not in out and time.monotonic() < deadline:
            time.sleep(0.01)
        health = httpx.get(server.url.removesuffix("/v1") + "/health").json()
        (running,) = health["api_requests"]
        assert running["kind"] == "speech-to-speech" and running["state"] == "running"
        assert running["pieces"] >= 3 and running["pieces_done"] < running["pieces"] and running["seconds"] == 70.0
        spoken = httpx.post(
            server.url + "/audio/speech", json={"input": "Meanwhile.", "response_format": "pcm"}, timeout=120
        )
        thread.join(120)
        assert spoken.status_code == 200
        conversion = server.jobs.record(out["rid"])
        assert _record(server, spoken).finished_at < conversion.finished_at
        assert len(out["data"]) // 2 == conversion.samples == 70 * 24000  # and the conversion lost nothing
        assert wait_idle(worker, server)


def test_a_client_that_disconnects_mid_stream_cancels_its_conversion(worker, tmp_path, monkeypatch):
    _slow_conversion(monkeypatch, worker, 0.3)
    with serving(worker, tmp_path / "voices") as server:
        with httpx.stream(
            "POST",
            server.url + "/speech-to-speech/default/stream",
            params={"output_format": "pcm"},
            files={"audio": ("long.flac", _flac(70.0))},
            timeout=60,
        ) as r:
            assert r.status_code == 200
            next(r.iter_bytes())
            rid = int(r.headers["x-request-id"])
        left = time.monotonic()
        assert wait_idle(worker, server, timeout=10)
        assert time.monotonic() - left < 3  # not the ~10 s the rest of the conversion would have taken
        assert server.jobs.record(rid) is None  # ended, not served
        after = httpx.post(server.url + "/speech-to-speech/default", files={"audio": ("a.wav", _wav(2.0))}, timeout=60)
        assert after.status_code == 200


# --- errors -----------------------------------------------------------------------------------------------------
def _silent_wav() -> bytes:
    out = io.BytesIO()
    sf.write(out, np.zeros(24000 * 3, np.float32), 24000, format="WAV")
    return out.getvalue()


@pytest.mark.parametrize(
    ("files", "data", "status", "code", "param", "words"),
    [
        (None, {"model_id": "eleven_english_sts_v2"}, 400, "missing_file", "audio", "'audio'"),
        ({"file": ("a.wav", _wav(2.0))}, None, 400, "missing_file", "audio", "'audio'"),
        ({"audio": ("bad.wav", b"RIFF not really" * 300)}, None, 400, "invalid_audio", "audio", "not a readable audio"),
        ({"audio": ("blob", b"\x1aE\xdf\xa3 broken webm" * 50)}, None, 400, "invalid_audio", "audio", "not a readable"),
        ({"audio": ("quiet.wav", _silent_wav())}, None, 400, "invalid_audio", "audio", "is silent"),
        ({"audio": ("short.wav", _wav(0.3))}, None, 400, "invalid_audio", "audio", "at least 0.5 s"),
        ({"audio": ("empty.wav", b"")}, None, 400, "invalid_audio", "audio", "empty"),
        ({"audio": ("a.wav", _wav(2.0))}, {"seed": "-3"}, 400, "invalid_value", "seed", "'seed'"),
        ({"audio": ("a.wav", _wav(2.0))}, {"response_format": "m4a"}, 400, "invalid_value", "response_format", "m4a"),
        ({"audio": ("a.wav", _wav(2.0))}, {"file_format": "ulaw"}, 400, "invalid_value", "file_format", "pcm_s16le"),
        (
            {"audio": ("a.wav", _wav(2.0))},
            {"output_format": "ulaw_8000"},
            400,
            "invalid_value",
            "output_format",
            "not offered",
        ),
        (
            {"audio": ("a.wav", _wav(2.0))},
            {"output_format": "mp3_44000_64"},
            400,
            "invalid_value",
            "output_format",
            "44000",
        ),
        (
            {"audio": ("a.wav", _wav(2.0))},
            {"model_id": "whisper-1"},
            404,
            "model_not_found",
            "model_id",
            "eleven_english",
        ),
    ],
)
def test_bad_requests_get_the_api_error_shape(server, worker, files, data, status, code, param, words):
    r = requests.post(server.url + "/speech-to-speech/default", files=files, data=data, timeout=60)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert error["code"] == code and words in error["message"], error
    assert not any((server.app.state.api.library.directory / ".uploads").glob("*/*"))  # staging cleaned
    assert worker.alive


def test_an_unknown_voice_is_404_listing_the_library(server):
    r = httpx.post(
        server.url + "/speech-to-speech/JBFqnCBsd6RMkjVDRZzb", files={"audio": ("a.wav", _wav(2.0))}, timeout=60
    )
    assert r.status_code == 404
    error = r.json()["error"]
    assert error["code"] == "voice_not_found"
    assert "JBFqnCBsd6RMkjVDRZzb" in error["message"] and "Narrator One" in error["message"]


def test_a_recording_longer_than_the_engine_takes_is_413(server, monkeypatch):
    monkeypatch.setattr("core.engine.audio.source_recording.MAX_SOURCE_SECONDS", 4.0)
    monkeypatch.setattr("core.api.sources.MAX_SOURCE_SECONDS", 4.0)
    for name, data in (("long.wav", _wav(5.0)), ("blob", _webm(5.0))):
        r = httpx.post(server.url + "/speech-to-speech/default", files={"audio": (name, data)}, timeout=60)
        assert r.status_code == 413, r.text
        assert r.json()["error"]["code"] == "audio_too_long" and "at a time" in r.json()["error"]["message"]


def test_the_key_and_the_size_limit(worker, tmp_path):
    wav = _wav(2.0)
    with serving(worker, tmp_path / "voices", api_key=KEY, max_source_bytes=150_000) as server:
        url = server.url + "/speech-to-speech/default"
        assert httpx.post(url, files={"audio": ("a.wav", wav)}).status_code == 401
        wrong = httpx.post(url, files={"audio": ("a.wav", wav)}, headers={"xi-api-key": "nope"})
        assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
        for auth in ({"xi-api-key": KEY}, {"Authorization": f"Bearer {KEY}"}):
            assert httpx.post(url, files={"audio": ("a.wav", wav)}, headers=auth, timeout=60).status_code == 200
        big = _wav(4.0)  # 192 KB: over the limit, under the limit's form slack
        r = httpx.post(url, files={"audio": ("big.wav", big)}, headers={"xi-api-key": KEY})
        assert r.status_code == 413 and r.json()["error"]["code"] == "file_too_large"
        huge = _wav(12.0)  # 576 KB: past the guard, which refuses it before reading it
        r = httpx.post(url, files={"audio": ("huge.wav", huge)}, headers={"xi-api-key": KEY})
        assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"
        # the speech route's own limit is unchanged (max_upload_bytes), and the bare-host path works too
        bare = server.url.removesuffix("/v1") + "/speech-to-speech/default"
        assert httpx.post(bare, files={"audio": ("a.wav", wav)}, headers={"xi-api-key": KEY}).status_code == 200


def test_the_worker_keeps_serving_after_a_failed_conversion(server, worker, monkeypatch):
    pipeline = worker.pipeline
    real = pipeline.convert_stream
    monkeypatch.setattr(pipeline, "convert_stream", lambda *a, **k: (_ for _ in ()).throw(ZeroDivisionError("boom")))
    r = httpx.post(server.url + "/speech-to-speech/default", files={"audio": ("a.wav", _wav(2.0))}, timeout=60)
    assert r.status_code == 500
    assert r.json()["error"] == {
        "message": "Internal error: ZeroDivisionError: boom",
        "type": "server_error",
        "param": None,
        "code": "internal_error",
    }
    monkeypatch.setattr(pipeline, "convert_stream", real)
    assert worker.alive
    ok = httpx.post(server.url + "/speech-to-speech/default", files={"audio": ("a.wav", _wav(2.0))}, timeout=60)
    assert ok.status_code == 200
    spoken = httpx.post(server.url + "/audio/speech", json={"input": long_text(2), "response_format": "pcm"})
    assert spoken.status_code == 200 and decoded_samples(spoken.content, "pcm") == _record(server, spoken).samples


def test_queue_full_is_429_before_the_recording_is_decoded(worker, tmp_path, monkeypatch):
    decoded = []
    import core.api.routes

    real = core.api.routes.decode_source
    monkeypatch.setattr(core.api.routes, "decode_source", lambda *a: decoded.append(a[1]) or real(*a))
    with serving(worker, tmp_path / "voices", max_waiting=1) as server:
        blocker, _sink = occupy(worker)
        results: dict = {}
        url = server.url + "/speech-to-speech/default"
        waiting = threading.Thread(
            target=lambda: results.update(r=httpx.post(url, files={"audio": ("first.wav", _wav(2.0))}, timeout=60))
        )
        waiting.start()
        try:
            deadline = time.monotonic() + 10
            while server.jobs.waiting < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            r = httpx.post(url, files={"audio": ("second.wav", _wav(2.0))}, timeout=60)
            assert r.status_code == 429 and r.json()["error"]["code"] == "queue_full"
            assert int(r.headers["retry-after"]) >= 1
            assert decoded == ["first.wav"]  # the refused one was never decoded
        finally:
            worker.cancel(blocker)
            waiting.join(60)
        assert results["r"].status_code == 200
        assert wait_idle(worker, server)
