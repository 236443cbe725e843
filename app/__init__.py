"""The PySide6 desktop application; the pipeline lives in ``core``."""

__version__ = "0.1.0"
