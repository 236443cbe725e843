"""Helpers for the narration tests: an EPUB built with ebooklib, and a small project rendered on a stand-in."""

from __future__ import annotations

from pathlib import Path

BOOK = """[chapter: Morning]
The sun rose over the hills. Birds began to sing.

A farmer walked to the field. He carried a basket of seeds.

[chapter: Evening]
The light faded slowly. Stars appeared one by one.

Everyone went home to rest. The night was quiet.
"""

NOVEL = """[chapter: The Visit]
Emma sat by the window when Mr. Knightley came in.

“Good morning,” said Mr. Knightley. “Is your father well?”

“Yes,” said Emma. “He is quite well, thank you.”

“I am glad to hear it.”

“Will you stay for tea?” she asked.

[chapter: The Walk]
Harriet came running up the lane.

“Miss Woodhouse!” cried Harriet. “I have such news.”

“Then tell me at once,” said Emma.
"""
"""A little novel of tagged dialogue. Imported for a cast (its sentences cut at their quotes) it has 18 segments:
1 and 12 headings; Mr. Knightley says 3, 5 and 9 (9 unsure: no tag), Emma 6, 8, 10 and 17, Harriet 14 and 16; the
rest is narration (4, 7, 11, 15 and 18 are the tags: ``said Mr. Knightley.``)."""
NOVEL_SPEAKERS = {3: "Mr. Knightley", 5: "Mr. Knightley", 9: "Mr. Knightley", 6: "Emma", 8: "Emma", 10: "Emma"}
NOVEL_SPEAKERS |= {17: "Emma", 14: "Harriet", 16: "Harriet"}


def make_epub(path: Path, chapters: list[str], body: str | None = None, cover: bytes | None = None) -> Path:
    from ebooklib import epub

    book = epub.EpubBook()
    if cover is not None:
        book.set_cover("cover.png", cover)
    book.set_identifier("test-book")
    book.set_title("A Test Book")
    book.set_language("en")
    book.add_author("Tester")
    items = []
    for number, title in enumerate(chapters, 1):
        item = epub.EpubHtml(title=title, file_name=f"chap_{number}.xhtml", lang="en")
        text = body or (
            f"<h1>{title}</h1><p>This is the first sentence of chapter {number}. And a second one.</p>"
            f"<div><p>A new paragraph in chapter {number}.</p></div>"
        )
        item.content = f"<html><head><title>{title}</title></head><body>{text}</body></html>"
        book.add_item(item)
        items.append(item)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav", *items]
    epub.write_epub(str(path), book)
    return path


def project_data(folder: Path) -> dict:
    """The project in ``folder`` in the shape ``project.json`` had (what ``--dump-json`` writes)."""
    from core.narration.projects.opening import open_project

    project = open_project(folder)
    try:
        return project.to_dict()
    finally:
        project.close()


def write_legacy(folder: Path, data: dict | str) -> None:
    """Make ``folder`` hold ``data`` as an earlier version's ``project.json`` (the database removed): the next open
    reads and validates it as those versions did, then moves it into a database."""
    import json

    for leftover in Path(folder).glob("project.sqlite*"):
        leftover.unlink()
    text = data if isinstance(data, str) else json.dumps(data)
    (Path(folder) / "project.json").write_text(text, encoding="utf-8")


def store_as_of(folder: Path, schema: int) -> None:
    """Make the project's database what an app of store schema ``schema`` wrote: the columns and tables of later
    schemas dropped (what ``core.narration.projects.store.UPGRADES`` adds back, newest first)."""
    import sqlite3

    later = {
        3: ["ALTER TABLE takes DROP COLUMN performed"],
        2: ["ALTER TABLE takes DROP COLUMN screen"],
        4: [
            "DROP TABLE characters",
            "ALTER TABLE segments DROP COLUMN speaker",
            "ALTER TABLE segments DROP COLUMN speaker_confidence",
            "ALTER TABLE segments DROP COLUMN speaker_fixed",
        ],
        5: ["ALTER TABLE takes DROP COLUMN alignment"],
    }
    db = sqlite3.connect(Path(folder) / "project.sqlite")
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        for step in range(version, schema, -1):
            for statement in later[step]:
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {schema}")
        db.commit()
    finally:
        db.close()


def stored_state(folder: Path) -> str:
    """Everything the project's database holds, as SQL (equal before and after: nothing was written)."""
    import sqlite3

    db = sqlite3.connect(Path(folder) / "project.sqlite")
    try:
        return "\n".join(db.iterdump())
    finally:
        db.close()


def with_a_hole(audio, seconds: float = 3.0):
    """``audio`` (mono float32 at 24 kHz) with ``seconds`` of silence in its middle, as a decoder stall leaves."""
    import numpy as np

    middle = audio.size // 2
    return np.concatenate([audio[:middle], np.zeros(round(seconds * 24000), np.float32), audio[middle:]])


def put_a_hole_in(project, number: int, seconds: float = 3.0) -> None:
    """Segment ``number``'s chosen take rewritten on disk :func:`with_a_hole`."""
    import soundfile as sf

    path = project.path(project.chosen_take(project.segments[number - 1]).file)
    audio, rate = sf.read(path, dtype="float32")
    sf.write(path, with_a_hole(audio, seconds), rate)
