"""Which steps each of the Multilingual model's 23 languages goes through, and which of their files are here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.engine.languages import LANGUAGE_NAMES
from core.engine.reading.language_files import find_cangjie, find_pkuseg, language_data, russian_stress_ready
from core.engine.reading.optional_steps import HEBREW_MODELS, WHAT_IT_ADDS, hebrew_folder

COMMON_STEPS = ("punc_norm", "lower-case", "NFKD", "[xx] tag", "[SPACE]")
LANGUAGE_STEPS = {
    "zh": ("Cangjie codes (Cangjie5_TC.json)", "word boundaries (spacy_pkuseg model, optional)"),
    "ja": ("kanji read as hiragana (pykakasi)",),
    "ko": ("Hangul as jamo",),
    "he": ("diacritics (phonikud-onnx, optional)",),
    "ru": ("stress marks (stressonnx, optional)",),
}
DOWNLOADS = {"zh": "Cangjie table (required) and word segmenter (optional)", "ru": "RUAccent stress model"}
"""What ``python -m core languages --download CODE`` fetches."""


@dataclass(frozen=True)
class LanguageSupport:
    code: str
    name: str
    steps: tuple[str, ...]
    """The language's own steps, between NFKD and the tag (upstream's order); the common ones are the same for all."""
    required_missing: tuple[str, ...]
    """Files without which its text cannot be read (the Cangjie table for Chinese)."""
    optional_missing: tuple[str, ...]
    """What is absent that would bring the text closer to what the model was trained on."""
    improves: str
    """What the optional part adds, in a sentence (empty when there is none)."""

    @property
    def ready(self) -> bool:
        return not self.required_missing


def language_support(code: str, bundle: Path | None = None, models_dir: Path | None = None) -> LanguageSupport:
    required: list[str] = []
    optional: list[str] = []
    if code == "zh":
        if find_cangjie(bundle, models_dir) is None:
            required.append("Cangjie5_TC.json")
        if find_pkuseg(models_dir) is None:
            optional.append("spacy_pkuseg model (word boundaries)")
    elif code == "he":
        folder = hebrew_folder(language_data(models_dir))
        if not any((folder / name).is_file() for name in HEBREW_MODELS):
            optional.append(f"phonikud-onnx and {HEBREW_MODELS[0]} in {folder}")
    elif code == "ru" and not russian_stress_ready(models_dir):
        optional.append("stressonnx and its RUAccent model")
    improves = WHAT_IT_ADDS.get(code, "")
    if code == "zh":
        improves = "With the word segmenter, word boundaries are read as spaces, as the model was trained."
    return LanguageSupport(
        code, LANGUAGE_NAMES.get(code, code), LANGUAGE_STEPS.get(code, ()), tuple(required), tuple(optional), improves
    )


def all_languages(bundle: Path | None = None, models_dir: Path | None = None) -> list[LanguageSupport]:
    return [language_support(code, bundle, models_dir) for code in sorted(LANGUAGE_NAMES)]
