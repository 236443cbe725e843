"""The local speech API through real clients (httpx, the official openai package) on a real uvicorn server."""

from __future__ import annotations

import io
import threading
import time

import httpx
import numpy as np
import pytest
import soundfile as sf

from core.cli.main import main
from tests.api_support import decoded_samples, long_text, occupy, same_length, serving, started_worker, wait_idle
from tests.conftest import tone

KEY = "test-key-123"


@pytest.fixture(scope="module")
def server(worker, tmp_path_factory):
    with serving(worker, tmp_path_factory.mktemp("api-voices")) as server:
        yield server


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client


def _speech(client, **fields):
    return client.post("/audio/speech", json={"model": "tts-1", "voice": "alloy", **fields})


@pytest.mark.parametrize("response_format", ["wav", "pcm", "mp3", "flac", "opus", "aac"])
def test_every_format_decodes_to_the_requests_length(client, server, response_format):
    r = _speech(client, input="Hello from the local API. A second sentence.", response_format=response_format, seed=3)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith(
        {"wav": "audio/wav", "pcm": "audio/pcm", "mp3": "audio/mpeg", "flac": "audio/flac", "opus": "audio/ogg"}.get(
            response_format, "audio/aac"
        )
    )
    record = server.jobs.record(int(r.headers["x-request-id"]))
    assert record is not None and record.samples > 24000 // 2
    assert same_length(decoded_samples(r.content, response_format), record.samples, response_format)


def test_wav_is_streamed_with_unknown_sizes_and_first_bytes_come_before_the_end(client, server):
    started = time.monotonic()
    first_at = None
    data = b""
    with client.stream("POST", "/audio/speech", json={"input": long_text(30), "response_format": "wav"}) as r:
        assert r.status_code == 200
        assert r.headers.get("transfer-encoding") == "chunked"
        for part in r.iter_bytes():
            first_at = first_at or time.monotonic()
            data += part
    record = server.jobs.record(int(r.headers["x-request-id"]))
    assert data[4:8] == b"\xff\xff\xff\xff" and data[40:44] == b"\xff\xff\xff\xff"
    assert first_at - started < record.finished_at - started  # audio arrived while it was being generated
    assert decoded_samples(data, "wav") == record.samples


def test_speed_stretches_without_changing_the_pitch(client, server):
    fields = {"input": long_text(4), "response_format": "pcm", "seed": 5}
    normal = _speech(client, **fields)
    fast = _speech(client, **fields, speed=2.0)
    slow = _speech(client, **fields, speed=0.5)
    samples = server.jobs.record(int(normal.headers["x-request-id"])).samples
    assert decoded_samples(normal.content, "pcm") == samples
    assert decoded_samples(fast.content, "pcm") == pytest.approx(samples / 2, rel=0.03)
    assert decoded_samples(slow.content, "pcm") == pytest.approx(samples * 2, rel=0.03)


def test_official_openai_client(server):
    from openai import OpenAI

    with OpenAI(base_url=server.url, api_key="anything", max_retries=0) as client:
        text = long_text(20, "openai")
        audio = client.audio.speech.create(
            model="tts-1", voice="alloy", input=text, response_format="wav", extra_body={"seed": 9}
        )
        samples, rate = sf.read(io.BytesIO(audio.content), dtype="float32")
        assert rate == 24000 and samples.size > 24000
        mp3 = client.audio.speech.create(model="chatterbox-original", voice="default", input="Short one.")
        assert sf.read(io.BytesIO(mp3.content))[0].size > 0
        started, first_at, data = time.monotonic(), None, b""
        with client.audio.speech.with_streaming_response.create(
            model="tts-1", voice="nova", input=text, response_format="pcm", extra_body={"seed": 9}
        ) as response:
            rid = int(response.headers["x-request-id"])
            for part in response.iter_bytes():
                first_at = first_at or time.monotonic()
                data += part
        record = server.jobs.record(rid)
        assert first_at - started < record.finished_at - started
    assert len(data) // 2 == record.samples == samples.size  # same seed, same audio


def test_models_voices_and_health(client, server):
    ids = [m["id"] for m in client.get("/models").json()["data"]]
    assert ids[0] == "chatterbox-original" and "tts-1" in ids
    voices = client.get("/voices").json()
    assert voices["object"] == "list" and voices["default_voice"] is True
    health = httpx.get(server.url.removesuffix("/v1") + "/health").json()
    assert health["model_loaded"] and health["variant"] == "original" and health["worker_alive"]
    assert "queue_depth" in health


def test_voice_upload_then_speak_with_it(client, server, voice_wav, other_voice_wav):
    with open(voice_wav, "rb") as f:
        r = client.post("/voices", data={"name": "Narrator One"}, files={"file": ("narrator.wav", f, "audio/wav")})
    assert r.status_code == 201, r.text
    assert r.json()["name"] == "Narrator One"
    assert "Narrator One" in [v["name"] for v in client.get("/voices").json()["data"]]
    again = client.post("/voices", data={"name": "Narrator One"}, files={"file": ("n.wav", voice_wav.read_bytes())})
    assert again.status_code == 409
    spoken = _speech(client, input="In the new voice.", voice="Narrator One", response_format="wav")
    assert spoken.status_code == 200 and decoded_samples(spoken.content, "wav") > 0
    # A reference posted with the request itself (multipart variant), not kept in the library.
    with open(other_voice_wav, "rb") as f:
        r = client.post(
            "/audio/speech",
            data={"input": "With my own recording.", "response_format": "pcm", "speed": "1.0"},
            files={"voice_file": ("me.wav", f)},
        )
    assert r.status_code == 200, r.text
    assert decoded_samples(r.content, "pcm") == server.jobs.record(int(r.headers["x-request-id"])).samples
    assert len(client.get("/voices").json()["data"]) == 1
    assert not any((server.app.state.api.voices.library.directory / ".uploads").glob("*/*"))  # staging cleaned


def _wav_bytes(seconds: float) -> bytes:
    out = io.BytesIO()
    sf.write(out, tone(seconds), 24000, format="WAV")
    return out.getvalue()


@pytest.mark.parametrize(
    ("filename", "data", "words"),
    [
        ("short.wav", _wav_bytes(0.4), "only 0.4 s long"),
        ("silent.wav", None, "is silent"),
        ("garbage.wav", b"not audio at all" * 100, "not a readable audio file"),
        ("notes.txt", _wav_bytes(3), "not a supported recording"),
        ("empty.wav", b"", "empty"),
    ],
)
def test_upload_validation(client, filename, data, words):
    """A recording that cannot be a voice is a malformed request: 400, naming the field that carried it."""
    if data is None:
        out = io.BytesIO()
        sf.write(out, np.zeros(24000 * 3, np.float32), 24000, format="WAV")
        data = out.getvalue()
    r = client.post("/voices", data={"name": filename}, files={"file": (filename, data)})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert words in error["message"] and error["type"] == "invalid_request_error"
    assert error["code"] == "invalid_audio" and error["param"] == "file"
    r = client.post("/audio/speech", data={"input": "x"}, files={"voice_file": (filename, data)})
    assert r.status_code == 400 and words in r.json()["error"]["message"]
    assert r.json()["error"]["param"] == "voice_file"


def test_voice_upload_without_its_fields(client):
    r = client.post("/voices", data={"name": "x"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "missing_file"
    assert r.json()["error"]["param"] == "file"
    r = client.post("/voices", data={"name": "n" * 61}, files={"file": ("a.wav", _wav_bytes(3))})
    assert r.status_code == 400 and r.json()["error"]["param"] == "name"


def test_upload_size_limit(worker, tmp_path):
    with serving(worker, tmp_path / "voices", max_upload_bytes=50_000) as server:
        r = httpx.post(server.url + "/voices", data={"name": "big"}, files={"file": ("big.wav", _wav_bytes(3))})
        assert r.status_code == 413 and r.json()["error"]["code"] in ("file_too_large", "request_too_large")
        r = httpx.post(server.url + "/voices", data={"name": "big"}, files={"file": ("big.wav", _wav_bytes(20))})
        assert r.status_code == 413 and r.json()["error"]["code"] == "request_too_large"
        assert not (tmp_path / "voices" / "voices.json").exists()


def test_unknown_voice_is_404_listing_the_known_ones(worker, tmp_path, voice_wav, bundles):
    with serving(worker, tmp_path / "voices") as server:
        server.app.state.api.voices.library.add("Ada", voice_wav)
        r = httpx.post(server.url + "/audio/speech", json={"model": "tts-1", "input": "Hi.", "voice": "Bob"})
        assert r.status_code == 404
        error = r.json()["error"]
        assert error["code"] == "voice_not_found" and "Ada" in error["message"] and "Bob" in error["message"]
    turbo = started_worker(bundles["turbo"])  # no built-in voice: an OpenAI name cannot fall back to one
    try:
        with serving(turbo, tmp_path / "voices") as server:
            r = httpx.post(server.url + "/audio/speech", json={"input": "Hi.", "voice": "alloy"})
            assert r.status_code == 404 and "Ada" in r.json()["error"]["message"]
            r = httpx.post(
                server.url + "/audio/speech", json={"input": "Hi.", "voice": "Ada", "response_format": "wav"}
            )
            assert r.status_code == 200 and decoded_samples(r.content, "wav") > 0
    finally:
        assert turbo.shutdown()


@pytest.mark.parametrize(
    ("fields", "status", "param", "words"),
    [
        ({"voice": "alloy"}, 400, "input", "'input' is required"),
        ({"input": "Hi", "speed": 5}, 400, "speed", "'speed'"),
        ({"input": "Hi", "speed": 0.1}, 400, "speed", "'speed'"),
        ({"input": "Hi", "speed": "fast"}, 400, "speed", "'speed'"),
        ({"input": 42}, 400, "input", "valid string"),
        ({"input": "Hi", "response_format": "m4a"}, 400, "response_format", "'mp3'"),
        ({"input": "Hi", "temperature": 99}, 400, "temperature", "emperature"),
        ({"input": "Hi", "seed": -1}, 400, "seed", "'seed'"),
        ({"input": "   "}, 400, "input", "empty"),
        ({"input": "Hi", "model": "whisper-1"}, 404, "model", "tts-1"),
        ({"input": "Hi", "language": "xx"}, 400, "language", "English only"),
        ({"input": "x" * 100_001}, 413, "input", "100,000"),
    ],
)
def test_bad_fields(client, fields, status, param, words):
    r = client.post("/audio/speech", json=fields)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert words in error["message"] and set(error) == {"message", "type", "param", "code"}
    assert error["param"] == param and error["type"] == "invalid_request_error"


def test_bad_bodies(client):
    r = client.post("/audio/speech", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
    assert r.json()["error"]["param"] is None
    r = client.post("/audio/speech", json=["a", "list"])
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"
    r = client.get("/audio/speech/not-a-number/timestamps")
    assert r.status_code == 400 and r.json()["error"]["param"] == "request_id"


def test_auth(worker, tmp_path):
    with serving(worker, tmp_path / "voices", api_key=KEY) as server:
        url = server.url + "/models"
        assert httpx.get(url).status_code == 401
        wrong = httpx.get(url, headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_api_key"
        assert httpx.get(url, headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
        r = httpx.post(server.url + "/audio/speech", json={"input": "Hi."})
        assert r.status_code == 401
        from openai import AuthenticationError, OpenAI

        with OpenAI(base_url=server.url, api_key="wrong", max_retries=0) as bad, pytest.raises(AuthenticationError):
            bad.models.list()
        with OpenAI(base_url=server.url, api_key=KEY, max_retries=0) as good:
            assert good.models.list().data[0].id == "chatterbox-original"
        assert "access-control-allow-origin" not in httpx.get(url, headers={"Origin": "http://x"}).headers


def test_cors_only_when_asked(worker, tmp_path):
    with serving(worker, tmp_path / "voices", cors=("http://reader.local",)) as server:
        r = httpx.options(
            server.url + "/audio/speech",
            headers={"Origin": "http://reader.local", "Access-Control-Request-Method": "POST"},
        )
        assert r.headers["access-control-allow-origin"] == "http://reader.local"


def test_non_local_host_needs_a_key(bundles, capsys):
    assert main(["serve", "--bundle", str(bundles["original"]), "--host", "0.0.0.0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--api-key" in err
    assert main(["serve", "--bundle", str(bundles["original"]), "--port", "70000"]) == 2
    assert main(["serve", "--bundle", "/no/such/bundle"]) == 2


def test_port_in_use_is_refused(server, bundles, capsys):
    assert main(["serve", "--bundle", str(bundles["original"]), "--port", str(server.port)]) == 2
    assert "cannot listen" in capsys.readouterr().err


def test_queue_full_is_429_with_retry_after(worker, tmp_path):
    with serving(worker, tmp_path / "voices", max_waiting=1) as server:
        blocker, _sink = occupy(worker)
        results = {}
        waiting = threading.Thread(
            target=lambda: results.update(
                r=httpx.post(
                    server.url + "/audio/speech", json={"input": "I wait.", "response_format": "pcm"}, timeout=60
                )
            )
        )
        waiting.start()
        try:
            deadline = time.monotonic() + 10
            while server.jobs.waiting < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            r = httpx.post(server.url + "/audio/speech", json={"input": "Too many."})
            assert r.status_code == 429
            assert int(r.headers["retry-after"]) >= 1 and r.json()["error"]["code"] == "queue_full"
        finally:
            worker.cancel(blocker)
            waiting.join(60)
        assert results["r"].status_code == 200
        assert wait_idle(worker, server)


def test_failure_before_audio_is_json_and_the_worker_lives_on(client, server, worker, monkeypatch):
    from core.engine import TextInputError

    def refuse(*_args, **_kwargs):
        raise TextInputError("text.english_only", language="fr")

    with monkeypatch.context() as patched:
        patched.setattr(worker.pipeline, "stream", refuse)
        r = _speech(client, input="Hello.")
    assert r.status_code == 422 and r.json()["error"]["code"] == "synthesis_failed"
    assert worker.alive
    assert _speech(client, input="Still here.", response_format="pcm").status_code == 200


def test_a_request_with_a_sink_sends_its_events_there_only(worker):
    import queue

    from core.engine.streaming.synthesis import SynthesisRequest

    while not worker.events.empty():
        worker.events.get_nowait()
    sink: queue.Queue = queue.Queue()
    rid = worker.new_request_id()
    worker.speak(SynthesisRequest("Routed elsewhere.", request_id=rid), sink=sink)
    kinds = []
    while not kinds or kinds[-1] not in ("Finished", "Failed", "Cancelled"):
        kinds.append(type(sink.get(timeout=30)).__name__)
    assert kinds[0] == "Started" and "Chunk" in kinds and kinds[-1] == "Finished"
    assert worker.events.empty()
