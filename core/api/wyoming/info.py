"""``describe`` → ``info``: the one text-to-speech program this server is, with the voices a request may name.

Home Assistant's Wyoming integration sends a voice's name and never a language (``SynthesizeVoice(name, speaker)``),
and lists each voice under every language of its ``languages`` (sorted by ``description``). So a Multilingual model
offers each voice once per language, ``Name@code`` with that one language (``Narrator@fr`` under French), and the
plain names besides (``Narrator``, ``default``), listed under the server's default language, which they speak when a
request names no language: automations that name them keep working. English-only models offer the plain names only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from wyoming.info import Attribution, Info, TtsProgram, TtsVoice

from core.engine import Capabilities, language_label
from core.voices import VoiceLibrary

PROGRAM = "chatterbox-desk"
DEFAULT_VOICE = "default"
"""The model's own voice, as a voice name (as the HTTP API names it)."""
LANGUAGE_MARK = "@"
"""Between a voice's name and a language code: ``Narrator@fr``."""
PROGRAM_ATTRIBUTION = Attribution(
    name="Chatterbox Desk (Chatterbox TTS by Resemble AI)", url="https://github.com/resemble-ai/chatterbox"
)
VOICE_ATTRIBUTION = Attribution(name="this machine's voice library", url="")
_LANGUAGE_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8})?")
"""What may follow the mark: ``fr``, ``FR``, ``fr-FR``, ``fr_FR`` (``me@home`` stays a name)."""


APP_VERSION = "0.1.0"
"""The app's version (pyproject.toml's, as ``app.__version__``; ``core`` cannot import the app, and reads no
package metadata: tests/security keeps importlib out of core)."""


def app_version() -> str | None:
    return APP_VERSION


def languages(caps: Capabilities) -> list[str]:
    """The languages the loaded model speaks: the Multilingual model's codes, ``en`` for the English models."""
    return list(caps.languages) or ["en"]


def default_language(caps: Capabilities, configured: str | None) -> str:
    """The language of a request that names none: the server's (``WyomingConfig.language``) when the model speaks
    it, else English (the engine's own default)."""
    spoken = languages(caps)
    if configured in spoken:
        return configured
    return "en" if "en" in spoken else spoken[0]


def match_language(asked: str, caps: Capabilities) -> str | None:
    """The model's code for ``asked`` (``fr``, ``FR``, ``fr-FR`` and ``fr_FR`` are ``fr``); ``None`` if it has none."""
    code = asked.strip().lower().replace("_", "-")
    for candidate in (code, code.split("-")[0]):
        if candidate in languages(caps):
            return candidate
    return None


@dataclass(frozen=True)
class VoiceName:
    """A requested voice name, read: the voice, and the language its ``@code`` asks for (``None``: none)."""

    voice: str | None
    language: str | None = None


def read_voice_name(name: str, is_voice: bool) -> VoiceName:
    """``Narrator@fr`` → ``Narrator`` and ``fr``. A name that is a voice as it stands (``is_voice``: a library voice
    may have an ``@`` in its name), or whose ending is no language tag, is a plain name."""
    base, mark, code = name.rpartition(LANGUAGE_MARK)
    if is_voice or not mark or not base.strip() or not _LANGUAGE_TAG.fullmatch(code.strip()):
        return VoiceName(name)
    return VoiceName(base, code.strip())


def describe_server(caps: Capabilities, library: VoiceLibrary, language: str | None = None) -> Info:
    """The ``info`` answer: each library voice, and the model's own voice where it has one, by its plain name (in
    the server's default language, ``language`` when the model speaks it) and, on a Multilingual model, as
    ``Name@code`` in each language the model speaks; text streaming supported."""
    spoken = default_language(caps, language)
    plain: list[tuple[str, Attribution, str]] = [(v.name, VOICE_ATTRIBUTION, v.name) for v in library.voices()]
    if caps.has_default_voice and not any(name.casefold() == DEFAULT_VOICE for name, _, _ in plain):
        plain.insert(0, (DEFAULT_VOICE, PROGRAM_ATTRIBUTION, f"Chatterbox {caps.variant} (the model's own voice)"))
    taken = {name.casefold() for name, _, _ in plain}
    voices = []
    for name, attribution, description in plain:
        if caps.languages:
            voices.append(
                _voice(name, attribution, f"{description} – {language_label(spoken)}, the server's default", spoken)
            )
        else:
            voices.append(_voice(name, attribution, description, spoken))
        for code in caps.languages:
            variant = f"{name}{LANGUAGE_MARK}{code}"
            if variant.casefold() not in taken:  # a library voice of that very name is that voice
                voices.append(_voice(variant, attribution, f"{description} – {language_label(code)}", code))
    program = TtsProgram(
        name=PROGRAM,
        attribution=PROGRAM_ATTRIBUTION,
        installed=True,
        description=f"Chatterbox Desk: Chatterbox {caps.variant}, voices cloned on this machine",
        version=app_version(),
        voices=voices,
        supports_synthesize_streaming=True,
    )
    return Info(tts=[program])


def _voice(name: str, attribution: Attribution, description: str, language: str) -> TtsVoice:
    return TtsVoice(
        name=name,
        attribution=attribution,
        installed=True,
        description=description,
        version=None,
        languages=[language],
    )
