"""The app uses only what each core package's ``__init__`` names: ``from core.engine import X``, never a module
inside a package (``core.engine.pipeline``), read from the source of every module under ``app/``."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app"


def core_imports(source: str) -> list[tuple[int, str, tuple[str, ...]]]:
    """(line, module, names) of every import of ``core`` in ``source``, those inside functions included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "core" or node.module.startswith("core."):
                found.append((node.lineno, node.module, tuple(a.name for a in node.names)))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name, ()) for a in node.names if a.name == "core" or a.name.startswith("core.")]
    return found


def violations(source: str) -> list[str]:
    """What breaks the rule: a module deeper than ``core.<package>``, or a name its ``__all__`` does not list."""
    problems = []
    for line, module, names in core_imports(source):
        if module.count(".") != 1:
            problems.append(f"line {line}: {module} is not a core package (import from core.<package>)")
            continue
        public = set(getattr(importlib.import_module(module), "__all__", ()))
        problems += [f"line {line}: {module}.{n} is not in {module}.__all__" for n in names if n not in public]
    return problems


def test_the_rule_catches_a_module_inside_a_package_and_an_unlisted_name():
    assert violations("from core.engine import SAMPLE_RATE\nimport core.narration\n") == []
    assert violations("def f():\n    from core.engine.pipeline import Pipeline\n") == [
        "line 2: core.engine.pipeline is not a core package (import from core.<package>)"
    ]
    assert violations("import core.engine.worker.events\n") == [
        "line 1: core.engine.worker.events is not a core package (import from core.<package>)"
    ]
    assert violations("from core.engine import _private_helper\n") == [
        "line 1: core.engine._private_helper is not in core.engine.__all__"
    ]
    assert violations("from core import engine\n") == [
        "line 1: core is not a core package (import from core.<package>)"
    ]


@pytest.mark.parametrize("path", sorted(APP.rglob("*.py")), ids=lambda p: str(p.relative_to(APP.parent)))
def test_the_app_imports_only_the_public_names_of_core_packages(path):
    assert violations(path.read_text(encoding="utf-8")) == []


def app_imports(path: Path) -> set[str]:
    """The ``app`` modules ``path`` imports (relative imports resolved)."""
    package = ".".join(path.relative_to(APP.parent).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p) if node.level else node.module or ""
            found.add(module)
            found.update(f"{module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


@pytest.mark.parametrize(
    "path",
    sorted([*(APP / "panels").glob("*.py"), *(APP / "controllers").glob("*.py"), *(APP / "studio").glob("*.py")]),
    ids=lambda p: str(p.relative_to(APP.parent)),
)
def test_panels_and_controllers_do_not_reach_back_into_the_main_window(path):
    imports = app_imports(path)
    assert "app.main_window" not in imports and "app.usability" not in imports
    if path.parent.name == "controllers":  # plain Python: no widgets
        assert not {m for m in imports if m.startswith("PySide6.QtWidgets")}
