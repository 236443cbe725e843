"""What the model reads: upstream's text preparation per variant and language (see :mod:`.front_end`), the files
some languages need (:mod:`.language_files`), which steps each language takes (:mod:`.support`), and
:func:`~.text_reading.read_text`, the one way to see it (imported from its module: it uses the tokenizer, which
uses this package)."""

from core.engine.reading.chinese import CANGJIE_FILE, CangjieTable, cangjie_text
from core.engine.reading.front_end import READING_FILE, TextFrontEnd, reads_full_case
from core.engine.reading.japanese import kana_text
from core.engine.reading.korean import jamo_text
from core.engine.reading.language_files import (
    PKUSEG,
    HubFileDownloader,
    UrlZipDownloader,
    after_download,
    cangjie_downloader,
    find_cangjie,
    find_pkuseg,
    language_data,
    model_downloader,
    pkuseg_downloader,
    stress_downloader,
    unpack_zip,
)
from core.engine.reading.punctuation import punc_norm
from core.engine.reading.support import COMMON_STEPS, DOWNLOADS, LanguageSupport, all_languages, language_support

__all__ = [
    "CANGJIE_FILE",
    "COMMON_STEPS",
    "DOWNLOADS",
    "PKUSEG",
    "READING_FILE",
    "CangjieTable",
    "HubFileDownloader",
    "LanguageSupport",
    "TextFrontEnd",
    "UrlZipDownloader",
    "after_download",
    "all_languages",
    "cangjie_downloader",
    "cangjie_text",
    "find_cangjie",
    "find_pkuseg",
    "jamo_text",
    "kana_text",
    "language_data",
    "language_support",
    "model_downloader",
    "pkuseg_downloader",
    "punc_norm",
    "reads_full_case",
    "stress_downloader",
    "unpack_zip",
]
