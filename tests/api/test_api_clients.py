"""The calls real clients make, replayed against a server on a stand-in bundle: Home Assistant's OpenAI TTS
integration, Open WebUI, the OpenAI JavaScript SDK in a browser (headers included) and the openai Python SDK itself.

The requests are the clients' own (their bodies, paths and headers, as their sources send them), not what we wish
they sent.
"""

from __future__ import annotations

import base64
import json

import httpx
import pytest

from tests.api_support import decoded_samples, long_text, same_length, serving

KEY = "client-key-1"
ORIGIN = "http://localhost:5173"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def server(worker, tmp_path_factory):
    with serving(worker, tmp_path_factory.mktemp("client-voices"), api_key=KEY, cors=(ORIGIN,)) as server:
        yield server


@pytest.fixture(scope="module")
def host(server):
    return server.url.removesuffix("/v1")


# --- Home Assistant (the OpenAI TTS integration: config-flow probe, voice listing, speaking) --------------------
def test_home_assistant_probe_with_a_full_stop_gets_a_short_valid_mp3(server):
    """The integration checks a new server by speaking "." with tts-1 / alloy / mp3; anything but 2xx is "cannot
    connect"."""
    r = httpx.post(
        server.url + "/audio/speech",
        json={"model": "tts-1", "input": ".", "voice": "alloy", "response_format": "mp3"},
        headers={"Content-Type": "application/json", **AUTH},
        timeout=10,
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "audio/mpeg"
    assert 0 < decoded_samples(r.content, "mp3") <= 24000  # a short silence
    wrong = httpx.post(server.url + "/audio/speech", json={"input": "."}, headers={"Authorization": "Bearer x"})
    assert wrong.status_code == 401  # and the key is still checked


@pytest.mark.parametrize("response_format", ["wav", "pcm", "opus", "aac", "flac"])
def test_nothing_speakable_is_silence_in_every_format(server, response_format):
    r = httpx.post(
        server.url + "/audio/speech", json={"input": "?!... ---", "response_format": response_format}, headers=AUTH
    )
    assert r.status_code == 200, r.text
    assert 0 < decoded_samples(r.content, response_format) <= 24000


def test_home_assistant_lists_voices_beside_the_speech_url(server, voice_wav):
    server.app.state.api.library.add("Kitchen Voice", voice_wav)
    speech_url = server.url + "/audio/speech"
    voices_url = speech_url.rsplit("/", 1)[0] + "/voices"  # as the integration derives it
    r = httpx.get(voices_url, params={"limit": 100}, headers={"User-Agent": "HomeAssistant-OpenAI-TTS", **AUTH})
    assert r.status_code == 200
    ids = [v["id"] for v in r.json()["data"]]
    assert ids[0] == "Kitchen Voice" and "alloy" in ids and all(v["name"] for v in r.json()["data"])
    # and then speaks with one of them, in any case, with the integration's speed and instructions options
    r = httpx.post(
        speech_url,
        json={
            "model": "gpt-4o-mini-tts",
            "input": "The front door is open.",
            "voice": "kitchen voice",
            "response_format": "mp3",
            "speed": 1.2,
            "instructions": "Speak calmly.",
        },
        headers={"Content-Type": "application/json", **AUTH},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert r.headers["x-instructions"].startswith("ignored")
    assert decoded_samples(r.content, "mp3") > 0


# --- Open WebUI (Settings → Audio → OpenAI engine with a custom base URL) --------------------------------------
def test_open_webui_lists_models_and_voices_and_speaks(server, voice_wav):
    base = server.url  # TTS_OPENAI_API_BASE_URL, e.g. http://host:8765/v1
    models = httpx.get(f"{base}/audio/models", headers=AUTH).json()
    assert "tts-1" in [m["id"] for m in models["models"]]
    voices = httpx.get(f"{base}/audio/voices", headers=AUTH).json()
    available = {voice["id"]: voice["name"] for voice in voices["voices"]}  # what Open WebUI builds
    assert "alloy" in available
    payload = {"input": "Here is the answer you asked for.", "voice": "alloy"}
    payload["model"] = "tts-1"  # TTS_MODEL replaces the model
    payload = {**payload, "exaggeration": 0.6, "cfg_weight": 0.4, "seed": 7}  # TTS_OPENAI_PARAMS merged in
    r = httpx.post(
        f"{base}/audio/speech", json=payload, headers={"Content-Type": "application/json", **AUTH}, timeout=60
    )
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "audio/mpeg" and decoded_samples(r.content, "mp3") > 0


# --- the OpenAI JavaScript SDK in a browser (dangerouslyAllowBrowser) ------------------------------------------
JS_HEADERS = {
    "Accept": "application/octet-stream",
    "Content-Type": "application/json",
    "X-Stainless-Lang": "js",
    "X-Stainless-Package-Version": "5.23.0",
    "X-Stainless-OS": "Unknown",
    "X-Stainless-Arch": "unknown",
    "X-Stainless-Runtime": "browser:chrome",
    "X-Stainless-Runtime-Version": "131.0.0",
    "X-Stainless-Retry-Count": "0",
    "X-Stainless-Timeout": "600",
}


def test_js_sdk_preflight_and_request_from_a_web_page(server):
    asked = ",".join(sorted(h.lower() for h in ("Authorization", *JS_HEADERS) if h not in ("Accept",)))
    preflight = httpx.options(
        server.url + "/audio/speech",
        headers={
            "Origin": ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": asked,
        },
    )
    assert preflight.status_code == 200, preflight.text  # no key on a preflight: browsers never send one
    assert preflight.headers["access-control-allow-origin"] == ORIGIN
    allowed = {h.strip().lower() for h in preflight.headers["access-control-allow-headers"].split(",")}
    assert set(asked.split(",")) <= allowed
    assert "POST" in preflight.headers["access-control-allow-methods"]
    r = httpx.post(
        server.url + "/audio/speech",
        json={
            "model": "gpt-4o-mini-tts",
            "voice": {"id": "alloy"},
            "input": "From a web page.",
            "response_format": "wav",
        },
        headers={"Origin": ORIGIN, **AUTH, **JS_HEADERS},
        timeout=60,
    )
    assert r.status_code == 200, r.text
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert "x-request-id" in r.headers["access-control-expose-headers"].lower()
    other = httpx.options(
        server.url + "/audio/speech",
        headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"},
    )
    assert other.headers.get("access-control-allow-origin") != "http://evil.example"


# --- the openai Python SDK ---------------------------------------------------------------------------------------
def _sse(lines) -> list[dict]:
    events = []
    for line in lines:
        if line.startswith("data: "):
            events.append(json.loads(line[6:]))
    return events


def test_python_sdk_sse_stream_and_model_lookups(server):
    from openai import OpenAI

    with OpenAI(base_url=server.url, api_key=KEY, max_retries=0) as client:
        assert client.models.retrieve("tts-1").id == "tts-1"
        with client.audio.speech.with_streaming_response.create(
            model="gpt-4o-mini-tts",
            voice={"id": "alloy"},
            input=long_text(3),
            response_format="pcm",
            stream_format="sse",
            instructions="Cheerful.",
            extra_body={"seed": 4, "timestamps": True},
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            rid = int(response.headers["x-request-id"])
            events = _sse(response.iter_lines())
    deltas = [e for e in events if e["type"] == "speech.audio.delta"]
    sentences = [e for e in events if e["type"] == "speech.audio.sentence"]
    done = events[-1]
    assert deltas and done["type"] == "speech.audio.done"
    assert set(done["usage"]) == {"input_tokens", "output_tokens", "total_tokens"} and done["usage"]["output_tokens"]
    audio = b"".join(base64.b64decode(e["audio"]) for e in deltas)
    record = server.jobs.record(rid)
    assert len(audio) // 2 == record.samples
    assert [s["index"] for s in sentences] == [0, 1, 2]
    assert done["sentences"] == [{k: v for k, v in s.items() if k != "type"} for s in sentences]
    assert all(a["end"] <= b["start"] for a, b in zip(sentences, sentences[1:], strict=False))
    assert sentences[-1]["end"] <= record.samples / 24000 + 1e-3


def test_python_sdk_with_the_bare_host_as_base_url(server, host):
    from openai import NotFoundError, OpenAI

    with OpenAI(base_url=host, api_key=KEY, max_retries=0) as client:
        audio = client.audio.speech.create(model="tts-1-hd", voice="ALLOY", input="No v1 here.", response_format="wav")
        assert decoded_samples(audio.content, "wav") > 0
        assert [m.id for m in client.models.list().data][0] == "chatterbox-original"
        with pytest.raises(NotFoundError):
            client.models.retrieve("whisper-1")
    r = httpx.get(host + "/v2/nothing", headers=AUTH)
    assert r.status_code == 404 and set(r.json()["error"]) == {"message", "type", "param", "code"}
    r = httpx.delete(server.url + "/audio/speech", headers=AUTH)
    assert r.status_code == 405 and r.json()["error"]["code"] == "method_not_allowed"


# --- our extensions ---------------------------------------------------------------------------------------------
def test_sentence_timestamps_as_a_json_companion(server):
    text = "First sentence here. [pause:0.5s] Second one after a pause. Third."
    r = httpx.post(
        server.url + "/audio/speech",
        json={"input": text, "response_format": "wav", "timestamps": True, "speed": 1.5},
        headers=AUTH,
        timeout=60,
    )
    assert r.status_code == 200
    marks = httpx.get(server.url.removesuffix("/v1") + r.headers["x-timestamps-url"], headers=AUTH).json()
    assert marks["done"] and [s["text"] for s in marks["sentences"]] == [
        "First sentence here.",
        "Second one after a pause.",
        "Third.",
    ]
    seconds = decoded_samples(r.content, "wav") / 24000
    assert marks["duration"] == pytest.approx(seconds, abs=1e-3)
    first, second, _ = marks["sentences"]
    assert second["start"] - first["end"] >= 0.5 / 1.5 - 0.01  # the pause, at the asked speed
    assert httpx.get(server.url + "/audio/speech/999999/timestamps", headers=AUTH).status_code == 404


def test_voices_added_and_removed_over_the_api_behind_the_key(server, voice_wav):
    wav = voice_wav.read_bytes()
    r = httpx.post(server.url + "/audio/voices", data={"name": "Guest"}, files={"file": ("guest.wav", wav)})
    assert r.status_code == 401
    r = httpx.post(server.url + "/audio/voices", data={"name": "Guest"}, files={"file": ("g.wav", wav)}, headers=AUTH)
    assert r.status_code == 201 and r.json()["id"] == "Guest"
    spoken = httpx.post(
        server.url + "/audio/speech",
        json={"input": "As a guest.", "voice": "GUEST", "response_format": "pcm"},
        headers=AUTH,
        timeout=60,
    )
    assert spoken.status_code == 200 and decoded_samples(spoken.content, "pcm") > 0
    assert httpx.delete(server.url + "/audio/voices/guest").status_code == 401
    gone = httpx.delete(server.url + "/audio/voices/guest", headers=AUTH)
    assert gone.status_code == 200 and gone.json() == {"object": "voice.deleted", "id": "Guest", "deleted": True}
    assert httpx.delete(server.url + "/audio/voices/guest", headers=AUTH).status_code == 404
    assert "Guest" not in [v["id"] for v in httpx.get(server.url + "/audio/voices", headers=AUTH).json()["data"]]


@pytest.mark.parametrize("response_format", ["mp3", "aac", "opus", "flac"])
def test_compressed_formats_stream_before_the_audio_is_done(server, response_format):
    first_at, data = None, b""
    with httpx.stream(
        "POST",
        server.url + "/audio/speech",
        json={"input": long_text(12), "response_format": response_format, "seed": 2},
        headers=AUTH,
        timeout=60,
    ) as r:
        assert r.status_code == 200
        for part in r.iter_bytes():
            first_at = first_at or __import__("time").monotonic()
            data += part
    record = server.jobs.record(int(r.headers["x-request-id"]))
    assert first_at < record.finished_at  # bytes left while later sentences were still being generated
    assert same_length(decoded_samples(data, response_format), record.samples, response_format)
