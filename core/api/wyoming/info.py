"""``describe`` → ``info``: the one text-to-speech program this server is, with the voices a request may name."""

from __future__ import annotations

from wyoming.info import Attribution, Info, TtsProgram, TtsVoice

from core.engine import Capabilities
from core.voices import VoiceLibrary

PROGRAM = "chatterbox-desk"
DEFAULT_VOICE = "default"
"""The model's own voice, as a voice name (as the HTTP API names it)."""
PROGRAM_ATTRIBUTION = Attribution(
    name="Chatterbox Desk (Chatterbox TTS by Resemble AI)", url="https://github.com/resemble-ai/chatterbox"
)
VOICE_ATTRIBUTION = Attribution(name="this machine's voice library", url="")


APP_VERSION = "0.1.0"
"""The app's version (pyproject.toml's, as ``app.__version__``; ``core`` cannot import the app, and reads no
package metadata: tests/security keeps importlib out of core)."""


def app_version() -> str | None:
    return APP_VERSION


def languages(caps: Capabilities) -> list[str]:
    """The languages the loaded model speaks: the Multilingual model's codes, ``en`` for the English models."""
    return list(caps.languages) or ["en"]


def describe_server(caps: Capabilities, library: VoiceLibrary) -> Info:
    """The ``info`` answer: each library voice, and the model's own voice where it has one, in every language the
    loaded model speaks; text streaming supported."""
    spoken = languages(caps)
    voices = [
        TtsVoice(
            name=v.name,
            attribution=VOICE_ATTRIBUTION,
            installed=True,
            description=v.name,
            version=None,
            languages=list(spoken),
        )
        for v in library.voices()
    ]
    if caps.has_default_voice and not any(v.name.casefold() == DEFAULT_VOICE for v in voices):
        voices.insert(
            0,
            TtsVoice(
                name=DEFAULT_VOICE,
                attribution=PROGRAM_ATTRIBUTION,
                installed=True,
                description=f"Chatterbox {caps.variant} (the model's own voice)",
                version=None,
                languages=list(spoken),
            ),
        )
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
