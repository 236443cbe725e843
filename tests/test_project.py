"""Project rules: core stays free of GUI/audio-device modules; README's test command is what CI runs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_core_imports_no_gui_or_audio_device_modules():
    code = (
        "import sys, pkgutil, importlib, core\n"
        "for m in pkgutil.walk_packages(core.__path__, 'core.'):\n"
        "    if m.name != 'core.__main__': importlib.import_module(m.name)\n"
        "bad = [m for m in ('PySide6', 'pyqtgraph', 'sounddevice') if m in sys.modules]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- test-command -->\s*```(?:bash|sh)?\n(.+?)\n```", readme, re.S)
    assert match, "README.md must mark its test command with <!-- test-command -->"
    command = match.group(1).strip()
    assert "pytest" in command
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def core_imports(top: str = "core") -> dict[str, set[str]]:
    """Module → the modules of package ``top`` it imports anywhere in its source (TYPE_CHECKING and function-level
    included)."""
    import ast

    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / top).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        package = name if parts[-1] == "__init__" else name.rsplit(".", 1)[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                targets = [target] + [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            found.update(t for t in targets if t.split(".")[0] == top)
        graph[name] = found
    return {m: {t for t in deps if t in graph and t != m} for m, deps in graph.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first repeated at the end), or ``None``."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        state[node] = 2
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_core_has_no_import_cycle():
    graph = core_imports()
    assert "core.engine.pipeline" in graph and "core.engine.streaming.synthesis" in graph["core.engine.pipeline"]
    packages = {"core"}  # a package's __init__ re-exports its modules: not an edge back
    graph = {m: deps - packages for m, deps in graph.items()}
    assert find_cycle(graph) is None


def test_app_has_no_import_cycle():
    """Not even one for type checking: the main window imports :mod:`app.usability`, which names what it needs of
    the window in a Protocol instead of importing it back."""
    graph = core_imports("app")
    assert "app.usability" in graph["app.main_window"] and "app.studio.studio_panel" in graph["app.main_window"]
    assert find_cycle({m: deps - {"app"} for m, deps in graph.items()}) is None


def test_the_cycle_check_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    graph = core_imports()
    synthesis = "core.engine.streaming.synthesis"
    graph[synthesis] = graph[synthesis] | {"core.engine.pipeline"}  # the cycle this project used to have
    assert find_cycle(graph) is not None


def test_ci_installs_the_readme_system_packages():
    """README's Debian install line is what .ci/run installs (it reads the line from README.md)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- system-packages -->\s*```bash\n(sudo apt-get install -y [^\n]+)\n```", readme)
    assert match, "README.md must mark its Debian install line with <!-- system-packages -->"
    packages = match.group(1).split()[4:]
    assert {"libxcb-cursor0", "libxcb-icccm4", "libxkbcommon-x11-0", "libegl1", "libportaudio2"} <= set(packages)
    line = subprocess.run(
        ["bash", "-c", "sed -n '/<!-- system-packages -->/,/^```$/p' README.md | grep -m1 '^sudo apt-get install'"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout.strip()
    assert line == match.group(1)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert (
        "<!-- system-packages -->" in ci
        and "packages=(${readme_line#sudo apt-get install -y } strace xvfb xdotool)" in ci
    )


def test_every_test_module_that_starts_ray_shares_one_worker():
    """conftest's scheduler keeps the modules that start a local Ray instance on one worker (two at once slow each
    other tenfold); a new such module must be named there."""
    from tests.conftest import RAY_MODULES

    starts_ray = re.compile(r"ray\.init\(|--ray\b|RenderOn|ClusterRenderJob|probe_cluster")
    found = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "tests").rglob("test_*.py")
        if path.name != "test_project.py" and starts_ray.search(path.read_text(encoding="utf-8"))
    }
    assert found == RAY_MODULES
