"""Why a take cannot be transcribed: :class:`RecognitionUnavailable`, in a module of its own so that the recognisers
and :mod:`core.narration.screening.recognition` (which chooses among them) can both raise it without importing each
other."""

from __future__ import annotations

from typing import Any

from core.engine import ChatterboxError, language_label

INSTALL_WHISPER = "pip install '.[asr]'"
INSTALL_SPHINX = "pip install pocketsphinx"


class RecognitionUnavailable(ChatterboxError):
    """Speech recognition cannot run here; ``code`` says why and ``data`` holds the facts:

    - ``asr.not_installed``: the recogniser's package is missing (``package``, ``install``: the command);
    - ``asr.language``: the recogniser does not know the project's language (``recogniser``, ``language``,
      ``supported``);
    - ``asr.model_missing``: the Whisper model is not downloaded and was not (or could not be) fetched (``model``,
      ``revision``, ``folder``, ``reason``);
    - ``asr.failed``: the recogniser failed on a take (``recogniser``, ``reason``).

    ``str()`` is :attr:`message`, an English sentence that says what to do (screening is optional, so its front ends
    may show it as it is)."""

    @property
    def message(self) -> str:
        return _message(self.code, self.data)

    def __str__(self) -> str:
        return self.message


def _message(code: str, data: dict[str, Any]) -> str:
    get = data.get
    if code == "asr.not_installed":
        return f"Speech recognition needs {get('package', 'faster-whisper')}: {get('install', INSTALL_WHISPER)}"
    if code == "asr.language":
        return (
            f"{get('recogniser', 'This recogniser')} recognises only "
            f"{', '.join(language_label(code) for code in get('supported', ()))}, not "
            f"{language_label(str(get('language')))}. For other languages install faster-whisper "
            f"({INSTALL_WHISPER}) and download its model."
        )
    if code == "asr.model_missing":
        reason = f" ({get('reason')})" if get("reason") else ""
        return (
            f"The speech-recognition model {get('model')} is not downloaded (looked in {get('folder')}){reason}. "
            "Choose the Whisper recogniser while online to download it once, or use pocketsphinx for English."
        )
    return f"Speech recognition with {get('recogniser', 'the recogniser')} failed: {get('reason', code)}"
