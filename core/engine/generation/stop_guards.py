"""When to stop generating besides STOP: a text-length cap and a runaway (repetition) guard (contract §6)."""

from __future__ import annotations

from core.engine.constants import SILENCE_TOKEN

# Speech tokens allowed per prompt text token: Turbo's BPE tokens carry ~3.5 characters (~6 speech tokens at a
# normal pace), the original/multilingual tokenizers ~1 character (~2 speech tokens); the caps leave 2-3x slack.
TOKENS_PER_TEXT_TOKEN = {"turbo": 16, "original": 6, "multilingual": 8}
MIN_CAP = 64


def token_cap(variant: str, text_tokens: int, max_new_tokens: int) -> int:
    return min(max_new_tokens, max(MIN_CAP, TOKENS_PER_TEXT_TOKEN[variant] * text_tokens))


class RunawayGuard:
    """Stops a generation that has started repeating itself.

    Fires on one token repeated ``same_limit`` times in a row, on a silence-token run of ``silence_limit`` (2 s),
    or on a short pattern (period 2..8) repeating over the last ``pattern_window`` tokens.
    """

    def __init__(self, same_limit: int = 30, silence_limit: int = 50, pattern_window: int = 60):
        self.same_limit, self.silence_limit, self.pattern_window = same_limit, silence_limit, pattern_window
        self.tokens: list[int] = []
        self.reason: str | None = None
        self.repeated_tail = 0
        """How many trailing tokens belong to the runaway (worth trimming) once it fired."""

    def trim(self, tokens: list[int]) -> int:
        """Remove the runaway's repeated tail from the end of ``tokens`` (nothing unless the guard fired); return how
        many tokens were removed."""
        drop = min(self.repeated_tail, len(tokens))
        del tokens[len(tokens) - drop :]
        return drop

    def update(self, token: int) -> bool:
        t = self.tokens
        t.append(token)
        run = 1
        while run < len(t) and t[-1 - run] == token:
            run += 1
        limit = self.silence_limit if token == SILENCE_TOKEN else self.same_limit
        if run >= limit:
            self.reason, self.repeated_tail = f"token {token} repeated {run} times", run - 1
            return True
        w = self.pattern_window
        if len(t) >= w:
            tail = t[-w:]
            for period in range(2, 9):
                if all(tail[i] == tail[i - period] for i in range(period, w)):
                    self.reason, self.repeated_tail = f"a {period}-token pattern repeated", w - period
                    return True
        return False
