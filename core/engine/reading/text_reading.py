"""The one way to see what the model reads: a text split as a request splits it, each sentence through
:meth:`~core.engine.tokenizer.TextTokenizer.read`. ``python -m core text`` and the window's "What the model reads"
both call :func:`read_text`; :func:`open_reader` opens only what that needs (the tokenizer, and from the embedding
graph its inputs and the text table's height), not the four sessions."""

from __future__ import annotations

from pathlib import Path

from core.engine.errors import ModelSignatureError
from core.engine.model.bundle import locate_bundle
from core.engine.reading.front_end import TextFrontEnd
from core.engine.text import Sentence, split_text
from core.engine.tokenizer import SentenceReading, TextTokenizer


def open_reader(bundle: Path | str, models_dir: Path | None = None) -> TextTokenizer:
    """A tokenizer for ``bundle`` as a loaded model's (variant, text table, language steps), without sessions."""
    files = locate_bundle(bundle)
    variant, rows = _embedding_facts(files.graphs["embed_tokens"])
    if variant != "turbo":
        variant = "multilingual" if TextTokenizer.is_multilingual(files.tokenizer) else "original"
    front_end = TextFrontEnd.for_bundle(variant, files.root, models_dir)
    return TextTokenizer(files.tokenizer, variant, rows, front_end)


def read_text(tokenizer: TextTokenizer, text: str, language: str | None = None) -> list[SentenceReading]:
    """Every sentence of ``text`` (split as a Speak request is) as the model reads it."""
    return [tokenizer.read(p.text, language) for p in split_text(text) if isinstance(p, Sentence)]


def _embedding_facts(path: Path) -> tuple[str, int | None]:
    """``turbo`` or ``llama`` from the embedding graph's inputs, and its text table's rows (``None`` if not found)."""
    import onnx

    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:
        raise ModelSignatureError("bundle.graph_unreadable", path=str(path), reason=str(exc)[:200]) from exc
    inputs = {i.name for i in model.graph.input}
    variant = "llama" if "exaggeration" in inputs else "turbo"
    tables = [
        t
        for t in model.graph.initializer
        if len(t.dims) == 2 and "text" in t.name.lower() and "pos" not in t.name.lower()
    ]
    return variant, (int(tables[0].dims[0]) if len(tables) == 1 and variant != "turbo" else None)
