"""Tokenization with ``tokenizers`` per variant (contract §3, §4.2)."""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from core.engine.constants import EXAGGERATION_TOKEN, START_SPEECH, TEXT_START, TEXT_STOP
from core.engine.errors import ModelFilesMissing, Notice, TextInputError
from core.engine.reading.front_end import TextFrontEnd
from core.engine.text import filter_tags, normalize_sentence

log = logging.getLogger(__name__)
SPACE = "[SPACE]"
TEMPLATE_NAMES = {
    EXAGGERATION_TOKEN: "[EXAGGERATION]",
    TEXT_START: "[START]",
    TEXT_STOP: "[STOP]",
    START_SPEECH: "[START_SPEECH]",
}
"""Names for the template's ids that a tokenizer.json may not hold (they index the embedding's other tables)."""
_TAG_WORDS = re.compile(r"\[[a-z][a-z ]{0,38}[a-z]\]")


@dataclass(frozen=True)
class SentenceReading:
    """One sentence as the model reads it (``python -m core text`` and the window's "What the model reads")."""

    text: str
    """The sentence as it was given."""
    prepared: str
    """The text the tokenizer is given: after ``punc_norm`` and, for the Multilingual model, case, NFKD, the
    language's step and the ``[xx]`` tag (spaces still spaces)."""
    tokens: list[str]
    """One name per id: the tokenizer's token, or the template's name."""
    ids: list[int]
    """The ``input_ids`` exactly as the language model's embedding receives them."""
    dropped_tags: list[str]


@dataclass(frozen=True)
class _Vocabulary:
    """What a ``tokenizer.json``'s vocabulary says, read once per file (Turbo's has 50,000 ids: two tokenizers built
    and three walks of them took 237 ms of every model load, 83 of a tiny stand-in pipeline's 224)."""

    known_tags: frozenset[str]
    languages: tuple[str, ...]
    unk_id: int | None
    space_in_tokenizer: bool
    tag_words: tuple[str, ...]
    """The bracketed tokens that are words (``[laugh]``), in vocabulary order."""


def _vocabulary(path: Path) -> _Vocabulary:
    """The file's vocabulary facts (kept per path, size and modification time; an unreadable file raises)."""
    stat = Path(path).stat()
    return _read_vocabulary(str(path), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _read_vocabulary(path: str, _size: int, _mtime_ns: int) -> _Vocabulary:
    tokenizer = Tokenizer.from_file(path)  # its own instance: one tokenizer is not to be shared between threads
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    known = frozenset(t for t in vocab if t.startswith("[") and t.endswith("]") and len(t) > 2)
    # Some tokenizer.json files turn spaces into [SPACE] in their normalizer, others leave it to the caller.
    space_id = vocab.get(SPACE)
    return _Vocabulary(
        known_tags=known,
        languages=tuple(sorted(t[1:-1] for t in vocab if _is_language_tag(t))),
        unk_id=vocab.get("[UNK]"),
        space_in_tokenizer=space_id is None or space_id in tokenizer.encode("a b").ids,
        tag_words=tuple(sorted((t for t in known if _TAG_WORDS.fullmatch(t)), key=lambda t: vocab[t])),
    )


class TextTokenizer:
    """Turns one sentence into the ``input_ids`` the variant's ``embed_tokens`` expects."""

    def __init__(
        self, path: Path, variant: str, text_table_rows: int | None = None, front_end: TextFrontEnd | None = None
    ):
        try:
            self._tok = Tokenizer.from_file(str(path))
            vocabulary = _vocabulary(path)
        except Exception as exc:
            raise ModelFilesMissing("bundle.tokenizer_invalid", path=str(path), reason=str(exc)[:200]) from exc
        self.variant = variant
        self.known_tags = vocabulary.known_tags
        self.languages = vocabulary.languages
        self.text_table_rows = text_table_rows
        self.unk_id = TEXT_STOP if vocabulary.unk_id is None else vocabulary.unk_id
        self._space_in_tokenizer = vocabulary.space_in_tokenizer
        self._tag_words = vocabulary.tag_words
        self.front_end = front_end or TextFrontEnd.for_bundle(variant, Path(path).parent)

    @staticmethod
    def is_multilingual(path: Path) -> bool:
        try:
            return len(_vocabulary(path).languages) >= 2
        except Exception:  # noqa: BLE001 - the caller reports a bad tokenizer when it loads it properly
            return False

    @property
    def speakable_tags(self) -> tuple[str, ...]:
        """The ``[tags]`` :meth:`prepare` keeps (Turbo's paralinguistic tags), in vocabulary order; the other
        variants speak none. Bracketed tokens that are not words (byte-pair pieces such as ``[...]``) are left out."""
        return self._tag_words if self.variant == "turbo" else ()

    def prepare(self, sentence: str) -> tuple[str, list[str]]:
        """Normalise a sentence as upstream does; returns the text and the tags that were dropped."""
        usable = self.known_tags if self.variant == "turbo" else frozenset()
        text, dropped = filter_tags(sentence, usable)
        if dropped:
            log.info("dropping tags the model does not know: %s", ", ".join(dropped))
        return normalize_sentence(text, self.variant), dropped

    def encode(self, sentence: str, language: str | None = None) -> np.ndarray:
        """Return ``input_ids`` as int64 [1, S] for one (already prepared) sentence."""
        return np.asarray([self._ids(self.model_text(sentence, language))], dtype=np.int64)

    def model_text(self, sentence: str, language: str | None = None) -> str:
        """What the tokenizer is given for one prepared sentence (Multilingual: the language's steps and tag)."""
        if self.variant == "multilingual":
            lang = (language or "en").lower()
            if lang not in self.languages:
                raise TextInputError("text.language_unsupported", language=language, languages=list(self.languages))
            return self.front_end.model_text(sentence, lang)
        if language and language.lower() != "en":
            raise TextInputError("text.english_only", language=language)
        return sentence

    def check_language(self, language: str | None) -> None:
        """Raise what encoding a sentence in ``language`` would raise for the language itself: not the model's, or
        a file its step needs missing."""
        self.model_text("", language)
        if self.variant == "multilingual":
            self.front_end.check((language or "en").lower())

    def read(self, sentence: str, language: str | None = None) -> SentenceReading:
        """One sentence from the text a person wrote to the ids the model receives, with every step on the way."""
        prepared, dropped = self.prepare(sentence)
        model_text = self.model_text(prepared, language)
        ids = self._ids(model_text)
        return SentenceReading(sentence, model_text, [self.token_name(i) for i in ids], ids, dropped)

    def take_notices(self) -> list[Notice]:
        """What the language steps need the user to know (a missing segmenter, a step not installed), once each."""
        return self.front_end.take_notices()

    def token_name(self, token_id: int) -> str:
        name = self._tok.id_to_token(token_id)
        if name is None or (token_id in TEMPLATE_NAMES and self.variant != "turbo"):
            return TEMPLATE_NAMES.get(token_id, f"<{token_id}>")
        return str(name)

    def _ids(self, text: str) -> list[int]:
        if self.variant != "turbo" and not self._space_in_tokenizer:
            text = text.replace(" ", SPACE)
        ids = list(self._tok.encode(text).ids)
        if self.variant != "turbo":
            ids = self._wrap(ids)
        if self.text_table_rows is not None:
            ids = self._map_out_of_table(ids, self.text_table_rows)
        return ids

    def _wrap(self, ids: list[int]) -> list[int]:
        """Make sure the original/multilingual template is there even if the post-processor lacks it."""
        if TEXT_START in ids and ids[-1] == START_SPEECH:
            return ids
        core = [i for i in ids if i not in (TEXT_START, EXAGGERATION_TOKEN, START_SPEECH)]
        if core and core[-1] == TEXT_STOP:
            core = core[:-1]
        return [EXAGGERATION_TOKEN, TEXT_START, *core, TEXT_STOP, START_SPEECH, START_SPEECH]

    def _map_out_of_table(self, ids: list[int], rows: int) -> list[int]:
        """Ids past the text table (multilingual has 2352 rows for 2454 ids) become [UNK], inside the text span."""
        out: list[int] = []
        in_text, mapped = False, 0
        for i in ids:
            if i == TEXT_START:
                in_text = True
            elif in_text and i >= rows:
                i, mapped = (self.unk_id if self.unk_id < rows else TEXT_STOP + 1), mapped + 1
            elif i == TEXT_STOP:
                in_text = False
            out.append(i)
        if mapped:
            log.info("%d token(s) past the %d-row text table mapped to [UNK]", mapped, rows)
        return out


def _is_language_tag(token: str) -> bool:
    return (
        len(token) in (4, 5)
        and token.startswith("[")
        and token.endswith("]")
        and token[1:-1].isalpha()
        and token[1:-1].islower()
    )
