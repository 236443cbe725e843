"""What an exported file says about itself: title, author, narrator, year, genre, track, chapters and cover, per
container — MP4/M4B (iTunes atoms from FFmpeg, chapters with the MP4 index, cover as ``covr``), MP3 (ID3, ``CHAP``/
``CTOC`` and ``APIC``), FLAC/OGG/Opus (Vorbis comments, ``CHAPTERnnn``, a FLAC picture block) — and the writer that
takes the blocks (:class:`core.engine.AudioEncoder`; OGG Vorbis through libsndfile, FFmpeg's wheel has no
libvorbis)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.engine import SAMPLE_RATE, AudioEncoder, Chapter, ChatterboxError, EncodeSettings, atomic_path
from core.narration.exporting.chapter_marks import ChapterMark, write_chapter_marks
from core.narration.exporting.plan import BookInfo, OutputFile
from core.narration.projects.project import Project, ProjectError

APP = "Chatterbox Desk"
GENRE = "Audiobook"
COVER_NAMES = ("cover.jpg", "cover.jpeg", "cover.png")
"""A cover the project keeps (the EPUB's, saved at import), looked for in the project folder."""


@dataclass
class FileTags:
    title: str
    album: str
    artist: str
    comment: str
    track: int | None = None
    narrator: str | None = None
    year: str | None = None
    genre: str = GENRE
    chapters: list[ChapterMark] = field(default_factory=list)
    cover: bytes | None = None

    def metadata(self) -> dict[str, str]:
        """Container tags as FFmpeg names them (ID3v2 in MP3, iTunes atoms in MP4, Vorbis comments)."""
        out = {
            "title": self.title,
            "album": self.album,
            "artist": self.artist,
            "album_artist": self.artist,
            "composer": self.narrator or "",
            "date": self.year or "",
            "genre": self.genre,
            "comment": self.comment,
            "track": str(self.track) if self.track else "",
            "encoder": APP,
        }
        return {k: v for k, v in out.items() if v}

    def simple(self) -> dict[str, str]:
        """The names libsndfile and :func:`write_chapter_marks` know."""
        return {
            "title": self.title,
            "album": self.album,
            "artist": self.artist,
            "comment": self.comment,
            "tracknumber": str(self.track) if self.track else "",
            "date": self.year or "",
            "software": APP,
        }


def file_tags(project: Project, file: OutputFile, book: BookInfo, cover: bytes | None) -> FileTags:
    voices = sorted({v or "model voice" for v in map(project.voice_of, file.segments)})
    voice_text = f"in the voice{'s' if len(voices) > 1 else ''} {', '.join(voices)}"
    narrator = book.narrator
    return FileTags(
        title=file.title,
        album=book.title or project.title,
        artist=book.author or project.author or ", ".join(voices),
        comment=f"Narrated by {APP} {voice_text}" + (f", read as {narrator}" if narrator else ""),
        track=file.track,
        narrator=narrator,
        year=book.year,
        cover=cover,
    )


def find_cover(project: Project, chosen: Path | None) -> bytes | None:
    """The image bytes of ``chosen``, else of the cover the project keeps, else ``None``."""
    candidates = [chosen] if chosen is not None else [project.folder / name for name in COVER_NAMES]
    for path in candidates:
        if path.is_file():
            try:
                return path.read_bytes()
            except OSError as exc:
                raise ProjectError("export.cover_unreadable", path=str(path), reason=str(exc.strerror or exc)) from exc
    return None


class Writer:
    """Blocks in, one file out under its final name only when :meth:`close` succeeds (:meth:`abort`: nothing)."""

    def __init__(self, path: Path, encoding: EncodeSettings, tags: FileTags) -> None:
        self.path, self.tags = path, tags
        self.suffix = path.suffix.lower()
        self._sound: _SoundfileWriter | None = None
        self._encoder: AudioEncoder | None = None
        try:
            if self.suffix == ".ogg":
                self._sound = _SoundfileWriter(path, tags.simple())
            else:
                self._encoder = AudioEncoder(path, encoding, tags.metadata())
        except ChatterboxError:
            raise
        except OSError as exc:
            raise ProjectError("export.write_failed", path=str(path), reason=str(exc.strerror or exc)) from exc

    def write(self, block: np.ndarray) -> None:
        if self._encoder is not None:
            self._encoder.write(block)
        elif self._sound is not None:
            self._sound.write(block)

    def close(self) -> None:
        marks = self.tags.chapters
        if self._encoder is not None:
            if self.suffix in (".m4b", ".m4a"):
                self._encoder.set_chapters([Chapter(m.title, m.start, m.end) for m in marks])
            self._encoder.close(finish=self._finish)
        elif self._sound is not None:
            self._sound.close(self._finish)

    def abort(self) -> None:
        if self._encoder is not None:
            self._encoder.abort()
        elif self._sound is not None:
            self._sound.abort()

    def _finish(self, tmp: Path) -> None:
        write_chapter_marks(tmp, self.tags.chapters, self.tags.simple())
        if self.tags.cover:
            write_cover(tmp, self.tags.cover)


def write_cover(path: Path, image: bytes) -> None:
    """Embed ``image`` (JPEG or PNG) as the front cover: ``covr`` in MP4, ``APIC`` in MP3, a picture in FLAC."""
    import mutagen

    png = image.startswith(b"\x89PNG")
    mime = "image/png" if png else "image/jpeg"
    suffix = path.suffix.lower()
    if suffix in (".m4b", ".m4a"):
        from mutagen.mp4 import MP4, MP4Cover

        mp4 = MP4(path)
        mp4["covr"] = [MP4Cover(image, MP4Cover.FORMAT_PNG if png else MP4Cover.FORMAT_JPEG)]
        mp4.save()
    elif suffix == ".mp3":
        from mutagen.id3 import APIC, ID3

        id3 = ID3(path)
        id3.add(APIC(encoding=3, mime=mime, type=3, desc="Cover", data=image))
        id3.save(path)
    elif suffix == ".flac":
        from mutagen.flac import Picture

        picture = Picture()
        picture.type, picture.mime, picture.data = 3, mime, image
        flac = mutagen.File(path)
        flac.add_picture(picture)
        flac.save()


class _SoundfileWriter:
    """OGG Vorbis through libsndfile, block by block, under a temporary name (as :class:`AudioEncoder` does)."""

    def __init__(self, path: Path, tags: dict[str, str]) -> None:
        import soundfile as sf

        self._context = atomic_path(path)
        self._tmp = self._context.__enter__()
        self._file = sf.SoundFile(self._tmp, "w", SAMPLE_RATE, 1, format="OGG", subtype="VORBIS")
        for name in ("title", "artist", "album", "comment", "tracknumber", "date", "software"):
            if tags.get(name):
                setattr(self._file, name, tags[name])

    def write(self, block: np.ndarray) -> None:
        try:
            self._file.write(block)
        except BaseException as exc:
            self.abort(exc)
            raise

    def close(self, finish: Callable[[Path], None]) -> None:
        try:
            self._file.close()
            finish(self._tmp)
        except BaseException as exc:
            self.abort(exc)
            raise
        self._context.__exit__(None, None, None)

    def abort(self, exc: BaseException | None = None) -> None:
        if not self._file.closed:
            self._file.close()
        error = exc or RuntimeError("aborted")
        with contextlib.suppress(Exception):  # the context re-raises what it was given, once it removed the file
            self._context.__exit__(type(error), error, None)
