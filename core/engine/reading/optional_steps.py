"""Hebrew diacritics and Russian stress: language steps that need an extra package and its model, both optional.

Upstream calls ``dicta_onnx`` for Hebrew (without a model path, so the call fails and the text goes through as it
is: upstream issue 467) and ``russian_text_stresser`` for Russian (no longer installed by default). Here:

- Hebrew: ``phonikud-onnx`` (Dicta's diacritisation model with phonetic marks) or ``dicta-onnx``, with a model file
  in ``<models>/language-data/hebrew/`` (``phonikud-1.0.int8.onnx`` or ``dicta-1.0.int8.onnx``).
- Russian: ``stressonnx``'s RUAccent pipeline (four small ONNX models, no PyTorch), with its files in
  ``<models>/language-data/stressonnx/`` (fetched by :func:`~.language_files.download_russian_stress`).

When either is absent the text goes through exactly as upstream sends it, and :data:`WHAT_IT_ADDS` says what adding
it would change. Both packages declare ``onnxruntime`` as a dependency: install them with ``pip install --no-deps``
beside ``onnxruntime-gpu``, or pip replaces the GPU build's files.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

Step = Callable[[str], str]

STRESS_SUBDIR = "ru_ruaccent"
"""Where ``stressonnx`` keeps the RUAccent files under its cache folder (the repository's layout)."""
HEBREW_MODELS = ("phonikud-1.0.int8.onnx", "dicta-1.0.int8.onnx")
WHAT_IT_ADDS = {
    "he": (
        "Hebrew is written without most vowels; the model was trained on text with its diacritics (nikud). With "
        "phonikud-onnx and its model, each word gets its vowels before it is read, so fewer words are guessed."
    ),
    "ru": (
        "Russian does not write its stress; the model was trained on text with stress marks. With stressonnx and "
        "its RUAccent model, each word gets its stress mark (U+0301), homographs included (за́мок, замо́к)."
    ),
}
INSTALL = {
    "he": "pip install --no-deps phonikud-onnx, then put phonikud-1.0.int8.onnx in {folder}",
    "ru": "pip install --no-deps stressonnx, then: python -m core languages --download ru",
}

_lock = threading.Lock()
_loaded: dict[tuple[str, str], Step | None] = {}


def hebrew_folder(data: Path) -> Path:
    return data / "hebrew"


def stress_folder(data: Path) -> Path:
    return data / "stressonnx"


def optional_step(language: str, data: Path) -> Step | None:
    """The step for ``he`` or ``ru`` when its package and model are here (made once per folder), else ``None``."""
    key = (language, str(data))
    with _lock:
        if key not in _loaded:
            _loaded[key] = _make(language, data)
        return _loaded[key]


def forget_steps() -> None:
    """Look again on the next call (after a download)."""
    with _lock:
        _loaded.clear()


def _make(language: str, data: Path) -> Step | None:
    try:
        if language == "he":
            return _hebrew(hebrew_folder(data))
        if language == "ru":
            return _russian(stress_folder(data))
    except Exception as exc:  # noqa: BLE001 - an optional step that cannot load leaves the text as upstream sends it
        log.warning("the %s language step could not be loaded (%s); the text is read without it", language, exc)
    return None


def _hebrew(folder: Path) -> Step | None:
    model = next((folder / name for name in HEBREW_MODELS if (folder / name).is_file()), None)
    if model is None:
        return None
    engine: Any
    if model.name.startswith("phonikud"):
        from phonikud_onnx import Phonikud

        engine = Phonikud(str(model))
    else:
        from dicta_onnx import Dicta

        engine = Dicta(str(model))
    return _locked(lambda text: str(engine.add_diacritics(text)))


def _russian(folder: Path) -> Step | None:
    if not folder.is_dir():
        return None
    from stressonnx import make_stressor
    from stressonnx.backends.ruaccent import _RUACCENT_FILES

    if not all((folder / STRESS_SUBDIR / name).is_file() for name in _RUACCENT_FILES):
        return None  # an incomplete folder: the package would fetch the rest from the network while reading

    stressor = make_stressor(model="ruaccent", lang="ru", cache_dir=str(folder))
    return _locked(lambda text: str(stressor(text)))


def _locked(step: Step) -> Step:
    lock = threading.Lock()  # an onnxruntime session is shared; the packages keep state between calls

    def run(text: str) -> str:
        with lock:
            return step(text)

    return run
