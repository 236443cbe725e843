"""Books in Chinese and Japanese: an EPUB's ``dc:language`` sets the project's language, sentences split on the
language's own punctuation, numbers are spoken in it, and the Multilingual model reads the prepared text (Cangjie
codes, kana) in that language; an English model keeps reading as it always has."""

from __future__ import annotations

import pytest

from core.engine import Pipeline, RuntimeOptions, open_reader, read_text
from core.narration import create_project, read_document
from core.narration.importing.build import import_document, source_identity
from core.narration.rendering.render import render_pending
from tests.epub_fixtures import Nav, write_epub, xhtml

ZH_BODY = "<h1>第一章</h1><p>我们今天去北京。他说：“你好！”然后走了。</p><p>她有3只猫，2026年来到上海？</p>"
JA_BODY = "<h1>第一章</h1><p>私は東京へ行きました。彼は「こんにちは！」と言った。</p><p>猫が3匹いる。</p>"


def book(tmp_path, name, body, language, version):
    lang = language.split("-")[0]
    return write_epub(
        tmp_path / f"{name}.epub",
        [("c1.xhtml", xhtml(body, lang=lang))],
        [Nav("第一章", "c1.xhtml")],
        language=language,
        version=version,
    )


def imported(tmp_path, path):
    doc = read_document(path)
    project = create_project(tmp_path / "p.cbproj", doc.title)
    import_document(project, doc, None, None, tmp_path, source_identity(path.name, path.read_bytes(), None))
    return project


@pytest.mark.parametrize(("language", "version"), [("zh-CN", 3), ("zh", 2)])
def test_a_chinese_epub_is_a_chinese_project_in_sentences_and_numbers(tmp_path, language, version):
    project = imported(tmp_path, book(tmp_path, "zh", ZH_BODY, language, version))
    assert project.language == language.lower()
    texts = [s.text for s in project.segments if s.kind == "sentence"]
    assert texts[-4:] == ["我们今天去北京。", "他说：“你好！”", "然后走了。", "她有3只猫，2026年来到上海？"]
    assert project.spoken_text(project.segments[-1]) == "她有三只猫，二千零二十六年来到上海？"


def test_a_japanese_epub_is_a_japanese_project(tmp_path):
    project = imported(tmp_path, book(tmp_path, "ja", JA_BODY, "ja-JP", 3))
    assert project.language == "ja-jp"
    texts = [s.text for s in project.segments if s.kind == "sentence"]
    assert texts == ["第一章", "私は東京へ行きました。", "彼は「こんにちは！」と言った。", "猫が3匹いる。"]
    assert project.spoken_text(project.segments[-1]) == "猫が三匹いる。"


@pytest.mark.parametrize(
    ("name", "body", "language", "expected"),
    [
        ("zh", ZH_BODY, "zh-CN", "[zh][cj_h][cj_q][cj_i][cj_.][cj_o][cj_l][cj_l][cj_n][cj_.]"),  # 我们
        ("ja", JA_BODY, "ja-JP", "[ja]わたしはとうきょうへいきました。"),
    ],
)
def test_the_multilingual_model_reads_the_books_prepared_text_in_its_language(
    tmp_path, bundles, name, body, language, expected
):
    project = imported(tmp_path, book(tmp_path, name, body, language, 3))
    segment = next(s for s in project.segments if s.text.startswith(("我", "私")))
    assert project.model_language(segment) is None  # no model yet: nothing to say about it
    project.model = {"variant": "multilingual"}
    code = language.split("-")[0]
    assert project.model_language(segment) == code
    assert project.synthesis_options(segment, 7).language == code
    reader = open_reader(bundles["multilingual"])
    readings = read_text(reader, project.spoken_text(segment), project.model_language(segment))
    assert readings[0].prepared.startswith(expected)


def test_the_books_language_changes_what_a_multilingual_take_is_made_of(tmp_path):
    project = imported(tmp_path, book(tmp_path, "zh", ZH_BODY, "zh-CN", 3))
    segment = next(s for s in project.segments if s.kind == "sentence")
    project.model = {"variant": "original"}
    english_key = project.render_key(segment)
    assert project.synthesis_options(segment, 1).language is None  # an English model reads as it always has
    project.model = {"variant": "multilingual"}
    chinese_key = project.render_key(segment)
    project.settings["language"] = "zh"  # said explicitly: the same take as the book's default
    assert project.render_key(segment) != english_key and project.synthesis_options(segment, 1).language == "zh"
    project.settings["language"] = "fr"
    assert project.synthesis_options(segment, 1).language == "fr" and project.render_key(segment) != chinese_key


def test_a_chinese_book_renders_on_the_multilingual_model_in_chinese(tmp_path, bundles):
    project = imported(tmp_path, book(tmp_path, "zh", ZH_BODY, "zh-CN", 3))
    project.save()
    seen = []
    pipeline = Pipeline.from_bundle(bundles["multilingual"], RuntimeOptions(provider="cpu"))
    encode = pipeline._parts.tokenizer.encode

    def spy(sentence, language=None):
        seen.append(language)
        return encode(sentence, language)

    pipeline._parts.tokenizer.encode = spy
    render_pending(project, pipeline)
    assert [(s.text, s.error) for s in project.segments if not project.is_skipped(s) and (not s.takes or s.error)] == []
    assert seen and set(seen) == {"zh"}
