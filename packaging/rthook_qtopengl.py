# PyInstaller runtime hook: the CPU build leaves out PySide6.QtOpenGL (8.9 MB). pyqtgraph imports it when it loads
# (pyqtgraph/Qt/OpenGLHelpers.py) but uses it only to draw through OpenGL, which the app never turns on; an empty
# module stands in for it. A build that carries the real module uses that one.
import importlib.util
import sys
import types

if "PySide6.QtOpenGL" not in sys.modules and importlib.util.find_spec("PySide6.QtOpenGL") is None:
    sys.modules["PySide6.QtOpenGL"] = types.ModuleType("PySide6.QtOpenGL")
