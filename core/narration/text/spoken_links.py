"""Web addresses and e-mail addresses as a reader says them aloud, in the book's language.

"https://www.example.com/path" → "example dot com slash path"; "jane.doe@example.org" → "jane dot doe at example dot
org". The scheme and "www." are not read, nor a query or fragment ("?q=…", "#top": nobody reads those aloud); a host
in capitals is read in small letters (it is the same address), everything else as written. An address ends before
the punctuation that ends its sentence ("…/path." reads "…slash path."); a closing bracket is the address's own only
when it opens one. Addresses without a scheme or "www." are recognised by a common ending (".com", ".org", ".net",
…), so that "e.g." or a file name is never taken for one. A language without words here keeps its addresses as
written. :func:`address_spans` tells the sentence splitter where addresses stand, so that their dots end no sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote


@dataclass(frozen=True)
class LinkWords:
    dot: str
    slash: str
    at: str
    dash: str
    underscore: str
    colon: str
    plus: str


WORDS = {
    "en": LinkWords("dot", "slash", "at", "dash", "underscore", "colon", "plus"),
    "de": LinkWords("Punkt", "Schrägstrich", "at", "Bindestrich", "Unterstrich", "Doppelpunkt", "plus"),
    "fr": LinkWords("point", "slash", "arobase", "tiret", "tiret bas", "deux-points", "plus"),
    "es": LinkWords("punto", "barra", "arroba", "guion", "guion bajo", "dos puntos", "más"),
    "it": LinkWords("punto", "slash", "chiocciola", "trattino", "trattino basso", "due punti", "più"),
    "pt": LinkWords("ponto", "barra", "arroba", "hífen", "sublinhado", "dois pontos", "mais"),
    "nl": LinkWords("punt", "slash", "apenstaartje", "streepje", "underscore", "dubbele punt", "plus"),
}
"""How each language says the marks of an address."""

_CHARS = r"[^\s<>\"“”‘’«»]"
_URL = re.compile(rf"(?<![\w@./])(?:(?i:https?|ftp)://|(?i:www)\.){_CHARS}+")
_ENDINGS = r"com|org|net|edu|gov|info|io|co\.uk|org\.uk|ac\.uk"
_DOMAIN = re.compile(
    rf"(?<![\w@./-])((?:(?i:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)\.)+(?:{_ENDINGS}))(/{_CHARS}*)?(?![\w@-]|\.\w)"
)
_EMAIL = re.compile(r"(?<![\w.+-])(?:(?i:mailto):)?([\w+-]+(?:\.[\w+-]+)*)@((?:[\w-]+\.)+[^\W\d_]{2,})(?![\w-]|\.\w)")
_WWW = re.compile(r"(?i:www)\.")
_ENDING = re.compile(rf"\w\.(?:{_ENDINGS})\b")
_TRAILING = ".,;:!?'\"’”»)]}"


def spoken_links(text: str, language: str) -> str:
    """``text`` with every web and e-mail address in the words of ``language`` (unchanged for a language without
    words here, or text without an address)."""
    words = WORDS.get(language)
    if words is None:
        return text
    for pattern in _likely(text):
        if pattern is _EMAIL:
            text = _EMAIL.sub(lambda m: _say_email(m.group(1), m.group(2), words), text)
        else:
            text = pattern.sub(lambda m: _say_url_match(m.group(0), words), text)
    return text


def _likely(text: str) -> list[re.Pattern[str]]:
    """The patterns worth running over ``text`` (most paragraphs hold no address: three quick looks say so)."""
    out = []
    if "://" in text or _WWW.search(text):
        out.append(_URL)
    if "@" in text:
        out.append(_EMAIL)
    if _ENDING.search(text):
        out.append(_DOMAIN)
    return out


def address_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds web and e-mail addresses (start, end; the sentence's punctuation after one left out),
    in order: the sentence splitter keeps their dots and question marks whole."""
    found = []
    for pattern in _likely(text):
        for match in pattern.finditer(text):
            address, _rest = _trimmed(match.group(0))
            if address:
                found.append((match.start(), match.start() + len(address)))
    spans: list[tuple[int, int]] = []
    for start, end in sorted(found, key=lambda span: (span[0], -span[1])):
        if not spans or start >= spans[-1][1]:
            spans.append((start, end))
    return spans


def _say_url_match(found: str, words: LinkWords) -> str:
    address, rest = _trimmed(found)
    return _say_url(address, words) + rest


def _trimmed(found: str) -> tuple[str, str]:
    """The address and the punctuation after it that belongs to the sentence (a closing bracket the address did
    not open, a full stop, a closing quote)."""
    end = len(found)
    while end and found[end - 1] in _TRAILING:
        if found[end - 1] == ")" and found[:end].count("(") >= found[:end].count(")"):
            break
        end -= 1
    return found[:end], found[end:]


def _say_url(address: str, words: LinkWords) -> str:
    rest = re.sub(r"^(?i:https?|ftp)://", "", address)
    rest = re.split(r"[?#]", rest, maxsplit=1)[0]
    host, _, path = rest.partition("/")
    host = _quiet(re.sub(r"^(?i:www)\.", "", host.rsplit("@", 1)[-1]))
    host, _, port = host.partition(":")
    said = [_say(host, words)]
    if port:
        said += [words.colon, port]
    for piece in unquote(path).split("/"):
        if piece.strip():
            said += [words.slash, _say(piece, words)]
    return " ".join(said)


def _say_email(local: str, domain: str, words: LinkWords) -> str:
    return f"{_say(local, words)} {words.at} {_say(_quiet(domain), words)}"


def _quiet(host: str) -> str:
    """A host written in capitals in small letters (the same address, read as words rather than letters)."""
    return host.lower() if host.isupper() else host


def _say(text: str, words: LinkWords) -> str:
    """One part of an address (a host, a path's piece, the name before "@") with its marks said."""
    marks = {".": words.dot, "-": words.dash, "_": words.underscore, "@": words.at, "+": words.plus}
    out = re.sub(r"[.\-_@+]", lambda m: f" {marks[m.group(0)]} ", text)
    return " ".join(out.split())
