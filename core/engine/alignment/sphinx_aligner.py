"""Forced alignment with pocketsphinx: the text's words placed in the audio by its US English acoustic model.

The ``pocketsphinx`` wheel (5.x) carries the acoustic model and the CMU pronouncing dictionary. English words come
from the dictionary; words it lacks, and every word of another language, are pronounced by espeak-ng
(:mod:`core.engine.alignment.phonemes`). The audio is resampled to 16 kHz, given a fixed, seeded noise floor
(digital silence breaks pocketsphinx's features) and a short pause at each end, and decoded twice:

1. *placing*: the words in order, with optional pauses between them (``set_align_text``). Where the text cannot
   be fitted to the audio at all (a take cut short), a grammar that may skip words is decoded instead.
2. *checking*: a free loop of the model's phones over the same audio, the best any sequence of sounds does.

A word is placed only when its sounds fit about as well as the free loop does over the same frames: a word whose
frames fit much worse on average (:data:`MAX_WORD_COST`) was not heard there, however the alignment had to stretch
it over the audio. Both passes score every senone in every frame (``compallsen``), so their scores are comparable.
A recording of other words than its text thus gets a low share of words placed instead of invented times.

Long words are aligned as parts of a few phones each (:data:`PART_PHONES`): pocketsphinx's Python interface gives a
word's score as a probability, which underflows to zero beyond a second or so of speech.

Decoders take 0.01–0.1 s to make and are not thread-safe: one per dictionary (English, or one per other language)
is kept, and a lock lets one alignment through at a time.
"""

from __future__ import annotations

import logging
import math
import subprocess
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.engine.alignment.errors import AlignmentError
from core.engine.alignment.phonemes import ARPABET, espeak_available, letters_to_phones, pronounce
from core.engine.alignment.words import Placed, word_key

log = logging.getLogger(__name__)

RATE = 16_000
"""The sample rate of pocketsphinx's acoustic model."""
FRAME_S = 0.01
"""pocketsphinx's frame step."""
FRAME_CENTRE_S = 0.008
"""A frame's window (25.6 ms) is centred 12.8 ms after its start; the boundary between two frames lies half a step
before that centre. Times are given at that boundary."""
PAD_S = 0.25
"""Pause added before and after the audio: the decoder then always ends in a pause (its last segment's score is
not reported right) and never starts a word in the first frame."""
LEVEL = 0.5
"""The audio's peak is brought to this level first, so that the noise floor lies at the same depth below every
recording's speech."""
NOISE_FLOORS = (5e-3, 2e-2)
"""Standard deviations of the seeded noise added to the audio (its peak at :data:`LEVEL`), tried in turn until the
words fit. Exact zeros make pocketsphinx's log energy of nothing swamp the rest. The lower floor places words best
(p95 error 24 ms on the tests' English recordings, 51 ms at 1e-2), but with pauses that quiet the utterance's
cepstral mean can lie so far below its speech that no sound of the model fits some words (German "Österreich" after
a pause: no alignment at 1e-3 or 5e-3, placed right from 1e-2 on)."""
BEAM = 1e-100
"""Beams of the search (the defaults are 1e-48): the defaults lose the only path through a text of a language whose
phones fit the English model loosely; 1e-200 still works but costs a third more time."""
DECODER_OPTIONS: dict[str, Any] = {
    "silprob": 0.5,
    "compallsen": True,
    "beam": BEAM,
    "pbeam": BEAM,
    "wbeam": 1e-80,
    "loglevel": "FATAL",
}
"""``silprob``: a pause between words is likely (the default 0.005 lets words swallow the pauses around them: p95
error 210 ms on the tests' recordings, 44 ms with 0.5). ``compallsen``: every senone is scored in every frame, so
the placing and the checking pass score frames alike."""
MAX_WORD_COST = {"en": 3.0, "other": 4.5}
"""How much worse, on average, a placed word's frames may fit than the free phone loop's (natural log per frame),
for English (the dictionary's own pronunciations) and other languages (espeak-ng's, mapped to English phones: the
right words fit worse, and are let through further). On four recordings per language like the tests', 98.6 %
(English), 98.1 % (French) and 100 % (German) of the right words fit within these; of the words of another sentence
forced onto the same audio, 30 %, 28 % and 47 %."""
ALONE_COST = {"en": 0.5, "other": 1.5}
"""A word that fits within :data:`MAX_WORD_COST` but whose neighbours do not is placed only if it fits this well:
the words of another text fit here and there by chance, those of the right text one after another. With runs of
:data:`RUN` words, another sentence's words placed fall to 17 % (English), 26 % (French) and 33 % (German), the
right sentence's stay placed as before, and of the right words around three replaced, missing or added ones 93 %,
98 % and 99 % stay placed (of the three, 7 %, 4 % and 13 %)."""
RUN = 3
"""Consecutive words that fit within :data:`MAX_WORD_COST` and so support each other; a text of fewer words needs
only that."""
SILENT_DB = -45.0
"""A frame this far below the recording's loudest is silent: a placed word's silent frames at its edges are cut off
(the last word of a sentence otherwise takes the pause after it into its final stop)."""
PART_PHONES = 6
"""Longest part a word is aligned in, in phones."""
SKIP_PROBABILITY = 1e-4
"""Where the words cannot be fitted in order: the probability of a word missing from the audio, and of the audio
beginning or ending at a word of the text. Smaller ones put the paths that skip beyond the search's beam."""
PREFIX_S = 2.5
PREFIX_WORDS = 2
"""Where the words cannot be fitted in order, the search in which any may be missing runs on the whole audio only
when this many of them are found, in order, in its first :data:`PREFIX_S` seconds. On a stand-in's tones that
search took 2.83 of 4.2 s of a 6.5 s take's alignment, and 1.0 s in all with this test first; on speech with a
phrase cut out (or its start, or its end) the same words are placed, for 0.4 s more."""
LOOP_EXIT = 0.05
"""The phone loop's probability of ending after a phone."""
INSTALL = "pip install 'pocketsphinx>=5'"
_NOT_WORDS = ("<s>", "</s>", "<sil>")

LOOP_OPTIONS: dict[str, Any] = {"compallsen": True, "wbeam": 1e-10, "dict": None, "loglevel": "FATAL"}
"""The phone loop's decoder. Its scores are only right through the best path of its lattice (``bestpath``), which
grows with the square of the audio's length and of the phones that end in each frame: the word beam keeps fewer
of those (1e-10: 0.65 s for 13 s of audio, 25 s with the default 7e-29), and :data:`LOOP_CHUNK_S` the length."""
LOOP_CHUNK_S = 2.5
"""The phone loop is decoded in pieces of about this length, cut at the quietest frame within a second of each point
(so 1.5–3.5 s long). The best path of each costs more than its search: for 13 s of audio the loop took 1.00 s in
5 s pieces and 0.84 s in these, with the tests' recordings' words placed as before (right text 99.3 → 100 %,
another sentence's 22.4 %); 1.5 s pieces (0.75 s) let another sentence's words through in one recording (31 %
instead of none)."""

DecoderFactory = Callable[[str], Any]
"""Makes a decoder: ``"en"`` with the CMU dictionary, ``"other"`` with an empty one, ``"loop"`` for the phone loop."""


def _make_decoder(kind: str) -> Any:
    try:
        from pocketsphinx import Decoder
    except ImportError as exc:
        raise AlignmentError("align.not_installed", package="pocketsphinx", install=INSTALL) from exc
    if kind == "loop":
        decoder = Decoder(lm=None, **LOOP_OPTIONS)
        for phone in sorted(ARPABET):
            decoder.add_word(f"#{phone}", phone, False)
        each = (1.0 - LOOP_EXIT) / len(ARPABET)
        transitions = [(0, 0, each, f"#{phone}") for phone in sorted(ARPABET)]
        decoder.add_fsg("loop", decoder.create_fsg("loop", 0, 1, [*transitions, (0, 1, LOOP_EXIT)]))
        decoder.activate_search("loop")
        return decoder
    options = dict(DECODER_OPTIONS)
    if kind != "en":
        options["dict"] = None
    return Decoder(lm=None, **options)


@dataclass
class _Dictionary:
    """A decoder and what this aligner added to it: one per dictionary."""

    decoder: Any
    english: bool
    added: dict[str, tuple[str, ...]]
    """Entry name → the part names it is aligned as (one part, itself, for a short word)."""


class SphinxAligner:
    """Places a text's words in its audio with pocketsphinx (English, and every language espeak-ng speaks)."""

    name = "pocketsphinx"

    def __init__(self, make_decoder: DecoderFactory | None = None, max_word_cost: float | None = None) -> None:
        """``make_decoder`` stands in for pocketsphinx (tests); ``max_word_cost`` overrides :data:`MAX_WORD_COST`."""
        self._make_decoder = make_decoder or _make_decoder
        self._max_word_cost = max_word_cost
        self._dictionaries: dict[str, _Dictionary] = {}
        self._loop: Any = None
        self._lock = threading.Lock()

    def place(
        self, audio: np.ndarray, sample_rate: int, words: Sequence[str], language: str = "en"
    ) -> list[Placed | None]:
        """Each word's place in ``audio`` (mono float32 at ``sample_rate``), ``None`` for a word not heard. A placed
        word's ``cost`` is how much worse than the free phone loop its frames fit (natural log per frame)."""
        if not words:
            return []
        samples, loudness = _prepare(audio, sample_rate)
        english = _base(language) == "en"
        with self._lock:
            dictionary = self._dictionary("en" if english else language.lower(), english)
            entries = self._entries(dictionary, words, language)
            included = [index for index, entry in enumerate(entries) if entry is not None]
            if not included or not samples.size:
                return [None] * len(words)
            parts = [dictionary.added.get(entry, (entry,)) for entry in (entries[i] or "" for i in included)]
            spans, pcm = _place_parts(dictionary.decoder, samples, parts)
            if self._loop is None:
                self._loop = self._make_decoder("loop")
            loop = _loop_scores(self._loop, pcm) if spans is not None else None
        placed: list[Placed | None] = [None] * len(words)
        if spans is None or loop is None:
            log.info("pocketsphinx placed none of %d words in %.1f s", len(included), samples.size / RATE - 2 * PAD_S)
            return placed
        fits: list[tuple[int, int, float] | None] = []
        for span in spans:
            heard = _heard(loudness, span[0], span[1]) if span is not None else None
            if span is None or heard is None:
                fits.append(None)
                continue
            first, last, score = span
            cost = (float(loop[first : last + 1].sum()) - score) / (last - first + 1)
            fits.append((heard[0], heard[1], cost))
        kind = "en" if english else "other"
        loose = self._max_word_cost if self._max_word_cost is not None else MAX_WORD_COST[kind]
        alone = min(ALONE_COST[kind], loose)
        for index, fit, keep in zip(included, fits, _supported([f[2] if f else None for f in fits], loose, alone)):
            if fit is not None and keep:
                first, last, cost = fit
                start = first * FRAME_S + FRAME_CENTRE_S - PAD_S
                placed[index] = Placed(max(start, 0.0), (last + 1) * FRAME_S + FRAME_CENTRE_S - PAD_S, cost)
        return placed

    def _dictionary(self, key: str, english: bool) -> _Dictionary:
        dictionary = self._dictionaries.get(key)
        if dictionary is None:
            decoder = self._make_decoder("en" if english else "other")
            dictionary = self._dictionaries[key] = _Dictionary(decoder, english, {})
        return dictionary

    def _entries(self, dictionary: _Dictionary, words: Sequence[str], language: str) -> list[str | None]:
        """Each word's dictionary entry (added where it is missing), ``None`` for a word nothing can pronounce."""
        decoder, added = dictionary.decoder, dictionary.added
        keys = [_entry_name(word_key(word)) for word in words]

        def known(name: str) -> bool:
            return name in added or (dictionary.english and decoder.lookup_word(name) is not None)

        missing = sorted({name for name in keys if name and not known(name)})
        if missing:
            for name, phones in zip(missing, self._pronounce(missing, language, dictionary.english)):
                if phones and all(phone in ARPABET for phone in phones):
                    added[name] = _add(decoder, name, phones)
        for name in {name for name in keys if name and name not in added and known(name)}:
            listed = tuple(str(decoder.lookup_word(name)).split())  # the dictionary's; long ones go in parts too
            if len(listed) > PART_PHONES:
                added[name] = _add(decoder, name, listed)
        return [name if name and known(name) else None for name in keys]

    def _pronounce(self, words: list[str], language: str, english: bool) -> list[tuple[str, ...]]:
        if espeak_available():
            try:
                return pronounce(words, language)
            except ValueError as exc:
                raise AlignmentError("align.language", language=language, reason="espeak_voice") from exc
            except (OSError, subprocess.SubprocessError) as exc:  # it vanished, or hung (TimeoutExpired)
                if not english:
                    raise AlignmentError("align.language", language=language, reason="espeak_failed") from exc
                log.warning("espeak-ng failed (%s); spelling out %d words", exc, len(words))
        elif not english:
            raise AlignmentError("align.language", language=language, reason="no_espeak")
        return [letters_to_phones(word) for word in words]


def _base(language: str) -> str:
    return language.lower().replace("_", "-").split("-")[0]


def _entry_name(key: str) -> str:
    """A dictionary entry's name: pocketsphinx reads ``(2)`` as a variant and splits the aligned text at spaces."""
    return "".join(char for char in key if not char.isspace() and char not in "()<>#")


def _add(decoder: Any, name: str, phones: tuple[str, ...]) -> tuple[str, ...]:
    """Adds a word to the dictionary, a long word as parts of at most :data:`PART_PHONES` phones (``name#1``…; a
    word already in the dictionary only as parts)."""
    count = math.ceil(len(phones) / PART_PHONES)
    if count <= 1:
        decoder.add_word(name, " ".join(phones), False)
        return (name,)
    size = math.ceil(len(phones) / count)
    parts = []
    for number in range(count):
        part = f"{name}#{number + 1}"
        decoder.add_word(part, " ".join(phones[number * size : (number + 1) * size]), False)
        parts.append(part)
    return tuple(parts)


def _place_parts(
    decoder: Any, samples: np.ndarray, parts: list[tuple[str, ...]]
) -> tuple[list[tuple[int, int, float] | None] | None, bytes]:
    """For each word (its parts), its first and last frame and its score (natural log), ``None`` for a word the
    decoder skipped, or ``None`` in all when nothing could be placed; and the audio as it was decoded."""
    names = [name for word in parts for name in word]
    segments = None
    for floor in NOISE_FLOORS:
        pcm = _with_noise(samples, floor)
        segments = _decode_text(decoder, pcm, names)
        if segments is not None:
            break
    else:
        pcm = _with_noise(samples, NOISE_FLOORS[0])
        if not _speaks_some(decoder, pcm, parts):
            return None, pcm
        segments = _decode_skipping(decoder, pcm, parts)
        if segments is None:
            return None, pcm
    spans: list[tuple[int, int, float] | None] = []
    at = 0
    for word in parts:
        found = segments[at : at + len(word)]
        if [name for name, *_ in found] == list(word):
            spans.append((found[0][1], found[-1][2], sum(score for *_, score in found)))
            at += len(word)
        else:
            spans.append(None)
    return spans, pcm


def _decode_text(decoder: Any, pcm: bytes, names: list[str]) -> list[tuple[str, int, int, float]] | None:
    """The segments of the words aligned in order, ``None`` when they cannot be fitted to the audio."""
    try:
        decoder.set_align_text(" ".join(names))
        _decode(decoder, pcm)
    except RuntimeError as exc:
        log.info("pocketsphinx could not align: %s", exc)
        return None
    segments = _segments(decoder)
    if segments is None or [name for name, *_ in segments] != names:
        return None
    return segments


def _speaks_some(decoder: Any, pcm: bytes, parts: list[tuple[str, ...]]) -> bool:
    """Whether the audio's first :data:`PREFIX_S` hold :data:`PREFIX_WORDS` of the text's words in order (the
    skipping grammar on that piece alone): the whole audio is searched that way only then. On sounds no word fits
    (a model's noise) that search prunes nothing and costs several times the rest of the alignment."""
    size = int(PREFIX_S * RATE) * 2  # 16-bit samples
    if len(pcm) <= 2 * size:
        return True  # short: the whole search costs little more
    segments = _decode_skipping(decoder, pcm[:size], parts)
    return segments is not None and len(segments) >= PREFIX_WORDS


def _decode_skipping(
    decoder: Any, pcm: bytes, parts: list[tuple[str, ...]]
) -> list[tuple[str, int, int, float]] | None:
    """The words in order through a grammar in which any word may be missing, and the audio may begin or end anywhere
    in the text (a take cut short, a skipped phrase)."""
    transitions: list[tuple[int, int, float] | tuple[int, int, float, str]] = []
    starts = []
    state = 0
    for word in parts:
        starts.append(state)
        for name in word:
            transitions.append((state, state + 1, 1.0, name))
            state += 1
        transitions.append((starts[-1], state, SKIP_PROBABILITY))
    final = state
    transitions += [(0, start, SKIP_PROBABILITY) for start in starts[1:]]
    transitions += [(start, final, SKIP_PROBABILITY) for start in starts[1:]]
    try:
        grammar = decoder.create_fsg("skipping", 0, final, transitions)
        decoder.add_fsg("skipping", grammar)
        decoder.activate_search("skipping")
        _decode(decoder, pcm)
    except (RuntimeError, ValueError) as exc:
        log.info("pocketsphinx could not align skipping words: %s", exc)
        return None
    return _segments(decoder)


def _segments(decoder: Any) -> list[tuple[str, int, int, float]] | None:
    if decoder.hyp() is None:
        return None
    found = []
    for segment in decoder.seg():
        if segment.word in _NOT_WORDS or segment.word.startswith(("+", "[")):
            continue
        probability = float(segment.ascore)
        score = math.log(probability) if probability > 0 else -math.inf
        found.append((_base_name(segment.word), int(segment.start_frame), int(segment.end_frame), score))
    return found


def _loop_scores(decoder: Any, pcm: bytes) -> np.ndarray | None:
    """Each frame's score (natural log) on the best path through a free loop of the model's phones."""
    frame_bytes = int(RATE * FRAME_S) * 2
    frames = np.full(len(pcm) // frame_bytes + 2, np.nan)
    for first, last in _chunks(pcm):
        try:
            _decode(decoder, pcm[first * frame_bytes : last * frame_bytes])
            found = decoder.hyp() is not None
        except RuntimeError as exc:
            log.info("pocketsphinx could not decode the phone loop: %s", exc)
            found = False
        if not found:
            continue
        for segment in decoder.seg():
            start, end = first + int(segment.start_frame), first + int(segment.end_frame)
            probability = float(segment.ascore)
            if probability > 0 and end >= start:
                frames[start : end + 1] = math.log(probability) / (end - start + 1)
    known = frames[np.isfinite(frames)]
    if not known.size:
        return None
    frames[~np.isfinite(frames)] = float(np.median(known))  # a segment whose score underflowed: a usual frame
    return frames


def _chunks(pcm: bytes) -> list[tuple[int, int]]:
    """The audio's frames in pieces of about :data:`LOOP_CHUNK_S`, each cut at the quietest frame within a second of
    its mark (a pause, where one is near)."""
    step = int(RATE * FRAME_S)
    samples = np.frombuffer(pcm, dtype="<i2")
    count = samples.size // step
    if count == 0:
        return []
    energy = (samples[: count * step].astype(np.float32).reshape(count, step) ** 2).sum(axis=1)
    size = int(LOOP_CHUNK_S / FRAME_S)
    reach = min(int(1.0 / FRAME_S), size - 1)  # each cut after the last
    cuts = [0]
    while count - cuts[-1] > size + reach:
        mark = cuts[-1] + size
        cuts.append(mark - reach + int(np.argmin(energy[mark - reach : mark + reach])))
    cuts.append(count + 1)
    return list(zip(cuts[:-1], cuts[1:]))


def _decode(decoder: Any, pcm: bytes) -> None:
    """One utterance, from a fresh front end: pocketsphinx carries its noise estimate and cepstral mean over from
    the last utterance, which made a recording's words depend on what the decoder heard before (the second alignment
    of the same recording moved a word by 70 ms)."""
    decoder.reinit_feat()
    decoder.start_utt()
    decoder.process_raw(pcm, no_search=False, full_utt=True)
    decoder.end_utt()


def _base_name(name: str) -> str:
    """An aligned word without its variant number (``read(2)`` → ``read``)."""
    return name[: name.index("(")] if name.endswith(")") and "(" in name else name


def _supported(costs: list[float | None], loose: float, alone: float) -> list[bool]:
    """Which words to place: those within ``loose`` in a run of :data:`RUN` such words, and any within ``alone``."""
    fits = [cost is not None and cost <= loose for cost in costs]
    keep = [False] * len(costs)
    at = 0
    while at < len(costs):
        if not fits[at]:
            at += 1
            continue
        end = at
        while end < len(costs) and fits[end]:
            end += 1
        supported = end - at >= min(RUN, len(costs))
        for index in range(at, end):
            cost = costs[index]
            keep[index] = supported or (cost is not None and cost <= alone)
        at = end
    return keep


def _heard(loudness: np.ndarray, first: int, last: int) -> tuple[int, int] | None:
    """A word's frames without the silent ones at its edges; ``None`` when all are silent."""
    loud = np.flatnonzero(loudness[first : last + 1] >= SILENT_DB)
    if not loud.size:
        return None
    return first + int(loud[0]), first + int(loud[-1])


def _prepare(audio: np.ndarray, sample_rate: int) -> tuple[np.ndarray, np.ndarray]:
    """The audio as pocketsphinx reads it before the noise floor is added (:func:`_padded` by :data:`PAD_S`) and each
    frame's loudness in dB below the loudest frame."""
    samples = _padded(audio, sample_rate, PAD_S)
    step, window = int(RATE * FRAME_S), int(RATE * 0.025)
    count = max(samples.size // step, 1)
    power = np.zeros(count + 2, dtype=np.float64)
    squares = np.concatenate([[0.0], np.cumsum(samples.astype(np.float64) ** 2)])
    starts = np.arange(count) * step
    ends = np.minimum(starts + window, samples.size)
    power[:count] = (squares[ends] - squares[starts]) / np.maximum(ends - starts, 1)
    loudest = float(power.max())
    loudness = 10.0 * np.log10(np.maximum(power, 1e-20) / loudest) if loudest > 0 else np.full(power.size, -200.0)
    return samples, loudness


def to_pcm16(audio: np.ndarray, sample_rate: int, pad_s: float = 0.0, noise_floor: float = NOISE_FLOORS[0]) -> bytes:
    """``audio`` as pocketsphinx reads it: mono, 16 kHz, its peak at :data:`LEVEL`, ``pad_s`` of silence added at each
    end, with the seeded noise floor added; nothing for empty audio."""
    samples = _padded(audio, sample_rate, pad_s)
    return _with_noise(samples, noise_floor)


def _padded(audio: np.ndarray, sample_rate: int, pad_s: float) -> np.ndarray:
    """Mono float32 at 16 kHz, its peak at :data:`LEVEL`, with ``pad_s`` of silence at each end (empty for none)."""
    import soxr

    samples = np.asarray(audio, dtype=np.float32)
    if samples.ndim > 1:
        samples = samples.mean(axis=1, dtype=np.float32)
    if samples.size == 0:
        return samples
    if sample_rate != RATE:
        samples = np.asarray(soxr.resample(samples, sample_rate, RATE), dtype=np.float32)
    samples = np.nan_to_num(samples, nan=0.0, posinf=0.0, neginf=0.0)
    peak = float(np.max(np.abs(samples)))
    if peak > 0:
        samples = samples * np.float32(LEVEL / peak)
    pad = np.zeros(round(pad_s * RATE), dtype=np.float32)
    return np.concatenate([pad, samples, pad])


def _with_noise(samples: np.ndarray, floor: float) -> bytes:
    """16-bit little-endian samples with the seeded noise of standard deviation ``floor`` added."""
    if not samples.size:
        return b""
    noise = np.random.default_rng(0).standard_normal(samples.size, dtype=np.float32) * np.float32(floor)
    pcm: bytes = (np.clip(samples + noise, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()
    return pcm
