"""What the streaming export writes: M4B with chapters, cover and metadata; MP3 as asked; chosen chapters and
segments; a level per file; mastered files that pass the store check."""

from __future__ import annotations

from pathlib import Path

import av
import mutagen
import numpy as np
import pytest
import soundfile as sf

from core.engine import EncodeSettings
from core.engine.constants import SAMPLE_RATE
from core.narration import BookInfo, ExportRequest, ProjectError, check_file, estimate_export, export_project
from core.narration.exporting.chapter_marks import read_chapter_marks
from tests.export_support import decoded_seconds, tiny_png


@pytest.fixture
def project(book_copy):
    """The rendered three-chapter book (tests/conftest.py), a copy for each test."""
    return book_copy


def test_an_m4b_holds_the_chapters_cover_and_metadata_and_lasts_as_long_as_the_wav(project, tmp_path):
    cover = tmp_path / "cover.png"
    cover.write_bytes(tiny_png())
    info = BookInfo(author="Ann Author", narrator="Ned Narrator", year="2024")
    wav = export_project(project, ExportRequest(out=tmp_path / "book.wav"))
    result = export_project(project, ExportRequest(out=tmp_path / "book.m4b", cover=cover, book=info))
    m4b = tmp_path / "book.m4b"
    with av.open(str(m4b)) as container:
        chapters = container.chapters()
        tags = container.metadata
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "aac" and stream.channels == 1
    assert [c["metadata"]["title"] for c in chapters] == ["Arrival", "The Middle", "Departure"]
    starts = [c["start"] * c["time_base"] for c in chapters]
    assert [float(s) for s in starts] == pytest.approx([c["start"] for c in wav.chapters], abs=0.002)
    assert float(chapters[-1]["end"] * chapters[-1]["time_base"]) == pytest.approx(wav.seconds, abs=0.002)
    assert tags["title"] == "The Book" and tags["artist"] == "Ann Author" and tags["composer"] == "Ned Narrator"
    assert tags["date"] == "2024" and tags["genre"] == "Audiobook"
    mp4 = mutagen.File(m4b)
    assert bytes(mp4.tags["covr"][0]) == tiny_png()
    assert decoded_seconds(m4b) == pytest.approx(sf.info(tmp_path / "book.wav").duration, abs=0.05)
    assert result.seconds == pytest.approx(wav.seconds, abs=0.001)
    assert result.files[0]["chapter_marks"] == 3
    assert [t for t, _ in read_chapter_marks(m4b)] == ["Arrival", "The Middle", "Departure"]


@pytest.mark.parametrize(
    ("rate", "bitrate", "vbr"), [(44100, 192_000, False), (22050, 64_000, False), (44100, None, True)]
)
def test_an_mp3_comes_at_the_rate_and_bitrate_asked_mono_with_id3_chapters_and_cover(
    project, tmp_path, rate, bitrate, vbr
):
    cover = tmp_path / "cover.png"
    cover.write_bytes(tiny_png())
    out = tmp_path / "book.mp3"
    export_project(project, ExportRequest(out=out, encoding=EncodeSettings(rate, bitrate, vbr), cover=cover))
    mp3 = mutagen.File(out)
    assert mp3.info.sample_rate == rate and mp3.info.channels == 1
    if vbr:
        assert mp3.info.bitrate_mode == mutagen.mp3.BitrateMode.VBR
    else:
        assert mp3.info.bitrate == bitrate and mp3.info.bitrate_mode in (
            mutagen.mp3.BitrateMode.CBR,
            mutagen.mp3.BitrateMode.UNKNOWN,  # LAME writes no Xing/Info tag mode for some CBR files
        )
    assert [t for t, _ in read_chapter_marks(out)] == ["Arrival", "The Middle", "Departure"]
    assert mp3.tags.getall("APIC")[0].data == tiny_png()


def test_a_chapter_range_holds_only_those_chapters(project, tmp_path):
    whole = export_project(project, ExportRequest(out=tmp_path / "whole.wav"))
    result = export_project(project, ExportRequest(out=tmp_path / "two.m4b", chapters=(2, 3)))
    assert [t for t, _ in read_chapter_marks(tmp_path / "two.m4b")] == ["The Middle", "Departure"]
    inside = [n for n, s in enumerate(project.segments, 1) if s.chapter in (1, 2)]
    assert sorted(result.timeline) == inside
    expected = whole.seconds - whole.chapters[1]["start"]
    assert decoded_seconds(tmp_path / "two.m4b") == pytest.approx(expected, abs=0.05)


def test_chosen_segments_and_one_file_per_chapter_write_only_the_chapters_they_touch(project, tmp_path):
    last = len(project.segments)
    request = ExportRequest(per_chapter=tmp_path / "ch", chapter_format=".mp3", segments=(1, last))
    result = export_project(project, request)
    audio = sorted(Path(f["path"]).name for f in result.files if f["kind"] == "audio")
    assert audio == ["01 - Arrival.mp3", "03 - Departure.mp3"]  # numbered as in the whole book
    assert sorted(result.timeline) == [1, last]


def test_a_choice_that_does_not_exist_or_holds_nothing_is_refused_before_any_work(project, tmp_path):
    with pytest.raises(ProjectError) as caught:
        export_project(project, ExportRequest(out=tmp_path / "x.wav", chapters=(4,)))
    assert caught.value.code == "export.no_chapter" and caught.value.data["count"] == 3
    project.chapters[0].skipped = True
    with pytest.raises(ProjectError) as caught:
        export_project(project, ExportRequest(out=tmp_path / "x.wav", chapters=(1,)))
    assert caught.value.code == "export.nothing_chosen"
    assert not list(tmp_path.glob("x.*"))


def test_each_chapter_file_is_leveled_on_its_own_to_the_target(project, tmp_path):
    from core.engine.audio.finishing import integrated_loudness, true_peak_db

    result = export_project(project, ExportRequest(per_chapter=tmp_path / "ch", chapter_format=".wav", loudness=-18.0))
    assert len(result.loudness) == 3
    for level in result.loudness:
        audio, _ = sf.read(level["path"], dtype="float32")
        assert integrated_loudness(audio) == pytest.approx(-18.0, abs=0.5)
        assert true_peak_db(audio) <= -1.0 + 0.1
        assert level["after_lufs"] == pytest.approx(-18.0, abs=0.5)


def test_a_file_mastered_for_acx_passes_the_acx_check(project, tmp_path):
    result = export_project(
        project, ExportRequest(per_chapter=tmp_path / "acx", chapter_format=".mp3", master="acx", check="acx")
    )
    assert len(result.checks) == 3 and all(c["passed"] for c in result.checks), result.checks
    first = check_file(Path(result.checks[0]["path"]))
    assert first.sample_rate == 44100 and first.cbr and first.bitrate == 192_000
    assert 0.5 <= first.head_s <= 1.0 and 1.0 <= first.tail_s <= 5.0
    plain = export_project(project, ExportRequest(out=tmp_path / "plain.mp3", check="acx"))
    assert not plain.checks[0]["passed"]  # 24 kHz at 128k, digital silence: the check says so


def test_the_estimate_is_the_length_of_the_export_and_at_least_its_size(project, tmp_path):
    request = ExportRequest(out=tmp_path / "book.mp3", encoding=EncodeSettings(44100, 192_000))
    estimate = estimate_export(project, request)
    result = export_project(project, request)
    assert estimate.seconds_of_audio == pytest.approx(result.seconds, abs=0.1)
    assert estimate.bytes >= (tmp_path / "book.mp3").stat().st_size
    assert estimate.bytes >= result.seconds * 4 * SAMPLE_RATE  # the spool waits on the same disk


def test_pace_and_pauses_are_in_the_streamed_export_as_in_the_preview(project, tmp_path):
    from core.narration import preview

    project.set_speed(None, 1.25)
    project.set_pause(project.segments[0], 1.5)
    audio, placements = preview(project)
    export_project(project, ExportRequest(out=tmp_path / "book.wav"))
    written, _ = sf.read(tmp_path / "book.wav", dtype="float32")
    assert written.size == audio.size
    assert np.max(np.abs(written - audio)) < 1e-4  # 16-bit WAV of the same samples


def test_the_cover_of_an_epub_is_kept_with_the_project_and_goes_into_the_m4b(tmp_path, bundles):
    from core.engine.pipeline import Pipeline
    from core.narration import create_project, import_document, read_document, render_pending, source_identity
    from tests.narration_support import make_epub

    book = make_epub(tmp_path / "book.epub", ["Arrival", "Departure"], cover=tiny_png())
    doc = read_document(book)
    assert doc.cover == tiny_png()
    project = create_project(tmp_path / "E.cbproj", doc.title)
    import_document(project, doc, None, None, tmp_path, source_identity("book.epub", b"x", None))
    project.save()
    assert (project.folder / "cover.png").read_bytes() == tiny_png()
    render_pending(project, Pipeline.from_bundle(bundles["original"]))
    export_project(project, ExportRequest(out=tmp_path / "book.m4b"))
    assert bytes(mutagen.File(tmp_path / "book.m4b").tags["covr"][0]) == tiny_png()
