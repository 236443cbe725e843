"""The book's author: read from an EPUB's package the ways published books name it (EPUB 2 ``opf:role``, EPUB 3
``refines`` roles and ``display-seq``, several creators), kept in the project, and the artist of every export (M4B,
MP3, the read-along book) unless ``--author`` names another."""

from __future__ import annotations

import json
import shutil

import mutagen
import pytest

from core.narration import (
    BookInfo,
    ExportRequest,
    create_project,
    export_project,
    import_document,
    open_project,
    parse_text,
    read_document,
    source_identity,
)
from tests.epub_fixtures import Nav, write_epub, xhtml
from tests.export_support import run_cli
from tests.readalong_support import Book, epubcheck, import_book, render_tones

_OPF = 'xmlns:opf="http://www.idpf.org/2007/opf"'
_JAVA = pytest.mark.skipif(not shutil.which("java"), reason="EPUBCheck needs Java")

CREATORS = {
    "epub3 roles and display order": (
        '<dc:creator id="c1">Jane Austen</dc:creator>'
        '<meta refines="#c1" property="role" scheme="marc:relators">aut</meta>'
        '<meta refines="#c1" property="display-seq">2</meta>'
        '<dc:creator id="c2">Hugh Thomson</dc:creator>'
        '<meta refines="#c2" property="role" scheme="marc:relators">ill</meta>'
        '<dc:creator id="c3">Seth Grahame-Smith</dc:creator>'
        '<meta refines="#c3" property="role" scheme="marc:relators">aut</meta>'
        '<meta refines="#c3" property="file-as">Grahame-Smith, Seth</meta>'
        '<meta refines="#c3" property="display-seq">1</meta>',
        "Seth Grahame-Smith & Jane Austen",
    ),
    "epub2 opf:role": (
        f'<dc:creator {_OPF} opf:role="ill">Phiz</dc:creator>'
        f'<dc:creator {_OPF} opf:role="aut" opf:file-as="Dickens, Charles">Charles\n  Dickens</dc:creator>',
        "Charles Dickens",
    ),
    "no roles": (
        "<dc:creator>Anna Author</dc:creator><dc:creator>Bert Writer</dc:creator>",
        "Anna Author & Bert Writer",
    ),
    "an editor only": (f'<dc:creator {_OPF} opf:role="edt">Ed Itor</dc:creator>', "Ed Itor"),
    "the same name twice": ("<dc:creator>Anna Author</dc:creator><dc:creator>Anna  Author</dc:creator>", "Anna Author"),
    "none": ("", ""),
}


def _book(tmp_path, creators: str, version: int = 3, name: str = "book.epub"):
    documents = [
        ("c1.xhtml", xhtml("<h1>One</h1><p>The harbour was quiet. Gulls circled.</p>", "One")),
        ("c2.xhtml", xhtml("<h1>Two</h1><p>The inn was warm. They slept.</p>", "Two")),
    ]
    toc = [Nav("One", "c1.xhtml"), Nav("Two", "c2.xhtml")]
    return write_epub(tmp_path / name, documents, toc, version=version, creators=creators, modified=True)


@pytest.mark.parametrize("case", list(CREATORS))
def test_the_books_authors_are_read_as_published_books_name_them(tmp_path, case):
    creators, author = CREATORS[case]
    for version in (2, 3) if "epub3" not in case else (3,):
        assert read_document(_book(tmp_path, creators, version, f"b{version}.epub")).author == author


def test_the_project_keeps_the_author_and_a_text_has_none(tmp_path):
    book = _book(tmp_path, CREATORS["epub3 roles and display order"][0])
    project = import_book(tmp_path, book)
    assert open_project(project.folder).author == "Seth Grahame-Smith & Jane Austen"
    text = "[chapter: One]\nThe harbour was quiet."
    plain = create_project(tmp_path / "plain", "Plain")
    import_document(plain, parse_text(text, "Plain"), None, None, tmp_path, source_identity("p.txt", text, None))
    plain.save()
    assert open_project(plain.folder).author is None
    import_document(project, parse_text(text, "B"), None, None, tmp_path, source_identity("p.txt", text, None))
    assert project.author == "Seth Grahame-Smith & Jane Austen"  # the same book again, as text: still its author
    code, report, _err = run_cli("project", project.folder, "--list", "--json")
    assert code == 0 and "author" not in report and "author" not in json.dumps(report["segments"][0])


@pytest.fixture
def rendered(tmp_path):
    project = import_book(tmp_path, _book(tmp_path, CREATORS["epub3 roles and display order"][0]))
    render_tones(project)
    return project


def test_every_audio_export_names_the_books_author_unless_another_is_asked_for(rendered, tmp_path):
    export_project(rendered, ExportRequest(out=tmp_path / "book.m4b"))
    assert mutagen.File(tmp_path / "book.m4b").tags["©ART"] == ["Seth Grahame-Smith & Jane Austen"]
    export_project(rendered, ExportRequest(out=tmp_path / "book.mp3", book=BookInfo(author="Other Person")))
    assert str(mutagen.File(tmp_path / "book.mp3").tags["TPE1"]) == "Other Person"
    folder = tmp_path / "ch"
    code, text, err = run_cli("project", rendered.folder, "--export", "--per-chapter", folder, "--format", "mp3")
    assert code == 0, text + err
    files = sorted(folder.glob("*.mp3"))
    assert files and all(str(mutagen.File(f).tags["TPE1"]) == "Seth Grahame-Smith & Jane Austen" for f in files)
    code, text, err = run_cli("project", rendered.folder, "--export", "--out", tmp_path / "cli.m4b", "--author", "Ann")
    assert code == 0, text + err
    assert mutagen.File(tmp_path / "cli.m4b").tags["©ART"] == ["Ann"]


def _creators(book: Book) -> list[str]:
    return [c.text for c in book.opf.iter("{http://purl.org/dc/elements/1.1/}creator")]


def test_the_read_along_book_keeps_its_authors_or_names_the_one_asked_for(rendered, tmp_path):
    export_project(rendered, ExportRequest(out=tmp_path / "own.epub"))
    own = Book(tmp_path / "own.epub")
    assert _creators(own) == ["Jane Austen", "Hugh Thomson", "Seth Grahame-Smith"] and not own.missing_refines()
    out = tmp_path / "other.epub"
    export_project(rendered, ExportRequest(out=out, book=BookInfo(author="Ann Other")))
    other = Book(out)
    assert _creators(other) == ["Ann Other", "Hugh Thomson"]  # the illustrator stays
    assert other.missing_refines() == []
    opf = other.zip.read(other.opf_name).decode()
    assert "Grahame-Smith, Seth" not in opf  # what described the authors it replaced left with them
    assert read_document(out).author == "Ann Other"


@_JAVA
def test_a_read_along_book_naming_another_author_stays_valid(rendered, tmp_path):
    out = tmp_path / "other.epub"
    export_project(rendered, ExportRequest(out=out, book=BookInfo(author="Ann Other")))
    assert epubcheck(rendered.folder / "book" / "source.epub") == [] and epubcheck(out) == []


def test_a_read_along_book_made_from_scratch_names_the_projects_author(tmp_path):
    text = "[chapter: Only]\nOne sentence here. Another one."
    project = create_project(tmp_path / "p", "Scratch")
    import_document(project, parse_text(text, "Scratch"), None, None, tmp_path, source_identity("s.txt", text, None))
    project.author = "Kept Author"
    render_tones(project)
    export_project(project, ExportRequest(out=tmp_path / "scratch.epub"))
    assert _creators(Book(tmp_path / "scratch.epub")) == ["Kept Author"]
