"""Word timestamps on ``POST /v1/audio/speech`` (``"timestamps": "word"``): the request's field, the SSE sentence
events and the timestamps route with each sentence's words, alignment off the audio's path, and a sentence whose
words cannot be found (it keeps its times, the request never fails)."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time

import httpx
import numpy as np
import pytest

from core.api.models import SpeechParams
from core.api.timestamps import Timestamps, sentence_words
from core.engine import SAMPLE_RATE, AlignerProcess
from tests import aligner_fakes as fakes
from tests.api_support import decoded_samples, long_text, serving

KEY = "words-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
TEXT = "The first sentence is here. A second one follows it. And the third ends it."


@pytest.fixture(scope="module")
def server(worker, tmp_path_factory):
    with serving(worker, tmp_path_factory.mktemp("words-voices"), api_key=KEY) as server:
        yield server


def _post(server, **fields) -> httpx.Response:
    body = {"model": "tts-1", "voice": "alloy", "input": TEXT, **fields}
    return httpx.post(server.url + "/audio/speech", json=body, headers=AUTH, timeout=60)


def _sse(server, **fields) -> tuple[list[dict], httpx.Response]:
    body = {"model": "tts-1", "voice": "alloy", "input": TEXT, "stream_format": "sse", "response_format": "pcm"}
    with httpx.stream("POST", server.url + "/audio/speech", json={**body, **fields}, headers=AUTH, timeout=60) as r:
        assert r.status_code == 200, r.read()
        events = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: ")]
    return events, r


def _timestamps(server, response: httpx.Response, wait_done: bool = True) -> dict:
    url = server.url.removesuffix("/v1") + response.headers["x-timestamps-url"]
    deadline = time.monotonic() + 20
    while True:
        found = httpx.get(url, headers=AUTH).json()
        if found["done"] or not wait_done or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _check_words(sentence: dict) -> None:
    """The words of a sentence: in the text's order, inside the sentence's own time, in time order."""
    written = [w.strip(".,!?;:") for w in sentence["text"].split()]
    said = [w["word"] for w in sentence["words"]]
    assert said == written
    times = [(w["start"], w["end"]) for w in sentence["words"]]
    assert all(sentence["start"] <= a <= b <= sentence["end"] for a, b in times)
    assert all(b1 <= a2 + 1e-3 for (_a1, b1), (a2, _b2) in zip(times, times[1:]))


# --- the field ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "taken"),
    [
        (True, "sentence"),
        (False, False),
        ("word", "word"),
        ("sentence", "sentence"),
        ("WORD", "word"),
        ("true", "sentence"),
        ("false", False),
        (None, False),
        (1, "sentence"),
    ],
)
def test_the_timestamps_field_takes_booleans_and_the_two_names(given, taken):
    params = SpeechParams.model_validate({"input": "Hi.", "timestamps": given})
    assert params.timestamps == taken
    assert params.words is (taken == "word")


def test_the_fields_schema_says_boolean_or_one_of_the_names():
    schema = SpeechParams.model_json_schema()["properties"]["timestamps"]
    assert {"type": "boolean"} in schema["anyOf"]
    assert {"enum": ["sentence", "word"], "type": "string"} in schema["anyOf"]
    assert schema["default"] is False


@pytest.mark.parametrize("bad", ["words", "char", 2, [True], {"word": True}])
def test_another_value_is_a_400_naming_the_field_and_the_choices(server, bad):
    r = _post(server, timestamps=bad)
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["param"] == "timestamps" and error["code"] == "invalid_value"
    assert 'true, false, "sentence" or "word"' in error["message"] and "'timestamps'" in error["message"]


def test_multipart_forms_send_the_field_as_text(server, voice_wav):
    with open(voice_wav, "rb") as f:
        r = httpx.post(
            server.url + "/audio/speech",
            data={"input": "Said with a form.", "timestamps": "word", "response_format": "wav"},
            files={"voice_file": ("me.wav", f, "audio/wav")},
            headers=AUTH,
            timeout=60,
        )
    assert r.status_code == 200, r.text
    found = _timestamps(server, r)
    assert found["done"] and [set(s) & {"words"} for s in found["sentences"]] == [{"words"}]


# --- words -------------------------------------------------------------------------------------------------------
def test_sse_sentence_events_carry_their_words_in_seconds_of_the_whole_audio(server, monkeypatch):
    fakes.use(monkeypatch, fakes.even_words)
    events, r = _sse(server, timestamps="word", seed=3)
    sentences = [e for e in events if e["type"] == "speech.audio.sentence"]
    done = events[-1]
    assert done["type"] == "speech.audio.done"
    assert [s["index"] for s in sentences] == [0, 1, 2]
    for sentence in sentences:
        _check_words(sentence)
        assert sentence["words_placed"] == 1.0 and "words_error" not in sentence
    assert sentences[1]["words"][0]["start"] == pytest.approx(sentences[1]["start"], abs=1e-3)  # offset added
    assert done["sentences"] == [{k: v for k, v in s.items() if k != "type"} for s in sentences]
    audio = b"".join(base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta")
    record = server.jobs.record(int(r.headers["x-request-id"]))
    assert len(audio) // 2 == record.samples
    assert sentences[-1]["words"][-1]["end"] <= record.samples / SAMPLE_RATE + 1e-3


def test_sentence_timestamps_are_unchanged_without_words(server, monkeypatch):
    fakes.use(monkeypatch, fakes.crashing)  # never called
    for asked in (True, "sentence"):
        events, _ = _sse(server, timestamps=asked, seed=3)
        sentences = [e for e in events if e["type"] == "speech.audio.sentence"]
        assert [set(s) for s in sentences] == [{"type", "index", "text", "start", "end"}] * 3


def test_the_timestamps_route_has_the_words_once_they_are_found(server, monkeypatch):
    fakes.use(monkeypatch, fakes.even_words)
    r = _post(server, timestamps="word", response_format="wav", speed=1.5, seed=4)
    assert r.status_code == 200
    found = _timestamps(server, r)
    assert found["done"]
    assert found["duration"] == pytest.approx(decoded_samples(r.content, "wav") / SAMPLE_RATE, abs=1e-3)
    assert len(found["sentences"]) == 3
    for sentence in found["sentences"]:
        _check_words(sentence)


def test_the_audio_never_waits_for_the_words(server, monkeypatch):
    """The aligner is held until the request's audio has all gone through the server (its record is made once the
    last chunk is sent): had the audio waited for the words, that would never happen."""
    held = fakes.Held(limit=20)
    fakes.use(monkeypatch, held)
    body = {"input": long_text(4), "voice": "alloy", "response_format": "pcm", "stream_format": "sse"}
    audio, events, ids = b"", [], []

    def release_when_sent() -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (ids and server.jobs.record(ids[0])):
            time.sleep(0.01)
        held.release()

    watcher = threading.Thread(target=release_when_sent)
    with httpx.stream(
        "POST", server.url + "/audio/speech", json={**body, "timestamps": "word", "seed": 5}, headers=AUTH, timeout=60
    ) as r:
        ids.append(int(r.headers["x-request-id"]))
        watcher.start()
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if events[-1]["type"] == "speech.audio.delta":
                    audio += base64.b64decode(events[-1]["audio"])
    watcher.join()
    assert not held.timed_out
    kinds = [e["type"] for e in events]
    last_delta = len(kinds) - 1 - kinds[::-1].index("speech.audio.delta")
    assert "speech.audio.sentence" not in kinds[:last_delta]  # every sentence's words came after all the audio
    assert [e["index"] for e in events if e["type"] == "speech.audio.sentence"] == [0, 1, 2, 3]
    assert len(audio) // 2 == server.jobs.record(ids[0]).samples and kinds[-1] == "speech.audio.done"


def test_raw_audio_with_words_is_complete_before_the_words_are(server, monkeypatch):
    held = fakes.Held(limit=20)
    fakes.use(monkeypatch, held)
    r = _post(server, timestamps="word", response_format="pcm", seed=6)
    record = server.jobs.record(int(r.headers["x-request-id"]))
    assert len(r.content) // 2 == record.samples
    pending = _timestamps(server, r, wait_done=False)
    assert not pending["done"] and all("words" not in s for s in pending["sentences"])
    held.release()
    found = _timestamps(server, r)
    assert found["done"] and all(s["words"] for s in found["sentences"])


@pytest.mark.parametrize(
    ("aligner", "code"), [(fakes.failing, "align.not_matching"), (fakes.crashing, "align.internal")]
)
def test_a_sentence_whose_words_fail_keeps_its_times_and_says_why(server, monkeypatch, aligner, code):
    fakes.use(monkeypatch, aligner)
    events, r = _sse(server, timestamps="word", seed=7)
    sentences = [e for e in events if e["type"] == "speech.audio.sentence"]
    assert len(sentences) == 3 and events[-1]["type"] == "speech.audio.done"
    for sentence in sentences:
        assert sentence["words"] == [] and sentence["words_error"]["code"] == code
        assert sentence["words_error"]["message"] and sentence["end"] > sentence["start"]
    audio = b"".join(base64.b64decode(e["audio"]) for e in events if e["type"] == "speech.audio.delta")
    assert len(audio) // 2 == server.jobs.record(int(r.headers["x-request-id"])).samples
    raw = _post(server, timestamps="word", response_format="wav", seed=7)
    assert raw.status_code == 200 and decoded_samples(raw.content, "wav") * 2 == len(audio)
    found = _timestamps(server, raw)
    assert found["done"] and all(s["words"] == [] and s["words_error"]["code"] == code for s in found["sentences"])


def test_nothing_to_say_with_words_is_silence_without_sentences(server):
    events, _ = _sse(server, input=".", timestamps="word")
    assert events[-1] == {**events[-1], "type": "speech.audio.done", "sentences": []}


# --- the real aligner (on stand-in audio: its structure, not its accuracy) ---------------------------------------
def test_the_real_aligner_on_a_response(server):
    events, r = _sse(server, timestamps="word", seed=8)
    sentences = [e for e in events if e["type"] == "speech.audio.sentence"]
    record = server.jobs.record(int(r.headers["x-request-id"]))
    assert [s["index"] for s in sentences] == [0, 1, 2]
    for sentence in sentences:
        assert isinstance(sentence["words"], list)
        if sentence["words"]:
            written = [w.strip(".,!?;:").lower() for w in sentence["text"].split()]
            said = [w["word"].lower() for w in sentence["words"]]
            position = 0
            for word in said:  # a subsequence of the written words: in the text's order
                position = written.index(word, position) + 1
            assert all(sentence["start"] <= w["start"] <= w["end"] <= sentence["end"] for w in sentence["words"])
            assert 0.0 < sentence["words_placed"] <= 1.0
        else:
            assert sentence["words_error"]["code"].startswith("align.") and sentence["words_error"]["message"]
        assert sentence["end"] <= record.samples / SAMPLE_RATE + 1e-3


def test_the_real_aligner_reports_the_share_placed():
    rng = np.random.default_rng(0)
    audio = (0.1 * rng.standard_normal(2 * SAMPLE_RATE)).astype(np.float32)
    aligner = AlignerProcess()
    try:
        found = sentence_words(aligner, audio, "Hello there, my friend.", "en", 1.0, 3.0)
        again = sentence_words(aligner, audio[: SAMPLE_RATE // 2], "Hello.", "en", 0.0, 0.5)  # the same process
    finally:
        aligner.close()
    assert set(again) in ({"words", "words_placed"}, {"words", "words_error"})
    assert set(found) in ({"words", "words_placed"}, {"words", "words_error"})
    if "words_placed" in found:
        assert 0.0 <= found["words_placed"] <= 1.0
        assert all(1.0 <= w["start"] <= w["end"] <= 3.0 for w in found["words"])


# --- the bookkeeping ---------------------------------------------------------------------------------------------
def test_words_are_aligned_once_a_sentence_is_complete(monkeypatch):
    calls = []

    def record(audio, rate, text, language="en", *a, **k):
        calls.append((audio.size, text, language))
        return fakes.even_words(audio, rate, text, language)

    fakes.use(monkeypatch, record)
    marks = Timestamps(1, ["One two.", "Three four."], words=True, language="fr")
    marks.add(0, 24_000, np.zeros(24_000, np.float32))
    marks.add(0, 12_000, np.zeros(12_000, np.float32))
    assert marks.ready() == 0 and not calls
    marks.add(-1, 2_400)  # the gap: the first sentence is complete
    marks.add(1, 24_000, np.zeros(24_000, np.float32))
    marks.finish()
    deadline = time.monotonic() + 5
    while not marks.settled and time.monotonic() < deadline:
        time.sleep(0.01)
    assert calls == [(36_000, "One two.", "fr"), (24_000, "Three four.", "fr")]
    found = marks.as_json()
    assert found["done"]
    assert found["sentences"][1]["words"] == [
        {"word": "Three", "start": 1.6, "end": 2.1},
        {"word": "four", "start": 2.1, "end": 2.6},
    ]
    assert [w["word"] for w in marks.all_words()] == ["One", "two", "Three", "four"]


def test_words_that_take_too_long_are_told_without_them(monkeypatch):
    held = fakes.Held(limit=10)
    fakes.use(monkeypatch, held)
    marks = Timestamps(2, ["Slow words.", "More."], words=True)
    marks.add(0, 12_000, np.zeros(12_000, np.float32))
    marks.add(1, 12_000, np.zeros(12_000, np.float32))
    marks.finish()

    async def told() -> list[dict]:
        return [sentence async for sentence in marks.rest(0, timeout=0.1)]

    try:
        late = asyncio.run(told())
    finally:
        held.release()
    assert [s["words_error"]["code"] for s in late] == ["align.timeout", "align.timeout"]
    assert all(s["words"] == [] and s["end"] > s["start"] for s in late)
    deadline = time.monotonic() + 5
    while not marks.settled and time.monotonic() < deadline:  # found after all: the timestamps route has them
        time.sleep(0.01)
    assert [w["word"] for w in marks.all_words()] == ["Slow", "words", "More"]
