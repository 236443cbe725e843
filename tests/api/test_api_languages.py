"""The speech API on the Multilingual model: Chinese and Japanese spoken through the text front end; Chinese without
its Cangjie table refused before the queue with a sentence naming the language (nothing queued, nothing lost)."""

from __future__ import annotations

import shutil

import httpx
import pytest

from tests.api_support import decoded_samples, serving, started_worker


@pytest.fixture(scope="module")
def without_table(bundles, tmp_path_factory):
    copy = shutil.copytree(bundles["multilingual"], tmp_path_factory.mktemp("ml") / "ml")
    (copy / "Cangjie5_TC.json").unlink()
    return copy


@pytest.mark.parametrize("table", [True, False])
def test_chinese_and_japanese_through_the_api(bundles, without_table, tmp_path, table):
    worker = started_worker(bundles["multilingual"] if table else without_table)
    try:
        with serving(worker, tmp_path / "voices") as server, httpx.Client(base_url=server.url, timeout=60) as client:
            speech = {"model": "tts-1", "voice": "alloy", "response_format": "wav", "seed": 3}
            r = client.post("/audio/speech", json={**speech, "input": "私は東京へ行きました。", "language": "ja"})
            assert r.status_code == 200 and decoded_samples(r.content, "wav") > 0
            r = client.post("/audio/speech", json={**speech, "input": "你好，中文。", "language": "zh"})
            if table:
                assert r.status_code == 200 and decoded_samples(r.content, "wav") > 0
            else:
                error = r.json()["error"]
                assert r.status_code == 400 and error["param"] == "language", r.text
                assert "Chinese (zh)" in error["message"] and "Cangjie5_TC.json" in error["message"]
                assert worker.status().running is None and not worker.status().waiting  # never queued
    finally:
        assert worker.shutdown()
