"""Media Overlay documents (EPUB 3 SMIL): a ``par`` per sentence, its text fragment and its audio clip.

Clock values are whole milliseconds (``0:01:02.345``), so an overlay's ``media:duration`` is exactly the sum of its
clips. Each clip runs from its sentence's first sample to the next sentence's first sample (its pause included): a
reading system plays the clips one after the other, and the pauses are heard as narrated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

SMIL_TYPE = "application/smil+xml"


@dataclass(frozen=True)
class Par:
    text: str
    """``file.xhtml#id``, relative to the overlay."""
    audio: str
    """The audio file, relative to the overlay."""
    begin_ms: int
    end_ms: int


def quoteattr(value: str) -> str:
    """An XML attribute value in double quotes (``xml.sax.saxutils`` would import ``urllib.request``)."""
    return f'"{escape(value, quote=True)}"'


def clock(ms: int) -> str:
    """``H:MM:SS.mmm`` (a SMIL full clock value, also the form of ``media:duration``)."""
    hours, rest = divmod(int(ms), 3_600_000)
    minutes, rest = divmod(rest, 60_000)
    seconds, millis = divmod(rest, 1000)
    return f"{hours}:{minutes:02d}:{seconds:02d}.{millis:03d}"


def duration_ms(pars: Sequence[Par]) -> int:
    return sum(p.end_ms - p.begin_ms for p in pars)


def overlay(pars: Sequence[Par], textref: str) -> bytes:
    """The SMIL document of one content document (``textref``: that document, relative to the overlay)."""
    lines = [
        '<?xml version="1.0" encoding="utf-8"?>',
        '<smil xmlns="http://www.w3.org/ns/SMIL" xmlns:epub="http://www.idpf.org/2007/ops" version="3.0">',
        "<body>",
        f'<seq id="seq1" epub:textref={quoteattr(textref)}>',
    ]
    for number, par in enumerate(pars, 1):
        lines.append(
            f'<par id="par{number}"><text src={quoteattr(par.text)}/>'
            f'<audio src={quoteattr(par.audio)} clipBegin="{clock(par.begin_ms)}" clipEnd="{clock(par.end_ms)}"/>'
            "</par>"
        )
    lines += ["</seq>", "</body>", "</smil>", ""]
    return "\n".join(lines).encode("utf-8")
