"""What the model reads: for a text and a language, each sentence as the language model receives it — the text after
preparation (punctuation, case, NFKD, the language's own step: Chinese Cangjie codes, Japanese kana, Korean jamo),
its tokens and their ids — with the warnings and errors of the text front end in words.

It is the window's ``python -m core text``: both call :func:`core.engine.read_text` on a reader opened with
:func:`core.engine.open_reader` (the tokenizer only, no sessions). Reading runs on a thread of its own
(:class:`ReadingJob`): the first Japanese or Chinese sentence loads a dictionary or a segmenter, which takes a second.
Tokens are shown as chips; an unknown token (``[UNK]``, a character the model has no token for) is marked red, so a
user sees why a word is mispronounced or skipped. The text can be edited in the dialog to try other wording; the
Speak tab's text or the segment it came from is not changed.

Opened from the Speak tab ("What the model reads…") and from a segment's menu in the studio; :func:`show_model_reading`
keeps one dialog per owner and brings it up to date.
"""

from __future__ import annotations

import html
import json
import logging
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, QTimer, QUrl, Signal, Slot
from PySide6.QtGui import QCloseEvent, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.engine import ChatterboxError, SentenceReading, language_label, open_reader, read_text
from core.wording import describe_error, describe_notice

from ..background_job import BackgroundJob
from .message_bar import ERROR_COLORS, box_style, warning_label_style

log = logging.getLogger(__name__)

UNKNOWN = "[UNK]"
SPACE = "[SPACE]"
READ_DELAY_MS = 400
"""The text is read again this long after the last keystroke in the dialog."""
SHOWN_SENTENCES = 200
"""Sentences drawn at most (a whole chapter's tokens would make a page nobody reads); Copy as JSON has them all."""
NO_MODEL = (
    "Choose a model first (Models → Choose model…): what the model reads depends on its tokenizer and, for Chinese, on "
    "files in its folder."
)
NO_TEXT = "Type some text to see what the model reads."
ENGLISH_ONLY_TIP = "This model reads English only; the Multilingual model reads 23 languages."
PAD = "<span style='font-size:5pt'>&nbsp;</span>"
"""A chip's padding on either side: a small no-break space (Qt's rich text has no padding for inline text, and a
hair space collapses into the space between chips, which then takes the chip's background)."""
WORD_JOINER = "\u2060"
BREAKS = frozenset("|-/\\–—‐")
"""Characters a line may break after; a chip that holds one gets word joiners between its characters."""
CHIP_COLORS = {
    "word": ("#1b1b1b", "#dde7f6"),
    "marker": ("#4a4a4a", "#e6e6e6"),
    "cangjie": ("#0b3d2e", "#d3f0e3"),
    "unknown": ("#ffffff", "#c62828"),
}
"""Text and background of each kind of token chip: fixed dark-on-light pairs (white on red for [UNK]), readable in
light and dark mode alike."""


@dataclass(frozen=True)
class ReadingRequest:
    bundle: Path | None
    text: str
    language: str | None
    models_dir: Path | None = None
    serial: int = 0


@dataclass
class ReadingResult:
    """What one reading found; built on the reading thread, shown on the GUI thread."""

    request: ReadingRequest
    variant: str | None = None
    languages: tuple[str, ...] = ()
    """The languages the model reads (empty for the English-only models)."""
    language: str | None = None
    """The language the text was read in (``None``: an English-only model)."""
    readings: list[SentenceReading] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    """Warnings in words (a missing word segmenter, a step not installed)."""
    error: str | None = None
    """Why nothing could be read, in words."""

    @property
    def tokens(self) -> int:
        return sum(len(r.tokens) for r in self.readings)

    @property
    def unknown(self) -> int:
        return sum(r.tokens.count(UNKNOWN) for r in self.readings)


def read_for_window(request: ReadingRequest) -> ReadingResult:
    """Open the bundle's reader and read the text (on the reading thread); errors come back in words."""
    result = ReadingResult(request)
    if request.bundle is None:
        result.error = NO_MODEL
        return result
    try:
        reader = open_reader(request.bundle, request.models_dir)
        result.variant = reader.variant
        result.languages = tuple(reader.languages) if reader.variant == "multilingual" else ()
        result.language = (request.language or "en") if result.languages else None
        if not request.text.strip():  # the model's languages are offered all the same
            result.error = NO_TEXT
            return result
        try:
            result.readings = read_text(reader, request.text, result.language)
        finally:
            result.notices = [describe_notice(n, "window") or "" for n in reader.take_notices()]
    except ChatterboxError as exc:
        result.error = describe_error(exc, "window")
    except OSError as exc:
        result.error = f"The model folder cannot be read: {describe_error(exc, 'window')}"
    except Exception as exc:  # shown in the dialog: a reading must never take the window down
        log.exception("reading %r failed", request.text[:80])
        result.error = f"The text could not be read: {exc}"
    return result


def reading_json(result: ReadingResult) -> str:
    """The JSON of ``python -m core text --json`` with the language it was read in."""
    sentences = [
        {"text": r.text, "prepared": r.prepared, "tokens": r.tokens, "ids": r.ids}
        | ({"skipped_tags": r.dropped_tags} if r.dropped_tags else {})
        for r in result.readings
    ]
    data: dict[str, Any] = {"language": result.language, "sentences": sentences}
    if result.readings:
        data["ids"] = result.readings[0].ids
    return json.dumps(data, ensure_ascii=False, indent=2)


def token_kind(token: str) -> str:
    if token == UNKNOWN:
        return "unknown"
    if token.startswith("[cj_") and token.endswith("]"):
        return "cangjie"
    if len(token) > 2 and token.startswith("[") and token.endswith("]"):
        return "marker"
    if token.startswith("<") and token.endswith(">") and token[1:-1].isdigit():
        return "marker"
    return "word"


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet (Turbo's tokenizer): each of the 256 bytes as a printable character, reversed."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted = [b for b in range(256) if b not in printable]
    return {chr(b): b for b in printable} | {chr(256 + n): b for n, b in enumerate(shifted)}


BYTE_DECODER = _byte_decoder()


def token_label(token: str, byte_level: bool = False) -> str:
    """How a token is drawn: ``[SPACE]`` (and a byte-level token's leading space, ``Ġ``) as ␣, a byte-level token as
    the text its bytes spell (a byte that is part of a character split across tokens as ``\\xc3``), a lone combining
    mark on a dotted circle (NFKD splits ``é`` into ``e`` and U+0301, which alone would be invisible), spaces as
    middle dots."""
    if token == SPACE:
        return "␣"
    if byte_level and token and all(c in BYTE_DECODER for c in token):
        token = bytes(BYTE_DECODER[c] for c in token).decode("utf-8", errors="backslashreplace")
        if token.startswith(" "):
            token = "␣" + token[1:]
    if token and all(unicodedata.combining(c) for c in token):
        return "◌" + token
    return token.replace(" ", "·")


def reading_html(result: ReadingResult, mono: str) -> str:
    """The sentences as rich text: original, prepared text, token chips (anchors ``tok:S:I`` for the hover line),
    ids."""
    parts: list[str] = []
    byte_level = result.variant == "turbo"
    shown = result.readings[:SHOWN_SENTENCES]
    for number, reading in enumerate(shown, 1):
        chips = " ".join(_chip(token, number, index, byte_level) for index, token in enumerate(reading.tokens))
        ids = " ".join(str(i) for i in reading.ids)
        rows = [
            ("Prepared", _esc(reading.prepared)),
            (f"Tokens ({len(reading.tokens)})", f"<p style='margin:0; line-height:145%'>{chips}</p>"),
            ("Ids", f'<span style="font-family:{mono}; color:#6b6b6b">{ids}</span>'),
        ]
        if reading.dropped_tags:
            rows.append(("Skipped", _esc(" ".join(reading.dropped_tags)) + " (tags this model does not speak)"))
        unknown = reading.tokens.count(UNKNOWN)
        if unknown:
            rows.append(
                (
                    "",
                    f"<span style='color:#b71c1c'>{unknown} unknown token{'s' if unknown > 1 else ''}: characters the "
                    "model has no token for are not said as written.</span>",
                )
            )
        body = "".join(
            f"<tr><td width='110' style='color:#6b6b6b; padding:2px 8px 2px 0'>{label}</td>"
            f"<td style='padding:2px 0'>{value}</td></tr>"
            for label, value in rows
        )
        parts.append(
            f"<p style='margin-top:{14 if number > 1 else 2}px; margin-bottom:4px'><b>{number}.</b> "
            f"{_esc(reading.text)}</p><table width='100%' cellspacing='0' cellpadding='0'>{body}</table>"
        )
    hidden = len(result.readings) - len(shown)
    if hidden:
        parts.append(
            f"<p style='margin-top:14px; color:#6b6b6b'>… and {hidden:,} more sentences "
            "(Copy as JSON has them all).</p>"
        )
    return "".join(parts)


def _chip(token: str, sentence: int, index: int, byte_level: bool = False) -> str:
    fg, bg = CHIP_COLORS[token_kind(token)]
    weight = "font-weight:600;" if token == UNKNOWN else ""
    label = token_label(token, byte_level)
    if len(label) > 1 and BREAKS.intersection(label):
        label = WORD_JOINER.join(label)  # one chip never breaks over two lines (``<|endoftext|>`` would, at ``|``)
    return (
        f"<a href='tok:{sentence}:{index}' style='color:{fg}; background-color:{bg}; text-decoration:none; {weight}'>"
        f"{PAD}{_esc(label)}{PAD}</a>"
    )


def _esc(text: str) -> str:
    return html.escape(text, quote=False)


class ReadingJob(BackgroundJob):
    """One reading at a time on its own thread; :attr:`done` carries the :class:`ReadingResult`."""

    done = Signal(object)

    def start(self, request: ReadingRequest) -> bool:
        return self._start(self._run, (request,), "model-reading")

    def _run(self, request: ReadingRequest) -> None:
        self._put("done", read_for_window(request))

    def _deliver(self, kind: str, value: Any) -> None:
        self.done.emit(value)

    def wait(self, timeout: float = 10.0) -> bool:
        """Wait for a running reading to end (the dialog closes); ``False`` if it did not end in time."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        self._drain()
        return not thread.is_alive()


class ModelReadingDialog(QDialog):
    """``shown`` is emitted each time a reading (or its error) is on screen."""

    shown = Signal()

    def __init__(
        self,
        bundle: Path | None,
        text: str,
        language: str | None,
        models_dir: Path | None = None,
        source: str = "",
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.bundle, self.models_dir = bundle, models_dir
        self.reading: ReadingResult | None = None
        self._serial = 0
        self._wanted: ReadingRequest | None = None
        """A reading asked for while another ran: started when that one ends."""
        self._language = (language or "en").split("-")[0].lower()
        self.job = ReadingJob(self)
        self._build_ui()
        self._connect_signals()
        self.set_source(bundle, text, language, source)

    # --- construction ------------------------------------------------------------------------------------------
    def _build_ui(self) -> None:
        self.setWindowTitle("What the model reads")
        self.setSizeGripEnabled(True)
        self.resize(780, 600)
        self.intro = QLabel(
            "Each sentence as the model receives it: the text after preparation, its tokens and their ids. "
            "A red <b>[UNK]</b> is a character the model has no token for: it is not said as written.",
            self,
        )
        self.intro.setWordWrap(True)
        self.language = QComboBox(self)
        self.language.setAccessibleName("Language")
        self.language.setMinimumContentsLength(14)
        self.language.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        language_caption = QLabel("&Language:", self)
        language_caption.setBuddy(self.language)
        self.model_label = QLabel(self)
        self.model_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model_label.setStyleSheet("color: palette(placeholder-text);")
        self.editor = QPlainTextEdit(self)
        self.editor.setAccessibleName("Text to read")
        self.editor.setTabChangesFocus(True)
        self.editor.setPlaceholderText(NO_TEXT)
        lines = self.editor.fontMetrics().lineSpacing()
        self.editor.setFixedHeight(lines * 4 + 14)  # four lines: the sentences below get the room
        self.source_note = QLabel(self)
        self.source_note.setWordWrap(True)
        self.source_note.setStyleSheet("color: palette(placeholder-text);")
        self.error = QLabel(self)
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.error.setStyleSheet(box_style(ERROR_COLORS) + " padding: 4px 6px;")
        self.error.hide()
        self.warnings = QLabel(self)
        self.warnings.setWordWrap(True)
        self.warnings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warnings.setStyleSheet(warning_label_style())
        self.warnings.hide()
        self.view = QTextBrowser(self)
        self.view.setOpenLinks(False)
        self.view.setAccessibleName("What the model reads")
        self.view.setPlaceholderText("Reading…")
        self.summary = QLabel(self)
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.hover = QLabel(self)  # which token the pointer is on, with its id
        self.hover.setTextFormat(Qt.TextFormat.PlainText)  # tokens such as <|endoftext|> are not markup
        self.hover.setStyleSheet("color: palette(placeholder-text);")
        self.copy_button = QPushButton("&Copy as JSON", self)
        self.copy_button.setToolTip(
            "Copy every sentence's text, prepared text, tokens and ids (as python -m core text)"
        )
        self.copy_button.setEnabled(False)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)

        top = QHBoxLayout()
        top.addWidget(language_caption)
        top.addWidget(self.language)
        top.addSpacing(12)
        top.addWidget(self.model_label, 1)
        column = QVBoxLayout(self)
        column.addWidget(self.intro)
        column.addLayout(top)
        column.addWidget(self.editor)
        column.addWidget(self.source_note)
        column.addWidget(self.error)
        column.addWidget(self.warnings)
        column.addWidget(self.view, 1)
        column.addWidget(self.summary)
        column.addWidget(self.hover)
        column.addWidget(self.buttons)

        self._read_timer = QTimer(self)
        self._read_timer.setSingleShot(True)
        self._read_timer.setInterval(READ_DELAY_MS)

    def _connect_signals(self) -> None:
        self.job.done.connect(self._on_read)
        self.editor.textChanged.connect(self._read_timer.start)
        self._read_timer.timeout.connect(self.read)
        self.language.currentIndexChanged.connect(self._on_language_changed)
        self.view.highlighted.connect(self._on_token_hovered)
        self.copy_button.clicked.connect(self.copy_json)
        self.buttons.rejected.connect(self.reject)

    # --- what it reads -----------------------------------------------------------------------------------------
    def set_source(self, bundle: Path | None, text: str, language: str | None, source: str = "") -> None:
        """Show ``text`` as the model of ``bundle`` reads it in ``language``; ``source`` says where it came from."""
        self.bundle = bundle
        self._language = (language or self._language or "en").split("-")[0].lower()
        self.setWindowTitle(f"What the model reads — {source}" if source else "What the model reads")
        self.source_note.setText(
            f"From {source}. Edit the text to try other wording: nothing is changed there."
            if source
            else "Edit the text to try other wording."
        )
        self.model_label.setText(f"Model: {bundle.name}" if bundle is not None else "No model")
        self.model_label.setToolTip(str(bundle) if bundle is not None else "")
        self._fill_languages(None)
        self.editor.blockSignals(True)
        self.editor.setPlainText(text)
        self.editor.blockSignals(False)
        self.read()

    @property
    def text(self) -> str:
        return self.editor.toPlainText()

    @property
    def busy(self) -> bool:
        return self.job.running

    @Slot()
    def read(self) -> None:
        """Read the dialog's text again (on the reading thread; a reading asked for meanwhile waits its turn)."""
        self._read_timer.stop()
        self._serial += 1
        request = ReadingRequest(self.bundle, self.text, self._language, self.models_dir, self._serial)
        self.summary.setText("Reading…")
        self.summary.show()
        self.view.setPlaceholderText("Reading…")
        if not self.job.start(request):
            self._wanted = request

    @Slot(object)
    def _on_read(self, result: ReadingResult) -> None:
        wanted, self._wanted = self._wanted, None
        if wanted is not None:
            self.job.start(wanted)  # the text changed meanwhile: this result is already out of date
            return
        if result.request.serial != self._serial:
            return
        self.reading = result
        if result.variant is not None:
            self._fill_languages(result)
        self._show(result)
        self.shown.emit()

    def _show(self, result: ReadingResult) -> None:
        error = result.error if result.error != NO_TEXT else None  # no text is not a fault: the view says it
        self.error.setText(error or "")
        self.error.setVisible(bool(error))
        self.warnings.setText("\n".join(result.notices))
        self.warnings.setVisible(bool(result.notices))
        self.view.document().setDefaultStyleSheet("a { text-decoration: none; }")
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont).family()
        self.view.setHtml(reading_html(result, f"'{mono}', monospace"))  # inside style="…"
        self.copy_button.setEnabled(bool(result.readings))
        self.view.setPlaceholderText(
            NO_TEXT if result.error == NO_TEXT else "Nothing the model can read yet: see the message above."
        )
        self.hover.setText("Point at a token to see its id.")
        self.hover.setVisible(bool(result.readings))
        self.summary.setVisible(bool(result.readings))
        if not result.readings:
            return
        n = len(result.readings)
        words = [f"{n:,} sentence{'s' if n > 1 else ''}", f"{result.tokens:,} tokens"]
        if result.language:
            words.insert(0, language_label(result.language))
        if result.unknown:
            words.append(f"<span style='color:#c62828'><b>{result.unknown} unknown ([UNK])</b></span>")
        self.summary.setText(" · ".join(words))

    def _fill_languages(self, result: ReadingResult | None) -> None:
        """The model's languages once it is known (until then, the one asked for)."""
        codes: tuple[str, ...] = (self._language,)
        english_only = False
        if result is not None:
            english_only = not result.languages
            codes = ("en",) if english_only else result.languages
            if result.languages and self._language not in codes:
                codes = (*codes, self._language)  # kept, so that the error says why it cannot be read
        current = tuple(self.language.itemData(i) for i in range(self.language.count()))
        if current != codes:
            self.language.blockSignals(True)
            self.language.clear()
            for code in codes:
                self.language.addItem(language_label(code), code)
            self.language.blockSignals(False)
        self.language.blockSignals(True)
        self.language.setCurrentIndex(max(0, self.language.findData("en" if english_only else self._language)))
        self.language.blockSignals(False)
        self.language.setEnabled(not english_only)
        self.language.setToolTip(ENGLISH_ONLY_TIP if english_only else "The language the text is read in")

    @Slot(int)
    def _on_language_changed(self, index: int) -> None:
        code = self.language.itemData(index)
        if code and code != self._language:
            self._language = code
            self.read()

    @Slot(QUrl)
    def _on_token_hovered(self, url: QUrl) -> None:
        result = self.reading
        parts = url.toString().split(":")
        if result is None or len(parts) != 3 or parts[0] != "tok":
            self.hover.setText("Point at a token to see its id." if result and result.readings else "")
            return
        reading = result.readings[int(parts[1]) - 1]
        index = int(parts[2])
        token = reading.tokens[index]
        label = token_label(token, result.variant == "turbo")
        shown = token if label == token else f"{label} ({token})"
        meaning = {
            "unknown": " — unknown: the model has no token for this character",
            "cangjie": " — a Cangjie code: part of a Chinese character",
            "marker": " — a marker of the model's prompt",
        }.get(token_kind(token), "")
        self.hover.setText(
            f"Sentence {parts[1]}, token {index + 1} of {len(reading.tokens)}: {shown} → id {reading.ids[index]}"
            + meaning
        )

    @Slot()
    def copy_json(self) -> None:
        if self.reading is not None and self.reading.readings:
            QGuiApplication.clipboard().setText(reading_json(self.reading))
            self.hover.setText("Copied as JSON.")

    # --- closing -----------------------------------------------------------------------------------------------
    def done(self, code: int) -> None:
        self._stop()
        super().done(code)

    def closeEvent(self, event: QCloseEvent) -> None:
        self._stop()
        super().closeEvent(event)

    def _stop(self) -> None:
        """A reading still running ends within a second or two (a dictionary loading): waited for, not left behind."""
        self._read_timer.stop()
        self._wanted = None
        if not self.job.wait(10.0):
            log.warning("a reading did not end within 10 s")


def show_model_reading(
    owner: QWidget,
    bundle: Path | None,
    text: str,
    language: str | None,
    models_dir: Path | None = None,
    source: str = "",
) -> ModelReadingDialog:
    """Open (or bring up to date and raise) ``owner``'s "What the model reads" dialog; it does not block."""
    dialog = getattr(owner, "_model_reading_dialog", None)
    if isinstance(dialog, ModelReadingDialog):
        dialog.models_dir = models_dir
        dialog.set_source(bundle, text, language, source)
    else:
        dialog = ModelReadingDialog(bundle, text, language, models_dir, source, owner)
        owner._model_reading_dialog = dialog  # type: ignore[attr-defined]
    dialog.show()
    dialog.raise_()
    dialog.activateWindow()
    return dialog
