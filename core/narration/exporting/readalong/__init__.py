"""The read-along export: an EPUB 3 with Media Overlays (``export.py``: ``export_readalong``), from the reader's own
book (``book.py``, ``xhtml_spans.py``, ``refines.py``) or made from the project's text (``scratch.py``), its audio
per chapter (``audio.py``), overlays (``smil.py``) and their word-by-word pars (``words.py``), the archive written as
a stream (``epub_writer.py``) and the checks made before any work (``check.py``). Only the checks are named here: the
export's plan imports them, and the export itself imports the plan."""

from core.narration.exporting.readalong.check import check_readalong, is_readalong

__all__ = ["check_readalong", "is_readalong"]
