"""A text that arrives in pieces (Wyoming's ``synthesize-chunk``), released sentence by sentence as each completes.

What is complete is the engine's own splitter's answer (:func:`core.engine.split_text`): every sentence but the last
is, and the last one too once more text could no longer join it (a sentence end followed by a space, a paragraph
break or a pause tag; "It costs 3." is held until the next piece shows whether "14 dollars" follows).
"""

from __future__ import annotations

from core.engine import Sentence, TextInputError, clean_text, split_text

PROBE = "Z"
"""Text appended to ask the splitter whether more text would start a new sentence or join the last one."""


class SentenceStream:
    """Collects the pieces of one streamed text; :meth:`add` returns the text whose sentences are complete."""

    def __init__(self) -> None:
        self._text = ""
        self.chars = 0
        """Characters received so far (for the size limit)."""

    def add(self, text: str) -> str:
        """Add the next piece; returns the complete sentences not returned before (with the pauses between them),
        or ``""``. The unfinished rest is kept."""
        self.chars += len(text)
        self._text = clean_text(self._text + text)
        try:
            sentences = [p for p in split_text(self._text) if isinstance(p, Sentence)]
        except TextInputError:
            return ""  # nothing to say yet: keep it (pauses, punctuation) for the sentence that follows
        cut = len(self._text) if self._last_is_complete(len(sentences)) else sentences[-1].start
        if not any(s.start < cut for s in sentences):
            return ""
        ready, self._text = self._text[:cut], self._text[cut:]
        return ready

    def finish(self) -> str:
        """The end of the text: whatever is left (it may have nothing to say)."""
        rest, self._text = self._text, ""
        return rest

    def _last_is_complete(self, sentences: int) -> bool:
        try:
            probed = [p for p in split_text(self._text + PROBE) if isinstance(p, Sentence)]
        except TextInputError:
            return False
        return len(probed) == sentences + 1 and probed[-1].text == PROBE
