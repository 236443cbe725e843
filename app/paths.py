"""Where the app keeps its files: user data (models, voices, history), cache and logs — never the install folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP = "ChatterboxDesk"


@dataclass(frozen=True)
class AppPaths:
    data: Path
    cache: Path
    logs: Path

    @classmethod
    def default(cls) -> AppPaths:
        return cls(
            data=Path(platformdirs.user_data_dir(APP, appauthor=False)),
            cache=Path(platformdirs.user_cache_dir(APP, appauthor=False)),
            logs=Path(platformdirs.user_log_dir(APP, appauthor=False)),
        )

    @classmethod
    def under(cls, root: Path) -> AppPaths:
        root = Path(root)
        return cls(data=root / "data", cache=root / "cache", logs=root / "logs")

    @property
    def models(self) -> Path:
        return self.data / "models"

    @property
    def voices(self) -> Path:
        return self.data / "voices"

    @property
    def history(self) -> Path:
        return self.data / "history"
