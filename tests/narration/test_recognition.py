"""Screening takes by speech recognition: the word comparison (alignment, normalisation, a cut-off end)."""

from __future__ import annotations

import pytest

from core.narration.screening.word_errors import align, compare_words, words_of


# --- comparing words ------------------------------------------------------------------------------------------------
def test_the_same_words_score_zero():
    c = compare_words("The cat sat on the mat.", "the cat sat on the mat")
    assert (c.wer, c.missing, c.extra, c.expected_words, c.end_missing) == (0.0, [], [], 6, 0)


def test_a_dropped_last_clause_is_missing_at_the_end():
    c = compare_words("She opened the window, because the room was hot.", "she opened the window")
    assert c.missing == ["because", "the", "room", "was", "hot"] and c.extra == []
    assert c.end_missing == 5 and c.wer == pytest.approx(5 / 9)


def test_a_word_missed_in_the_middle_is_not_missing_at_the_end():
    c = compare_words("We went to the big park today.", "we went to the park today")
    assert c.missing == ["big"] and c.end_missing == 0


def test_a_garbled_last_word_counts_at_the_end():
    c = compare_words("He drank a glass of water.", "he drank a glass of waiter")
    assert c.missing == ["water"] and c.extra == ["waiter"] and c.end_missing == 1


def test_numbers_in_digits_and_in_words_are_the_same():
    assert compare_words("I have 3 dogs and 21 cats.", "I have three dogs and twenty-one cats").wer == 0.0
    assert compare_words("The 42nd street.", "the forty second street").wer == 0.0
    assert compare_words("Il a 3 chats.", "il a trois chats", "fr-FR").wer == 0.0


def test_case_punctuation_apostrophes_and_hyphens_are_ignored():
    c = compare_words("“Don’t stop!” she said — it's a well-known song…", "DON'T stop she said it's a well known song")
    assert c.wer == 0.0, c
    assert words_of("Don’t 'quote' me") == ["don't", "quote", "me"]


def test_an_insertion_is_extra_and_counted():
    c = compare_words("Hello there.", "hello there my friend")
    assert c.extra == ["my", "friend"] and c.missing == [] and c.wer == 1.0 and c.end_missing == 0


def test_a_substitution_is_in_both_lists():
    c = compare_words("A cup of tea.", "a cup of coffee")
    assert (c.missing, c.extra, c.wer) == (["tea"], ["coffee"], 0.25)


def test_empty_texts():
    assert compare_words("", "").wer == 0.0
    assert compare_words("", "words").wer == 1.0
    nothing_heard = compare_words("Two words.", "")
    assert nothing_heard.wer == 1.0 and nothing_heard.end_missing == 2


def test_the_alignment_is_a_cheapest_edit_and_puts_ties_late():
    steps = align(["a", "b", "c", "d"], ["a", "x", "c"])
    assert [op for op, _, _ in steps] == ["match", "sub", "match", "del"]
    assert [op for op, _, _ in align(["a", "b", "a"], ["a"])] == ["match", "del", "del"]


def test_languages_without_spaces_are_compared_by_character():
    c = compare_words("我爱你。", "我你", "zh")
    assert c.expected_words == 3 and c.missing == ["爱"]


def test_a_comparison_as_a_dict():
    d = compare_words("One two.", "one").to_dict()
    assert d == {"wer": 0.5, "missing": ["two"], "extra": [], "expected_words": 2, "end_missing": 1}
