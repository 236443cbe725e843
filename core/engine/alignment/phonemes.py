"""Pronunciations for the aligner: espeak-ng's phonemes mapped onto the phone set of pocketsphinx's US English model.

espeak-ng (a system program, not a Python package) pronounces a word in any of its ~100 languages as IPA. The
aligner has only one acoustic model, pocketsphinx's US English one, whose phones are the 39 of ARPAbet (CMU
dictionary). Each IPA sound is mapped to the nearest of them (:data:`IPA_TO_ARPABET`): French ``ʁ`` becomes ``HH``,
German ``ç`` ``SH``, French ``ɛ̃`` ``AE``. The phones are only approximate for other languages, but the
words are known, so the alignment only needs phones close enough to tell one word's sounds from the next one's.

Words are sent to espeak-ng one per paragraph, which it reads as separate clauses: each output line holds that
word's phonemes alone (in running text espeak-ng joins "of the" into one word). Pronunciations are remembered per
language. Without espeak-ng, :func:`letters_to_phones` gives a crude English reading from the spelling.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import threading
import unicodedata
from collections.abc import Sequence

log = logging.getLogger(__name__)

ESPEAK = "espeak-ng"
ESPEAK_VOICES = {"en": "en-us", "zh": "cmn", "no": "nb"}
"""Language codes whose espeak-ng voice has another name; every other code is its own voice (``fr``, ``de``…)."""
ESPEAK_TIMEOUT_S = 30.0
CACHE_LIMIT = 200_000
"""Pronunciations remembered, all languages together (a long book's vocabulary is 20,000 words; a few MB each 100,000);
past it the memory starts afresh."""

_VOWELS = ("AA", "AE", "AH", "AO", "AW", "AY", "EH", "ER", "EY", "IH", "IY", "OW", "OY", "UH", "UW")
_CONSONANTS = frozenset(
    ("B", "CH", "D", "DH", "F", "G", "HH", "JH", "K", "L", "M", "N", "NG", "P", "R", "S", "SH", "T", "TH", "V", "W")
    + ("Y", "Z", "ZH")
)
ARPABET = frozenset(_VOWELS) | _CONSONANTS
"""The phones of pocketsphinx's US English acoustic model (besides silence)."""

IPA_TO_ARPABET: dict[str, tuple[str, ...]] = {
    # diphthongs and affricates first: the longest match wins
    "aɪə": ("AY", "ER"),
    "aɪ": ("AY",),
    "ai": ("AY",),
    "aʊ": ("AW",),
    "au": ("AW",),
    "ɑʊ": ("AW",),
    "ʌʊ": ("AW",),
    "ɔɪ": ("OY",),
    "ɔʏ": ("OY",),
    "ɔø": ("OY",),
    "oɪ": ("OY",),
    "eɪ": ("EY",),
    "ɛɪ": ("EY",),
    "ei": ("EY",),
    "oʊ": ("OW",),
    "əʊ": ("OW",),
    "ou": ("OW",),
    "œy": ("OY",),
    "ɪə": ("IH", "AH"),
    "eə": ("EH", "R"),
    "ʊə": ("UH", "R"),
    "ɛ̃": ("AE",),
    "œ̃": ("AE",),
    "ɑ̃": ("AO",),
    "ɔ̃": ("OW",),
    "tʃ": ("CH",),
    "tɕ": ("CH",),
    "ʈʂ": ("CH",),
    "dʒ": ("JH",),
    "dʑ": ("JH",),
    "ɖʐ": ("JH",),
    "ts": ("T", "S"),
    "dz": ("D", "Z"),
    "pf": ("P", "F"),
    # vowels
    "i": ("IY",),
    "ɪ": ("IH",),
    "ᵻ": ("IH",),
    "ɨ": ("IH",),
    "y": ("IY",),
    "ʏ": ("UH",),
    "e": ("EY",),
    "ɛ": ("EH",),
    "æ": ("AE",),
    "a": ("AA",),
    "ä": ("AA",),
    "ɑ": ("AA",),
    "ɒ": ("AA",),
    "ɐ": ("AH",),
    "ə": ("AH",),
    "ɘ": ("AH",),
    "ε": ("EH",),
    "ɵ": ("AH",),
    "ɤ": ("AH",),
    "ʌ": ("AH",),
    "ɚ": ("ER",),
    "ɝ": ("ER",),
    "ɜ": ("ER",),
    "ø": ("ER",),
    "œ": ("ER",),
    "ɶ": ("AE",),
    "ɔ": ("AO",),
    "o": ("OW",),
    "ʊ": ("UH",),
    "u": ("UW",),
    "ɯ": ("UW",),
    "ʉ": ("UW",),
    # consonants
    "p": ("P",),
    "b": ("B",),
    "t": ("T",),
    "d": ("D",),
    "ʈ": ("T",),
    "ɖ": ("D",),
    "c": ("K",),
    "ɟ": ("G",),
    "k": ("K",),
    "g": ("G",),
    "ɡ": ("G",),
    "q": ("K",),
    "ɢ": ("G",),
    "m": ("M",),
    "ɱ": ("M",),
    "n": ("N",),
    "ɳ": ("N",),
    "ɲ": ("N", "Y"),
    "ŋ": ("NG",),
    "ɴ": ("NG",),
    "f": ("F",),
    "v": ("V",),
    "ɸ": ("F",),
    "β": ("V",),
    "ʋ": ("V",),
    "θ": ("TH",),
    "ð": ("DH",),
    "s": ("S",),
    "z": ("Z",),
    "ʃ": ("SH",),
    "ʒ": ("ZH",),
    "ʂ": ("SH",),
    "ʐ": ("ZH",),
    "ɕ": ("SH",),
    "ʑ": ("ZH",),
    "ç": ("SH",),
    "ʝ": ("Y",),
    "x": ("HH",),
    "ɣ": ("G",),
    "χ": ("HH",),
    "ʁ": ("HH",),
    "ħ": ("HH",),
    "ʕ": ("HH",),
    "h": ("HH",),
    "ɦ": ("HH",),
    "r": ("R",),
    "ɾ": ("R",),
    "ɹ": ("R",),
    "ɻ": ("R",),
    "ʀ": ("R",),
    "ɽ": ("D",),
    "l": ("L",),
    "ɫ": ("L",),
    "ɭ": ("L",),
    "ɬ": ("SH",),
    "ɮ": ("ZH",),
    "ʎ": ("L", "Y"),
    "ʟ": ("L",),
    "j": ("Y",),
    "w": ("W",),
    "ɥ": ("W",),
    "ɰ": ("W",),
}
"""Each IPA sound espeak-ng writes, as the nearest US English phones. Marks of stress, length, tone, syllables and
nasality are dropped (they are read with the sound they follow). Where the nearest was not plain, the choice was
measured on espeak-ng's French and German speech (how much worse than a free loop of phones the right words fit):
``ʁ`` as ``HH`` rather than ``R`` (95th percentile 3.1 rather than 3.6, boundaries 22 rather than 43 ms at the 95th
percentile), the French nasal vowels as the oral vowels they are said with today (``ɛ̃`` ``AE``: "train" fit at 3.9
rather than 6.1 as ``EH``), ``y`` as ``IY`` (fewer words of another sentence fit)."""
LANGUAGE_PHONES: dict[str, dict[str, tuple[str, ...]]] = {"en": {"ɾ": ("D",)}, "de": {"??": ("UH", "R")}}
"""Where a language's sound is nearer another phone: the English flap of "water" is a D, the Spanish tap an R.
espeak-ng 1.51 writes German ``UR`` ("durch", "Burg") as ``??``, having no IPA for it."""
_LONGEST = max(len(key) for key in IPA_TO_ARPABET)
_LANGUAGE_SWITCH = re.compile(r"\([a-z]{2,3}(?:-[a-z0-9]+)*\)")
"""espeak-ng marks a word it reads in another language: ``(en)tˈɛst(ko)``."""
_IGNORED = frozenset("ˈˌːˑ.‿-_|‖'ʔʲʰʷˠˤ?0123456789\u200d\u0361\u035c")

_cache: dict[tuple[str, str], tuple[str, ...]] = {}
_cache_lock = threading.Lock()


def espeak_available() -> bool:
    """Whether the espeak-ng program is on the PATH."""
    return shutil.which(ESPEAK) is not None


def espeak_voice(language: str) -> str:
    """The espeak-ng voice for a language code (``en`` → ``en-us``, ``fr`` → ``fr``)."""
    code = language.strip().lower().replace("_", "-")
    return ESPEAK_VOICES.get(code, code)


def ipa_to_arpabet(ipa: str, language: str = "") -> tuple[str, ...]:
    """The US English phones nearest to an IPA string (``"həlˈoʊ"`` → ``HH AH L OW``); unknown symbols are skipped.
    ``language`` chooses the nearer phone where :data:`LANGUAGE_PHONES` has one."""
    table = IPA_TO_ARPABET
    override = LANGUAGE_PHONES.get(language.split("-")[0])
    if override:
        table = {**IPA_TO_ARPABET, **override}
    text = unicodedata.normalize("NFC", _LANGUAGE_SWITCH.sub("", ipa))
    phones: list[str] = []
    at = 0
    while at < len(text):
        for size in range(min(_LONGEST, len(text) - at), 0, -1):
            mapped = table.get(text[at : at + size])
            if mapped is not None:
                phones.extend(mapped)
                at += size
                break
        else:
            char = text[at]
            base = unicodedata.normalize("NFD", char)[0]  # a letter with a mark espeak-ng rarely writes: its letter
            if base != char and base in table:
                phones.extend(table[base])
            elif not (char in _IGNORED or char.isspace() or unicodedata.combining(char)):
                log.debug("no English phone for %r (U+%04X)", char, ord(char))
            at += 1
    return tuple(_merge_repeats(phones))


def _merge_repeats(phones: list[str]) -> list[str]:
    """Geminates (Italian ``tt``, a long consonant written twice) are one phone, held longer."""
    merged: list[str] = []
    for phone in phones:
        if not merged or merged[-1] != phone or phone not in _CONSONANTS:
            merged.append(phone)
    return merged


def pronounce(words: Sequence[str], language: str) -> list[tuple[str, ...]]:
    """Each word's phones as espeak-ng speaks it in ``language`` (an empty tuple for a word it does not pronounce).

    Raises :class:`ValueError` when espeak-ng has no voice for the language, :class:`OSError` when it is missing or
    fails, :class:`subprocess.TimeoutExpired` when it hangs."""
    voice = espeak_voice(language)
    with _cache_lock:
        missing = sorted({w for w in words if (voice, w) not in _cache})
    if missing:
        found = _espeak_ipa(missing, voice)
        with _cache_lock:
            if len(_cache) + len(found) > CACHE_LIMIT:
                _cache.clear()
            for word, ipa in zip(missing, found):
                _cache[(voice, word)] = ipa_to_arpabet(ipa, language)
    with _cache_lock:
        return [_cache.get((voice, w), ()) for w in words]


def _espeak_ipa(words: Sequence[str], voice: str) -> list[str]:
    """One line of IPA per word, from one espeak-ng run (one run per word where lines do not come back one each)."""
    lines = _run_espeak("\n\n".join(words), voice)  # a paragraph each: espeak-ng joins words of one line
    if len(lines) == len(words):
        return lines
    log.debug("espeak-ng gave %d lines for %d words; asking word by word", len(lines), len(words))
    return [" ".join(_run_espeak(word, voice)) for word in words]


def _run_espeak(text: str, voice: str) -> list[str]:
    program = shutil.which(ESPEAK)
    if program is None:
        raise FileNotFoundError(ESPEAK)
    done = subprocess.run(
        [program, "-q", "--ipa", "-v", voice, "--stdin"],
        input=text,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=ESPEAK_TIMEOUT_S,
        check=False,
    )
    if "voice does not exist" in done.stderr:
        raise ValueError(f"espeak-ng has no voice {voice!r}")
    if done.returncode != 0:
        raise OSError(f"espeak-ng failed ({done.returncode}): {done.stderr.strip()[:200]}")
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


_LETTER_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tch", ("CH",)),
    ("sch", ("SH",)),
    ("th", ("TH",)),
    ("sh", ("SH",)),
    ("ch", ("CH",)),
    ("ph", ("F",)),
    ("wh", ("W",)),
    ("ng", ("NG",)),
    ("ck", ("K",)),
    ("qu", ("K", "W")),
    ("ee", ("IY",)),
    ("ea", ("IY",)),
    ("oo", ("UW",)),
    ("ou", ("AW",)),
    ("ow", ("OW",)),
    ("oi", ("OY",)),
    ("oy", ("OY",)),
    ("ai", ("EY",)),
    ("ay", ("EY",)),
    ("au", ("AO",)),
    ("aw", ("AO",)),
    ("a", ("AE",)),
    ("b", ("B",)),
    ("c", ("K",)),
    ("d", ("D",)),
    ("e", ("EH",)),
    ("f", ("F",)),
    ("g", ("G",)),
    ("h", ("HH",)),
    ("i", ("IH",)),
    ("j", ("JH",)),
    ("k", ("K",)),
    ("l", ("L",)),
    ("m", ("M",)),
    ("n", ("N",)),
    ("o", ("AA",)),
    ("p", ("P",)),
    ("q", ("K",)),
    ("r", ("R",)),
    ("s", ("S",)),
    ("t", ("T",)),
    ("u", ("AH",)),
    ("v", ("V",)),
    ("w", ("W",)),
    ("x", ("K", "S")),
    ("y", ("IY",)),
    ("z", ("Z",)),
)
"""Letters to phones, the crudest English reading: only for words the dictionary lacks when espeak-ng is missing."""


def letters_to_phones(word: str) -> tuple[str, ...]:
    """A rough English pronunciation from the spelling alone (``"zorblat"`` → ``Z AA R B L AE T``); digits and letters
    outside a–z give nothing."""
    text = unicodedata.normalize("NFKD", word.lower()).encode("ascii", "ignore").decode()
    if len(text) > 2 and text.endswith("e") and text[-2] not in "aeiouy":
        text = text[:-1]  # a silent final e
    phones: list[str] = []
    at = 0
    while at < len(text):
        for letters, sounds in _LETTER_RULES:
            if text.startswith(letters, at):
                phones.extend(sounds)
                at += len(letters)
                break
        else:
            at += 1
    return tuple(_merge_repeats(phones))
