"""The project's pronunciation lexicon: whole words, case rules, saved in project.json, applied at render time, and
only the segments it changes become pending; the command line's --lexicon, --lexicon-add, --lexicon-remove."""

from __future__ import annotations

import pytest

from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.opening import open_project
from core.narration.projects.project import ProjectError, create_project
from core.narration.text.speech_text import LexiconEntry, apply_lexicon
from tests.narration.test_narration import run_cli
from tests.narration_support import project_data, write_legacy

TEXT = "Hermione read the book. The US ship sailed. Tell us more. Hermiones are many. Nothing else."


def _project(tmp_path, text=TEXT):
    project = create_project(tmp_path / "P", "Book")
    import_document(project, parse_text(text, "Book"), None, None, tmp_path, source_identity("b", text, None))
    project.save()
    return project


def test_whole_words_only_and_case_rules():
    lexicon = {"Hermione": LexiconEntry("Her-my-oh-nee"), "US": LexiconEntry("U S", match_case=True)}
    assert apply_lexicon("Hermione and HERMIONE; Hermiones.", lexicon) == "Her-my-oh-nee and Her-my-oh-nee; Hermiones."
    assert apply_lexicon("The US told us.", lexicon) == "The U S told us."
    assert apply_lexicon("Nothing here.", {}) == "Nothing here."


def test_an_exact_case_entry_wins_over_a_case_free_one():
    lexicon = {"Reading": LexiconEntry("Redding", match_case=True), "reading": LexiconEntry("reeding")}
    assert apply_lexicon("Reading is reading, READING.", lexicon) == "Redding is reeding, reeding."


def test_a_lexicon_change_makes_only_the_affected_segments_pending(tmp_path):
    project = _project(tmp_path)
    keys = {s.id: project.render_key(s) for s in project.segments}
    changed = project.set_lexicon("Hermione", "Her-my-oh-nee")
    assert [s.text for s in changed] == ["Hermione read the book."]
    changed = project.set_lexicon("US", "U S", match_case=True)
    assert [s.text for s in changed] == ["The US ship sailed."]
    moved = [s.text for s in project.segments if project.render_key(s) != keys[s.id]]
    assert moved == ["Hermione read the book.", "The US ship sailed."]
    assert project.spoken_text(project.segments[0]) == "Her-my-oh-nee read the book."
    assert project.segments[0].text == "Hermione read the book."
    project.save()
    again = open_project(project.folder)
    assert again.lexicon == {"Hermione": LexiconEntry("Her-my-oh-nee"), "US": LexiconEntry("U S", True)}
    assert [s.text for s in again.remove_lexicon("US")] == ["The US ship sailed."]
    with pytest.raises(ProjectError) as info:
        again.remove_lexicon("Nobody")
    assert info.value.code == "lexicon.no_entry"
    with pytest.raises(ProjectError):
        again.set_lexicon("  ", "x")


def test_the_lexicon_applies_over_a_spoken_override(tmp_path):
    project = _project(tmp_path)
    project.set_spoken(project.segments[0], "Hermione read it twice.")
    project.set_lexicon("hermione", "Her-my-oh-nee")
    assert project.spoken_text(project.segments[0]) == "Her-my-oh-nee read it twice."


def test_a_damaged_lexicon_is_refused(tmp_path):
    project = _project(tmp_path)
    data = project_data(project.folder)
    data["lexicon"] = {"word": "not an entry"}
    write_legacy(project.folder, data)
    with pytest.raises(ProjectError) as info:
        open_project(project.folder)
    assert info.value.code == "project.invalid"


def test_lexicon_on_the_command_line(tmp_path):
    project = _project(tmp_path)
    folder = str(project.folder)
    code, out = run_cli("project", folder, "--lexicon")
    assert code == 0 and "empty" in out
    code, out = run_cli("project", folder, "--lexicon-add", "US", "U S", "--match-case", "--json")
    assert code == 0, out
    assert out["lexicon"] == [{"word": "US", "spoken": "U S", "match_case": True}]
    spoken = {s["written"]: s["spoken"] for s in out["segments"]}
    assert spoken["The US ship sailed."] == "The U S ship sailed." and spoken["Tell us more."] == "Tell us more."
    code, out = run_cli("project", folder, "--lexicon-add", "Hermione", "Her-my-oh-nee")
    assert code == 0
    code, out = run_cli("project", folder, "--lexicon")
    assert code == 0 and "Hermione  →  Her-my-oh-nee" in out and "US  →  U S  (matching case)" in out
    code, out = run_cli("project", folder, "--lexicon", "--json")
    assert code == 0 and [e["word"] for e in out["lexicon"]] == ["Hermione", "US"]
    code, out = run_cli("project", folder, "--lexicon-remove", "US", "--json")
    assert code == 0 and [e["word"] for e in out["lexicon"]] == ["Hermione"]
    code, out = run_cli("project", folder, "--lexicon-remove", "US")
    assert code == 2 and "no entry 'US'" in out
