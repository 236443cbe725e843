"""``python -m core text`` (what the model reads) and ``python -m core languages``: JSON fields and exit codes."""

from __future__ import annotations

import json
import shutil

import pytest

from core.engine import Pipeline, RuntimeOptions
from tests.cli.test_cli import run_cli


def text_json(capsys, bundle, *args):
    code, out, err = run_cli(capsys, "text", "--bundle", bundle, "--json", *args)
    assert code == 0, err
    return json.loads(out), err


def test_text_json_gives_each_sentence_and_the_first_sentences_ids_as_the_model_gets_them(capsys, bundles):
    data, err = text_json(
        capsys, bundles["multilingual"], "--language", "ja", "--text", "私は東京へ行きました。箱根へ行く。"
    )
    assert [s["text"] for s in data["sentences"]] == ["私は東京へ行きました。", "箱根へ行く。"]
    first = data["sentences"][0]
    assert set(first) == {"text", "prepared", "tokens", "ids"}
    assert first["prepared"] == "[ja]わたしはとうきょうへいきました。"
    assert data["sentences"][1]["prepared"] == "[ja] はこねへいく。"
    assert len(first["tokens"]) == len(first["ids"]) and first["tokens"][:3] == ["[EXAGGERATION]", "[START]", "[ja]"]
    tokenizer = Pipeline.from_bundle(bundles["multilingual"], RuntimeOptions(provider="cpu"))._parts.tokenizer
    prepared, _ = tokenizer.prepare("私は東京へ行きました。")
    assert data["ids"] == first["ids"] == tokenizer.encode(prepared, "ja")[0].tolist()


def test_chinese_is_read_as_cangjie_codes_and_the_missing_segmenter_is_said(capsys, bundles, tmp_path, monkeypatch):
    monkeypatch.setenv("PKUSEG_HOME", str(tmp_path / "none"))
    monkeypatch.setattr("core.engine.reading.language_files.user_data", lambda: tmp_path)
    data, err = text_json(capsys, bundles["multilingual"], "--language", "zh", "--text", "你好，中文 OK 12。")
    tokens = data["sentences"][0]["tokens"]
    assert tokens[3:7] == ["[cj_o]", "[cj_n]", "[cj_f]", "[cj_.]"] and "[UNK]" not in tokens
    assert "without word boundaries" in err


def test_turbo_and_original_read_their_own_punctuation(capsys, bundles):
    turbo, _ = text_json(capsys, bundles["turbo"], "--text", "yes; ok - fine, I said...")
    original, _ = text_json(capsys, bundles["original"], "--text", "yes; ok - fine, I said...")
    assert turbo["sentences"][0]["prepared"] == "Yes; ok - fine, I said..."
    assert original["sentences"][0]["prepared"] == "Yes,  ok, fine, I said,"


def test_spoken_form_in_the_language(capsys, bundles):
    data, _ = text_json(capsys, bundles["multilingual"], "--language", "fr", "--spoken", "--text", "J'ai 21 ans.")
    assert "vingt" in data["sentences"][0]["prepared"]


def test_text_plain_and_from_a_file(capsys, bundles, tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("Hola. ¿Qué tal?", "utf-8")
    code, out, err = run_cli(capsys, "text", "--bundle", bundles["multilingual"], "--language", "es", "--file", path)
    assert code == 0 and "1. Hola." in out and "2. ¿Qué tal?" in out and "ids:" in out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--language", "xx", "--text", "hi"], "not supported by this model"),
        (["--language", "fr", "--text", "..."], "nothing to say"),
    ],
)
def test_bad_text_exits_2_in_words(capsys, bundles, args, expected):
    code, _out, err = run_cli(capsys, "text", "--bundle", bundles["multilingual"], *args)
    assert code == 2 and expected in err


def test_chinese_without_its_table_exits_2_naming_the_language_and_the_command(capsys, bundles, tmp_path):
    copy = shutil.copytree(bundles["multilingual"], tmp_path / "ml")
    (copy / "Cangjie5_TC.json").unlink()
    code, _out, err = run_cli(capsys, "text", "--bundle", copy, "--language", "zh", "--text", "你好")
    assert code == 2 and "Chinese (zh)" in err and f"languages --bundle {copy} --download zh" in err


def test_an_english_model_refuses_another_language(capsys, bundles):
    code, _out, err = run_cli(capsys, "text", "--bundle", bundles["original"], "--language", "fr", "--text", "Salut")
    assert code == 2 and "English only" in err


def test_languages_lists_the_23_with_their_steps(capsys, bundles, tmp_path, monkeypatch):
    monkeypatch.setenv("PKUSEG_HOME", str(tmp_path / "none"))
    code, out, err = run_cli(
        capsys, "languages", "--bundle", bundles["multilingual"], "--models-dir", tmp_path, "--json"
    )
    assert code == 0, err
    data = json.loads(out)
    rows = {r["code"]: r for r in data["languages"]}
    assert len(rows) == 23 and data["common_steps"][:3] == ["punc_norm", "lower-case", "NFKD"]
    assert rows["zh"]["ready"] and rows["zh"]["optional_missing"]  # the stand-in has its table, no segmenter
    assert rows["ja"]["steps"] == ["kanji read as hiragana (pykakasi)"] and rows["fr"]["steps"] == []
    assert "stress" in rows["ru"]["improves"]
    code, out, _ = run_cli(capsys, "languages", "--models-dir", tmp_path)
    assert code == 0 and "missing Cangjie5_TC.json" in out


def test_downloading_chinese_needs_a_bundle(capsys, tmp_path):
    code, _out, err = run_cli(capsys, "languages", "--download", "zh", "--models-dir", tmp_path)
    assert code == 2 and "--bundle" in err
