"""Each take's words: aligned beside a render (on a thread of its own, stored with the next save), through the
segment's spoken form and in its language, on demand for a project rendered before (``project DIR --align``), and a
take that cannot be aligned keeps its sentence timing and says why. The aligner itself is tested in
tests/engine/test_alignment.py; here a stand-in records what it is asked and answers with known times."""

from __future__ import annotations

import threading

import pytest

from core.engine import ChatterboxError
from core.engine.alignment.words import Alignment, WordTime
from core.engine.pipeline import Pipeline
from core.narration import TakePolicy, align_takes, render_pending
from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.opening import open_project
from core.narration.projects.project import create_project
from tests import aligner_fakes as fakes
from tests.cli.test_cli_project_edit import run_cli

BOOK = "Dr. Smith paid 5 dollars.\n\nThe cat sat on the mat."


class FakeAligner:
    """Answers every take with its written words one after another, a tenth of a second each; fails on ``fail``."""

    def __init__(self, fail: str | None = None, gate: threading.Event | None = None):
        self.calls: list[dict] = []
        self.fail, self.gate = fail, gate
        self.threads: set[str] = set()

    def __call__(self, audio, rate, text, language="en", spoken=None, whisper_model=None):
        self.threads.add(threading.current_thread().name)
        if self.gate is not None:
            self.gate.wait(10)
        self.calls.append({"text": text, "spoken": spoken, "language": language, "seconds": audio.size / rate})
        if self.fail is not None and self.fail in text:
            raise ChatterboxError("align.not_matching", placed=0.0)
        words = [w.strip(".,") for w in text.split()]
        placed = [WordTime(w, 0.1 * i, 0.1 * i + 0.08) for i, w in enumerate(words)]
        return Alignment(placed, audio.size / rate, language, "fake", len(words))


@pytest.fixture
def project(tmp_path):
    project = create_project(tmp_path / "Book.cbproj", "Book")
    import_document(project, parse_text(BOOK, "Book"), None, None, tmp_path, source_identity("b", BOOK, None))
    project.save()
    return project


@pytest.fixture(scope="module")
def pipe(bundles):
    return Pipeline.from_bundle(bundles["original"])


def test_a_render_aligns_each_take_beside_it_through_its_spoken_form(project, pipe, monkeypatch):
    fake = FakeAligner()
    fakes.share(monkeypatch, fake)
    summary = render_pending(project, pipe)
    assert summary.rendered == 2 and "MainThread" not in fake.threads  # on the aligner's own thread
    first = fake.calls[0]
    assert first["text"] == "Dr. Smith paid 5 dollars." and "five" in first["spoken"] and first["language"] == "en"
    assert fake.calls[1]["spoken"] is None  # nothing spoken differently: the written text is aligned
    stored = open_project(project.folder)
    alignment = stored.chosen_take(stored.segments[0]).alignment
    assert alignment["words"][0] == ["Dr", 0.0, 0.08] and alignment["aligner"] == "fake"
    assert alignment["placed"] == 1.0 and alignment["error"] is None and "seconds" not in alignment
    assert summary.align_s >= 0


def test_a_take_that_cannot_be_aligned_keeps_its_sentence_timing_and_says_why(project, pipe, monkeypatch):
    fakes.share(monkeypatch, FakeAligner(fail="cat"))
    render_pending(project, pipe)
    stored = open_project(project.folder)
    failed = stored.chosen_take(stored.segments[1]).alignment
    assert failed == {
        "words": [],
        "placed": 0.0,
        "aligner": "",
        "error": "align.not_matching",
        "error_data": {"placed": 0.0},  # its facts, for its wording
    }
    assert stored.chosen_take(stored.segments[0]).alignment["words"]


def test_a_render_without_words_and_align_takes_later_with_progress_and_a_stop(project, pipe, monkeypatch):
    render_pending(project, pipe, policy=TakePolicy(words=False))
    assert all(project.chosen_take(s).alignment is None for s in project.segments)
    fake = FakeAligner()
    fakes.share(monkeypatch, fake)
    report = align_takes(project, cancelled=lambda: len(fake.calls) >= 1)
    assert report.aligned == 1 and report.cancelled  # stopped after the first: it keeps its words
    seen = []
    report = align_takes(project, progress=lambda done, total, number: seen.append((done, total, number)))
    assert (report.aligned, report.skipped, seen) == (1, 1, [(1, 1, 2)])
    assert all(open_project(project.folder).chosen_take(s).alignment["words"] for s in project.segments)
    assert align_takes(project, again=True).aligned == 2


def test_project_align_on_the_command_line(project, pipe, monkeypatch, capsys):
    render_pending(project, pipe, policy=TakePolicy(words=False))
    project.close()
    fakes.share(monkeypatch, FakeAligner(fail="cat"))
    code, out, err = run_cli(capsys, "project", project.folder, "--align", "--json")
    assert code == 0, err
    assert (out["aligned"], out["failed"], out["skipped"], out["cancelled"]) == (1, [2], 0, False)
    code, out, err = run_cli(capsys, "project", project.folder, "--align")
    assert code == 0 and "0 take(s) given their words" in out and "2 had them already" in out
    code, out, err = run_cli(capsys, "project", project.folder, "--align", "all", "--json")
    assert code == 0 and out["aligned"] == 1 and out["failed"] == [2]
