"""Text prepared for speech: what a segment's written words sound like when read aloud, in the book's language.

The written text stays on the segment (subtitles show it); :func:`spoken_form` derives what the model is given:

- numbers, decimals, years, ordinals ("42nd"), currency ("$3.50", "£5", "€10"), percentages and common units
  ("5 km", "10 kg") in words through ``num2words``; dates ("January 5, 1851", "5 January 1851", "1851-01-05"),
  and in English times ("10:30"), decades ("1850s") and ranges ("pages 10-12");
- common abbreviations of the language ("Mr.", "Dr.", "St.", "e.g.", "etc."; German "z. B.", French "M.", ...);
- in headings, Roman numerals after a chapter word or alone ("CHAPTER XLII" → "Chapter forty-two"), and a heading in
  capitals in ordinary case (so the model reads words, not letters);
- footnote reference marks ("word[12]", "word¹", "word*", "†") and page numbers ("[Pg 12]", "{12}") left out;
- web and e-mail addresses as they are said ("example dot com slash path", "jane dot doe at example dot org":
  :mod:`core.narration.text.spoken_links`).

A language ``num2words`` does not know keeps its digits. :func:`apply_lexicon` then replaces the project's own
words (whole words; with or without matching case). Everything is cached: the project asks for the spoken form of
every segment whenever it works out which segments are pending.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache

from core.narration.text.sentences import base_language
from core.narration.text.spoken_links import spoken_links

# --- numbers --------------------------------------------------------------------------------------------------------


def _words(number, language: str, to: str = "cardinal") -> str | None:
    if language == "zh":
        return _chinese_number(number, to)
    from num2words import num2words

    try:
        return str(num2words(number, lang=language, to=to))
    except (NotImplementedError, OverflowError, ValueError, TypeError, InvalidOperation, KeyError, IndexError):
        return None


def _chinese_number(number, to: str) -> str | None:
    """Chinese numerals by ``cn2an`` (num2words has no Chinese): 2026 → 二千零二十六, 3.5 → 三点五; ordinals and
    years as cardinals with 第 in front of an ordinal."""
    import cn2an

    try:
        said = str(cn2an.an2cn(str(number), "low"))
    except (ValueError, KeyError, TypeError):
        return None
    return f"第{said}" if to == "ordinal" else said


_CURRENCY_SIGNS = {"$": "USD", "£": "GBP", "€": "EUR"}
_CURRENCY_CODES = {"USD", "GBP", "EUR"}


def _currency(amount: str, code: str, language: str) -> str | None:
    try:
        value = Decimal(amount.replace(",", ""))
    except InvalidOperation:
        return None
    from num2words import num2words

    try:
        words = str(num2words(value, lang=language, to="currency", currency=code, separator="|"))
    except (NotImplementedError, KeyError, ValueError, TypeError, InvalidOperation):
        return None
    whole, _, cents = words.partition("|")
    return whole.strip() if value == value.to_integral_value() else f"{whole.strip()},{cents}"


_UNITS: dict[str, dict[str, tuple[str, str] | None]] = {
    "en": {
        "km": ("kilometre", "kilometres"),
        "m": ("metre", "metres"),
        "cm": ("centimetre", "centimetres"),
        "mm": ("millimetre", "millimetres"),
        "kg": ("kilogram", "kilograms"),
        "g": ("gram", "grams"),
        "mg": ("milligram", "milligrams"),
        "lb": ("pound", "pounds"),
        "lbs": ("pound", "pounds"),
        "oz": ("ounce", "ounces"),
        "ft": ("foot", "feet"),
        "in": None,  # "5 in the morning": never a unit
        "mi": ("mile", "miles"),
        "mph": ("mile per hour", "miles per hour"),
        "km/h": ("kilometre per hour", "kilometres per hour"),
        "l": ("litre", "litres"),
        "ml": ("millilitre", "millilitres"),
        "h": ("hour", "hours"),
        "min": ("minute", "minutes"),
        "s": None,
        "°C": ("degree Celsius", "degrees Celsius"),
        "°F": ("degree Fahrenheit", "degrees Fahrenheit"),
    },
    "de": {"km": ("Kilometer", "Kilometer"), "kg": ("Kilogramm", "Kilogramm"), "m": ("Meter", "Meter")},
    "fr": {"km": ("kilomètre", "kilomètres"), "kg": ("kilogramme", "kilogrammes"), "m": ("mètre", "mètres")},
    "es": {"km": ("kilómetro", "kilómetros"), "kg": ("kilogramo", "kilogramos"), "m": ("metro", "metros")},
}
_PERCENT = {"en": "percent", "de": "Prozent", "fr": "pour cent", "es": "por ciento", "it": "per cento"}
_DECIMAL_POINT = {"en": ".", "ja": ".", "zh": ".", "hi": ".", "ko": "."}
_UNSPACED = frozenset({"zh", "ja", "ko"})
"""Where a language writes "3.5" (the others write "3,5")."""

_MONTHS_EN = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_MONTHS = (
    r"(Jan(?:uary|\.)?|Feb(?:ruary|\.)?|Mar(?:ch|\.)?|Apr(?:il|\.)?|May|June?|July?|Aug(?:ust|\.)?"
    r"|Sept?(?:ember|\.)?|Oct(?:ober|\.)?|Nov(?:ember|\.)?|Dec(?:ember|\.)?)"
)
_MONTH_ABBR = {m[:3].lower(): m for m in _MONTHS_EN} | {"sept": "September"}

# --- abbreviations --------------------------------------------------------------------------------------------------
_ABBREVIATIONS = {
    "en": {
        "Mr.": "Mister",
        "Mrs.": "Missus",
        "Messrs.": "Messieurs",
        "Dr.": "Doctor",
        "Prof.": "Professor",
        "Capt.": "Captain",
        "Col.": "Colonel",
        "Gen.": "General",
        "Lt.": "Lieutenant",
        "Sgt.": "Sergeant",
        "Rev.": "Reverend",
        "Hon.": "Honourable",
        "Jr.": "Junior",
        "Sr.": "Senior",
        "Mt.": "Mount",
        "vs.": "versus",
        "etc.": "et cetera",
        "e.g.": "for example",
        "i.e.": "that is",
        "approx.": "approximately",
        "No.": "number",
    },
    "de": {
        "Hr.": "Herr",
        "Fr.": "Frau",
        "Dr.": "Doktor",
        "Prof.": "Professor",
        "Nr.": "Nummer",
        "z.B.": "zum Beispiel",
        "z. B.": "zum Beispiel",
        "d.h.": "das heißt",
        "d. h.": "das heißt",
        "usw.": "und so weiter",
        "bzw.": "beziehungsweise",
        "ca.": "circa",
    },
    "fr": {"M.": "Monsieur", "MM.": "Messieurs", "Mme": "Madame", "Mlle": "Mademoiselle", "Dr": "Docteur"}
    | {"etc.": "et cetera", "p. ex.": "par exemple"},
    "es": {"Sr.": "Señor", "Sra.": "Señora", "Srta.": "Señorita", "Dr.": "Doctor", "Dra.": "Doctora"}
    | {"etc.": "etcétera", "p. ej.": "por ejemplo"},
    "it": {"Sig.": "Signor", "Sig.ra": "Signora", "Dott.": "Dottor", "ecc.": "eccetera"},
}
_ST = re.compile(r"\bSt\.(?=(\s+[A-Z])?)")
"""English "St.": Saint before a name ("St. Paul"), Street after one ("Baker St.")."""

# --- headings -------------------------------------------------------------------------------------------------------
_CHAPTER_WORDS = {
    "en": "chapter|book|part|volume|canto|act|scene|section|letter|stave",
    "de": "kapitel|buch|teil|band",
    "fr": "chapitre|livre|partie|tome|acte|scène",
    "es": "capítulo|libro|parte|tomo|acto|escena",
    "it": "capitolo|libro|parte|atto|scena",
}
_ROMAN = re.compile(r"^(?=[MDCLXVI])M{0,4}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$")
_ROMAN_VALUES = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}

# --- marks left out -------------------------------------------------------------------------------------------------
_PAGE_MARKS = re.compile(r"\s*(?:[\[(](?:Pg|Page|p\.|pg\.?)\s*[\dIVXLCDMivxlcdm]+[\])]|\{\d{1,4}\})")
"""Page marks of digitised books, in square brackets or (as text imports turn unknown brackets) parentheses."""
_FOOTNOTE_MARKS = re.compile(r"(?<=[^\s\[(])(?:[\[(]\d{1,3}[\])]|[¹²³⁴⁵⁶⁷⁸⁹⁰]+|[*†‡]+)(?=[\s.,;:!?)\"”’»]|$)")


def roman_value(text: str) -> int | None:
    """The value of a Roman numeral in capitals ("XLII" → 42), or ``None``."""
    if not text or not _ROMAN.match(text):
        return None
    total = 0
    for char, after in zip(text, text[1:] + " ", strict=True):
        value = _ROMAN_VALUES[char]
        total += -value if after != " " and _ROMAN_VALUES[after] > value else value
    return total


@lru_cache(maxsize=65_536)  # a long book's every segment (about 20,000 per MB of text)
def spoken_form(text: str, language: str | None = "en", kind: str = "sentence") -> str:
    """What ``text`` (a segment's written words) should sound like, for the model; ``kind`` ``heading`` also reads
    Roman numerals and capitals."""
    lang = base_language(language)
    out = spoken_links(text, lang)
    out = _PAGE_MARKS.sub("", out)
    out = _FOOTNOTE_MARKS.sub("", out)
    if kind == "heading":
        out = _heading(out, lang)
    out = _abbreviations(out, lang)
    out = _dates(out, lang)
    out = _money(out, lang)
    out = _numbers(out, lang)
    out = " ".join(out.split())
    return out if any(ch.isalnum() for ch in out) else text


def _heading(text: str, lang: str) -> str:
    words = _CHAPTER_WORDS.get(lang, _CHAPTER_WORDS["en"])
    letters = [c for c in text if c.isalpha()]
    shouting = len(letters) > 3 and all(c.isupper() for c in letters if c.isascii() or c.isalpha())

    def numeral(match: re.Match[str]) -> str:
        value = roman_value(match.group(2))
        if value is None or (value == 1 and match.group(2) == "I" and not match.group(1)):
            return match.group(0)
        return f"{match.group(1) or ''}{_words(value, lang) or match.group(2)}"

    pattern = re.compile(rf"((?i:\b(?:{words}))\s+|^)([MDCLXVI]+)(?=[\s.:—–-]|$)")
    text = pattern.sub(numeral, text)
    if shouting:
        text = re.sub(r"[^\W\d_]{2,}", lambda m: m.group(0).capitalize() if m.group(0).isupper() else m.group(0), text)
        text = re.sub(r"(?<=\w\s)(And|Of|The|A|An|In|On|To|Or|For|At|By|With)\b", lambda m: m.group(0).lower(), text)
    return text


def _abbreviations(text: str, lang: str) -> str:
    if lang == "en":
        text = _ST.sub(lambda m: "Saint" if m.group(1) else "Street", text)
        text = re.sub(r"\bNo\.(?=\s*\d)", "number", text)
    table = _ABBREVIATIONS.get(lang, {})
    if not table:
        return text
    pattern = _abbreviation_pattern(lang)
    return pattern.sub(lambda m: table[m.group(0)] + ("," if m.group(0) in ("e.g.", "i.e.") else ""), text)


@lru_cache(maxsize=16)
def _abbreviation_pattern(lang: str) -> re.Pattern[str]:
    keys = sorted((k for k in _ABBREVIATIONS[lang] if not (lang == "en" and k == "No.")), key=len, reverse=True)
    return re.compile(r"(?<![\w.])(?:" + "|".join(re.escape(k) for k in keys) + r")(?!\w)")


def _dates(text: str, lang: str) -> str:
    if lang != "en":
        return text

    def month(name: str) -> str | None:
        key = name.rstrip(".").lower()
        full = _MONTH_ABBR.get(key[:4] if key.startswith("sept") else key[:3])
        return full if full and (len(key) >= 3) else None

    def year(value: str) -> str:
        return _words(int(value), lang, "year") or value

    def mdy(m: re.Match[str]) -> str:
        name = month(m.group(1))
        if name is None:
            return m.group(0)
        day = _words(int(m.group(2)), lang, "ordinal") or m.group(2)
        return f"{name} {day}" + (f", {year(m.group(3))}" if m.group(3) else "")

    def dmy(m: re.Match[str]) -> str:
        name = month(m.group(2))
        if name is None:
            return m.group(0)
        day = _words(int(m.group(1)), lang, "ordinal") or m.group(1)
        return f"the {day} of {name}" + (f" {year(m.group(3))}" if m.group(3) else "")

    def iso(m: re.Match[str]) -> str:
        y, mo, d = (int(g) for g in m.groups())
        if not (1 <= mo <= 12 and 1 <= d <= 31):
            return m.group(0)
        return f"{_MONTHS_EN[mo - 1]} {_words(d, lang, 'ordinal')}, {year(m.group(1))}"

    months = _MONTHS
    text = re.sub(r"\b(\d{4})-(\d{2})-(\d{2})\b", iso, text)
    text = re.sub(rf"\b{months}\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+(\d{{4}})\b)?", mdy, text)
    return re.sub(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{months}(?:,?\s+(\d{{4}})\b)?", dmy, text)


def _money(text: str, lang: str) -> str:
    def sign(m: re.Match[str]) -> str:
        return _currency(m.group(2), _CURRENCY_SIGNS[m.group(1)], lang) or m.group(0)

    def code(m: re.Match[str]) -> str:
        return _currency(m.group(1), m.group(2), lang) or m.group(0)

    text = re.sub(r"([$£€])\s?(\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?)(?!\d)", sign, text)
    text = re.sub(r"(?<![\w.,])(\d+(?:[.,]\d{1,2})?)\s?€", lambda m: code_eur(m, lang), text)
    return re.sub(r"(?<![\w.,])(\d+(?:\.\d{1,2})?)\s(USD|GBP|EUR)\b", code, text)


def code_eur(m: re.Match[str], lang: str) -> str:
    return _currency(m.group(1).replace(",", "."), "EUR", lang) or m.group(0)


def _numbers(text: str, lang: str) -> str:
    point = _DECIMAL_POINT.get(lang, ",")
    units = _UNITS.get(lang, {})
    unit_names = "|".join(re.escape(u) for u in sorted(units, key=len, reverse=True) if units[u]) or "(?!)"
    percent = _PERCENT.get(lang)

    def ordinal(m: re.Match[str]) -> str:
        return _words(int(m.group(1)), lang, "ordinal") or m.group(0)

    if lang == "en":
        text = re.sub(r"(?<![\w.,])(\d+)(?:st|nd|rd|th)\b", ordinal, text)
        text = re.sub(r"(?<![\w.,:])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])", _clock_en, text)
        text = re.sub(r"(?<![\w.,])(1[1-9]|20)(\d)0s\b", _decade_en, text)
        text = re.sub(r"(?<=\d)\s?[-–]\s?(?=\d)", " to ", text)  # pages 10-12, the years 1851–1852
    elif lang == "fr":
        text = re.sub(r"(?<![\w.,])(\d+)(?:er|re|e|ème)\b", ordinal, text)

    thousands = r"\d{1,3}(?:,\d{3})+" if lang == "en" else r"\d{1,3}(?:[.\u00a0\u202f ]\d{3})+(?!\d)"
    # Chinese and Japanese write no spaces, and Korean joins its counters to the number (3마리): there a number
    # stands against any letter but a Latin one (R2D2 stays as it is).
    letter = "0-9A-Za-z_" if lang in _UNSPACED else r"\w"
    number = re.compile(
        rf"(?<![{letter}.,:])(-?)({thousands}|\d+)(?:{re.escape(point)}(\d+))?(?![{letter}\d]|:\d)"
        rf"(\s?%|\s?(?:{unit_names})(?![\w/]))?"
    )

    def replace(m: re.Match[str]) -> str:
        sign, whole, fraction, after = m.group(1), m.group(2), m.group(3), m.group(4) or ""
        digits = re.sub(r"\D", "", whole)
        if len(digits) > 15:
            return m.group(0)
        value: int | Decimal = int(digits)
        is_year = (
            lang == "en"
            and not sign
            and fraction is None
            and re.fullmatch(r"1[1-9]\d\d|20\d\d", whole) is not None
            and not after.strip()
        )
        if fraction is not None:
            value = Decimal(f"{digits}.{fraction}")
        if sign:
            value = -value
        said = _words(int(value) if is_year else value, lang, "year" if is_year else "cardinal")
        if said is None:
            return m.group(0)
        tail = after
        unit = after.strip()
        if unit == "%" and percent:
            tail = f" {percent}"
        elif (forms := units.get(unit)) is not None:
            singular, plural = forms
            tail = f" {singular if value == 1 else plural}"
        return f"{said}{tail}"

    return number.sub(replace, text)


def _clock_en(m: re.Match[str]) -> str:
    hour, minute = int(m.group(1)), int(m.group(2))
    said = _words(hour, "en") or m.group(1)
    if minute == 0:
        return f"{said} o'clock"
    return f"{said} {'oh ' if minute < 10 else ''}{_words(minute, 'en') or m.group(2)}"


def _decade_en(m: re.Match[str]) -> str:
    """1850s → eighteen fifties, 1900s → nineteen hundreds."""
    century, tens = int(m.group(1)), int(m.group(2))
    if tens == 0:
        return f"{_words(century, 'en')} hundreds" if century != 20 else "two thousands"
    words = f"{_words(century, 'en')} {_words(tens * 10, 'en')}"
    return words[:-1] + "ies" if words.endswith("y") else words + "s"


# --- the project's lexicon ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LexiconEntry:
    spoken: str
    match_case: bool = False


def apply_lexicon(text: str, lexicon: dict[str, LexiconEntry]) -> str:
    """``text`` with every whole-word occurrence of a lexicon word replaced by its spoken form (case-sensitive only
    for entries with ``match_case``; an exact-case entry wins over a case-free one for the same word)."""
    if not lexicon:
        return text
    pattern, exact, folded = _lexicon_pattern(tuple(sorted((w, e.spoken, e.match_case) for w, e in lexicon.items())))

    def replace(m: re.Match[str]) -> str:
        word = m.group(0)
        if word in exact:
            return exact[word]
        return folded.get(word.casefold(), word)

    return pattern.sub(replace, text)


@lru_cache(maxsize=64)
def _lexicon_pattern(entries: tuple[tuple[str, str, bool], ...]):
    words = sorted({w for w, _, _ in entries}, key=len, reverse=True)
    alternatives = "|".join(re.escape(w) for w in words)
    pattern = re.compile(rf"(?<![\w])(?:{alternatives})(?![\w])", re.IGNORECASE)
    exact = {w: s for w, s, case in entries if case}
    folded = {w.casefold(): s for w, s, case in entries if not case}
    return pattern, exact, folded


def affected_by(text: str, word: str, match_case: bool) -> bool:
    """Whether a lexicon entry for ``word`` applies anywhere in ``text``."""
    flags = 0 if match_case else re.IGNORECASE
    return re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text, flags) is not None
