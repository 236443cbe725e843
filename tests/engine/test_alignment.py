"""Forced alignment (core/engine/alignment): words placed in recordings whose boundaries are known, in English,
French and German; a recording of other words placed sparsely instead of invented; spoken forms reported on the
written words; and the parts that need no recording (splitting, written ↔ spoken, espeak-ng's phones, Whisper's
matching with a stand-in model)."""

from __future__ import annotations

import sys
from types import SimpleNamespace

import numpy as np
import pytest

from core.engine import Alignment, AlignmentError, WordTime, align, split_words
from core.engine.alignment.phonemes import ipa_to_arpabet, letters_to_phones, pronounce
from core.engine.alignment.sphinx_aligner import SphinxAligner
from core.engine.alignment.spoken import spoken_spans
from core.engine.alignment.whisper_aligner import WhisperAligner, match_words
from tests.alignment_support import RATE, SENTENCES, needs_espeak, recording

MEDIAN_S, P95_S, PLACED = 0.040, 0.120, 0.98
"""The targets: boundary error (|start − true start| and |end − true end| over all words) at the median and the
95th percentile, and the share of words placed."""
ALIGN_MODULE = sys.modules["core.engine.alignment.align"]  # the package's ``align`` is the function


def _errors(alignment: Alignment, truth: list[tuple[str, float, float]]) -> list[float]:
    errors, at = [], 0
    for word in alignment.words:
        while truth[at][0] != word.word:
            at += 1
        errors += [abs(word.start - truth[at][1]), abs(word.end - truth[at][2])]
        at += 1
    return errors


@needs_espeak
@pytest.mark.slow
@pytest.mark.parametrize("language", ["en", "fr", "de"])
def test_words_are_placed_within_40_ms_at_the_median_in_each_language(language):
    errors, placed, total = [], 0, 0
    for seed, sentence in enumerate(SENTENCES[language]):
        audio, truth = recording(split_words(sentence), language, seed)
        alignment = align(audio, RATE, sentence, language)
        assert alignment.aligner == "pocketsphinx" and alignment.language == language
        assert alignment.duration == pytest.approx(audio.size / RATE)
        assert [w.start for w in alignment.words] == sorted(w.start for w in alignment.words)
        assert all(w.end > w.start for w in alignment.words)
        errors += _errors(alignment, truth)
        placed, total = placed + len(alignment.words), total + alignment.total_words
    assert total >= 45
    assert placed / total >= PLACED, f"{placed} of {total} words placed"
    assert np.median(errors) <= MEDIAN_S and np.percentile(errors, 95) <= P95_S, (
        f"median {np.median(errors) * 1000:.0f} ms, p95 {np.percentile(errors, 95) * 1000:.0f} ms"
    )


def _placed_share(audio: np.ndarray, text: str, language: str = "en") -> float:
    try:
        return align(audio, RATE, text, language).placed_share
    except AlignmentError as exc:  # not one word placed
        assert exc.code == "align.not_matching"
        return 0.0


@needs_espeak
def test_a_recording_of_other_words_places_few_or_none_of_its_text():
    audio, _ = recording(split_words(SENTENCES["en"][0]), "en")
    assert _placed_share(audio, SENTENCES["en"][0]) == 1.0
    others = [_placed_share(audio, SENTENCES["en"][1]), _placed_share(audio, SENTENCES["en"][2])]
    assert max(others) < 0.25, others  # measured: 6 % and 8 %
    assert _placed_share(audio, SENTENCES["fr"][0], "fr") < 0.5  # measured: 33 %


@needs_espeak
def test_a_recordings_words_do_not_depend_on_what_was_aligned_before():
    audio, _ = recording(split_words(SENTENCES["en"][0]), "en")
    first = align(audio, RATE, SENTENCES["en"][0])
    other, _ = recording(split_words(SENTENCES["en"][1]), "en", seed=5)
    align(other, RATE, SENTENCES["en"][1])
    assert align(audio, RATE, SENTENCES["en"][0]) == first


@needs_espeak
def test_a_take_cut_short_places_the_words_it_holds():
    words = split_words(SENTENCES["en"][0])
    audio, truth = recording(words, "en")
    cut = truth[7][2] + 0.05  # after "the", the seventh word
    alignment = align(audio[: round(cut * RATE)], RATE, SENTENCES["en"][0])
    assert [w.word for w in alignment.words][:6] == words[:6]
    assert all(w.end <= cut + 0.05 for w in alignment.words)
    assert alignment.placed_share < 0.5


@needs_espeak
def test_the_search_that_skips_words_runs_on_the_whole_audio_only_where_its_start_holds_some(monkeypatch):
    """Tones no word fits (a stand-in's, or a model's noise) are searched for skipped words in their first 2.5 s
    only; a long take with a phrase cut out of it is searched whole and its words placed as before."""
    import core.engine.alignment.sphinx_aligner as sphinx

    searched: list[float] = []
    search = sphinx._decode_skipping

    def counting(decoder, pcm, parts):
        searched.append(len(pcm) / 2 / sphinx.RATE)
        return search(decoder, pcm, parts)

    monkeypatch.setattr(sphinx, "_decode_skipping", counting)
    text = SENTENCES["en"][0]
    t = np.arange(6 * RATE) / RATE
    tones = (0.3 * np.sin(2 * np.pi * (180 + 60 * np.floor(t * 25 % 7)) * t)).astype(np.float32)
    with pytest.raises(AlignmentError) as unheard:
        align(tones, RATE, text)
    assert unheard.value.code == "align.not_matching"
    assert searched == [pytest.approx(sphinx.PREFIX_S)]  # the start only: no word of the text there
    searched.clear()
    words = split_words(text)
    audio, truth = recording(words, "en")
    cut_from, cut_to = truth[4][1], truth[9][2]  # a phrase the take skipped
    cut = np.concatenate([audio[: round(cut_from * RATE)], audio[round(cut_to * RATE) :]])
    alignment = align(cut, RATE, text)
    assert len(searched) == 2 and searched[1] > 2 * sphinx.PREFIX_S  # the start held words: the whole was searched
    placed = {w.word for w in alignment.words}
    assert set(words[:4]) <= placed and len(alignment.words) >= len(words) - 8


@needs_espeak
def test_numbers_and_abbreviations_spoken_are_timed_on_the_written_words():
    spoken = "Doctor Smith paid five dollars on the second of May"
    audio, truth = recording(split_words(spoken), "en", seed=3)
    times = {word: (start, end) for word, start, end in truth}
    alignment = align(audio, RATE, "Dr. Smith paid $5 on the 2nd of May.", spoken=spoken)
    assert [w.word for w in alignment.words] == ["Dr", "Smith", "paid", "5", "on", "the", "2nd", "of", "May"]
    placed = {w.word: w for w in alignment.words}
    assert placed["5"].start == pytest.approx(times["five"][0], abs=0.06)
    assert placed["5"].end == pytest.approx(times["dollars"][1], abs=0.06)
    assert placed["Dr"].start == pytest.approx(times["Doctor"][0], abs=0.06)
    assert placed["2nd"].end == pytest.approx(times["second"][1], abs=0.06)
    assert alignment.total_words == 9 and alignment.placed_share == 1.0


@needs_espeak
def test_without_espeak_english_dictionary_words_are_still_placed_and_other_languages_are_refused(monkeypatch):
    import core.engine.alignment.sphinx_aligner as sphinx

    monkeypatch.setattr(sphinx, "espeak_available", lambda: False)
    words = split_words("the garden blorpington has seven roses")  # "blorpington" is in no dictionary
    audio, _ = recording(words, "en")
    placed = SphinxAligner().place(audio, RATE, words, "en")
    assert sum(p is not None for p in placed) >= 5
    assert placed[0] is not None and placed[-1] is not None
    with pytest.raises(AlignmentError) as refused:
        SphinxAligner().place(audio, RATE, ["bonjour"], "fr")
    assert refused.value.code == "align.language" and refused.value.data["reason"] == "no_espeak"


@needs_espeak
def test_a_language_espeak_does_not_speak_is_refused():
    with pytest.raises(AlignmentError) as refused:
        align(np.ones(RATE, dtype=np.float32) * 0.1, RATE, "zzz", "xx-nowhere")
    assert refused.value.code == "align.language" and refused.value.data["reason"] == "espeak_voice"


def test_empty_text_silence_and_noise():
    empty = align(np.zeros(RATE, dtype=np.float32), RATE, " — … ")
    assert empty.words == [] and empty.total_words == 0 and empty.placed_share == 1.0
    assert empty.to_dict() == {"words": [], "duration": 1.0, "language": "en", "aligner": "pocketsphinx", "placed": 1.0}
    with pytest.raises(AlignmentError) as silent:
        align(np.zeros(RATE, dtype=np.float32), RATE, "hello there")
    assert silent.value.code == "align.no_audio"
    with pytest.raises(AlignmentError) as nothing:
        align(np.zeros(0, dtype=np.float32), RATE, "hello there")
    assert nothing.value.code == "align.no_audio"
    hiss = np.random.default_rng(1).standard_normal(2 * RATE).astype(np.float32) * 0.01
    with pytest.raises(AlignmentError) as unheard:
        align(hiss, RATE, "extraordinary circumstances notwithstanding")
    assert unheard.value.code == "align.not_matching" and unheard.value.data["words"] == 3


def test_words_are_split_at_spaces_dashes_and_slashes_without_edge_punctuation():
    assert split_words("Dr. Smith's $5—well-known, “quoted” l'homme… 3.5 and/or") == [
        "Dr",
        "Smith's",
        "5",
        "well-known",
        "quoted",
        "l'homme",
        "3.5",
        "and",
        "or",
    ]
    assert split_words("東京に行く") == ["東", "京", "に", "行", "く"]
    words = [WordTime("a", 0.1234, 0.5), WordTime("b", 0.6, 0.9)]
    alignment = Alignment(words, 2.0, "en", "pocketsphinx", 4)
    assert alignment.placed_share == 0.5
    assert alignment.to_dict()["words"][0] == {"word": "a", "start": 0.123, "end": 0.5}
    assert alignment.to_dict()["placed"] == 0.5


def test_written_words_cover_the_spoken_words_between_their_matched_neighbours():
    written, spoken = split_words("Dr. Smith paid $5."), split_words("Doctor Smith paid five dollars")
    assert spoken_spans(written, spoken) == [(0, 1), (1, 2), (2, 3), (3, 5)]
    assert spoken_spans(["$5", "million"], ["five", "million", "dollars"]) == [(0, 1), (1, 3)]
    assert spoken_spans(["in", "1990"], ["in", "nineteen", "ninety"]) == [(0, 1), (1, 3)]
    assert spoken_spans(["a", "b", "c"], ["a", "c"]) == [(0, 1), None, (1, 2)]
    assert spoken_spans(["b"], ["well", "b"]) == [(0, 2)]


def test_espeak_phonemes_become_the_nearest_us_english_phones():
    assert ipa_to_arpabet("həlˈoʊ") == ("HH", "AH", "L", "OW")
    assert ipa_to_arpabet("tʁˈɛ̃") == ("T", "HH", "AE")  # French "train"
    assert ipa_to_arpabet("ɪç") == ("IH", "SH")
    assert ipa_to_arpabet("pˈitsːa") == ("P", "IY", "T", "S", "AA")
    assert ipa_to_arpabet("wˈɔːɾɚ", "en") == ("W", "AO", "D", "ER")
    assert ipa_to_arpabet("(en)tˈɛst(ko)") == ("T", "EH", "S", "T")
    assert letters_to_phones("thinking") == ("TH", "IH", "N", "K", "IH", "NG")


@needs_espeak
def test_espeak_pronounces_each_word_alone():
    phones = pronounce(["of", "the", "durch", "Österreich"], "de")
    assert phones[2] == ("D", "UH", "R", "SH")  # espeak-ng writes its "UR" as "??"
    assert all(phones)
    assert pronounce(["of", "the"], "en") == [("AH", "V"), ("DH", "AH")]


class _Model:
    """Stands in for faster_whisper.WhisperModel: one segment with the words it "heard"."""

    def __init__(self, heard):
        self.heard, self.calls = heard, []

    def transcribe(self, audio, **options):
        self.calls.append(options)
        words = [SimpleNamespace(word=w, start=s, end=e, probability=p) for w, s, e, p in self.heard]
        return iter([SimpleNamespace(words=words)]), SimpleNamespace(language=options["language"])


def test_whisper_words_are_matched_to_the_text_and_unheard_words_stay_unplaced(tmp_path):
    model = _Model([(" Bonjour,", 0.1, 0.5, 0.9), (" le", 0.6, 0.7, 0.8), (" monde", 0.8, 1.2, 0.95)])
    aligner = WhisperAligner(tmp_path, model=model)
    placed = aligner.place(np.zeros(RATE, dtype=np.float32), RATE, ["bonjour", "tout", "le", "monde"], "fr-FR")
    assert [p and (p.start, p.end) for p in placed] == [(0.1, 0.5), None, (0.6, 0.7), (0.8, 1.2)]
    assert model.calls[0]["language"] == "fr" and model.calls[0]["word_timestamps"] is True
    alike = match_words(["Zürich", "1990"], [("zurich", 1.0, 1.4, 0.9), ("1990", 1.5, 2.0, 0.7)])
    assert [p and p.start for p in alike] == [1.0, 1.5]
    assert match_words(["cat"], [("dog", 0.0, 1.0, 1.0)]) == [None]


def test_align_uses_whisper_for_other_languages_when_it_is_installed_and_given(monkeypatch, tmp_path):
    model = _Model([("hola", 0.2, 0.6, 0.9), ("mundo", 0.7, 1.1, 0.9)])
    monkeypatch.setattr(ALIGN_MODULE, "_aligners", {})
    monkeypatch.setattr(ALIGN_MODULE, "whisper_available", lambda: True)
    monkeypatch.setattr(ALIGN_MODULE, "WhisperAligner", lambda folder: WhisperAligner(folder, model=model))
    audio = np.full(RATE * 2, 0.1, dtype=np.float32)
    alignment = align(audio, RATE, "¡Hola, mundo!", "es", whisper_model=tmp_path)
    assert alignment.aligner == "faster-whisper"
    assert alignment.to_dict()["words"] == [
        {"word": "Hola", "start": 0.2, "end": 0.6},
        {"word": "mundo", "start": 0.7, "end": 1.1},
    ]
    monkeypatch.setattr(ALIGN_MODULE, "whisper_available", lambda: False)
    assert ALIGN_MODULE._aligner("es", tmp_path).name == "pocketsphinx"
    assert ALIGN_MODULE._aligner("en", tmp_path).name == "pocketsphinx"
