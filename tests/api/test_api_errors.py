"""A request that fails on the inference thread is answered once, in OpenAI's error shape, in the API's words."""

from __future__ import annotations

import httpx

from core.wording import describe
from tests.api_support import serving


def test_text_refused_by_the_engine_is_a_422_worded_for_the_api(worker, tmp_path, monkeypatch):
    from core.engine import TextInputError

    def refuse(*_args, **_kwargs):
        raise TextInputError("text.too_long", chars=2_000_000, limit=1_000_000)

    monkeypatch.setattr(worker.pipeline, "stream", refuse)
    with serving(worker, tmp_path / "voices") as server:
        r = httpx.post(server.url + "/audio/speech", json={"input": "Hello there.", "voice": "alloy"}, timeout=60)
    assert r.status_code == 422
    assert r.json() == {
        "error": {
            "message": describe("text.too_long", {"chars": 2_000_000, "limit": 1_000_000}, "api"),
            "type": "invalid_request_error",
            "param": None,
            "code": "synthesis_failed",
        }
    }


def test_an_internal_failure_is_a_500_with_the_catalog_sentence(worker, tmp_path, monkeypatch):
    pipe = worker.pipeline
    monkeypatch.setattr(pipe, "stream", lambda *a, **k: (_ for _ in ()).throw(ZeroDivisionError("boom")))
    with serving(worker, tmp_path / "voices") as server:
        r = httpx.post(server.url + "/audio/speech", json={"input": "Hello.", "voice": "alloy"}, timeout=60)
    assert r.status_code == 500
    assert r.json()["error"] == {
        "message": "Internal error: ZeroDivisionError: boom",
        "type": "server_error",
        "param": None,
        "code": "internal_error",
    }


def test_an_unknown_voice_lists_the_known_ones_in_the_api_words(worker, tmp_path):
    with serving(worker, tmp_path / "voices") as server:
        r = httpx.post(server.url + "/audio/speech", json={"input": "Hi.", "voice": "Bob"}, timeout=60)
    assert r.status_code == 404
    assert r.json()["error"]["message"] == (
        "There is no voice named 'Bob'. Known voices: none yet (add one with POST /v1/voices)."
    )
