"""cli"""

from core.cli.main import main

__all__ = ["main"]
