"""The application's name and the per-user folders derived from it (the one home of both, for core and app)."""

from __future__ import annotations

from pathlib import Path

import platformdirs

APP_NAME = "ChatterboxDesk"
CONDITIONING_DIR = "conditioning"
"""Sub-folder of the cache folder that holds the conditioning cache."""


def user_cache() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def user_data() -> Path:
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def user_logs() -> Path:
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def voices_dir(data: Path | None = None) -> Path:
    """The voice library (a copy of each named reference recording and ``voices.json``) inside ``data``."""
    return (data or user_data()) / "voices"


def q4_graph_cache_dir() -> Path:
    """Rewritten copies of 4-bit language-model graphs (int8 compute), one small file per bundle."""
    return user_cache() / "q4-int8"


def folded_graph_cache_dir() -> Path:
    """Language-model graphs with their shape arithmetic folded (:mod:`core.engine.model.shape_folding`)."""
    return user_cache() / "lm-folded"


def decoder_q8_cache_dir(cache: Path | None = None) -> Path:
    """int8 speech decoders made from a read-only model folder's float32 one, one folder per source file."""
    return (cache or user_cache()) / "decoder-q8"


def decoder_costs_dir(cache: Path | None = None) -> Path:
    """The stream plan's measured costs, one small JSON file per bundle (inside ``cache``, default the user cache)."""
    return (cache or user_cache()) / "decoder-costs"


def conditioning_cache_dir(cache: Path | None = None) -> Path:
    """The conditioning cache inside ``cache`` (default: the user cache folder)."""
    return (cache or user_cache()) / CONDITIONING_DIR
