"""The PySide6 desktop application (see the desktop app issue); the pipeline lives in ``core``."""
