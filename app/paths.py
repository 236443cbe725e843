"""Where the app keeps its files: user data (models, voices, history), cache and logs — never the install folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from core.engine import conditioning_cache_dir, user_cache, user_data, user_logs, voices_dir


@dataclass(frozen=True)
class AppPaths:
    data: Path
    cache: Path
    logs: Path

    @classmethod
    def default(cls) -> AppPaths:
        return cls(data=user_data(), cache=user_cache(), logs=user_logs())

    @classmethod
    def under(cls, root: Path) -> AppPaths:
        root = Path(root)
        return cls(data=root / "data", cache=root / "cache", logs=root / "logs")

    @property
    def conditioning(self) -> Path:
        return conditioning_cache_dir(self.cache)

    @property
    def models(self) -> Path:
        return self.data / "models"

    @property
    def recordings(self) -> Path:
        """References recorded from the microphone or trimmed in the app."""
        return self.data / "recordings"

    @property
    def voices(self) -> Path:
        return voices_dir(self.data)

    @property
    def history(self) -> Path:
        return self.data / "history"
