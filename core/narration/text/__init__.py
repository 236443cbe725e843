"""Text prepared for speech, below the project: sentences in the book's language (``sentences.py``), what written
words sound like and the lexicon (``speech_text.py``), web and e-mail addresses (``spoken_links.py``), quoted speech
(``dialogue.py``), square brackets (``brackets.py``) and where a segment's words stand in its block (``locator.py``).
Depends on nothing else of narration."""

from core.narration.text.sentences import sentences, split_sentences
from core.narration.text.speech_text import LexiconEntry, apply_lexicon, spoken_form

__all__ = ["LexiconEntry", "apply_lexicon", "sentences", "spoken_form", "split_sentences"]
