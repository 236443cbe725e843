"""The words attribution reads around a quote: speech verbs and pronouns, per language (English first; French and
German where their novels tag speech differently: "dit Marie", "répondit-il", "sagte Anna", "fragte er")."""

from __future__ import annotations

import re


def _words(text: str) -> list[str]:
    return text.split()


SPEECH_VERBS = {
    "en": _words(
        """said says say cried cries replied replies answered answers asked asks exclaimed returned continued added
        observed remarked whispered shouted muttered murmured called repeated rejoined interrupted began inquired
        enquired demanded declared retorted resumed pursued protested urged insisted admitted agreed explained
        responded sighed laughed screamed yelled snapped sobbed stammered stuttered gasped groaned growled hissed
        roared barked ventured suggested assented conceded concluded went observed interposed cried exclaimed
        breathed faltered murmured persisted pleaded begged warned announced remonstrated objected thundered wailed
        moaned chuckled giggled smiled grinned nodded shrugged told"""
    ),
    "fr": _words(
        """dit dis répondit répond demanda demande s'écria écria reprit reprend ajouta ajoute murmura murmure cria crie
        continua continue fit répliqua réplique soupira s'exclama exclama poursuivit interrompit lança"""
    ),
    "de": _words(
        """sagte sagt fragte fragt antwortete antwortet rief ruft flüsterte flüstert meinte meint erwiderte erwidert
        fuhr entgegnete murmelte seufzte lachte schrie"""
    ),
}
PRONOUNS = {
    "en": {"he": "m", "him": "m", "she": "f", "her": "f", "i": "I"},
    "fr": {"il": "m", "elle": "f", "je": "I"},
    "de": {"er": "m", "sie": "f", "ich": "I"},
}
FIRST_PERSON = {"en": re.compile(r"\b(?:I|me|my|myself)\b"), "fr": re.compile(r"\b(?:je|j'|moi)\b", re.I)}


def verbs(language: str) -> list[str]:
    return sorted(set(SPEECH_VERBS.get(language, []) + SPEECH_VERBS["en"]), key=len, reverse=True)


def verb_pattern(language: str) -> re.Pattern[str]:
    return re.compile(r"\b(?:" + "|".join(re.escape(v) for v in verbs(language)) + r")\b", re.IGNORECASE)


def pronouns(language: str) -> dict[str, str]:
    return {**PRONOUNS["en"], **PRONOUNS.get(language, {})}
