"""Word timing in the exports (issue 52): a read-along book highlighted word by word (a par per word, the text as it
was, EPUBCheck content) and word-timed subtitles (WebVTT's inline timestamps, SRT cues of N words), each falling back
to the sentence where a take has no words, and counting those segments. The takes are tones of known length, their
words given times by hand (the aligner is not needed)."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from lxml import etree

from core.cli.main import main
from core.engine import SAMPLE_RATE
from core.narration import (
    ExportRequest,
    ProjectError,
    create_project,
    export_project,
    import_document,
    parse_text,
    source_identity,
)
from core.narration.exporting.readalong.xhtml_spans import Wanted, mark
from core.narration.exporting.subtitles import Cue, CueWord, srt, webvtt
from core.narration.exporting.word_times import find_words, take_words
from core.narration.projects.project import Take
from tests.readalong_support import Book, decode, epubcheck, render_tones

pytest.importorskip("av")
_JAVA = pytest.mark.skipif(not shutil.which("java"), reason="EPUBCheck needs Java")
TEXT = (
    "[chapter: Morning]\nThe sun rose. Birds sang, “loudly”!\n\nA farmer walked.\n\n"
    "[chapter: Evening]\nStars came out. Owls woke."
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


def words_of(text: str) -> list[str]:
    return _WORD.findall(text)


def align(take: Take, words: list[str], share: float = 0.8) -> None:
    """Word ``k`` of ``n`` placed from ``(k + 0.1) / n`` to ``(k + share) / n`` of the take (known times)."""
    n, seconds = len(words), take.seconds
    take.alignment = {
        "words": [
            [w, round(seconds * (k + 0.1) / n, 3), round(seconds * (k + share) / n, 3)] for k, w in enumerate(words)
        ],
        "placed": 1.0,
        "aligner": "test",
        "error": None,
    }


def align_all(project, skip: tuple[int, ...] = ()) -> None:
    """Every audible segment's take gets its words (those numbered in ``skip`` are left alone)."""
    for segment in project.audible():
        if project.number(segment) not in skip:
            align(project.chosen_take(segment), words_of(segment.text))
    project.save()


@pytest.fixture
def days(tmp_path):
    """A text project of two chapters, rendered as tones; every take has its words but segment 3's (none), 5's (an
    aligner error) and 7's (a word that is not in its text)."""
    project = create_project(tmp_path / "days", "Days")
    import_document(project, parse_text(TEXT, "Days"), None, None, tmp_path, source_identity("d.txt", TEXT, None))
    project.save()
    render_tones(project)
    align_all(project, skip=(3,))
    texts = {project.number(s): s.text for s in project.segments}
    assert texts[3] == "Birds sang, “loudly”!" and texts[5] == "Evening" and texts[7] == "Owls woke."
    project.segment(5).takes[-1].alignment = {"words": [], "placed": 0.0, "aligner": "test", "error": "align.x"}
    align(project.chosen_take(project.segment(7)), ["Owls", "slept"])
    project.save()
    return project


def seen(element) -> str:
    """What a reader sees of an element (a ruby's readings left out)."""
    out = [element.text or ""]
    for child in element:
        if etree.QName(child).localname not in ("rt", "rp"):
            out.append(seen(child))
        out.append(child.tail or "")
    return "".join(out)


def visible_text(root) -> str:
    body = next(root.iter("{*}body"))
    return "".join(t for t in body.itertext())


def expected_ms(project, result, number: int) -> list[int]:
    """Where each word's par begins (the first at the sentence's start), from the take's word times shifted by the
    segment's start in its chapter's audio and scaled by its exported speech over its take."""
    place = result.timeline[number]
    start, speech_end = round(place.start * SAMPLE_RATE), round(place.end * SAMPLE_RATE)
    take = project.chosen_take(project.segment(number))
    scale = (speech_end - start) / take.seconds
    words = take.alignment["words"]
    inner = [start + round(w[1] * scale) for w in words[1:]]
    return [start * 1000 // SAMPLE_RATE] + [p * 1000 // SAMPLE_RATE for p in inner]


def check_word_book(out, project, result, sentence_book=None) -> dict[int, list[tuple[str, float, float]]]:
    """Every par of every overlay: its element exists (a word's span holds exactly its word), clips in order and
    back to back from the start of each chapter's audio to its end, durations as the package says; the text as the
    sentence-level book has it. Returns segment number → its pars (fragment, begin, end)."""
    book = Book(out)
    refined, total = book.durations()
    by_segment: dict[int, list[tuple[str, float, float]]] = {}
    sums = 0.0
    lengths: dict[str, float] = {}
    ends: dict[str, float] = {}
    for document, smil in book.overlays().items():
        root = book.document(document)
        ids = {e.get("id"): e for e in root.iter() if isinstance(e.tag, str) and e.get("id")}
        overlay_sum = 0.0
        for _doc, fragment, audio, begin, end in book.pars(smil):
            assert fragment in ids, fragment
            assert begin < end
            if audio not in lengths:
                lengths[audio] = decode(book.zip.read(audio), ".mp3").size / SAMPLE_RATE
            assert begin == pytest.approx(ends.get(audio, 0.0), abs=1e-6)  # back to back from the file's start
            ends[audio] = end
            overlay_sum += end - begin
            number = int(re.match(r"cbx-[sw](\d+)", fragment).group(1))
            by_segment.setdefault(number, []).append((fragment, begin, end))
            if fragment.startswith("cbx-w"):
                element = ids[fragment]
                k = int(fragment.rsplit("-", 1)[1])
                word = project.chosen_take(project.segment(number)).alignment["words"][k - 1][0]
                assert etree.QName(element).localname == "span" and seen(element) == word
        smil_id = next(i for i, item in book.items.items() if book.member(item.get("href")) == smil)
        assert refined[smil_id] == pytest.approx(overlay_sum, abs=1e-3)
        sums += overlay_sum
        if sentence_book is not None:
            assert visible_text(root) == visible_text(Book(sentence_book).document(document)), document
    assert total == pytest.approx(sums, abs=1e-3)
    for audio, end in ends.items():  # the last par ends where the chapter's audio does
        assert lengths[audio] - 0.06 <= end <= lengths[audio] + 1e-3, (audio, end, lengths[audio])
    return by_segment


# --- the words of a take, found in the text ---------------------------------------------------------------------------
def test_words_are_found_in_order_case_and_edge_punctuation_aside():
    text = "“Well,” said Dr. Smith’s wife — it's well-known; the THE end."
    assert find_words(text, ["well", "Smith's", "it's", "known", "the", "end"]) == [
        (1, 5), (17, 24), (32, 36), (42, 47), (49, 52), (57, 60),
    ]  # fmt: skip
    assert find_words(text, ["the", "THE"]) == [(49, 52), (53, 56)]  # in order, each after the one before
    assert find_words(text, ["end", "wife"]) is None  # out of order
    assert find_words(text, ["Smit"]) is None  # part of a word is no word
    assert find_words(text, ["zebra"]) is None
    assert find_words("東京へ行った", ["東", "京", "行"]) == [(0, 1), (1, 2), (3, 4)]  # no spaces between words


def test_a_take_has_words_only_when_they_make_sense():
    take = Take("t.flac", 1, [1], 2.0, "k")
    assert take_words(take) is None
    for broken in (
        {"words": [], "placed": 0.0, "aligner": "x", "error": "align.not_matching"},
        {"words": [["a", 0.5, 0.6], ["b", 0.2, 0.3]], "placed": 1.0, "aligner": "x", "error": None},
        {"words": [["a", -1.0, 0.6]], "placed": 1.0, "aligner": "x", "error": None},
        {"words": [["a", 0.5]], "placed": 1.0, "aligner": "x", "error": None},
        {"words": [["…", 0.1, 0.2]], "placed": 1.0, "aligner": "x", "error": None},
    ):
        take.alignment = broken
        assert take_words(take) is None, broken
    take.alignment = {"words": [["a", 0.1, 0.2], ["b", 0.3, 0.5]], "placed": 1.0, "aligner": "x", "error": None}
    assert [(w.word, w.start) for w in take_words(take)] == [("a", 0.1), ("b", 0.3)]


# --- the words wrapped in the book's own pages ----------------------------------------------------------------------
PAGE = (
    '<?xml version="1.0" encoding="utf-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head>'
    "<body><p>She read the <em>whole letter</em> twice &amp; <b>slo</b>wly. <em>Go now. Wa</em>it here.</p>\n"
    "<p>The map showed <ruby>東<rt>とう</rt>京<rt>きょう</rt></ruby> in the corner.</p></body></html>"
).encode()


def test_words_are_wrapped_in_the_books_page_without_changing_its_text():
    first = "She read the whole letter twice & slowly. Go now. Wait here."

    def at(sentence: str) -> tuple[int, int]:
        return first.index(sentence), first.index(sentence) + len(sentence)

    wanted = [
        Wanted(1, 0, *at("She read the whole letter twice & slowly."), words=tuple(words_of(first)[:7])),
        Wanted(2, 0, *at("Go now."), words=("Go", "now")),
        Wanted(3, 0, *at("Wait here."), words=("Wait", "here")),  # "Wa" ends in an <em> that holds more: a sentence
        Wanted(4, 1, 0, 32, words=("The", "map", "showed", "東京", "in", "the", "corner")),
    ]
    marked = mark(PAGE, set(), wanted, None)
    root = etree.fromstring(marked.data)
    original = etree.fromstring(PAGE)
    assert "".join(root.itertext()) == "".join(original.itertext())
    assert marked.texts[1] == "She read the whole letter twice & slowly."
    spans = {e.get("id"): e for e in root.iter("{*}span")}
    assert set(marked.words) == {1, 2, 4}
    for number, ids in marked.words.items():
        words = wanted[number - 1].words
        assert [seen(spans[i]) for i in ids] == list(words)  # each word's span holds exactly its word
    assert "".join(spans["cbx-w1-5"].itertext()) == "letter" and spans["cbx-w1-5"].getparent().tag.endswith("em")
    slowly = spans["cbx-w1-7"]
    assert "".join(slowly.itertext()) == "slowly" and slowly[0].tag.endswith("}b")  # the <b> inside the word's span
    assert all(rt.getparent().tag.endswith("ruby") for rt in root.iter("{*}rt"))  # readings stay in their ruby
    tokyo = spans[marked.words[4][3]]
    assert tokyo[0].tag.endswith("ruby")  # the whole ruby in the word's span
    assert b"&amp;" in marked.data
    per_character = mark(PAGE, set(), [Wanted(4, 1, 0, 32, words=("showed", "東", "京"))], None)
    root = etree.fromstring(per_character.data)
    assert all(rt.getparent().tag.endswith("ruby") for rt in root.iter("{*}rt"))
    kanji = [e for e in root.iter("{*}span") if e.get("id", "").startswith("cbx-w")]
    assert [e.text for e in kanji] == ["showed", "東", "京"]


# --- the read-along book ----------------------------------------------------------------------------------------------
@_JAVA
def test_a_book_from_scratch_highlights_word_by_word_and_stays_valid(days, tmp_path):
    project = days
    plain = tmp_path / "plain.epub"
    export_project(project, ExportRequest(out=plain))
    out = tmp_path / "words.epub"
    result = export_project(project, ExportRequest(out=out, highlight="word"))
    assert epubcheck(out) == []
    pars = check_word_book(out, project, result, sentence_book=plain)
    report = result.files[0]
    assert report["highlight"] == "word" and report["words_missing"] == 3
    assert report["words_missing_segments"] == [3, 5, 7]
    for number in (3, 5, 7):  # no words, an aligner's error, a word not in the text: the sentence
        assert [p[0] for p in pars[number]] == [f"cbx-s{number}"]
    for number in (1, 2, 4, 6):
        take = project.chosen_take(project.segment(number))
        assert [p[0] for p in pars[number]] == [
            f"cbx-w{number}-{k}" for k in range(1, len(take.alignment["words"]) + 1)
        ]
        assert [round(p[1] * 1000) for p in pars[number]] == expected_ms(project, result, number)
    birds = pars[2]  # "The sun rose.": its second word starts 0.1 + 1/3 of the take after the sentence
    take = project.chosen_take(project.segment(2))
    assert birds[1][1] == pytest.approx(result.timeline[2].start + take.alignment["words"][1][1], abs=0.002)
    book = Book(out)
    page = book.zip.read("OEBPS/text/chapter-001.xhtml").decode()
    assert '<span id="cbx-s2"><span id="cbx-w2-1">The</span> <span id="cbx-w2-2">sun</span>' in page
    assert '<span id="cbx-s3">Birds sang, “loudly”!</span>' in page  # the fallback segment as it was
    active = [m.text for m in book.opf.iter("{*}meta") if m.get("property") == "media:active-class"]
    assert active == ["-epub-media-overlay-active"]
    assert book.durations()[1] == pytest.approx(Book(plain).durations()[1], abs=1e-3)  # the same audio, re-cut


def test_word_times_follow_the_pace_of_the_export(days, tmp_path):
    project = days
    project.set_speed(None, 1.25)
    project.save()
    out = tmp_path / "fast.epub"
    result = export_project(project, ExportRequest(out=out, highlight="word"))
    pars = check_word_book(out, project, result)
    for number in (2, 4, 6):
        take = project.chosen_take(project.segment(number))
        assert [round(p[1] * 1000) for p in pars[number]] == expected_ms(project, result, number)
        for (_fragment, begin, _end), word in zip(pars[number][1:], take.alignment["words"][1:]):
            assert begin == pytest.approx(result.timeline[number].start + word[1] / 1.25, abs=0.015)


def test_the_export_command_counts_the_segments_without_words(days, tmp_path, capsys):
    out = tmp_path / "cli.epub"
    code = main(["project", str(days.folder), "--export", "--out", str(out), "--highlight", "word", "--json"])
    assert code == 0
    files = json.loads(capsys.readouterr().out)["export"]["files"]
    assert files[0]["kind"] == "read-along" and files[0]["words_missing"] == 3
    assert {"overlays", "chapters_encoded", "chapters_kept", "from_book", "not_highlighted"} <= set(files[0])
    code = main(["project", str(days.folder), "--export", "--out", str(tmp_path / "s.epub"), "--json"])
    assert code == 0 and json.loads(capsys.readouterr().out)["export"]["files"][0]["highlight"] == "sentence"
    code = main(["project", str(days.folder), "--export", "--out", str(tmp_path / "a.mp3"), "--highlight", "word"])
    assert code == 2 and "--highlight word is for a read-along book" in capsys.readouterr().err
    code = main(["project", str(days.folder), "--export", "--out", str(tmp_path / "a.mp3"), "--subtitle-words"])
    assert code == 2 and "--subtitle-words is for subtitles" in capsys.readouterr().err
    vtt = str(tmp_path / "a.vtt")
    code = main(["project", str(days.folder), "--export", "--subtitles", vtt, "--subtitle-words", "0"])
    assert code == 2 and "1 or more" in capsys.readouterr().err
    code = main(["project", str(days.folder), "--export", "--subtitles", vtt, "--subtitle-words", "--json"])
    assert code == 0
    files = json.loads(capsys.readouterr().out)["export"]["files"]
    assert files == [{"path": vtt, "kind": "subtitles", "words_missing": 3}]
    assert "<00:00:" in (tmp_path / "a.vtt").read_text("utf-8")
    with pytest.raises(ProjectError) as refused:
        export_project(days, ExportRequest(out=tmp_path / "x.epub", highlight="letter"))
    assert refused.value.code == "export.bad_highlight"


# --- subtitles ------------------------------------------------------------------------------------------------------
def known_cues() -> list[Cue]:
    text = "“Yes,” said Emma — slowly."
    words = (CueWord(1, 4, 1.2), CueWord(7, 11, 1.5), CueWord(12, 16, 1.8), CueWord(19, 25, 2.25))
    return [
        Cue(1.0, 2.6, text, "Emma", words),
        Cue(3.0, 3.5, "No words here.", None, ()),
        Cue(4.0, 5.0, "Same time.", None, (CueWord(0, 4, 4.0), CueWord(5, 9, 4.0))),  # not after the start
    ]


def test_webvtt_writes_a_timestamp_before_each_word_after_the_first():
    assert webvtt(known_cues(), words=True) == (
        "WEBVTT\n\n"
        "1\n00:00:01.000 --> 00:00:02.600\n<v Emma>“Yes,” <00:00:01.500>said <00:00:01.800>Emma — "
        "<00:00:02.250>slowly.\n\n"
        "2\n00:00:03.000 --> 00:00:03.500\nNo words here.\n\n"
        "3\n00:00:04.000 --> 00:00:05.000\nSame time.\n\n"
    )
    assert "<00:" not in webvtt(known_cues())  # word timing not asked: the cues as they were


def test_srt_writes_a_cue_per_word_or_per_group_of_words():
    assert srt(known_cues(), 1) == (
        "1\n00:00:01,000 --> 00:00:01,500\nEmma: “Yes,”\n\n"
        "2\n00:00:01,500 --> 00:00:01,800\nsaid\n\n"
        "3\n00:00:01,800 --> 00:00:02,250\nEmma —\n\n"
        "4\n00:00:02,250 --> 00:00:02,600\nslowly.\n\n"
        "5\n00:00:03,000 --> 00:00:03,500\nNo words here.\n\n"
        "6\n00:00:04,000 --> 00:00:05,000\nSame time.\n\n"
    )
    assert srt(known_cues()[:1], 3) == (
        "1\n00:00:01,000 --> 00:00:02,250\nEmma: “Yes,” said Emma —\n\n2\n00:00:02,250 --> 00:00:02,600\nslowly.\n\n"
    )


def test_exported_subtitles_carry_the_word_times_and_name_the_speaker(days, tmp_path):
    project = days
    project.segment(4).speaker = "Emma"
    project.save()
    vtt, srt_path = tmp_path / "book.vtt", tmp_path / "book.srt"
    result = export_project(project, ExportRequest(subtitles=vtt, subtitle_words=1, name_speakers=True))
    assert result.files == [{"path": str(vtt), "kind": "subtitles", "words_missing": 3}]
    text = vtt.read_text("utf-8")
    place = result.timeline[4]
    take = project.chosen_take(project.segment(4))
    scale = (place.end - place.start) / take.seconds
    stamps = [place.start + w[1] * scale for w in take.alignment["words"][1:]]

    def stamp(seconds: float) -> str:
        ms = round(seconds * 1000)
        return f"00:00:{ms // 1000:02d}.{ms % 1000:03d}"

    assert f"<v Emma>A <{stamp(stamps[0])}>farmer <{stamp(stamps[1])}>walked.\n" in text
    assert "\nBirds sang, “loudly”!\n" in text and "\nOwls woke.\n" in text  # no words: the sentence's cue
    result = export_project(project, ExportRequest(subtitles=srt_path, subtitle_words=2, name_speakers=True))
    cues = srt_path.read_text("utf-8").split("\n\n")
    assert any(c.endswith("\nEmma: A farmer") for c in cues) and any(c.endswith("\nwalked.") for c in cues)
    assert sum("Emma:" in c for c in cues) == 1
    assert result.files[0]["words_missing"] == 3
    plain = tmp_path / "plain.vtt"
    assert export_project(project, ExportRequest(subtitles=plain)).files == [{"path": str(plain), "kind": "subtitles"}]
    assert "<00:" not in plain.read_text("utf-8")


def test_chapter_subtitles_are_written_again_when_a_take_gains_its_words(days, tmp_path):
    project = days
    folder = tmp_path / "chapters"
    request = ExportRequest(per_chapter=folder, chapter_format=".flac", chapter_subtitles=".vtt", subtitle_words=1)
    first = export_project(project, request)
    assert [f.get("words_missing") for f in first.files if f["kind"] == "subtitles"] == [1, 2]
    birds = project.segment(3)
    align(project.chosen_take(birds), words_of(birds.text))
    project.save()
    again = export_project(project, request)
    assert [f.get("words_missing") for f in again.files if f["kind"] == "subtitles"] == [0, 2]
    assert [f["kept"] for f in again.files if f["kind"] == "audio"] == [False, True]
    assert "sang, <00:00:" in (folder / "01 - Morning.vtt").read_text("utf-8")
