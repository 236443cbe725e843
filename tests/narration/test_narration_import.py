"""Text, Markdown and EPUB into segments: chapters, paragraphs, headings, voices, pauses; bad books refused."""

from __future__ import annotations

import re
import zipfile

import pytest

from core.engine.errors import TextInputError
from core.narration.importing.book_import import (
    PAUSE_CHAPTER_S,
    PAUSE_HEADING_S,
    PAUSE_PARAGRAPH_S,
    PAUSE_SENTENCE_S,
    DocumentError,
    build_script,
    parse_markdown,
    parse_text,
    read_document,
    read_epub,
)
from core.wording import describe_error
from tests.narration_support import make_epub


def test_plain_text_keeps_paragraphs_and_joins_hard_wrapped_lines():
    doc = parse_text("First line\nwraps here. Second sentence!\n\n\nNew paragraph.", "T")
    script = build_script(doc, None)
    assert [s.text for s in script.segments] == ["First line wraps here.", "Second sentence!", "New paragraph."]
    assert [s.paragraph for s in script.segments] == [1, 1, 2]
    assert [s.pause_after for s in script.segments] == [PAUSE_SENTENCE_S, PAUSE_PARAGRAPH_S, 0.0]
    assert [c.title for c in script.chapters] == ["T"]


def test_chapter_markers_in_plain_text_start_chapters_and_speak_their_titles():
    doc = parse_text("Intro words.\n\n[chapter: The Storm]\nRain fell.\n[chapter]\nThe end came.", "Book")
    script = build_script(doc, None)
    assert [c.title for c in script.chapters] == ["Book", "The Storm", "Chapter 3"]
    assert [(s.text, s.kind, s.chapter) for s in script.segments] == [
        ("Intro words.", "sentence", 0),
        ("The Storm", "heading", 1),
        ("Rain fell.", "sentence", 1),
        ("The end came.", "sentence", 2),
    ]
    assert script.segments[0].pause_after == PAUSE_CHAPTER_S
    assert script.segments[1].pause_after == PAUSE_HEADING_S


def test_markdown_headings_make_chapters_and_markup_is_reduced_to_words():
    md = """# One

Some *emphasis*, **bold**, `code`, a [link](http://example.com) and ![img](x.png) here.

```
print("never spoken")
```

- a list item.
> A quote.

## A section

Words.

Second Chapter
==============

Last | table | row.
"""
    script = build_script(parse_markdown(md, "Book"), None)
    texts = [s.text for s in script.segments]
    assert [c.title for c in script.chapters] == ["One", "Second Chapter"]
    assert "Some emphasis, bold, code, a link and here." in texts
    assert not any("never spoken" in t or "*" in t or "http" in t for t in texts)
    assert "a list item." in texts and "A quote." in texts
    section = next(s for s in script.segments if s.text == "A section")
    assert section.kind == "heading" and section.chapter == 0
    assert texts[-1] == "Last table row."


def test_voice_tags_switch_the_voice_from_that_point_and_pause_tags_set_the_pause():
    doc = parse_text("Narrator speaks. [voice:Alice] Hello there! [pause:2s] How are you?\n\nStill Alice.", "T")
    script = build_script(doc, "Narrator")
    assert [(s.text, s.voice) for s in script.segments] == [
        ("Narrator speaks.", "Narrator"),
        ("Hello there!", "Alice"),
        ("How are you?", "Alice"),
        ("Still Alice.", "Alice"),
    ]
    assert script.voices == ["Alice"]
    assert script.segments[1].pause_after == 2.0


def test_text_with_nothing_to_say_is_refused():
    with pytest.raises(TextInputError) as caught:
        build_script(parse_text("* * *\n\n!!!", "T"), None)
    assert caught.value.code == "document.nothing_to_say" and "nothing to say" in describe_error(caught.value)


def test_non_utf8_and_unknown_files_get_clear_messages(tmp_path):
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("Café au lait.".encode("latin-1"))
    with pytest.raises(DocumentError) as caught:
        read_document(bad)
    assert caught.value.code == "document.not_utf8" and caught.value.data == {"name": "latin1.txt"}
    assert "not UTF-8" in describe_error(caught.value)
    with pytest.raises(DocumentError) as caught:
        read_document(tmp_path / "book.docx")
    assert caught.value.code == "document.bad_suffix" and ".txt" in caught.value.data["suffixes"]
    assert re.search(r"use a \.txt", describe_error(caught.value))
    with pytest.raises(DocumentError) as caught:
        read_document(tmp_path / "missing.md")
    assert caught.value.code == "document.missing" and "does not exist" in describe_error(caught.value)


def test_an_epub_gives_one_chapter_per_document_titled_from_its_table_of_contents(tmp_path):
    path = make_epub(tmp_path / "book.epub", ["Arrival", "The Middle", "Departure"])
    doc = read_epub(path)
    assert doc.title == "A Test Book"
    script = build_script(doc, None)
    contents, *chapters = script.chapters  # the table of contents page is kept, skipped
    assert contents.skipped and not any(c.skipped for c in chapters)
    assert [c.title for c in chapters] == ["Arrival", "The Middle", "Departure"]
    spoken = [s for s in script.segments if s.chapter > 0]
    assert spoken[0].text == "Arrival" and spoken[0].kind == "heading"
    assert {s.chapter for s in spoken} == {1, 2, 3}
    assert any(s.text == "This is the first sentence of chapter 2." for s in script.segments)


def test_an_epub_with_drm_or_without_text_or_not_a_zip_is_refused(tmp_path):
    drm = make_epub(tmp_path / "drm.epub", ["One"])
    with zipfile.ZipFile(drm, "a") as archive:
        archive.writestr(
            "META-INF/encryption.xml",
            '<encryption><EncryptedData><EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>'
            '<CipherData><CipherReference URI="EPUB/chap_1.xhtml"/></CipherData></EncryptedData></encryption>',
        )
    with pytest.raises(DocumentError) as caught:
        read_epub(drm)
    assert caught.value.code == "document.drm" and caught.value.data["scheme"] == "encrypted"
    assert "DRM" in describe_error(caught.value)
    fonts = make_epub(tmp_path / "fonts.epub", ["One"])
    with zipfile.ZipFile(fonts, "a") as archive:  # font obfuscation is not DRM
        archive.writestr(
            "META-INF/encryption.xml",
            '<encryption><EncryptedData><EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>'
            '<CipherData><CipherReference URI="EPUB/font.otf"/></CipherData></EncryptedData></encryption>',
        )
    assert read_epub(fonts).blocks
    empty = make_epub(tmp_path / "empty.epub", ["One"], body="<p><img src='x.png'/></p>")
    with pytest.raises(DocumentError) as caught:
        read_epub(empty)
    assert caught.value.code == "document.no_text" and "no text" in describe_error(caught.value)
    fake = tmp_path / "fake.epub"
    fake.write_text("not a zip")
    with pytest.raises(DocumentError) as caught:
        read_epub(fake)
    assert caught.value.code == "document.not_zip" and "not a valid ZIP" in describe_error(caught.value)
