"""A dialogue voice for quoted speech (“…”, "…", «…», 「…」) and a voice per chapter: which voice reads which segment,
the sentences cut at their quotes at import, render keys, the command line."""

from __future__ import annotations

import pytest

from core.narration.importing.book_import import build_script, parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.opening import open_project
from core.narration.projects.project import ProjectError, create_project
from core.narration.projects.voices import add_voice
from core.narration.text.dialogue import quote_spans, sentence_parts
from tests.narration.test_narration import run_cli

TEXT = """[chapter: One]
“Come here,” she said, “and sit down.” He sat. The so-called “experts” agreed.

“I am going away now. Far away.”

[chapter: Two]
Nobody spoke. [voice:Bob] Then Bob said something.
"""


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("“Come here,” she said.", ["“Come here,”"]),
        ('"Yes," he said. "No!"', ['"Yes,"', '"No!"']),
        ("«Bonjour, monsieur», dit-il.", ["«Bonjour, monsieur»"]),
        ("„Komm her, schnell“, sagte sie.", ["„Komm her, schnell“"]),
        ("彼は「こんにちは。」と言った。", ["「こんにちは。」"]),
        ("The so-called “experts” and “The Raven” are not speech.", []),
        ("“A speech still open at the end", ["“A speech still open at the end"]),
    ],
)
def test_quoted_speech_is_found(text, quoted):
    assert [text[s:e] for s, e in quote_spans(text)] == quoted


def test_a_speech_of_several_sentences_is_quoted_in_each():
    paragraph = "“I am going away now. Far away,” she said. He nodded."
    parts = sentence_parts(paragraph, ["“I am going away now.", "Far away,” she said.", "He nodded."])
    assert parts == [
        [("“I am going away now.", True)],
        [("Far away,”", True), ("she said.", False)],
        [("He nodded.", False)],
    ]


def test_without_a_dialogue_voice_sentences_stay_whole_and_whole_quotes_are_marked():
    segments = build_script(parse_text(TEXT, "T"), "Ann").segments
    texts = [(s.text, s.dialogue) for s in segments]
    assert ("“Come here,” she said, “and sit down.”", False) in texts
    assert ("“I am going away now.", True) in texts and ("Far away.”", True) in texts
    assert ("The so-called “experts” agreed.", False) in texts


def test_with_a_dialogue_voice_sentences_are_cut_at_their_quotes():
    segments = build_script(parse_text(TEXT, "T"), "Ann", dialogue=True).segments
    first = [(s.text, s.dialogue, s.pause_after) for s in segments[1:5]]
    assert first == [
        ("“Come here,”", True, 0.1),
        ("she said,", False, 0.1),
        ("“and sit down.”", True, 0.3),
        ("He sat.", False, 0.3),
    ]
    bob = segments[-1]
    assert bob.voice == "Bob" and bob.own_voice and not segments[-2].own_voice


def _project(tmp_path, voice_wav, other_voice_wav, dialogue=True):
    project = create_project(tmp_path / "P", "Book")
    add_voice(project, "Ann", voice_wav)
    add_voice(project, "Bob", other_voice_wav)
    add_voice(project, "Cid", other_voice_wav)
    doc = parse_text(TEXT, "Book")
    import_document(project, doc, "Ann", None, tmp_path, source_identity("b", TEXT, "Ann"), "Cid" if dialogue else None)
    project.save()
    return project


def test_who_reads_what(tmp_path, voice_wav, other_voice_wav):
    project = _project(tmp_path, voice_wav, other_voice_wav)
    assert project.dialogue_voice == "Cid"
    voices = {s.text: project.voice_of(s) for s in project.segments}
    assert voices["“Come here,”"] == "Cid" and voices["she said,"] == "Ann" and voices["“and sit down.”"] == "Cid"
    assert voices["Then Bob said something."] == "Bob" and voices["Nobody spoke."] == "Ann"
    project.set_chapter_voice(2, "Cid")
    assert project.voice_of(project.segments[-2]) == "Cid"  # "Nobody spoke." follows its chapter
    assert project.voice_of(project.segments[-1]) == "Bob"  # a [voice:] tag is the segment's own
    project.set_voice(project.segments[0], "Ann")
    assert project.voice_of(project.segments[0]) == "Ann"  # chosen for the segment: beats the dialogue voice
    project.save()
    again = open_project(project.folder)
    assert again.chapters[1].voice == "Cid" and again.dialogue_voice == "Cid" and again.segments[0].own_voice
    with pytest.raises(ProjectError) as info:
        again.set_chapter_voice(9, "Cid")
    assert info.value.code == "project.no_chapter"
    with pytest.raises(ProjectError):
        again.set_dialogue_voice("Nobody")


def test_changing_the_dialogue_voice_makes_only_speech_pending(tmp_path, voice_wav, other_voice_wav):
    project = _project(tmp_path, voice_wav, other_voice_wav)
    keys = {s.id: project.render_key(s) for s in project.segments}
    project.set_dialogue_voice("Bob")  # Bob and Cid are copies of one recording: Ann is another
    project.set_dialogue_voice(None)
    moved = {s.text for s in project.segments if project.render_key(s) != keys[s.id]}
    assert moved == {s.text for s in project.segments if s.dialogue and not s.own_voice}
    assert "he sat." not in {m.lower() for m in moved} and "“Come here,”" in moved


def test_a_chapter_voice_survives_a_new_import(tmp_path, voice_wav, other_voice_wav):
    project = _project(tmp_path, voice_wav, other_voice_wav)
    project.set_chapter_voice(2, "Cid")
    changed = TEXT.replace("He sat.", "He sat down.")
    import_document(project, parse_text(changed, "Book"), "Ann", None, tmp_path, source_identity("b", changed, "Ann"))
    assert project.chapters[1].voice == "Cid"


def test_dialogue_and_chapter_voices_on_the_command_line(tmp_path, voice_wav, other_voice_wav, bundles):
    book = tmp_path / "book.txt"
    book.write_text(TEXT.replace("[voice:Bob] ", ""), encoding="utf-8")
    folder = tmp_path / "P.cbproj"
    code, out = run_cli(
        "narrate", str(book), "--project", str(folder), "--bundle", str(bundles["turbo"]),
        "--voice", str(voice_wav), "--dialogue-voice", str(other_voice_wav), "--json",
    )  # fmt: skip
    assert code == 0, out
    narrator, speech = voice_wav.stem, other_voice_wav.stem
    assert out["dialogue_voice"] == speech
    by_text = {s["text"]: s for s in out["segments"]}
    assert by_text["“Come here,”"]["voice"] == speech and by_text["“Come here,”"]["dialogue"]
    assert by_text["she said,"]["voice"] == narrator
    code, out = run_cli("project", str(folder), "--set-chapter-voice", "2", speech, "--json")
    assert code == 0, out
    assert out["chapters"][1]["voice"] == speech
    pending = [s["text"] for s in out["segments"] if s["status"] == "pending"]
    assert pending == ["Two", "Nobody spoke.", "Then Bob said something."]
    code, out = run_cli("project", str(folder), "--set-dialogue-voice", "none", "--json")
    assert code == 0 and out["dialogue_voice"] is None
    assert by_text["“Come here,”"]["text"] in [s["text"] for s in out["segments"] if s["status"] == "pending"]
    code, out = run_cli("project", str(folder), "--set-chapter-voice", "7", speech)
    assert code == 2 and "no chapter 7" in out


def test_a_dialogue_voice_given_later_names_the_sentences_it_cannot_read(tmp_path, voice_wav, other_voice_wav):
    project = _project(tmp_path, voice_wav, other_voice_wav, dialogue=False)
    folder = str(project.folder)
    assert [s.text for s in project.mixed_speech()] == ["“Come here,” she said, “and sit down.”"]
    code, out = run_cli("project", folder, "--set-dialogue-voice", "Cid")
    assert code == 0 and "1 segment(s) hold speech and narration together (the first: segment 2)" in out
    again = open_project(project.folder)
    assert again.dialogue_voice == "Cid" and again.voice_of(again.segments[4]) == "Cid"  # “I am going away now.


def test_editing_the_text_drops_an_own_spoken_form(tmp_path, voice_wav, other_voice_wav):
    project = _project(tmp_path, voice_wav, other_voice_wav)
    segment = project.segments[4]
    project.set_spoken(segment, "He sat, slowly.")
    project.edit_text(segment, "He sat down.")
    assert segment.spoken is None and project.spoken_text(segment) == "He sat down."


def test_a_split_keeps_the_speech_and_own_voice_and_a_new_chapter_the_voice(tmp_path, voice_wav, other_voice_wav):
    from core.narration.projects.editing import chapter_starts, split

    project = _project(tmp_path, voice_wav, other_voice_wav)
    number = next(i for i, s in enumerate(project.segments, 1) if s.text == "“and sit down.”")
    project.set_chapter_voice(1, "Bob")
    split(project, number, 5)
    first, second = project.segments[number - 1], project.segments[number]
    assert first.dialogue and second.dialogue and project.voice_of(second) == "Cid"
    chapter_starts(project, number + 2, "Later")
    assert project.chapters[1].voice == "Bob"


def test_import_for_review_with_a_dialogue_voice_and_language(tmp_path, voice_wav, other_voice_wav):
    book = tmp_path / "buch.txt"
    book.write_text("„Komm her, schnell“, sagte sie. Er hatte 42 Wale.\n", encoding="utf-8")
    folder = tmp_path / "B.cbproj"
    code, out = run_cli(
        "project", str(folder), "--import", str(book), "--voice", str(voice_wav),
        "--dialogue-voice", str(other_voice_wav), "--language", "de", "--json",
    )  # fmt: skip
    assert code == 0, out
    assert out["language"] == "de" and out["dialogue_voice"] == other_voice_wav.stem
    said = [(s["written"], s["spoken"], s["dialogue"]) for s in out["segments"]]
    assert said == [
        ("„Komm her, schnell“,", "„Komm her, schnell“,", True),
        ("sagte sie.", "sagte sie.", False),
        ("Er hatte 42 Wale.", "Er hatte zweiundvierzig Wale.", False),
    ]
