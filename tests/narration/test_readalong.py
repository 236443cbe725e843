"""The read-along export (EPUB 3 with Media Overlays), checked from outside: EPUBCheck, the book read back with lxml,
the audio decoded with FFmpeg."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from core.cli.main import main
from core.narration import ExportRequest, ProjectError, export_project, open_project, parse_text, read_document
from core.narration.importing.build import BOOK_FILE, needs_import
from tests.epub_fixtures import (
    FONT_BYTES,
    READALONG_CSS,
    readalong_novel,
    readalong_published_overlays,
    readalong_rtl,
    readalong_vertical,
)
from tests.narration_support import project_data
from tests.readalong_support import Book, decode, epubcheck, import_book, onsets, render_tones

pytest.importorskip("av")
_JAVA = pytest.mark.skipif(not __import__("shutil").which("java"), reason="EPUBCheck needs Java")


def visible(element) -> str:
    """An element's text as a reader sees it (no ruby readings), whitespace collapsed."""
    from lxml import etree

    def walk(node) -> list[str]:
        out = [node.text or ""]
        for child in node:
            if isinstance(child.tag, str) and etree.QName(child).localname not in ("rt", "rp"):
                out += walk(child)
            out.append(child.tail or "")
        return out

    return " ".join("".join(walk(element)).split())


def body_text(book: Book, member: str) -> str:
    root = book.document(member)
    return visible(next(root.iter("{*}body")))


def check_readalong(out: Path, source: Path | None, project, result, suffix: str = ".mp3") -> Book:
    """Everything the issue asks of an exported book, checked from outside."""
    book = Book(out)
    overlays = book.overlays()
    assert overlays
    refined, total = book.durations()
    by_start = {}
    for number, place in result.timeline.items():
        by_start.setdefault(round(place.start, 3), []).append(number)
    decoded: dict[str, list[float]] = {}
    lengths: dict[str, float] = {}
    sums = 0.0
    for document, smil in overlays.items():
        pars = book.pars(smil)
        root = book.document(document)
        ids = {e.get("id"): e for e in root.iter() if isinstance(e.tag, str) and e.get("id")}
        last_end: dict[str, float] = {}
        overlay_sum = 0.0
        for _doc, fragment, audio, begin, end in pars:
            assert fragment in ids, fragment
            assert begin < end
            assert begin >= last_end.get(audio, 0.0) - 1e-6  # clips in order within their audio file
            last_end[audio] = end
            overlay_sum += end - begin
            if audio not in decoded:
                samples = decode(book.zip.read(audio), suffix)
                decoded[audio], lengths[audio] = onsets(samples), samples.size / 24_000
            assert end <= lengths[audio] + 1e-3
            assert min(abs(o - begin) for o in decoded[audio]) < 0.05, (audio, begin)  # the sentence starts here
            text = visible(ids[fragment])
            written = [project.segments[n - 1].text for n in project_numbers_starting(result, begin)]
            if ids[fragment].tag.endswith("}span"):  # a span of ours holds exactly its sentence
                assert text in written, (text, written)
            else:  # a sentence across markup: the smallest element that holds it
                assert any(w in text for w in written), (text, written)
        smil_id = next(i for i, item in book.items.items() if book.member(item.get("href")) == smil)
        assert refined[smil_id] == pytest.approx(overlay_sum, abs=1e-3)
        sums += overlay_sum
    assert total == pytest.approx(sums, abs=1e-3)
    if source is not None:
        original = Book(source)
        for item in original.items.values():
            if item.get("media-type") == "application/xhtml+xml":
                member = original.member(item.get("href"))
                assert body_text(book, member) == body_text(original, member), member
    return book


def project_numbers_starting(result, begin: float) -> list[int]:
    return [n for n, p in result.timeline.items() if abs(p.start - begin) < 0.002]


def errors(path: Path) -> set[str]:
    return {m["id"] for m in epubcheck(path)}


@pytest.fixture
def novel(tmp_path):
    book = readalong_novel(tmp_path / "novel.epub")
    project = import_book(tmp_path, book)
    render_tones(project)
    return book, project


def test_import_records_where_every_sentence_stands_in_the_book(novel):
    book, project = novel
    spoken = [s for s in project.segments if not project.is_skipped(s)]
    assert spoken and all(s.source is not None for s in spoken)
    data = project_data(project.folder)
    assert data["segments"][-1]["source"]["file"] == "OEBPS/chapter2.xhtml"
    assert (project.folder / BOOK_FILE).read_bytes() == book.read_bytes()
    reopened = open_project(project.folder)
    assert [s.source for s in reopened.segments] == [s.source for s in project.segments]


@_JAVA
def test_the_readers_own_book_comes_back_narrated_valid_and_unchanged_but_for_the_spans(novel, tmp_path):
    book, project = novel
    out = tmp_path / "read-along.epub"
    result = export_project(project, ExportRequest(out=out))
    assert errors(out) <= errors(book) == set()
    exported = check_readalong(out, book, project, result)
    with zipfile.ZipFile(book) as original:
        for name in ("OEBPS/style.css", "OEBPS/images/map.png", "OEBPS/fonts/serif.woff", "OEBPS/nav.xhtml"):
            assert exported.zip.read(name) == original.read(name), name
    assert exported.zip.read("OEBPS/style.css") == READALONG_CSS.encode()
    assert exported.zip.read("OEBPS/fonts/serif.woff") == FONT_BYTES
    assert exported.zip.namelist()[0] == "mimetype"
    assert exported.zip.getinfo("mimetype").compress_type == zipfile.ZIP_STORED
    chapter1 = exported.zip.read("OEBPS/chapter1.xhtml").decode()
    assert '<span id="cbx-s' in chapter1 and "readalong.css" in chapter1
    # a file holding two chapters has one overlay with both chapters' audio
    pars = exported.pars(exported.overlays()["OEBPS/chapter2.xhtml"])
    assert len({audio for _doc, _fragment, audio, _begin, _end in pars}) == 2
    # the navigation and the skipped contents page get no overlay
    assert "OEBPS/nav.xhtml" not in exported.overlays()
    active = [m.text for m in exported.opf.iter("{*}meta") if m.get("property") == "media:active-class"]
    assert active == ["-epub-media-overlay-active"]
    css = exported.zip.read("OEBPS/readalong/readalong.css").decode()
    assert ".-epub-media-overlay-active" in css


@_JAVA
def test_right_to_left_and_vertical_japanese_books(tmp_path):
    for make in (readalong_rtl, readalong_vertical):
        book = make(tmp_path / f"{make.__name__}.epub")
        project = import_book(tmp_path, book, make.__name__)
        render_tones(project)
        out = tmp_path / f"{make.__name__}-read.epub"
        result = export_project(project, ExportRequest(out=out))
        assert errors(out) == set()
        exported = check_readalong(out, book, project, result)
        assert len(exported.pars(exported.overlays()["OEBPS/chapter1.xhtml"])) == len(project.audible())


@_JAVA
def test_a_book_with_overlays_gets_ours_and_keeps_nothing_of_its_own(tmp_path):
    book = readalong_novel(tmp_path / "old.epub", overlays=True)
    assert errors(book) == set()
    project = import_book(tmp_path, book)
    render_tones(project)
    out = tmp_path / "new.epub"
    result = export_project(project, ExportRequest(out=out))
    assert errors(out) == set()
    exported = check_readalong(out, book, project, result)
    names = exported.zip.namelist()
    assert "OEBPS/smil/chapter1.smil" not in names and "OEBPS/audio/old.mp3" not in names
    assert "old-active" not in exported.zip.read(exported.opf_name).decode()
    hrefs = {exported.member(i.get("href")) for i in exported.items.values()}
    assert hrefs <= set(names)


@pytest.fixture
def published(tmp_path):
    """A Japanese book with its own narration and the metadata that refines it, exported read-along."""
    book = readalong_published_overlays(tmp_path / "published.epub")
    project = import_book(tmp_path, book)
    render_tones(project)
    out = tmp_path / "narrated.epub"
    result = export_project(project, ExportRequest(out=out))
    return book, project, out, result


def test_the_books_own_narration_leaves_with_what_refined_it(published):
    book, project, out, result = published
    assert Book(book).missing_refines() == []
    exported = check_readalong(out, book, project, result)
    assert exported.missing_refines() == []
    opf = exported.zip.read(exported.opf_name).decode()
    assert "鈴木一郎" not in opf and "山田花子" not in opf and "ヤマダハナコ" not in opf  # the old narrators
    assert "夏目漱石" in opf and "ナツメ, ソウセキ" in opf  # the author and what refines the author stay
    assert "OEBPS/smil/chapter2.smil" not in exported.zip.namelist()
    assert "i-smil-chapter1-smil" not in exported.items and "i-smil-chapter2-smil" not in exported.items


@_JAVA
def test_a_published_book_with_narration_of_its_own_gains_no_epubcheck_error(published):
    book, _project, out, _result = published
    assert errors(book) == set()
    assert errors(out) == set()


@_JAVA
def test_aac_audio_and_a_chapter_range_leave_the_rest_plain_text(novel, tmp_path):
    book, project = novel
    out = tmp_path / "two.epub"
    result = export_project(project, ExportRequest(out=out, chapter_format=".m4a", chapters=(3,)))
    assert errors(out) == set()
    exported = check_readalong(out, book, project, result, suffix=".m4a")
    assert list(exported.overlays()) == ["OEBPS/chapter2.xhtml"]
    with zipfile.ZipFile(book) as original:
        assert exported.zip.read("OEBPS/chapter1.xhtml") == original.read("OEBPS/chapter1.xhtml")
    assert all(n.endswith(".m4a") for n in exported.zip.namelist() if "/audio/" in n)


def test_pending_chapters_are_refused_before_any_work_naming_them(novel, tmp_path, capsys):
    _book, project = novel
    third = [s for s in project.segments if s.chapter == 3]
    third[0].chosen = None
    project.save()
    out = tmp_path / "book.epub"
    with pytest.raises(ProjectError) as refused:
        export_project(project, ExportRequest(out=out))
    assert refused.value.code == "readalong.not_rendered" and refused.value.data["chapters"] == [4]
    assert not (project.folder / "cache").exists()
    code = main(["project", str(project.folder), "--export", "--out", str(out)])
    assert code == 2 and "(4;" in capsys.readouterr().err
    assert not out.exists()
    code = main(["project", str(project.folder), "--export", "--out", str(out), "--chapters", "2-3", "--json"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["export"]["files"][0]["kind"] == "read-along"
    assert [c["number"] for c in report["export"]["chapters"]] == [2, 3]


def test_re_exporting_after_one_fixed_sentence_encodes_only_its_chapter(novel, tmp_path):
    _book, project = novel
    first = export_project(project, ExportRequest(out=tmp_path / "a.epub"))
    assert first.files[0]["chapters_encoded"] == 3
    segment = next(s for s in project.segments if s.chapter == 2 and s.kind == "sentence")
    render_tones(project, [segment], pitch=440.0)  # a new take of one sentence of chapter 3
    again = export_project(project, ExportRequest(out=tmp_path / "b.epub"))
    assert again.files[0]["chapters_encoded"] == 1 and again.files[0]["chapters_kept"] == 2


def test_a_cancelled_export_leaves_no_file(novel, tmp_path):
    _book, project = novel
    out = tmp_path / "cancel.epub"
    seen = []
    with pytest.raises(ProjectError) as stopped:
        export_project(project, ExportRequest(out=out), progress=seen.append, cancelled=lambda: len(seen) >= 2)
    assert stopped.value.code == "export.cancelled"
    assert seen
    assert not out.exists() and not list(tmp_path.glob(".cancel*"))


@_JAVA
def test_a_text_project_becomes_a_clean_epub3_from_scratch(tmp_path):
    from core.narration import create_project, import_document, source_identity

    text = "[chapter: Morning]\nThe sun rose. Birds sang.\n\nA farmer walked.\n\n[chapter: Evening]\nStars came out."
    project = create_project(tmp_path / "p", "Days")
    import_document(project, parse_text(text, "Days"), None, None, tmp_path, source_identity("d.txt", text, None))
    project.save()
    render_tones(project)
    out = tmp_path / "days.epub"
    result = export_project(project, ExportRequest(out=out))
    assert errors(out) == set()
    exported = check_readalong(out, None, project, result)
    assert len(exported.overlays()) == 2
    assert [t.text for t in exported.opf.iter("{http://purl.org/dc/elements/1.1/}title")] == ["Days"]
    assert exported.zip.read("OEBPS/nav.xhtml").count(b"<li>") == 2


def test_a_project_imported_before_places_were_recorded_is_told_to_import_again(novel, tmp_path):
    book, project = novel
    (project.folder / BOOK_FILE).unlink()
    for segment in project.segments:
        segment.source = None
    project.save()
    with pytest.raises(ProjectError) as refused:
        export_project(open_project(project.folder), ExportRequest(out=tmp_path / "x.epub"))
    assert refused.value.code == "readalong.no_book"
    assert needs_import(project, project.source)  # importing again keeps every segment and its takes
    from core.narration import import_document

    report = import_document(project, read_document(book), None, None, tmp_path, project.source)
    assert report.new == 0 and all(s.source for s in project.audible())
    export_project(project, ExportRequest(out=tmp_path / "x.epub"))


def test_places_survive_cleaning_splits_and_merges():
    from core.narration.text.locator import locate, merged_place, split_place

    text = "“Wait,” she said — [sic] 3 ✨ times. Then she left."
    parts = ["“Wait,” she said — (sic) 3 times.", "Then she left."]  # brackets and emoji changed for speech
    (a, b), (c, d) = locate(text, parts)
    assert text[a:b] == "“Wait,” she said — [sic] 3 ✨ times." and text[c:d] == "Then she left."
    place = {"file": "f.xhtml", "block": 2, "path": "/p", "start": 10, "end": 24}
    first, second = split_place(place, "Alpha beta gam", 6)
    assert (first["start"], first["end"], second["start"], second["end"]) == (10, 15, 16, 24)
    assert merged_place(first, second) == {**place, "start": 10, "end": 24}
    assert merged_place(first, {**second, "block": 3}) == first


def test_a_split_sentence_is_highlighted_in_two_parts(novel, tmp_path):
    from core.narration.projects import editing

    _book, project = novel
    number = next(n for n, s in enumerate(project.segments, 1) if s.text == "The inn was warm.")
    editing.split(project, number, 8)
    render_tones(project, project.segments[number - 1 : number + 1])
    out = tmp_path / "split.epub"
    export_project(project, ExportRequest(out=out, chapters=(3,)))
    chapter = Book(out).document("OEBPS/chapter2.xhtml")
    texts = {e.get("id"): visible(e) for e in chapter.iter("{*}span")}
    assert texts[f"cbx-s{number}"] == "The inn" and texts[f"cbx-s{number + 1}"] == "was warm."


@_JAVA
def test_a_book_written_by_another_tool_gains_no_new_epubcheck_error(tmp_path):
    from tests.narration_support import make_epub

    book = make_epub(tmp_path / "ebooklib.epub", ["Dawn", "Dusk"])
    project = import_book(tmp_path, book)
    render_tones(project)
    out = tmp_path / "ebooklib-read.epub"
    result = export_project(project, ExportRequest(out=out))
    assert errors(out) <= errors(book)
    check_readalong(out, book, project, result)


def test_a_book_from_scratch_carries_the_chosen_cover_and_the_author(tmp_path):
    from core.narration import BookInfo, create_project, import_document, source_identity
    from tests.epub_fixtures import _png

    text = "[chapter: Only]\nOne sentence here. Another one."
    project = create_project(tmp_path / "p", "Cover")
    import_document(project, parse_text(text, "Cover"), None, None, tmp_path, source_identity("c.txt", text, None))
    render_tones(project)
    cover = tmp_path / "cover.png"
    cover.write_bytes(_png())
    out = tmp_path / "cover.epub"
    export_project(project, ExportRequest(out=out, cover=cover, book=BookInfo(author="A. Writer")))
    exported = Book(out)
    item = next(i for i in exported.items.values() if i.get("properties") == "cover-image")
    assert exported.zip.read(exported.member(item.get("href"))) == cover.read_bytes()
    assert [c.text for c in exported.opf.iter("{http://purl.org/dc/elements/1.1/}creator")] == ["A. Writer"]


@_JAVA
def test_a_book_highlighted_word_by_word_stays_valid_and_reads_as_before(novel, tmp_path):
    from tests.narration.test_word_exports import align_all, check_word_book

    book, project = novel
    numbers = {s.text: n for n, s in enumerate(project.segments, 1)}
    unaligned = numbers["The roads flooded."]
    align_all(project, skip=(unaligned,))
    sentences = tmp_path / "sentences.epub"
    export_project(project, ExportRequest(out=sentences))
    out = tmp_path / "words.epub"
    result = export_project(project, ExportRequest(out=out, highlight="word"))
    assert errors(out) == set()
    pars = check_word_book(out, project, result, sentence_book=sentences)
    exported, original = Book(out), Book(book)
    for item in original.items.values():
        if item.get("media-type") == "application/xhtml+xml":
            member = original.member(item.get("href"))
            assert body_text(exported, member) == body_text(original, member), member
    report = result.files[0]
    assert report["words_missing"] == 1 and report["words_missing_segments"] == [unaligned]
    assert [p[0] for p in pars[unaligned]] == [f"cbx-s{unaligned}"]
    assert all(p[0].startswith("cbx-w") for n, ps in pars.items() if n != unaligned for p in ps)
    chapter = exported.document("OEBPS/chapter1.xhtml")
    spans = {e.get("id"): e for e in chapter.iter("{*}span")}
    across = numbers["Then it rained hard."]  # begins inside an <em> that holds the sentence before
    assert [visible(spans[f"cbx-w{across}-{k}"]) for k in range(1, 5)] == ["Then", "it", "rained", "hard"]
    assert spans[f"cbx-w{across}-1"].getparent().tag.endswith("}em")
    ruby = next(e for e in spans.values() if e.get("id", "").startswith("cbx-w") and visible(e) == "東京")
    assert ruby[0].tag.endswith("}ruby")  # a word's span holds the whole ruby, never a reading alone
    assert all(rt.getparent().tag.endswith("}ruby") for rt in chapter.iter("{*}rt"))
