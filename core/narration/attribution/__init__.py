"""Who says each line of a book: characters found in its narration (names, honorifics, aliases, gender) and every
quotation attributed to one of them or left to the narrator, with a confidence and the cue that decided it. A pure,
fast step on the project's text: no model, no network (:func:`attribute`)."""

from core.narration.attribution.attribute import UNSURE, Attribution, QuoteSpeaker, attribute
from core.narration.attribution.names import Character

__all__ = ["UNSURE", "Attribution", "Character", "QuoteSpeaker", "attribute"]
