"""What the export dialog asks, as plain data: remembered across restarts (one JSON value in the app settings) and
turned into the core's :class:`~core.narration.ExportRequest`. No widgets."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

from core.engine import EncodeSettings
from core.narration import BookInfo, ExportRequest, Project

EXPORT_FORMATS = {
    ".m4b": "M4B audiobook (AAC, chapters, cover)",
    ".mp3": "MP3",
    ".opus": "Opus",
    ".ogg": "OGG Vorbis",
    ".flac": "FLAC (lossless)",
    ".wav": "WAV (uncompressed)",
    ".epub": "Read-along EPUB 3 (the text highlighted as it is spoken; MP3 audio)",
}
BITRATE_FORMATS = (".m4b", ".mp3", ".epub")
READALONG = ".epub"
"""A read-along book is one file (its audio is one MP3 a chapter inside it): no chapter files, no subtitles."""
"""The formats whose bit rate and CBR/VBR the dialog offers (the others keep their encoder's own)."""
BITRATES = (64, 96, 128, 160, 192, 256, 320)
SAMPLE_RATES = (22050, 24000, 44100, 48000)
SCOPES = ("book", "chapters", "segments")
COVERS = ("book", "file")
ACX = {"format": ".mp3", "bitrate": 192, "sample_rate": 44100, "vbr": False, "per_chapter": True}
"""What ACX/Audible takes: 192 kb/s CBR MP3 at 44.1 kHz, one chapter per file."""


@dataclass(frozen=True)
class ExportChoices:
    format: str = ".m4b"
    bitrate: int = 128
    """kb/s, for M4B and MP3."""
    sample_rate: int = 44100
    vbr: bool = False
    scope: str = "book"
    """``book``, ``chapters`` (``first``–``last``) or ``segments`` (the ones selected in the studio)."""
    first: int = 1
    last: int = 1
    per_chapter: bool = False
    subtitles: str | None = None
    loudness: float | None = None
    cover: str = "book"
    """``book`` (the book's own cover, if the project keeps one) or ``file`` (:attr:`cover_file`)."""
    cover_file: str = ""
    author: str = ""
    narrator: str = ""
    year: str = ""
    master_acx: bool = False
    check_acx: bool = False
    strict: bool = False
    """Refuse while a take to export needs review (:attr:`~core.narration.ExportRequest.strict`)."""
    word_timing: bool = False
    """Each word's time where the takes have them: the read-along book highlights word by word, subtitles get a
    timestamp before each word (WebVTT) or a cue per word (SRT)."""

    # --- remembered in the settings ----------------------------------------------------------------------------
    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | None) -> ExportChoices:
        """The remembered choices; what is missing, of the wrong type or unknown falls back to the default."""
        try:
            data = json.loads(text or "{}")
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        default = cls()
        values = {f.name: data[f.name] for f in fields(cls) if f.name in data and _fits(data[f.name], f.name, default)}
        choices = cls(**values)
        if choices.format not in EXPORT_FORMATS:
            choices = replace(choices, format=default.format)
        if choices.scope not in SCOPES:
            choices = replace(choices, scope=default.scope)
        if choices.cover not in COVERS:
            choices = replace(choices, cover=default.cover)
        if choices.subtitles not in (None, ".srt", ".vtt"):
            choices = replace(choices, subtitles=None)
        return choices

    # --- the request ---------------------------------------------------------------------------------------------
    def request(self, path: Path, project: Project, selected: tuple[int, ...] = ()) -> ExportRequest:
        """The core's request: ``path`` is the file (one file) or the folder (one file per chapter)."""
        chapters = tuple(range(self.first, self.last + 1)) if self.scope == "chapters" else None
        segments = tuple(selected) if self.scope == "segments" else None
        cover = Path(self.cover_file).expanduser() if self.cover == "file" and self.cover_file else None
        book = BookInfo(
            author=self.author.strip() or None,
            narrator=self.narrator.strip() or None,
            year=self.year.strip() or None,
        )
        encoding = EncodeSettings(
            sample_rate=self.sample_rate,
            bitrate=self.bitrate * 1000 if self.format in BITRATE_FORMATS else None,
            vbr=self.vbr and self.format in BITRATE_FORMATS,
        )
        base = ExportRequest(
            loudness=None if self.master_acx else self.loudness,
            true_peak=float(project.finishing.get("true_peak", -1.0)),
            chapters=chapters,
            segments=segments,
            encoding=encoding,
            cover=cover,
            book=book,
            check="acx" if self.check_acx else None,
            master="acx" if self.master_acx else None,
            strict=self.strict,
        )
        if self.format == READALONG:
            highlight = "word" if self.word_timing else "sentence"
            return replace(base, out=path.with_suffix(READALONG), chapter_format=".mp3", highlight=highlight)
        words = 1 if self.word_timing and self.subtitles else None
        if self.per_chapter:
            return replace(
                base,
                per_chapter=path.with_suffix(""),
                chapter_format=self.format,
                chapter_subtitles=self.subtitles,
                subtitle_words=words,
            )
        return replace(
            base,
            out=path.with_suffix(self.format),
            subtitles=path.with_suffix(self.subtitles) if self.subtitles else None,
            subtitle_words=words,
        )


def _fits(value: object, name: str, default: ExportChoices) -> bool:
    """A remembered value of the field's kind (a hand-edited or older settings file may hold anything)."""
    if name in ("subtitles", "loudness") and value is None:
        return True
    if name == "loudness":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    kind = type(getattr(default, name)) if name != "subtitles" else str
    return isinstance(value, kind) and (kind is bool or not isinstance(value, bool))
