"""Kokoro-FastAPI's ``POST /dev/captioned_speech``, called as Kokoro's clients call it: the bare host's path (and
``/v1/dev/…``), ``requests``/``httpx`` with a JSON body of Kokoro's fields, ``stream: false`` for one JSON object
and Kokoro's default (``stream: true``) for one object per line; the base64 audio decodes to a file of the asked
format, and the words' times are in order and within the audio."""

from __future__ import annotations

import base64
import io
import json

import av
import httpx
import pytest
import requests
import soundfile as sf

from core.engine import SAMPLE_RATE
from tests import aligner_fakes as fakes
from tests.api_support import decoded_samples, long_text, same_length, serving

KEY = "kokoro-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
TEXT = "Captions are made of words. Each word has its time. The audio comes with them."
KOKORO_TYPES = {"mp3": "audio/mpeg", "wav": "audio/wav", "pcm": "audio/pcm", "flac": "audio/flac", "opus": "audio/opus"}


@pytest.fixture(scope="module")
def server(worker, tmp_path_factory):
    with serving(worker, tmp_path_factory.mktemp("kokoro-voices"), api_key=KEY) as server:
        yield server


@pytest.fixture(scope="module")
def host(server):
    return server.url.removesuffix("/v1")


def _kokoro_body(**fields) -> dict:
    """What Kokoro's clients send (its README's example and the apps that call it)."""
    return {
        "model": "kokoro",
        "input": TEXT,
        "voice": "alloy",
        "speed": 1,
        "response_format": "mp3",
        "stream": False,
        "return_timestamps": True,
        **fields,
    }


def _check_timestamps(words: list[dict], seconds: float) -> None:
    assert words and all(set(w) == {"word", "start_time", "end_time"} for w in words)
    times = [(w["start_time"], w["end_time"]) for w in words]
    assert all(0.0 <= a <= b <= seconds + 1e-3 for a, b in times)
    assert all(b1 <= a2 + 1e-3 for (_a1, b1), (a2, _b2) in zip(times, times[1:]))


def _seconds(data: bytes, response_format: str) -> float:
    return decoded_samples(data, response_format) / SAMPLE_RATE


@pytest.mark.parametrize("response_format", ["mp3", "wav", "flac", "opus", "pcm"])
def test_stream_false_answers_one_json_object_as_kokoro_does(server, host, monkeypatch, response_format):
    fakes.use(monkeypatch, fakes.even_words)
    r = requests.post(
        f"{host}/dev/captioned_speech",
        json=_kokoro_body(response_format=response_format, seed=2),
        headers={"Content-Type": "application/json", **AUTH},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    assert r.headers["content-disposition"] == f"attachment; filename=speech.{response_format}"
    found = r.json()
    assert set(found) == {"audio", "audio_format", "timestamps"}
    assert found["audio_format"] == KOKORO_TYPES[response_format]
    audio = base64.b64decode(found["audio"])
    record = server.jobs.record(int(r.headers["x-request-id"]))
    assert same_length(decoded_samples(audio, response_format), record.samples, response_format)
    if response_format == "wav":
        samples, rate = sf.read(io.BytesIO(audio), dtype="float32")
        assert rate == SAMPLE_RATE and samples.size == record.samples
    elif response_format != "pcm":
        with av.open(io.BytesIO(audio)) as container:
            assert container.streams.audio[0].codec_context.name.startswith(
                {"mp3": "mp3", "flac": "flac", "opus": "opus"}[response_format]
            )
    _check_timestamps(found["timestamps"], record.samples / SAMPLE_RATE)
    written = [w.strip(".,") for w in TEXT.split()]
    assert [w["word"] for w in found["timestamps"]] == written


def test_streamed_by_default_one_object_per_line_as_the_audio_comes(server, host, monkeypatch):
    fakes.use(monkeypatch, fakes.even_words)
    body = {k: v for k, v in _kokoro_body(input=long_text(4), response_format="wav", seed=3).items() if k != "stream"}
    with httpx.stream("POST", f"{host}/dev/captioned_speech", json=body, headers=AUTH, timeout=60) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"] == "application/json"
        lines = [json.loads(line) for line in r.iter_lines() if line.strip()]
    assert len(lines) > 1 and all(set(line) == {"audio", "audio_format", "timestamps"} for line in lines)
    assert {line["audio_format"] for line in lines} == {"audio/wav"}
    audio = b"".join(base64.b64decode(line["audio"]) for line in lines)
    record = server.jobs.record(int(r.headers["x-request-id"]))
    samples, rate = sf.read(io.BytesIO(audio), dtype="float32")  # the lines' audio makes one file
    assert rate == SAMPLE_RATE and samples.size == record.samples
    words = [w for line in lines for w in line["timestamps"]]
    _check_timestamps(words, record.samples / SAMPLE_RATE)
    assert len(words) == len(long_text(4).split())
    assert lines[0]["audio"]  # the audio starts before any words are known


def test_the_v1_path_and_the_key(server, host, monkeypatch):
    fakes.use(monkeypatch, fakes.even_words)
    r = httpx.post(server.url + "/dev/captioned_speech", json=_kokoro_body(input="Short."), headers=AUTH, timeout=60)
    assert r.status_code == 200 and r.json()["timestamps"][0]["word"] == "Short"
    for path in (f"{host}/dev/captioned_speech", server.url + "/dev/captioned_speech"):
        refused = httpx.post(path, json=_kokoro_body(), timeout=10)
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"


def test_return_timestamps_false_gives_no_words_and_runs_no_aligner(server, host, monkeypatch):
    fakes.use(monkeypatch, fakes.crashing)
    r = httpx.post(f"{host}/dev/captioned_speech", json=_kokoro_body(return_timestamps=False), headers=AUTH, timeout=60)
    assert r.status_code == 200
    found = r.json()
    assert found["timestamps"] == [] and _seconds(base64.b64decode(found["audio"]), "mp3") > 0.5
    assert "x-timestamps-url" not in r.headers


def test_a_failing_aligner_gives_no_words_and_the_whole_audio(server, host, monkeypatch):
    fakes.use(monkeypatch, fakes.failing)
    r = httpx.post(f"{host}/dev/captioned_speech", json=_kokoro_body(response_format="pcm", seed=4), headers=AUTH)
    assert r.status_code == 200, r.text
    found = r.json()
    record = server.jobs.record(int(r.headers["x-request-id"]))
    assert found["timestamps"] == [] and len(base64.b64decode(found["audio"])) // 2 == record.samples
    why = httpx.get(host + r.headers["x-timestamps-url"], headers=AUTH).json()
    assert all(s["words_error"]["code"] == "align.not_matching" for s in why["sentences"])
    streamed = httpx.post(
        f"{host}/dev/captioned_speech", json=_kokoro_body(response_format="pcm", seed=4, stream=True), headers=AUTH
    )
    lines = [json.loads(line) for line in streamed.text.splitlines() if line.strip()]
    assert all(line["timestamps"] == [] for line in lines)
    assert b"".join(base64.b64decode(line["audio"]) for line in lines) == base64.b64decode(found["audio"])


def test_kokoros_other_fields(server, host, monkeypatch):
    fakes.use(monkeypatch, fakes.even_words)
    body = _kokoro_body(
        response_format="pcm",
        seed=5,
        lang_code="a",
        volume_multiplier=0.5,
        normalization_options={"normalize": False},
        return_download_link=False,
    )
    r = httpx.post(f"{host}/dev/captioned_speech", json=body, headers=AUTH, timeout=60)
    assert r.status_code == 200, r.text
    assert r.headers["x-ignored-fields"] == "normalization_options, return_download_link"
    loud = httpx.post(f"{host}/dev/captioned_speech", json={**body, "volume_multiplier": 1}, headers=AUTH, timeout=60)
    quiet_audio = base64.b64decode(r.json()["audio"])
    loud_audio = base64.b64decode(loud.json()["audio"])
    import numpy as np

    quiet = np.frombuffer(quiet_audio, "<i2").astype(np.float64)
    full = np.frombuffer(loud_audio, "<i2").astype(np.float64)
    assert quiet.size == full.size and np.abs(quiet).max() == pytest.approx(np.abs(full).max() / 2, rel=0.02, abs=2)


@pytest.mark.parametrize(
    ("fields", "status", "param"),
    [
        ({"voice": "af_heart"}, 404, "voice"),
        ({"model": "whisper-1"}, 404, "model"),
        ({"response_format": "m4a"}, 400, "response_format"),
        ({"speed": 9}, 400, "speed"),
        ({"input": ""}, 400, "input"),
        ({"stream": "maybe"}, 400, "stream"),
        ({"lang_code": "q"}, 400, "language"),
    ],
)
def test_refusals_use_the_apis_error_shape(server, host, fields, status, param):
    r = httpx.post(f"{host}/dev/captioned_speech", json=_kokoro_body(**fields), headers=AUTH, timeout=30)
    assert r.status_code == status, r.text
    error = r.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["param"] == param


def test_nothing_to_say_is_a_short_silence_without_words(server, host):
    r = httpx.post(f"{host}/dev/captioned_speech", json=_kokoro_body(input=".", response_format="wav"), headers=AUTH)
    assert r.status_code == 200
    found = r.json()
    assert found["timestamps"] == [] and 0 < _seconds(base64.b64decode(found["audio"]), "wav") <= 0.5
