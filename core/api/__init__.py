"""The local OpenAI-compatible speech API (HTTP routes) and the Wyoming text-to-speech server (Home Assistant),
both over the engine's inference worker."""

from core.api.server import ApiConfig, ApiServer, check_bind, create_app
from core.api.wyoming import DEFAULT_URI as WYOMING_URI
from core.api.wyoming import WyomingConfig, WyomingServer, parse_uri

__all__ = [
    "WYOMING_URI",
    "ApiConfig",
    "ApiServer",
    "WyomingConfig",
    "WyomingServer",
    "check_bind",
    "create_app",
    "parse_uri",
]
