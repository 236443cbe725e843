"""Wyoming text to speech (Home Assistant's protocol for local voices) on the one inference worker: ``server`` the
socket and its loop, ``handler`` one connection's events and speech, ``sentences`` streamed text cut at sentence
ends, ``events`` reading events with limits, ``info`` the ``describe`` answer, ``discovery`` zeroconf, ``config``
the settings and the address."""

from core.api.wyoming.config import DEFAULT_URI, WyomingConfig, parse_uri
from core.api.wyoming.server import WyomingServer

__all__ = ["DEFAULT_URI", "WyomingConfig", "WyomingServer", "parse_uri"]
