"""The text the model reads: upstream's preparation of one sentence, in upstream's order.

For every variant, :func:`~.punctuation.punc_norm` of that variant first (``generate`` runs it). Turbo and the
Original then tokenize the text as it is. The Multilingual model's ``MTLTokenizer.encode`` continues:

1. lower-case (unless the bundle reads full case: :func:`reads_full_case`);
2. NFKD;
3. the language's step: ``zh`` Cangjie (:mod:`.chinese`), ``ja`` kana (:mod:`.japanese`), ``ko`` jamo
   (:mod:`.korean`), ``he`` diacritics and ``ru`` stress when they are installed (:mod:`.optional_steps`);
4. the ``[xx]`` language tag in front;
5. each space as ``[SPACE]`` (the tokenizer's own normalizer may already do this; :mod:`core.engine.tokenizer`);
6. the bundle's ``tokenizer.json``.

:class:`TextFrontEnd` runs steps 1–4 and keeps what it loads (the Cangjie table, the segmenter) for the process.
A step that cannot run the way upstream's does raises or reports a :class:`~core.engine.errors.Notice` once.
"""

from __future__ import annotations

import json
import logging
import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import core.engine.reading.loaded_files as loaded_files
from core.engine.errors import Notice, TextInputError
from core.engine.reading.chinese import CANGJIE_FILE, CangjieTable, Segmenter, cangjie_text
from core.engine.reading.japanese import kana_text
from core.engine.reading.korean import jamo_text
from core.engine.reading.language_files import find_cangjie, find_pkuseg, language_data
from core.engine.reading.optional_steps import INSTALL, optional_step

log = logging.getLogger(__name__)

READING_FILE = "reading.json"
"""A bundle's own reading settings: ``{"case": "full"}`` reads full-case text (the v3 Multilingual exports are
reported to be trained on it); ``"lower"`` (the default) is upstream's lower-casing."""


def reads_full_case(bundle: Path | None) -> bool:
    """Whether the bundle declares full-case reading (its ``reading.json``); upstream lower-cases."""
    if bundle is None:
        return False
    path = Path(bundle) / READING_FILE
    try:
        settings = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError) as exc:
        log.warning("%s cannot be read (%s); the text is lower-cased as upstream does", path, exc)
        return False
    return isinstance(settings, dict) and settings.get("case") == "full"


@dataclass
class TextFrontEnd:
    """Prepares sentences for one bundle's tokenizer (``bundle``: its folder, where the Cangjie table may be)."""

    variant: str
    bundle: Path | None = None
    models_dir: Path | None = None
    lowercase: bool = True
    segmenter_factory: Callable[[Path], Segmenter] | None = None
    """Makes the word segmenter from a model folder (default ``spacy_pkuseg``); tests pass their own."""
    _told: set[str] = field(default_factory=set)
    _notices: list[Notice] = field(default_factory=list)

    @classmethod
    def for_bundle(cls, variant: str, bundle: Path | None, models_dir: Path | None = None) -> TextFrontEnd:
        return cls(variant, bundle, models_dir, lowercase=not reads_full_case(bundle))

    def model_text(self, sentence: str, language: str) -> str:
        """Steps 1–4 for a Multilingual sentence (already through ``punc_norm``): the text before ``[SPACE]``."""
        text = sentence.lower() if self.lowercase else sentence
        text = unicodedata.normalize("NFKD", text)
        text = self.language_step(text, language)
        return f"[{language.lower()}]{text}"

    def check(self, language: str) -> None:
        """Raise the error a sentence in ``language`` would raise for a missing or unreadable file (before a request
        is queued, so that it is refused at once)."""
        if language == "zh":
            self._cangjie()

    def language_step(self, text: str, language: str) -> str:
        if language == "zh":
            return cangjie_text(text, self._cangjie(), self._segmenter())
        if language == "ja":
            return kana_text(text)
        if language == "ko":
            return jamo_text(text)
        if language in ("he", "ru"):
            step = optional_step(language, language_data(self.models_dir))
            if step is None:
                folder = language_data(self.models_dir) / ("hebrew" if language == "he" else "stressonnx")
                self._tell(
                    Notice("text.step_not_installed", {"language": language, "install": _install(language, folder)})
                )
                return text
            return step(text)
        return text

    def take_notices(self) -> list[Notice]:
        """What the user should be told since the last call (each notice once per front end)."""
        notices, self._notices = self._notices, []
        return notices

    def _tell(self, notice: Notice) -> None:
        key = f"{notice.code}:{notice.data.get('language')}"
        if key not in self._told:
            self._told.add(key)
            self._notices.append(notice)
            log.info("%s", notice)

    def _cangjie(self) -> CangjieTable:
        path = find_cangjie(self.bundle, self.models_dir)
        if path is None:
            raise TextInputError(
                "text.language_file_missing",
                language="zh",
                file=CANGJIE_FILE,
                folder=str(self.bundle or language_data(self.models_dir)),
            )
        with loaded_files.lock:
            table = loaded_files.tables.get(str(path))
            if table is None:
                try:
                    table = CangjieTable.load(path)
                except (OSError, ValueError) as exc:
                    raise TextInputError(
                        "text.language_file_invalid", language="zh", file=str(path), reason=str(exc)[:200]
                    ) from exc
                loaded_files.tables[str(path)] = table
            return table

    def _segmenter(self) -> Segmenter | None:
        folder = find_pkuseg(self.models_dir)
        if folder is None:
            self._tell(Notice("text.segmenter_missing", {"language": "zh"}))
            return None
        with loaded_files.lock:
            segment = loaded_files.segmenters.get(str(folder))
            if segment is None:
                try:
                    segment = (self.segmenter_factory or pkuseg_segmenter)(folder)
                except Exception as exc:  # noqa: BLE001 - without boundaries the characters are still read
                    log.warning("the Chinese word segmenter in %s cannot be loaded: %s", folder, exc)
                    self._tell(Notice("text.segmenter_missing", {"language": "zh", "reason": str(exc)[:200]}))
                    return None
                loaded_files.segmenters[str(folder)] = segment
            return segment


def pkuseg_segmenter(folder: Path) -> Segmenter:
    """``spacy_pkuseg``'s segmenter from a model folder (no download: a folder is not a model name it fetches)."""
    from spacy_pkuseg import pkuseg

    seg: Any = pkuseg(model_name=str(folder))
    lock = threading.Lock()

    def cut(text: str) -> list[str]:
        with lock:
            return list(seg.cut(text))

    return cut


def _install(language: str, folder: Path) -> str:
    return INSTALL[language].format(folder=folder)
