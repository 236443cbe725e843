"""``python -m core bench-text``: the front end's cost per language beside the language model's (issue 50).
Its JSON fields and exit codes; never its timings."""

from __future__ import annotations

import json

import pytest

from core.bench.text_front_end_bench import SENTENCES
from core.engine import language_label
from tests.cli.test_cli import run_cli

ROW_FIELDS = {
    "language",
    "name",
    "sentence",
    "chars",
    "seconds",
    "text_tokens",
    "speech_tokens_asked",
    "speech_tokens",
    "stop_reason",
    "front_end_ms",
    "steps_ms",
    "lm_ms",
    "lm_ms_runs",
    "lm_ms_per_token",
    "share_percent",
    "first_use_ms",
    "first_use_loads",
    "missing",
}


def bench_json(capsys, bundle, *args):
    code, out, err = run_cli(
        capsys, "bench-text", "--bundle", bundle, "--runs", "1", "--calls", "2", "--provider", "cpu", "--json", *args
    )
    assert code == 0, err
    return json.loads(out)


def test_the_report_gives_each_language_both_times_and_their_share(capsys, bundles):
    report = bench_json(capsys, bundles["multilingual"], "--languages", "en,zh,ja")
    assert report["variant"] == "multilingual" and report["limit_percent"] == 2.0
    assert [r["language"] for r in report["rows"]] == ["en", "zh", "ja"]
    for row in report["rows"]:
        assert set(row) == ROW_FIELDS
        assert row["sentence"] == SENTENCES[row["language"]] and row["name"] == language_label(row["language"])
        assert row["front_end_ms"] > 0 and row["lm_ms"] > 0 and row["first_use_ms"] > 0
        assert 0 < row["speech_tokens"] <= row["speech_tokens_asked"]
        assert row["share_percent"] == pytest.approx(100 * row["front_end_ms"] / row["lm_ms"], rel=0.01, abs=1e-5)
    top = max(report["rows"], key=lambda r: r["share_percent"])
    assert (report["max_share_language"], report["max_share_percent"]) == (top["language"], top["share_percent"])
    assert report["all_under_limit"] == (top["share_percent"] < 2.0)
    assert {"cpus", "platform", "python", "onnxruntime"} <= set(report["machine"])


def test_an_english_only_model_is_measured_in_english_and_the_table_is_printed(capsys, bundles, tmp_path):
    out = tmp_path / "report.json"
    code, text, err = run_cli(
        capsys, "bench-text", "--bundle", bundles["original"], "--runs", "1", "--calls", "1", "--json", out
    )
    assert code == 0, err
    assert "English (en)" in text and "% of the language model's time" in text
    assert [r["language"] for r in json.loads(out.read_text("utf-8"))["rows"]] == ["en"]


def test_a_language_without_a_sentence_or_support_exits_2(capsys, bundles):
    code, _out, err = run_cli(capsys, "bench-text", "--bundle", bundles["multilingual"], "--languages", "xx")
    assert code == 2 and "xx" in err
