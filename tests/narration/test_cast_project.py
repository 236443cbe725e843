"""A project's cast: characters and each segment's speaker in the store (schema 4, upgraded from 3), attribution that
keeps what a person set, the cast's undoable edits, the voice of each line, and library voices suggested by gender."""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects import cast, editing
from core.narration.projects.attributing import attribute_project, book_text
from core.narration.projects.characters import Character
from core.narration.projects.editing import History, revert
from core.narration.projects.opening import open_project
from core.narration.projects.project import ProjectError, Take, create_project
from core.narration.projects.store import STORE_SCHEMA
from core.narration.projects.voice_suggestions import suggest_voices
from core.narration.projects.voices import add_voice
from core.voices import VoiceLibrary
from core.wording import describe_error
from tests.narration_support import BOOK, NOVEL, NOVEL_SPEAKERS, project_data, store_as_of, write_legacy


def novel_project(tmp_path, text=NOVEL, for_cast=True):
    project = create_project(tmp_path / "Novel.cbproj", "Novel")
    source = source_identity("novel.txt", text, None)
    import_document(project, parse_text(text, "Novel"), None, None, tmp_path, source, cast=for_cast)
    project.save()
    return project


def speakers(project) -> dict[int, str]:
    return {n: s.speaker for n, s in enumerate(project.segments, 1) if s.speaker is not None}


def state(project) -> str:
    return json.dumps(project.to_dict(), sort_keys=True)


def fake_render(project):
    for segment in project.segments:
        segment.takes.append(Take(f"takes/{segment.id:05d}-1.flac", 1, [1, 2], 0.5, project.render_key(segment)))
        segment.chosen = 0


# --- attribution ------------------------------------------------------------------------------------------------------
def test_attribution_finds_the_cast_and_who_says_each_segment(tmp_path):
    project = novel_project(tmp_path)
    edit = attribute_project(project)
    assert [(c.name, c.gender) for c in project.cast] == [("Mr. Knightley", "m"), ("Emma", "f"), ("Harriet", "f")]
    assert project.cast[0].aliases == ["Knightley"] and all(c.voice is None for c in project.cast)
    assert speakers(project) == NOVEL_SPEAKERS
    first, unsure, tag = project.segments[2], project.segments[8], project.segments[3]
    assert first.speaker_confidence == 0.95 and unsure.speaker_confidence == 0.6 and not first.speaker_fixed
    assert (tag.text, tag.speaker, tag.speaker_confidence) == ("said Mr. Knightley.", None, None)  # narration
    assert edit.op == "attribute" and edit.segments == [] and len(edit.speakers) == len(NOVEL_SPEAKERS)
    assert cast.is_empty(attribute_project(project))  # the same book again: nothing to change


def test_the_book_is_rebuilt_paragraph_by_paragraph_with_each_segment_s_place(tmp_path):
    project = novel_project(tmp_path)
    paragraphs, places = book_text(project)
    assert paragraphs[2] == "“Good morning,” said Mr. Knightley. “Is your father well?”"
    assert "" in paragraphs[5:8]  # a heading and the chapter break: a run of dialogue ends there
    for segment, (paragraph, start, end) in zip(project.segments, places):
        if segment.kind == "sentence":
            assert paragraphs[paragraph][start:end] == segment.text


def test_a_sentence_that_mixes_speech_and_narration_gets_the_quote_s_speaker_but_the_narrator_s_voice(tmp_path):
    project = novel_project(tmp_path, for_cast=False)  # imported without cutting sentences at their quotes
    add_voice(project, "Emma voice", _wav(tmp_path))
    attribute_project(project)
    cast.set_character_voice(project, "Emma", "Emma voice")
    mixed = next(s for s in project.segments if s.text == "“Yes,” said Emma.")
    whole = next(s for s in project.segments if s.text == "“He is quite well, thank you.”")
    assert mixed.speaker == whole.speaker == "Emma" and not mixed.dialogue and whole.dialogue
    assert project.voice_of(mixed) is None and project.voice_of(whole) == "Emma voice"
    cast.set_speaker(project, project.number(mixed), "Emma")  # a person says Emma reads it all
    assert project.voice_of(mixed) == "Emma voice"


def test_cutting_a_book_at_its_quotes_gives_the_segments_an_import_for_a_cast_gives(tmp_path):
    project = novel_project(tmp_path / "plain", for_cast=False)
    fake_render(project)
    attribute_project(project)
    mixed = {s.id for s in project.mixed_speech()}
    kept = {s.id: s.takes for s in project.segments if s.id not in mixed}
    before = json.loads(state(project))["segments"]
    edit = editing.cut_at_quotes(project)
    wanted = novel_project(tmp_path / "cut")
    shape = [(s.text, s.dialogue, s.kind, s.chapter, s.paragraph, s.pause_after) for s in project.segments]
    assert shape == [(s.text, s.dialogue, s.kind, s.chapter, s.paragraph, s.pause_after) for s in wanted.segments]
    assert project.mixed_speech() == [] and edit.op == "cut_quotes"
    assert {s.id: s.takes for s in project.segments if s.id in kept} == kept  # every other take stays
    parts = [s for s in project.segments if s.id not in kept]
    assert parts and all(not s.takes for s in parts)  # the parts are pending
    assert all(s.speaker is None for s in parts if not s.dialogue)  # a tag is the narrator's
    history = History.load(project)
    history.record(edit)
    history.undo(project)
    assert json.loads(state(project))["segments"] == before  # one undo puts every sentence back, takes and speaker
    history.redo(project)
    attribute_project(project)
    assert speakers(project) == NOVEL_SPEAKERS
    with pytest.raises(ProjectError) as refused:
        editing.cut_at_quotes(project)
    assert "nothing to cut" in describe_error(refused.value)


def test_reattribution_keeps_what_a_person_set(tmp_path):
    project = novel_project(tmp_path)
    add_voice(project, "Anna", _wav(tmp_path))
    attribute_project(project)
    cast.set_speaker(project, 9, "Emma")  # the untagged line is hers
    cast.set_speaker(project, 4, "Mr. Knightley")  # a person may give a narration segment to a character
    cast.rename_character(project, "Mr. Knightley", "George")
    cast.add_character(project, "Harriet Smith", "f")
    cast.merge_character(project, "Harriet", "Harriet Smith")
    cast.set_character_voice(project, "Emma", "Anna")
    before = state(project)
    assert cast.is_empty(attribute_project(project)) and state(project) == before
    assert [c.name for c in project.cast] == ["George", "Emma", "Harriet Smith"]
    assert project.cast[0].aliases == ["Knightley", "Mr. Knightley"] and project.cast[2].aliases == ["Harriet"]
    assert [speakers(project)[n] for n in (9, 4, 14)] == ["Emma", "George", "Harriet Smith"]
    assert project.cast[1].voice == "Anna"


def test_a_changed_book_is_attributed_again_and_the_fixed_speaker_stays(tmp_path):
    project = novel_project(tmp_path)
    attribute_project(project)
    cast.set_speaker(project, 9, "Emma")
    changed = NOVEL.replace("“I am glad to hear it.”", "“I am glad to hear it.”\n\n“So am I,” said Harriet.")
    import_document(
        project, parse_text(changed, "Novel"), None, None, tmp_path, source_identity("novel.txt", changed, None)
    )
    attribute_project(project)
    said = {s.text: (s.speaker, s.speaker_fixed) for s in project.segments}
    assert said["“I am glad to hear it.”"] == ("Emma", True) and said["“So am I,”"] == ("Harriet", False)


# --- the store --------------------------------------------------------------------------------------------------------
def test_the_cast_and_the_speakers_round_trip_through_the_store_and_the_json_dump(tmp_path):
    project = novel_project(tmp_path)
    add_voice(project, "Anna", _wav(tmp_path))
    attribute_project(project)
    cast.set_character_voice(project, "Emma", "Anna")
    cast.set_speaker(project, 9, "Emma")
    project.save()
    written = state(project)
    project.close()
    again = open_project(tmp_path / "Novel.cbproj")
    assert state(again) == written
    assert again.cast[1] == Character("Emma", [], "f", "Anna") and again.segments[8].speaker_fixed
    again.dump_json(tmp_path / "dump.json")
    dump = json.loads((tmp_path / "dump.json").read_text(encoding="utf-8"))
    assert dump["cast"][0] == {"name": "Mr. Knightley", "aliases": ["Knightley"], "gender": "m", "voice": None}
    assert dump["segments"][8].items() >= {"speaker": "Emma", "speaker_confidence": 1.0, "speaker_fixed": True}.items()
    assert dump["segments"][3]["speaker"] is None and dump["segments"][3]["speaker_confidence"] is None
    again.close()


def test_a_schema_3_project_opens_without_a_cast_and_is_brought_up_to_date(tmp_path):
    project = novel_project(tmp_path)
    folder = project.folder
    old_shape = {k: v for k, v in project_data(folder).items() if k != "cast"}
    project.close()
    store_as_of(folder, 3)
    old = open_project(folder)
    assert old.cast == [] and all(s.speaker is None and not s.speaker_fixed for s in old.segments)
    assert {k: v for k, v in old.to_dict().items() if k != "cast"} == old_shape
    attribute_project(old)
    old.save()
    old.close()
    db = sqlite3.connect(folder / "project.sqlite")
    assert db.execute("PRAGMA user_version").fetchone()[0] == STORE_SCHEMA == 5
    assert db.execute("SELECT count(*) FROM characters").fetchone()[0] == 3
    assert db.execute("SELECT count(*) FROM segments WHERE speaker IS NOT NULL").fetchone()[0] == len(NOVEL_SPEAKERS)
    db.close()
    reopened = open_project(folder)
    assert speakers(reopened) == NOVEL_SPEAKERS
    reopened.close()


def test_an_earlier_version_s_project_json_has_no_cast_and_opens(tmp_path):
    project = novel_project(tmp_path, BOOK)
    data = project.to_dict()
    project.close()
    data.pop("cast")
    for segment in data["segments"]:
        for field in ("speaker", "speaker_confidence", "speaker_fixed"):
            segment.pop(field)
    write_legacy(project.folder, data)
    moved = open_project(project.folder)
    assert moved.cast == [] and all(s.speaker is None for s in moved.segments)
    moved.close()


def test_a_hand_edited_cast_that_is_not_valid_is_refused(tmp_path):
    project = novel_project(tmp_path, BOOK)
    data = project.to_dict()
    project.close()
    data["cast"] = [{"name": "Emma", "aliases": [], "gender": "x", "voice": None}]
    write_legacy(project.folder, data)
    with pytest.raises(ProjectError) as caught:
        open_project(project.folder)
    assert caught.value.code == "project.invalid" and "gender" in caught.value.data["problem"]


# --- edits and undo ---------------------------------------------------------------------------------------------------
EDITS = {
    "attribute": attribute_project,
    "set_speaker": lambda p: cast.set_speaker(p, 9, "emma"),  # a name in another case is the character's
    "set_speaker_narrator": lambda p: cast.set_speaker(p, 3, None),
    "merge_character": lambda p: cast.merge_character(p, "Harriet", "Emma"),
    "rename_character": lambda p: cast.rename_character(p, "Knightley", "George Knightley"),  # by its alias
    "add_character": lambda p: cast.add_character(p, "Mr. Woodhouse", "m"),
    "cast_voice": lambda p: cast.set_character_voice(p, "Emma", "Anna"),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_each_cast_edit_is_undone_and_redone_across_a_restart(tmp_path, name):
    project = novel_project(tmp_path)
    add_voice(project, "Anna", _wav(tmp_path))
    if name != "attribute":
        attribute_project(project)
    project.save()
    before = state(project)
    history = History.load(project)
    history.record(EDITS[name](project))
    history.save(project)
    after = state(project)
    assert after != before
    project.close()
    project = open_project(tmp_path / "Novel.cbproj")
    history = History.load(project)
    history.undo(project)
    history.save(project)
    assert state(project) == before
    history.redo(project)
    assert state(project) == after
    project.close()


def test_merge_moves_the_lines_and_names_and_rename_keeps_the_old_name_as_an_alias(tmp_path):
    project = novel_project(tmp_path)
    attribute_project(project)
    edit = cast.merge_character(project, "Harriet", "Emma")
    assert [c.name for c in project.cast] == ["Mr. Knightley", "Emma"] and project.cast[1].aliases == ["Harriet"]
    assert {n for n, s in speakers(project).items() if s == "Emma"} == {6, 8, 10, 14, 16, 17}
    assert sorted(e[0] for e in edit.speakers) == sorted(project.segments[n - 1].id for n in (14, 16))
    cast.rename_character(project, "Emma", "Miss Woodhouse")
    assert project.cast[1].aliases == ["Harriet", "Emma"] and speakers(project)[6] == "Miss Woodhouse"
    cast.rename_character(project, "miss woodhouse", "Emma")  # back: the alias is a name again
    assert project.cast[1] == Character("Emma", ["Harriet", "Miss Woodhouse"], "f", None)


def test_an_undo_record_of_a_whole_book_holds_only_the_speakers_it_changed(tmp_path):
    project = novel_project(tmp_path)
    edit = attribute_project(project)
    record = json.dumps(edit.to_dict())
    assert "takes" not in record and len(edit.speakers) == len(NOVEL_SPEAKERS) and edit.cast == []
    undo = revert(project, edit)
    assert speakers(project) == {} and project.cast == [] and len(undo.speakers) == len(NOVEL_SPEAKERS)


ERRORS = [
    (lambda p: cast.set_speaker(p, 99, "Emma"), "project.no_segment", "no segment 99"),
    (lambda p: cast.set_speaker(p, 3, "Jane"), "cast.unknown_character", "no character 'Jane'"),
    (lambda p: cast.merge_character(p, "Emma", "emma"), "cast.same_character", "cannot be merged into itself"),
    (lambda p: cast.rename_character(p, "Emma", "Knightley"), "cast.name_taken", "a name of Mr. Knightley"),
    (lambda p: cast.add_character(p, "Narrator"), "cast.bad_name", "means narration"),
    (lambda p: cast.add_character(p, "  "), "cast.bad_name", "needs some words"),
    (lambda p: cast.add_character(p, "Jane", "x"), "cast.bad_gender", "m or f"),
    (lambda p: cast.set_character_voice(p, "Emma", "Nobody"), "project.unknown_voice", "no voice named 'Nobody'"),
]


@pytest.mark.parametrize(("edit", "code", "words"), ERRORS)
def test_a_refused_edit_says_why_and_changes_nothing(tmp_path, edit, code, words):
    project = novel_project(tmp_path)
    attribute_project(project)
    before = state(project)
    with pytest.raises(ProjectError) as caught:
        edit(project)
    assert caught.value.code == code and words in describe_error(caught.value, "cli")
    assert state(project) == before


# --- voices -----------------------------------------------------------------------------------------------------------
def test_the_voice_of_a_line_own_then_speaker_then_dialogue_then_chapter_then_narrator(tmp_path):
    project = novel_project(tmp_path)
    for name in ("Anna", "Dia", "Chap", "Own"):
        add_voice(project, name, _wav(tmp_path))
    attribute_project(project)
    emma, knightley, tag = project.segments[5], project.segments[2], project.segments[3]
    assert project.voice_of(emma) is None  # no voices at all: the narrator's (the model's)
    project.chapters[0].voice = "Chap"
    assert project.voice_of(emma) == project.voice_of(tag) == "Chap"
    project.set_dialogue_voice("Dia")
    assert project.voice_of(emma) == project.voice_of(knightley) == "Dia" and project.voice_of(tag) == "Chap"
    cast.set_character_voice(project, "Emma", "Anna")
    assert project.voice_of(emma) == "Anna" and project.voice_of(knightley) == "Dia"
    project.set_voice(emma, "Own")
    assert project.voice_of(emma) == "Own"
    cast.set_speaker(project, 3, None)  # a person says this quote is the narrator's
    assert project.voice_of(knightley) == "Chap"


def test_changing_a_voice_or_a_speaker_makes_only_those_lines_pending(tmp_path, bundles, voice_wav, other_voice_wav):
    from core.engine.pipeline import Pipeline
    from core.narration.rendering.render import render_pending

    project = novel_project(tmp_path)
    add_voice(project, "Anna", voice_wav)
    add_voice(project, "Bert", other_voice_wav)
    attribute_project(project)
    cast.set_character_voice(project, "Emma", "Anna")
    project.save()
    summary = render_pending(project, Pipeline.from_bundle(bundles["original"]))
    assert summary.rendered == len(project.segments) == 18 and project.pending() == []

    def pending() -> list[int]:
        return [project.number(s) for s in project.pending()]

    edit = cast.set_character_voice(project, "Mr. Knightley", "Bert")
    assert pending() == [3, 5, 9]  # his lines, and nothing else
    revert(project, edit)
    assert pending() == []  # his takes fit again
    cast.set_speaker(project, 10, "Mr. Knightley")  # Emma's line goes to him: her voice no longer reads it
    assert pending() == [10]
    cast.rename_character(project, "Mr. Knightley", "George")  # the same voice under another name
    cast.set_speaker(project, 4, None)  # narration stays narration
    cast.merge_character(project, "Harriet", "George")  # neither has a voice: the same (dialogue) voice reads
    assert pending() == [10]
    project.save()
    project.close()
    reopened = open_project(project.folder)
    assert [reopened.number(s) for s in reopened.pending()] == [10]
    reopened.close()


def test_library_voices_are_suggested_by_the_character_s_gender(tmp_path):
    library = VoiceLibrary(tmp_path / "library")
    for name in ("Alice", "Beth", "Carl", "Dana"):
        library.add(name, _wav(tmp_path))
    library.set_gender("Alice", "f")
    library.set_gender("Beth", "f")
    library.set_gender("Carl", "m")  # Dana says nothing: never suggested
    assert {v.name: v.gender for v in library.voices()} == {"Alice": "f", "Beth": "f", "Carl": "m", "Dana": None}
    project = novel_project(tmp_path)
    attribute_project(project)
    emma, knightley, harriet = project.cast[1], project.cast[0], project.cast[2]
    assert suggest_voices(project, emma, library) == ["Alice", "Beth"]
    assert suggest_voices(project, knightley, library) == ["Carl"]
    add_voice(project, "Alice", library.get("Alice").path)
    cast.set_character_voice(project, "Harriet", "Alice")
    assert suggest_voices(project, emma, library) == ["Beth", "Alice"]  # one no other character reads in first
    cast.add_character(project, "Someone")
    assert suggest_voices(project, project.cast[-1], library) == [] and harriet.voice == "Alice"
    library.set_gender("Alice", None)
    assert library.get("Alice").gender is None
    with pytest.raises(ValueError):
        library.set_gender("Beth", "x")


def test_attributing_a_long_book_costs_little_beside_the_attribution_itself(tmp_path, monkeypatch):
    """10,000 segments: rebuilding the paragraphs, merging the cast and giving every segment its speaker take a small
    part of what the attribution step itself takes (measured with the step replaced by its own result)."""
    import core.narration.projects.attributing as attributing

    scene = NOVEL.split("\n", 1)[1]
    text = "".join(f"[chapter: Part {n}]\n{scene}\n" for n in range(1, 600))
    project = create_project(tmp_path / "Long.cbproj", "Long")
    source = source_identity("l", text, None)
    import_document(project, parse_text(text, "Long"), None, None, tmp_path, source, cast=True)
    assert len(project.segments) > 10_000
    paragraphs, _ = book_text(project)
    started = time.perf_counter()
    found = attributing.attribute(paragraphs, "en")
    step = time.perf_counter() - started
    monkeypatch.setattr(attributing, "attribute", lambda paragraphs, language: found)
    started = time.perf_counter()
    edit = attribute_project(project)
    ours = time.perf_counter() - started
    assert len(edit.speakers) > 5_000 and ours < max(0.5, step)
    fake_render(project)
    started = time.perf_counter()
    assert cast.is_empty(attribute_project(project)) and time.perf_counter() - started < max(0.5, step)


def _wav(tmp_path):
    import soundfile as sf

    from core.standin import synthetic_voice

    path = tmp_path / "voice.wav"
    if not path.exists():
        sf.write(path, synthetic_voice(4.0, seed=3, pitch_hz=170), 24000)
    return path


def test_a_split_or_merged_line_keeps_its_speaker(tmp_path):
    from core.narration.projects.editing import merge, split

    project = novel_project(tmp_path)
    attribute_project(project)
    cast.set_speaker(project, 8, "Mr. Knightley")
    split(project, 8, 10)
    first, second = project.segments[7], project.segments[8]
    assert (first.speaker, second.speaker, first.speaker_fixed, second.speaker_fixed) == (
        "Mr. Knightley",
        "Mr. Knightley",
        True,
        True,
    )
    merge(project, 8)
    assert project.segments[7].speaker == "Mr. Knightley" and project.segments[7].speaker_fixed
