"""The window's controllers: plain Python classes (no widgets) that hold a panel's state and logic.

Each panel in :mod:`app.panels` (and the studio in :mod:`app.studio`) is a widget over one of these; they are tested
without a window (``tests/app/test_controllers.py``).
"""
