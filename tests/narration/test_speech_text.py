"""Sentences by pysbd in the book's language, and text prepared for speech: numbers, dates, currency, units,
abbreviations, Roman numerals in headings, footnote marks and page numbers; the spoken form on the project (override,
render key, what the render says)."""

from __future__ import annotations

import pytest

from core.engine import Sentence, split_text
from core.narration.importing.book_import import build_script, parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.opening import open_project
from core.narration.projects.project import ProjectError, create_project
from core.narration.text.sentences import _segmenter, _unambiguous, sentences, split_sentences
from core.narration.text.speech_text import roman_value, spoken_form
from tests.narration.sentence_corpus import ARABIC, ENGLISH, JAPANESE, text_of, wrong_splits
from tests.narration_support import project_data, write_legacy


# --- sentences ------------------------------------------------------------------------------------------------------
def _count(splitter, corpus) -> tuple[int, int]:
    wrong = missed = 0
    for paragraph in corpus:
        w, m = wrong_splits(splitter(text_of(paragraph)), paragraph)
        wrong, missed = wrong + w, missed + m
    return wrong, missed


def _engine(text: str) -> list[str]:
    return [p.text for p in split_text(text, max_chars=10_000) if isinstance(p, Sentence)]


@pytest.mark.parametrize(("corpus", "language"), [(ENGLISH, "en"), (JAPANESE, "ja"), (ARABIC, "ar")])
def test_sentences_split_where_the_book_has_sentence_ends(corpus, language):
    assert _count(lambda t: sentences(t, language), corpus) == (0, 0)


def test_the_engine_rules_split_after_abbreviations_and_initials():
    """The figures in docs/RELIABILITY.md: the hand-written rules cut after "Mr.", "T.", "Vol." ..."""
    wrong, _ = _count(_engine, ENGLISH)
    assert wrong >= 30
    assert _count(_engine, JAPANESE)[1] == 1 and _count(_engine, ARABIC)[1] == 1  # "．" and "؟" missed


@pytest.mark.parametrize(
    "paragraph",
    [
        ["‘Mr. Bennet, how can you abuse your own children in such a way?’", "‘You take delight in vexing me.’"],
        ["‘Prof. Moriarty,’ said Holmes.", "Watson looked up."],
        ["“Dr. Jekyll is quite at home,” said Poole.", "He opened the door."],
        ["He looked back.", "—St. Paul’s was dark.", "Nobody came."],
        ["—St. Paul’s was dark, he said.", "Nobody came."],
        ['"Mrs. Hussey, the chowder," he said.', "She brought it."],
        ["—Mr. Smith?", "—Yes, Dr. Watson."],
        ["She said no.", "Then she left."],  # "No." abbreviates only before a number
        ["See No. 5 on the list.", "It is short."],
    ],
)
def test_an_abbreviation_after_an_opening_quote_or_dash_ends_no_sentence(paragraph):
    assert sentences(" ".join(paragraph), "en") == paragraph
    assert [s.text for s in build_script(parse_text(" ".join(paragraph), "T"), None).segments] == paragraph


@pytest.mark.parametrize(
    "text",
    [
        "Mr. Smith met Dr. Jones at St. Paul's. They talked.",
        "SIR T. BROWNE. Of whales.",
        "He said, “Come here.” She came.",
        "It was late! The sea was dark? No one knew.",
    ],
)
def test_the_fast_path_agrees_with_pysbd_or_steps_aside(text):
    fast = _unambiguous(text, "en")
    if fast is not None:
        assert [p.strip() for p in fast] == [p.strip() for p in _segmenter("en").segment(text)]
    assert _unambiguous("Mr. Smith came. He sat.", "en") is None


def test_a_long_paragraph_goes_to_pysbd_in_pieces_with_the_same_sentences():
    from core.narration.text.sentences import PYSBD_CHUNK, _chunks

    text = " ".join(text_of(p) for p in ENGLISH * 4)
    pieces = _chunks(text, "en")
    assert len(pieces) > 2 and "".join(pieces) == text
    assert all(len(p) <= PYSBD_CHUNK + 200 for p in pieces)
    assert sentences(text) == [s for p in ENGLISH * 4 for s in p]


def test_a_paragraph_of_a_million_and_a_half_characters_is_split_not_dropped():
    text = "It rained all day and the whale swam on. " * 37_000
    pieces = [p for p in split_sentences(text) if isinstance(p, Sentence)]
    assert len(pieces) == 37_000 and pieces[-1].text == "It rained all day and the whale swam on."


def test_long_sentences_are_capped_without_cutting_words():
    text = "word " * 200 + "end."
    pieces = [p for p in split_sentences(text) if isinstance(p, Sentence)]
    assert len(pieces) > 1 and all(len(p.text) <= 300 for p in pieces)
    assert " ".join(p.text for p in pieces).split() == text.split()


def test_pause_tags_still_work_between_sentences():
    doc = parse_text("Mr. Smith waited. [pause:2s] Dr. Jones came.", "T")
    segments = build_script(doc, None).segments
    assert [s.text for s in segments] == ["Mr. Smith waited.", "Dr. Jones came."]
    assert segments[0].pause_after == 2.0


def test_a_heading_stays_one_segment_and_page_numbers_are_left_out():
    doc = parse_text("[chapter: CHAPTER XLII. The Whale]\n\nIt swam.\n\n17\n\nIt dived.", "T")
    segments = build_script(doc, None).segments
    assert [s.text for s in segments] == ["CHAPTER XLII. The Whale", "It swam.", "It dived."]


# --- spoken forms ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        ("He had 42 whales.", "He had forty-two whales."),
        ("In 1851 it sailed.", "In eighteen fifty-one it sailed."),
        ("The 3rd mate and the 21st day.", "The third mate and the twenty-first day."),
        ("It cost $3.50 or £5.", "It cost three dollars, fifty cents or five pounds sterling."),
        ("1,000 men walked 5 km.", "one thousand men walked five kilometres."),
        ("It fell 20%.", "It fell twenty percent."),
        ("It was 2.5 times longer.", "It was two point five times longer."),
        ("On January 5, 1851 we left.", "On January fifth, eighteen fifty-one we left."),
        ("On 5 March 1852 we left.", "On the fifth of March eighteen fifty-two we left."),
        ("Mr. Stubb and Dr. Bunger.", "Mister Stubb and Doctor Bunger."),
        ("St. Paul's in Baker St.", "Saint Paul's in Baker Street"),
        ("Oil, bone, etc. and so on, e.g. ambergris.", "Oil, bone, et cetera and so on, for example, ambergris."),
        ("The whale[12] swam¹ away* fast.", "The whale swam away fast."),
        ("It sank. [Pg 34] Then {35} rose.", "It sank. Then rose."),
        ("The whale(12) swam. (Pg 35) It dived.", "The whale swam. It dived."),  # brackets as text imports leave them
        ("He was 42 (forty-two).", "He was forty-two (forty-two)."),
        ("At 10:30, 9:05 and 12:00.", "At ten thirty, nine oh five and twelve o'clock."),
        ("In the 1850s and 1900s.", "In the eighteen fifties and nineteen hundreds."),
        ("Pages 10-12 of 1851–1852.", "Pages ten to twelve of eighteen fifty-one to eighteen fifty-two."),
        ("It was -5 there.", "It was minus five there."),
    ],
)
def test_spoken_form_in_english(written, spoken):
    assert spoken_form(written, "en") == spoken


def test_spoken_form_of_headings():
    assert spoken_form("CHAPTER XLII", "en", "heading") == "Chapter forty-two"
    assert spoken_form("CHAPTER XLII. THE WHITENESS OF THE WHALE.", "en", "heading") == (
        "Chapter forty-two. The Whiteness of the Whale."
    )
    assert spoken_form("Book IV: The Storm", "en", "heading") == "Book four: The Storm"
    assert spoken_form("I", "en", "heading") == "I"  # a lone "I" may be a word
    assert spoken_form("Chapter XLII", "en", "sentence") == "Chapter XLII"  # only headings
    assert roman_value("XLII") == 42 and roman_value("MCMLIV") == 1954 and roman_value("IIII") is None


def test_spoken_form_in_the_book_language():
    assert (
        spoken_form("Es kostet 3,5 kg, z. B. Nr. 5.", "de")
        == "Es kostet drei Komma fünf Kilogramm, zum Beispiel Nummer fünf."
    )
    assert spoken_form("Il a 21 ans.", "fr") == "Il a vingt et un ans."
    assert spoken_form("Um 10:30 Uhr.", "de") == "Um 10:30 Uhr."  # a time is never read as two numbers
    assert spoken_form("Il y a 42 baleines.", "xx") == "Il y a 42 baleines."  # num2words does not know it


# --- on the project -------------------------------------------------------------------------------------------------
def _project(tmp_path, text="[chapter: CHAPTER IV]\n\nHe had 42 whales. It was calm.\n"):
    project = create_project(tmp_path / "P", "Book")
    import_document(project, parse_text(text, "Book"), None, None, tmp_path, source_identity("b", text, None))
    project.save()
    return project


def test_the_written_text_stays_and_the_spoken_form_is_derived(tmp_path):
    project = _project(tmp_path)
    heading, first, second = project.segments
    assert heading.text == "CHAPTER IV" and project.spoken_text(heading) == "Chapter four"
    assert first.text == "He had 42 whales." and project.spoken_text(first) == "He had forty-two whales."
    assert project.spoken_text(second) == "It was calm."


def test_a_spoken_override_makes_exactly_that_segment_pending(tmp_path):
    project = _project(tmp_path)
    keys = [project.render_key(s) for s in project.segments]
    first = project.segments[1]
    project.set_spoken(first, "He had forty two big whales.")
    assert [project.render_key(s) != k for s, k in zip(project.segments, keys, strict=True)] == [False, True, False]
    project.save()
    again = open_project(project.folder)
    assert again.segments[1].spoken == "He had forty two big whales." and again.segments[1].text == "He had 42 whales."
    again.set_spoken(again.segments[1], None)
    assert again.render_key(again.segments[1]) == keys[1]
    with pytest.raises(ProjectError) as info:
        again.set_spoken(again.segments[1], "  ")
    assert info.value.code == "project.spoken_empty"


def test_the_language_is_saved_and_changes_what_is_said(tmp_path):
    project = _project(tmp_path, "Er hatte 42 Wale.\n")
    project.set_language("de")
    project.save()
    again = open_project(project.folder)
    assert again.language == "de" and again.spoken_text(again.segments[0]) == "Er hatte zweiundvierzig Wale."
    with pytest.raises(ProjectError):
        again.set_language("not a language!")


def test_a_project_saved_before_these_fields_opens_with_defaults(tmp_path):

    project = _project(tmp_path)
    data = project_data(project.folder)
    for key in ("language", "lexicon", "dialogue_voice"):
        data.pop(key)
    for segment in data["segments"]:
        for key in ("spoken", "dialogue", "own_voice"):
            segment.pop(key)
    for chapter in data["chapters"]:
        chapter.pop("voice")
    write_legacy(project.folder, data)
    again = open_project(project.folder)
    assert again.language == "en" and again.lexicon == {} and again.dialogue_voice is None
    assert again.segments[1].spoken is None and again.chapters[0].voice is None


def test_the_render_speaks_the_spoken_form(tmp_path, bundles, voice_wav, monkeypatch):
    from core.engine import Pipeline
    from core.narration.rendering.render import render_pending

    project = _project(tmp_path)
    said = []
    original = Pipeline.stream

    def stream(self, request, *args, **kwargs):
        said.append(request.text)
        return original(self, request, *args, **kwargs)

    monkeypatch.setattr(Pipeline, "stream", stream)
    from core.narration.projects.voices import resolve_voices

    name = resolve_voices(project, [str(voice_wav)], None, tmp_path)[str(voice_wav)]
    for segment in project.segments:
        project.set_voice(segment, name)
    render_pending(project, Pipeline.from_bundle(bundles["turbo"]))
    assert said == ["Chapter four", "He had forty-two whales.", "It was calm."]
    assert project.counts()["rendered"] == 3


def test_a_new_project_is_read_in_the_book_language(tmp_path):
    doc = parse_text("Er hatte 42 Wale.", "Buch")
    doc.language = "de"
    project = create_project(tmp_path / "P", "Buch")
    import_document(project, doc, None, None, tmp_path, source_identity("b", "x", None))
    assert project.language == "de" and project.spoken_text(project.segments[0]) == "Er hatte zweiundvierzig Wale."


def test_spoken_forms_and_language_on_the_command_line(tmp_path):
    from tests.narration.test_narration import run_cli

    folder = str(_project(tmp_path).folder)
    code, out = run_cli("project", folder, "--list", "--json")
    assert code == 0 and out["language"] == "en"
    first = out["segments"][1]
    assert (first["written"], first["spoken"], first["spoken_override"]) == (
        "He had 42 whales.",
        "He had forty-two whales.",
        None,
    )
    code, out = run_cli("project", folder, "--set-spoken", "2", "He had two score and two whales.", "--json")
    assert code == 0 and out["segments"][1]["spoken"] == "He had two score and two whales."
    assert [s["status"] for s in out["segments"]] == ["pending"] * 3
    code, out = run_cli("project", folder, "--set-spoken", "2", "auto", "--json")
    assert code == 0 and out["segments"][1]["spoken_override"] is None
    code, out = run_cli("project", folder, "--set-spoken", "2", "...")
    assert code == 2 and "nothing to say" in out
    code, out = run_cli("project", folder, "--set-language", "de", "--json")
    assert code == 0 and out["language"] == "de" and out["segments"][1]["spoken"] == "He had zweiundvierzig whales."
    code, out = run_cli("project", folder, "--set-language", "no such thing")
    assert code == 2 and "not a language code" in out


# --- web and e-mail addresses ---------------------------------------------------------------------------------------
GUTENBERG = [
    "This eBook is for the use of anyone anywhere at no cost and with almost no restrictions whatsoever.",
    "You may copy it, give it away or re-use it under the terms of the Project Gutenberg License included with this "
    "eBook or online at www.gutenberg.org.",
    "If you are not located in the United States, you will have to check the laws of the country where you are "
    "located before using this eBook.",
]
"""The licence paragraph at the head of every Project Gutenberg book (addresses as published books print them)."""
ERRATA = [
    "Send corrections to errata@example.org.",
    "Questions go to Jane.Doe@Example.co.uk, who answers them.",
    "The list lives at https://lists.example.com/books/errata.html?page=2.",
    "Example.com keeps a copy.",
    "Thank you.",
]


@pytest.mark.parametrize(
    ("written", "spoken"),
    [
        ("Visit https://www.example.com/path today.", "Visit example dot com slash path today."),
        ("Write to jane.doe@example.org.", "Write to jane dot doe at example dot org."),
        ("Online at www.gutenberg.org.", "Online at gutenberg dot org."),
        ("See http://example.com/search?q=whales#top.", "See example dot com slash search."),
        ("“Visit http://Example.com/Moby_Dick.”", "“Visit Example dot com slash Moby underscore Dick.”"),
        ("(see en.wikipedia.org/wiki/Moby-Dick_(novel))", "(see en dot wikipedia dot org slash wiki slash Moby dash "
         "Dick underscore (novel))"),
        ("Mail mailto:INFO@EXAMPLE.COM now.", "Mail INFO at example dot com now."),
        ("Buy it at Amazon.com, or not.", "Buy it at Amazon dot com, or not."),
        ("e.g. index.html or file.txt.", "for example, index.html or file.txt."),  # no address: left alone
    ],
)  # fmt: skip
def test_web_and_e_mail_addresses_are_said_as_a_reader_says_them(written, spoken):
    assert spoken_form(written, "en") == spoken


def test_addresses_in_the_book_language_and_as_written_without_words_for_them():
    assert spoken_form("Schreiben Sie an max.muster@example.de.", "de") == (
        "Schreiben Sie an max Punkt muster at example Punkt de."
    )
    assert spoken_form("Voir www.example.fr/livres.", "fr") == "Voir example point fr slash livres."
    assert spoken_form("港は静かだった。https://example.jp/a", "ja") == "港は静かだった。https://example.jp/a"


@pytest.mark.parametrize("language", ["en", "de", "sv"])  # pysbd, and the engine's rules for a language it lacks
@pytest.mark.parametrize("paragraph", [GUTENBERG, ERRATA])
def test_the_dots_and_question_marks_of_an_address_end_no_sentence(paragraph, language):
    assert sentences(" ".join(paragraph), language) == paragraph  # and nothing added inside an address


def test_an_epub_with_addresses_reads_them_and_finds_every_sentence_again(tmp_path):
    from core.narration import read_document
    from tests.epub_fixtures import Nav, write_epub, xhtml

    body = "".join(f"<p>{' '.join(p)}</p>" for p in (GUTENBERG, ERRATA))
    book = write_epub(
        tmp_path / "pg.epub", [("pg.xhtml", xhtml(f"<h1>The Licence</h1>{body}"))], [Nav("Licence", "pg.xhtml")]
    )
    project = create_project(tmp_path / "P", "PG")
    import_document(project, read_document(book), None, None, tmp_path, source_identity("pg.epub", b"", None))
    said = [s for s in project.audible() if s.kind == "sentence"]
    assert [s.text for s in said] == GUTENBERG + ERRATA
    assert all(s.source is not None and s.source["end"] > s.source["start"] for s in said)
    spoken = {s.text: project.spoken_text(s) for s in said}
    assert spoken[ERRATA[2]] == "The list lives at lists dot example dot com slash books slash errata dot html."
    assert spoken[GUTENBERG[1]].endswith("or online at gutenberg dot org.")
