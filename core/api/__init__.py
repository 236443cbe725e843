"""The local OpenAI-compatible speech API: HTTP routes over the engine's inference worker."""

from core.api.server import ApiConfig, ApiServer, check_bind, create_app

__all__ = ["ApiConfig", "ApiServer", "check_bind", "create_app"]
