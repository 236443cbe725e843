"""Exports keep working with a cast, and the subtitles can name who speaks each cue (WebVTT's voice span, SRT's
name before the words); the read-along book of a cast project still passes its checks."""

from __future__ import annotations

from core.engine.pipeline import Pipeline
from core.narration import ExportRequest, export_project
from core.narration.projects import cast
from core.narration.projects.attributing import attribute_project
from core.narration.projects.voices import add_voice
from core.narration.rendering.render import render_pending
from tests.narration.test_cast_project import novel_project


def rendered_cast(tmp_path, bundles, voice_wav):
    project = novel_project(tmp_path)
    add_voice(project, "Anna", voice_wav)
    attribute_project(project)
    cast.set_character_voice(project, "Emma", "Anna")
    project.save()
    render_pending(project, Pipeline.from_bundle(bundles["original"]))
    return project


def test_subtitles_name_the_speaker_when_asked(tmp_path, bundles, voice_wav):
    project = rendered_cast(tmp_path, bundles, voice_wav)
    vtt, srt = tmp_path / "book.vtt", tmp_path / "book.srt"
    export_project(project, ExportRequest(subtitles=vtt, name_speakers=True))
    export_project(project, ExportRequest(subtitles=srt, name_speakers=True))
    vtt_text, srt_text = vtt.read_text("utf-8"), srt.read_text("utf-8")
    emma = next(s for s in project.segments if s.speaker == "Emma")
    narration = next(s for s in project.segments if s.speaker is None and s.kind == "sentence")
    assert f"<v Emma>{emma.text}" in vtt_text and f"Emma: {emma.text}" in srt_text
    assert f"\n{narration.text}\n" in vtt_text and f"\n{narration.text}\n" in srt_text  # narration: no name
    plain = tmp_path / "plain.vtt"
    export_project(project, ExportRequest(subtitles=plain))
    assert "<v " not in plain.read_text("utf-8")


def test_audio_and_chapters_export_with_a_cast(tmp_path, bundles, voice_wav):
    project = rendered_cast(tmp_path, bundles, voice_wav)
    out = tmp_path / "book.m4b"
    result = export_project(project, ExportRequest(out=out, subtitles=tmp_path / "book.srt", name_speakers=True))
    assert out.stat().st_size > 0 and any(f["kind"] == "subtitles" for f in result.files)


def test_the_read_along_book_names_the_speaker_and_stays_valid(tmp_path, bundles, voice_wav):
    import zipfile

    from tests.readalong_support import epubcheck

    project = rendered_cast(tmp_path, bundles, voice_wav)
    named, plain = tmp_path / "named.epub", tmp_path / "plain.epub"
    export_project(project, ExportRequest(out=named, name_speakers=True))
    export_project(project, ExportRequest(out=plain))
    with zipfile.ZipFile(named) as z:
        pages = "".join(z.read(n).decode() for n in z.namelist() if n.endswith(".xhtml"))
    with zipfile.ZipFile(plain) as z:
        plain_pages = "".join(z.read(n).decode() for n in z.namelist() if n.endswith(".xhtml"))
    assert 'title="Emma"' in pages and 'title="Mr. Knightley"' in pages and 'title="Emma"' not in plain_pages
    assert epubcheck(named) == []


def test_a_span_in_the_books_own_page_carries_its_speaker():
    from core.narration.exporting.readalong.xhtml_spans import Wanted, mark

    page = (
        b'<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title>'
        b"</head><body><p>\xe2\x80\x9cYes,\xe2\x80\x9d said Emma. The day was fine.</p></body></html>"
    )
    said = mark(page, set(), [Wanted(1, 0, 0, len("“Yes,”"), "Emma"), Wanted(2, 0, 7, 17)], None)
    assert b'title="Emma"' in said.data and said.data.count(b"title=") == 1 and not said.lost
