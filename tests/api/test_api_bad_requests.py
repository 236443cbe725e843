"""A malformed request is answered as OpenAI answers it: 400 and ``{"error": {"message", "type":
"invalid_request_error", "param", "code"}}``, so the official openai SDK raises ``BadRequestError`` (not
``UnprocessableEntityError``, which it raises for 422) with the field in ``param``. Well-formed requests through the
same SDK still succeed."""

from __future__ import annotations

import httpx
import openai
import pytest
import requests

from tests.api_support import decoded_samples, serving

KEY = "bad-request-key"
AUTH = {"Authorization": f"Bearer {KEY}"}


@pytest.fixture(scope="module")
def server(worker, tmp_path_factory):
    with serving(worker, tmp_path_factory.mktemp("bad-request-voices"), api_key=KEY) as server:
        yield server


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=server.url, api_key=KEY, max_retries=0) as client:
        yield client


def _refused(client: openai.OpenAI, **fields) -> openai.BadRequestError:
    args = {"model": "tts-1", "voice": "alloy", "input": "Hello.", **fields}
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.speech.create(**args)
    error = caught.value
    assert error.status_code == 400 and error.type == "invalid_request_error"
    assert error.body is not None and set(error.body) == {"message", "type", "param", "code"}  # type: ignore[arg-type]
    return error


@pytest.mark.parametrize(
    ("fields", "param", "words"),
    [
        ({"input": ""}, "input", "'input' is empty"),
        ({"input": "  \n "}, "input", "'input' is empty"),
        ({"speed": 10.0}, "speed", "less than or equal to 4"),
        ({"speed": 0.0}, "speed", "greater than or equal to 0.25"),
        ({"response_format": "m4a"}, "response_format", "'mp3'"),
        ({"input": ["not", "text"]}, "input", "valid string"),
        ({"speed": "fast"}, "speed", "valid number"),
        ({"extra_body": {"seed": -1}}, "seed", "'seed'"),
        ({"extra_body": {"temperature": 99}}, "temperature", "temperature"),
        ({"extra_body": {"language": "fr"}}, "language", "English only"),
    ],
)
def test_the_sdk_raises_bad_request_naming_the_field(client, fields, param, words):
    error = _refused(client, **fields)
    assert error.param == param and error.code == "invalid_value"
    assert words in error.message, error.message
    assert param in error.message  # the message names the field too, for people reading only the message


def test_a_format_the_sdk_does_not_know_sent_raw(client):
    """The raw response of the same call: the status and the JSON body as OpenAI sends them."""
    with pytest.raises(openai.BadRequestError) as caught:
        client.audio.speech.with_raw_response.create(model="tts-1", voice="alloy", input="Hi.", response_format="ogg")
    response = caught.value.response
    assert response.status_code == 400 and response.headers["content-type"] == "application/json"
    body = response.json()["error"]
    assert body["param"] == "response_format" and body["code"] == "invalid_value"
    assert "'ogg'" in body["message"] and "'wav'" in body["message"]


def test_not_the_loaded_model_or_voice_stays_404(client):
    with pytest.raises(openai.NotFoundError) as caught:
        client.audio.speech.create(model="whisper-1", voice="alloy", input="Hi.")
    assert caught.value.param == "model" and caught.value.code == "model_not_found"
    with pytest.raises(openai.NotFoundError) as caught:
        client.audio.speech.create(model="tts-1", voice="Nobody Here", input="Hi.")
    assert caught.value.param == "voice" and caught.value.code == "voice_not_found"


def test_a_wrong_key_stays_401(server):
    with (
        openai.OpenAI(base_url=server.url, api_key="wrong", max_retries=0) as client,
        pytest.raises(openai.AuthenticationError) as caught,
    ):
        client.audio.speech.create(model="tts-1", voice="alloy", input="Hi.")
    assert caught.value.status_code == 401 and caught.value.code == "invalid_api_key"


@pytest.mark.parametrize(
    ("content", "content_type", "code", "param"),
    [
        (b"{not json", "application/json", "invalid_json", None),
        (b"input=Hello", "application/x-www-form-urlencoded", "invalid_json", None),
        (b"", "application/json", "invalid_json", None),
        (b'"just a string"', "application/json", "invalid_json", None),
        (b'{"model": "tts-1", "voice": "alloy"}', "application/json", "invalid_value", "input"),
        (b'{"model": "tts-1", "input": null}', "application/json", "invalid_value", "input"),
    ],
)
def test_raw_bodies_that_are_not_a_speech_request(server, content, content_type, code, param):
    r = httpx.post(server.url + "/audio/speech", content=content, headers={**AUTH, "Content-Type": content_type})
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error == {"message": error["message"], "type": "invalid_request_error", "param": param, "code": code}
    assert ("'input'" in error["message"]) if param else ("JSON" in error["message"])


def test_a_missing_input_with_requests(server):
    r = requests.post(server.url + "/audio/speech", json={"model": "tts-1", "voice": "alloy"}, headers=AUTH, timeout=60)
    assert r.status_code == 400
    assert r.json()["error"]["param"] == "input" and r.json()["error"]["message"] == "'input' is required."


def test_a_malformed_multipart_body_is_400(server):
    r = httpx.post(
        server.url + "/speech-to-speech/default",
        content=b"--x\r\nbroken",
        headers={**AUTH, "Content-Type": "multipart/form-data; boundary=x"},
    )
    assert r.status_code == 400 and r.json()["error"]["code"] in ("invalid_multipart", "missing_file")


def test_well_formed_requests_still_succeed_through_the_sdk(client, server):
    audio = client.audio.speech.create(model="tts-1", voice="alloy", input="Still fine.", response_format="wav")
    assert decoded_samples(audio.content, "wav") > 0
    with client.audio.speech.with_streaming_response.create(
        model="tts-1", voice="alloy", input="Streamed. Two sentences.", response_format="pcm", speed=1.25
    ) as response:
        assert response.status_code == 200
        rid = int(response.headers["x-request-id"])
        data = b"".join(response.iter_bytes())
    assert len(data) // 2 > 0 and len(data) % 2 == 0
    assert server.jobs.record(rid) is not None
