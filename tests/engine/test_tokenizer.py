from __future__ import annotations

import re

import pytest

from core.engine.errors import TextInputError
from core.engine.options import RuntimeOptions
from core.engine.pipeline import Pipeline
from core.wording import describe_error


@pytest.fixture(scope="module")
def multilingual(bundles):
    return Pipeline.from_bundle(bundles["multilingual"], RuntimeOptions(provider="cpu"))._parts.tokenizer


def test_multilingual_prefix_lowercase_and_template(multilingual):
    ids = multilingual.encode("Lol", "fr")[0].tolist()
    vocab = multilingual._tok.get_vocab()
    assert ids[:3] == [6563, 255, vocab["[fr]"]]
    assert ids[3] == vocab["l"] and ids[-3:] == [0, 6561, 6561]


def test_ids_past_the_text_table_are_mapped_safely(multilingual):
    assert multilingual.text_table_rows == 2352
    raw = multilingual._tok.encode("[zh]你好").ids
    assert max(raw) >= 2352  # the stand-in puts these characters past the table
    ids = multilingual.encode("你好", "zh")[0].tolist()
    assert max(i for i in ids if i not in (6561, 6563)) < 2352


def test_unknown_language_lists_the_supported_ones(multilingual):
    with pytest.raises(TextInputError) as caught:
        multilingual.encode("hi", "xx")
    assert caught.value.code == "text.language_unsupported" and caught.value.data["language"] == "xx"
    assert {"en", "fr"} <= set(caught.value.data["languages"])
    assert re.search("choose one of .*en.*fr", describe_error(caught.value))


def test_turbo_keeps_known_tags_and_drops_unknown(bundles):
    tok = Pipeline.from_bundle(bundles["turbo"], RuntimeOptions(provider="cpu"))._parts.tokenizer
    text, dropped = tok.prepare("that is funny [laugh] [dance] right")
    assert text == "That is funny [laugh] right." and dropped == ["[dance]"]
    assert 50275 in tok.encode(text)[0].tolist()


def test_original_drops_tags(bundles):
    tok = Pipeline.from_bundle(bundles["original"], RuntimeOptions(provider="cpu"))._parts.tokenizer
    assert tok.prepare("ok [laugh] then")[0] == "Ok then."


def test_a_tokenizer_files_vocabulary_is_read_once_and_again_when_the_file_changes(bundles, tmp_path, monkeypatch):
    """Every model load made two tokenizers of the file and walked its 50,000 ids three times; now its facts are read
    once per file (the tokenizer that encodes stays each loader's own: one is not to be shared between threads)."""
    import shutil

    import core.engine.tokenizer as tokenizer
    from core.engine.tokenizer import TextTokenizer

    path = shutil.copy(bundles["turbo"] / "tokenizer.json", tmp_path / "tokenizer.json")
    reads = []
    real = tokenizer.Tokenizer.from_file
    monkeypatch.setattr(tokenizer.Tokenizer, "from_file", staticmethod(lambda p: reads.append(p) or real(p)))

    def load():  # as a model load asks: which variant, then the tokenizer
        assert TextTokenizer.is_multilingual(path) is False
        return TextTokenizer(path, "turbo")

    first = load()
    assert len(reads) == 2  # the facts, and its own tokenizer
    second = load()
    assert len(reads) == 3 and second._tok is not first._tok  # only its own tokenizer
    assert second.speakable_tags == first.speakable_tags and "[laugh]" in first.speakable_tags
    text = path.read_text("utf-8")
    path.write_text(text.replace('"[laugh]"', '"[giggle]"'), "utf-8")  # the file changes: read again
    changed = load()
    assert len(reads) == 5 and "[giggle]" in changed.speakable_tags and "[laugh]" not in changed.speakable_tags
