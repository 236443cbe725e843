"""The Wyoming server's settings and its address (``tcp://HOST:PORT``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlparse

from core.engine import InvalidOptions, SynthesisOptions

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 10200
DEFAULT_URI = f"tcp://{DEFAULT_HOST}:{DEFAULT_PORT}"
"""Wyoming's customary text-to-speech port (Piper's), on this machine only."""


@dataclass(frozen=True)
class WyomingConfig:
    max_input_chars: int = 100_000
    """The longest text one ``synthesize`` (or one stream of ``synthesize-chunk``s) may carry, as the HTTP API's."""
    max_connections: int = 16
    """Connections served at once; one more is told so (an ``error`` event) and closed."""
    max_waiting: int = 16
    """Requests allowed to wait for the worker (when the server has a request queue of its own)."""
    options: SynthesisOptions = field(default_factory=SynthesisOptions)
    """The speaking settings every request uses (the window's, or the CLI's defaults); ``language`` is the default
    language of a Multilingual model when a request names none."""
    samples_per_chunk: int = 1024
    """The largest ``audio-chunk`` in samples (wyoming-piper's default); smaller when less audio is ready."""

    @property
    def language(self) -> str | None:
        return self.options.language


def parse_uri(uri: str) -> tuple[str, int]:
    """``tcp://HOST:PORT`` (``HOST:PORT`` is taken too) → host and port (:class:`InvalidOptions` otherwise)."""
    text = uri.strip()
    if "://" not in text:
        text = "tcp://" + text
    try:
        parsed = urlparse(text)
        port = parsed.port
    except ValueError:
        raise InvalidOptions("wyoming.address", address=uri) from None
    if parsed.scheme != "tcp" or not parsed.hostname or port is None or parsed.path not in ("", "/"):
        raise InvalidOptions("wyoming.address", address=uri)
    return parsed.hostname, port
