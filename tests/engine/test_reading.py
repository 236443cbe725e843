"""The text front end against references written from upstream's rules (resemble-ai/chatterbox ``mtl_tts.py``
``punc_norm`` and ``tokenizer.py`` ``MTLTokenizer.encode``), on real sentences and mixed scripts."""

from __future__ import annotations

import json
import shutil
import unicodedata

import pykakasi
import pytest

from core.engine.errors import TextInputError
from core.engine.reading import CangjieTable, TextFrontEnd, cangjie_text, jamo_text, kana_text, punc_norm
from core.engine.reading.text_reading import open_reader, read_text
from core.standin.tokenizer_files import CANGJIE_TOKENS
from core.wording import describe_error

# --- references, written from the rules (not from our code) -----------------------------------------------------


def reference_cangjie(text: str, lines: list[str], cut=None) -> str:
    """Upstream's ChineseCangjieConverter as the issue states it: last code wins, index in the code's list in file
    order (only when above 0), one [cj_x] per letter then [cj_.], characters of category Lo only."""
    word2cj, cj2word = {}, {}
    for line in lines:
        word, code = line.split("\t")[:2]
        word2cj[word] = code
        cj2word.setdefault(code, []).append(word)
    text = " ".join(cut(text)) if cut else text
    out = ""
    for ch in text:
        if unicodedata.category(ch) == "Lo" and ch in word2cj:
            code = word2cj[ch]
            index = cj2word[code].index(ch)
            code += str(index) if index > 0 else ""
            out += "".join(f"[cj_{c}]" for c in code) + "[cj_.]"
        else:
            out += ch
    return out


def reference_kana(text: str) -> str:
    out = []
    for seg in pykakasi.kakasi().convert(text):
        orig, hira = seg["orig"], seg["hira"]
        if any(0x4E00 <= ord(c) <= 0x9FFF for c in orig):
            out.append((" " + hira) if hira[:1] in ("は", "へ") else hira)
        elif orig and all(0x30A1 <= ord(c) <= 0x30FA for c in orig):
            out.append(orig)
        else:
            out.append(orig)
    return unicodedata.normalize("NFKD", "".join(out))


def reference_multilingual(text: str, language: str, step) -> str:
    """Steps 1–4 in upstream's order."""
    return f"[{language}]" + step(unicodedata.normalize("NFKD", text.lower()))


TABLE = [
    "你\tonf",
    "好\tvnd",
    "中\tl",
    "文\tyk",
    "我\thqi",
    "們\toanr",
    "今\toin",
    "天\tmk",
    "學\thbnd",
    "習\tsmpha",
    "北\tlmp",
    "京\tyrf",
    "大\tk",
    "甲\tabc",
    "乙\tabc",
    "丙\tabc",
    "乙\txyz",  # a second line for 乙: its last code counts
]

ZH_SENTENCES = [
    "我們今天學習中文。",
    "你好，World 2026！",  # Han with a Latin word and digits
    "北京大學的學生說：好！",  # 的, 生 and 說 are not in the table: they stay as they are
    "甲乙丙",  # shared codes and a character with two lines
    "中文と日本語",  # a hiragana (Lo, not in the table) between Han characters
]


# --- Chinese ---------------------------------------------------------------------------------------------------------


def test_the_cangjie_index_rule_and_the_last_code_of_a_character():
    table = CangjieTable.from_lines(TABLE)
    assert table.spell("甲") == "[cj_a][cj_b][cj_c][cj_.]"  # first of abc: no index
    assert table.spell("丙") == "[cj_a][cj_b][cj_c][cj_2][cj_.]"  # third line under abc: index 2
    assert table.spell("乙") == "[cj_x][cj_y][cj_z][cj_.]"  # its last line's code, first under xyz
    assert table.spell("的") is None


@pytest.mark.parametrize("sentence", ZH_SENTENCES)
def test_chinese_matches_the_reference(sentence):
    table = CangjieTable.from_lines(TABLE)
    text = unicodedata.normalize("NFKD", sentence.lower())
    assert cangjie_text(text, table, None) == reference_cangjie(text, TABLE)


def test_chinese_words_are_separated_by_the_segmenter_before_conversion():
    table = CangjieTable.from_lines(TABLE)

    def cut(text):  # a segmenter of our own: two-character words
        return [text[i : i + 2] for i in range(0, len(text), 2)]

    got = cangjie_text("我們今天學習", table, cut)
    assert got == reference_cangjie("我們今天學習", TABLE, cut)
    assert got.count(" ") == 2 and got.startswith("[cj_h][cj_q][cj_i][cj_.][cj_o][cj_a][cj_n][cj_r][cj_.] [cj_o]")


def test_chinese_through_the_front_end_with_a_bundle_table(tmp_path):
    (tmp_path / "Cangjie5_TC.json").write_text(json.dumps(TABLE, ensure_ascii=False), "utf-8")
    front = TextFrontEnd("multilingual", tmp_path, models_dir=tmp_path / "models", segmenter_factory=None)
    sentence = punc_norm("你好，World 2026", "multilingual")
    assert sentence == "你好，World 2026."  # the CJK comma is no ending; a full stop is added
    expected = reference_multilingual(sentence, "zh", lambda t: reference_cangjie(t, TABLE))
    assert front.model_text(sentence, "zh") == expected
    assert expected == "[zh][cj_o][cj_n][cj_f][cj_.][cj_v][cj_n][cj_d][cj_.],world 2026."  # NFKD made "，" a ","
    notices = front.take_notices()
    assert [n.code for n in notices] == ["text.segmenter_missing"]  # told once, in words
    front.model_text(sentence, "zh")
    assert front.take_notices() == []


def test_chinese_uses_the_segmenter_model_when_it_is_there(tmp_path, monkeypatch):
    (tmp_path / "Cangjie5_TC.json").write_text(json.dumps(TABLE, ensure_ascii=False), "utf-8")
    model = tmp_path / "models" / "language-data" / "pkuseg" / "spacy_ontonotes"
    model.mkdir(parents=True)
    for name in ("features.msgpack", "weights.npz"):
        (model / name).write_bytes(b"x")
    made = []

    def factory(folder):
        made.append(folder)
        return lambda text: [text[:2], text[2:]]

    from core.engine.reading import loaded_files

    monkeypatch.setattr(loaded_files, "segmenters", {})
    front = TextFrontEnd("multilingual", tmp_path, tmp_path / "models", segmenter_factory=factory)
    assert front.model_text("我們今天", "zh") == "[zh][cj_h][cj_q][cj_i][cj_.][cj_o][cj_a][cj_n][cj_r][cj_.] " + (
        "[cj_o][cj_i][cj_n][cj_.][cj_m][cj_k][cj_.]"
    )
    assert made == [model] and front.take_notices() == []


def test_chinese_without_its_table_is_refused_naming_the_language(tmp_path):
    front = TextFrontEnd("multilingual", tmp_path, tmp_path / "models")
    with pytest.raises(TextInputError) as caught:
        front.model_text("你好", "zh")
    assert caught.value.code == "text.language_file_missing" and caught.value.data["language"] == "zh"
    words = describe_error(caught.value, "cli")
    assert "Chinese (zh)" in words and "Cangjie5_TC.json" in words and "--download zh" in words
    assert front.model_text("bonjour", "fr") == "[fr]bonjour"  # other languages are not affected


def test_a_broken_table_is_refused_in_words(tmp_path):
    (tmp_path / "Cangjie5_TC.json").write_text("{not json", "utf-8")
    with pytest.raises(TextInputError) as caught:
        TextFrontEnd("multilingual", tmp_path, tmp_path / "m").model_text("你", "zh")
    assert caught.value.code == "text.language_file_invalid"


# --- Japanese, Korean, the optional steps -----------------------------------------------------------------------

JA_SENTENCES = [
    "私は東京へ行きました。",
    "箱根へ行く。",  # a kanji segment whose reading starts with は: a space in front
    "東京タワーは高い。",  # kanji with katakana
    "コーヒーを飲みました。",  # katakana kept (with its prolonged sound mark)
    "ガラスの靴、ＡＢＣと１２３。",  # voiced katakana (NFKD decomposes it), full-width Latin and digits
]


@pytest.mark.parametrize("sentence", JA_SENTENCES)
def test_japanese_matches_the_reference(sentence):
    text = unicodedata.normalize("NFKD", sentence.lower())
    assert kana_text(text) == reference_kana(text)


def test_japanese_examples_read_as_written_by_hand():
    nfkd = lambda s: unicodedata.normalize("NFKD", s)  # noqa: E731
    assert kana_text(nfkd("私は東京へ行きました。")) == "わたしはとうきょうへいきました。"
    assert kana_text(nfkd("箱根へ行く。")) == " はこねへいく。"
    assert kana_text(nfkd("東京タワーは高い。")) == "とうきょうタワーはたかい。"
    assert kana_text(nfkd("ガラスの靴")) == nfkd("ガラスのくつ")


def test_korean_is_jamo_and_stripped():
    assert jamo_text(" 한국어 ") == "\u1112\u1161\u11ab\u1100\u116e\u11a8\u110b\u1165"
    assert jamo_text(unicodedata.normalize("NFKD", "한국어")) == unicodedata.normalize("NFKD", "한국어")


@pytest.mark.parametrize("language", ["he", "ru"])
def test_hebrew_and_russian_go_through_as_upstream_sends_them_when_their_step_is_absent(tmp_path, language):
    front = TextFrontEnd("multilingual", tmp_path, tmp_path / "models")
    text = {"he": "שלום עולם.", "ru": "Привет, мир."}[language]
    assert front.model_text(text, language) == f"[{language}]" + unicodedata.normalize("NFKD", text.lower())
    (notice,) = front.take_notices()
    assert notice.code == "text.step_not_installed" and notice.data["language"] == language


def test_an_installed_optional_step_runs_after_nfkd(tmp_path, monkeypatch):
    from core.engine.reading import front_end

    seen = []
    monkeypatch.setattr(front_end, "optional_step", lambda lang, data: lambda t: seen.append(t) or t + "\u0301")
    out = TextFrontEnd("multilingual", tmp_path).model_text("Ёж", "ru")
    assert seen == [unicodedata.normalize("NFKD", "ёж")] and out == "[ru]" + seen[0] + "\u0301"


# --- case, punctuation -----------------------------------------------------------------------------------------


def test_full_case_when_the_bundle_says_so(tmp_path):
    assert TextFrontEnd.for_bundle("multilingual", tmp_path).model_text("Hello", "en") == "[en]hello"
    (tmp_path / "reading.json").write_text('{"case": "full"}', "utf-8")
    assert TextFrontEnd.for_bundle("multilingual", tmp_path).model_text("Héllo", "en") == "[en]He\u0301llo"
    (tmp_path / "reading.json").write_text("not json", "utf-8")
    assert TextFrontEnd.for_bundle("multilingual", tmp_path).lowercase  # unreadable: upstream's lower case


def test_punc_norm_follows_each_variant():
    text = "well... he said - yes; no"
    assert punc_norm(text, "original") == "Well,  he said, yes,  no."
    assert punc_norm(text, "multilingual") == "Well,  he said, yes,  no."
    assert punc_norm(text, "turbo") == "Well... he said - yes; no."  # Turbo keeps ..., " - " and ;
    assert punc_norm("wait… “ok”: fine", "turbo") == 'Wait,  "ok", fine.'
    assert punc_norm("你好。", "multilingual") == "你好。" and punc_norm("你好。", "original") == "你好。."
    assert punc_norm("你好、", "multilingual") == "你好、" and punc_norm("你好！", "multilingual") == "你好！"


# --- the bundle's tokenizer: real token families, no [UNK] ---------------------------------------------------------


@pytest.fixture(scope="module")
def reader(bundles):
    return open_reader(bundles["multilingual"])


@pytest.mark.parametrize(
    ("language", "text"),
    [
        ("zh", "一丁七，你好中文。"),
        ("ja", "私は東京へ行きました、カタカナとガラス！"),
        ("ko", "한국어 문장입니다."),
        ("ru", "Привет, мир."),
        ("he", "שָׁלוֹם עוֹלָם."),
        ("fr", "Élève à l'école."),
    ],
)
def test_prepared_text_has_no_unknown_tokens_in_a_tokenizer_with_the_real_families(reader, language, text):
    (reading,) = read_text(reader, text, language)
    assert "[UNK]" not in reading.tokens, (reading.prepared, reading.tokens)
    assert reading.ids[:3] == [6563, 255, reader._tok.token_to_id(f"[{language}]")]
    assert reading.ids[-3:] == [0, 6561, 6561] and len(reading.tokens) == len(reading.ids)
    assert max(i for i in reading.ids if i < 6561) < reader.text_table_rows  # what the embedding gets


def test_the_stand_in_holds_the_cangjie_tokens(reader):
    vocab = reader._tok.get_vocab()
    assert all(token in vocab for token in CANGJIE_TOKENS)


def test_the_reader_matches_what_a_loaded_model_encodes(bundles, reader):
    from core.engine import Pipeline, RuntimeOptions

    tokenizer = Pipeline.from_bundle(bundles["multilingual"], RuntimeOptions(provider="cpu"))._parts.tokenizer
    for language, text in [("ja", "東京タワーは高い。"), ("zh", "一丁七"), ("en", "Hello there.")]:
        prepared, _ = tokenizer.prepare(text)
        assert read_text(reader, text, language)[0].ids == tokenizer.encode(prepared, language)[0].tolist()


def test_a_copied_bundle_without_its_table_names_the_file(bundles, tmp_path):
    copy = shutil.copytree(bundles["multilingual"], tmp_path / "ml")
    (copy / "Cangjie5_TC.json").unlink()
    with pytest.raises(TextInputError) as caught:
        read_text(open_reader(copy, tmp_path / "models"), "你好", "zh")
    assert caught.value.data["file"] == "Cangjie5_TC.json"
