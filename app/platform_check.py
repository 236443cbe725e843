"""What this machine lacks to open the window, said in plain words before Qt gets a chance to abort.

Qt aborts (``qFatal``) when its platform plugin cannot load, with a message that names neither the missing system
library nor the package that provides it. Before the app creates its ``QApplication``, :func:`window_problem`
loads the platform plugin Qt is about to pick (``dlopen``, exactly what Qt does) and, when that fails, names the
missing libraries and the command that installs them on this Linux family. This module imports no Qt: it must work
where Qt cannot start.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

HEADLESS = {"offscreen", "minimal", "vnc", "vkkhrdisplay", "linuxfb", "eglfs", "minimalegl"}
"""Platforms that need no desktop session (and no X11 or Wayland libraries)."""

SKIP_ENV = "CHATTERBOX_SKIP_PLATFORM_CHECK"
"""Set to 1 to start without this check (should it ever be wrong about a machine)."""
FAMILIES = ("debian", "fedora", "arch")
INSTALL = {
    "debian": "sudo apt-get install -y",
    "fedora": "sudo dnf install -y",
    "arch": "sudo pacman -S --needed",
}
PACKAGES: dict[str, tuple[str, str, str]] = {
    # soname: (Debian/Ubuntu, Fedora, Arch)
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil", "xcb-util-renderutil"),
    "libxcb-util.so.1": ("libxcb-util1", "xcb-util", "xcb-util"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb", "libxcb"),
    "libxcb.so.1": ("libxcb1", "libxcb", "libxcb"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "libX11.so.6": ("libx11-6", "libX11", "libx11"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "libwayland-client.so.0": ("libwayland-client0", "libwayland-client", "wayland"),
    "libwayland-cursor.so.0": ("libwayland-cursor0", "libwayland-cursor", "wayland"),
    "libwayland-egl.so.1": ("libwayland-egl1", "libwayland-egl", "wayland"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl", "libglvnd"),
    "libGL.so.1": ("libgl1", "libglvnd-glx", "libglvnd"),
    "libGLX.so.0": ("libglx0", "libglvnd-glx", "libglvnd"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl", "libglvnd"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype", "freetype2"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libgthread-2.0.so.0": ("libglib2.0-0", "glib2", "glib2"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs", "dbus"),
    "libportaudio.so.2": ("libportaudio2", "portaudio", "portaudio"),
}
_SONAME = re.compile(r"(lib[\w.+-]+?\.so(?:\.\d+)*)")


@dataclass
class WindowProblem:
    """Why the window cannot open here: ``missing`` sonames (possibly none, e.g. no display) and what to do."""

    platform: str
    reason: str
    missing: list[str] = field(default_factory=list)

    def message(self, family: str | None = None) -> str:
        family = family or linux_family()
        lines = [f"Chatterbox Desk cannot open its window: {self.reason}"]
        if self.missing:
            lines.append("Install the missing system libraries with:")
            lines.append("    " + install_command(self.missing, family))
            lines.append("(README.md, 'Install', lists the libraries for each Linux family.)")
        lines.append(f"To start without this check: {SKIP_ENV}=1.")
        return "\n".join(lines)


def linux_family(os_release: str | None = None) -> str:
    """``debian``, ``fedora`` or ``arch`` from /etc/os-release (ID and ID_LIKE); Debian when unknown."""
    if os_release is None:
        try:
            os_release = Path("/etc/os-release").read_text(encoding="utf-8", errors="replace")
        except OSError:
            os_release = ""
    ids = " ".join(
        line.split("=", 1)[1].strip().strip('"').lower()
        for line in os_release.splitlines()
        if line.startswith(("ID=", "ID_LIKE="))
    ).split()
    for name in ids:
        if name in ("debian", "ubuntu"):
            return "debian"
        if name in ("fedora", "rhel", "centos"):
            return "fedora"
        if name in ("arch", "manjaro"):
            return "arch"
    return "debian"


def install_command(sonames: list[str], family: str) -> str:
    column = FAMILIES.index(family) if family in FAMILIES else 0
    packages: list[str] = []
    for soname in sonames:
        package = PACKAGES.get(soname, (soname,) * 3)[column]
        if package not in packages:
            packages.append(package)
    return f"{INSTALL.get(family, INSTALL['debian'])} {' '.join(packages)}"


def missing_in(error: str) -> list[str]:
    """The library names a loader error mentions ("libxcb-icccm.so.4: cannot open shared object file")."""
    found = []
    for name in _SONAME.findall(error):
        base = Path(name).name
        if base in PACKAGES and base not in found:
            found.append(base)
    return found


def qt_plugin_dir() -> Path | None:
    """PySide6's ``Qt/plugins/platforms`` (found without importing PySide6, which itself may fail to load)."""
    override = os.environ.get("QT_QPA_PLATFORM_PLUGIN_PATH")
    if override:
        return Path(override)
    if getattr(sys, "frozen", False):
        base = Path(getattr(sys, "_MEIPASS", Path(sys.executable).parent))
        candidate = base / "PySide6" / "Qt" / "plugins" / "platforms"
        return candidate if candidate.is_dir() else None
    for entry in sys.path:  # where ``import PySide6`` would find it
        package = Path(entry or ".") / "PySide6"
        if (package / "__init__.py").is_file():
            return package / "Qt" / "plugins" / "platforms"
    return None


def candidate_platforms(environ: dict[str, str] | os._Environ[str] | None = None) -> list[str]:
    """The platform plugins Qt will try, in order (``QT_QPA_PLATFORM``, else Wayland then X11 in a Wayland session)."""
    env = os.environ if environ is None else environ
    asked = env.get("QT_QPA_PLATFORM", "")
    if asked:
        return [p.split(":", 1)[0].strip() for p in asked.split(";") if p.strip()]
    if env.get("XDG_SESSION_TYPE", "").lower() == "wayland" and env.get("WAYLAND_DISPLAY"):
        return ["wayland", "xcb"]
    return ["xcb"]


def _display_missing(platform: str, env) -> str | None:
    if platform == "xcb" and not env.get("DISPLAY"):
        return (
            "no X11 display (DISPLAY is not set). Start it from a desktop session, or set "
            "QT_QPA_PLATFORM=offscreen to run without a screen."
        )
    if platform == "wayland" and not env.get("WAYLAND_DISPLAY"):
        return "no Wayland display (WAYLAND_DISPLAY is not set)."
    return None


def plugin_problem(platform: str, plugin_dir: Path | None) -> WindowProblem | None:
    """Load the platform plugin the way Qt does; ``None`` when it loads."""
    if plugin_dir is None or not plugin_dir.is_dir():
        return WindowProblem(platform, f"Qt's platform plugins were not found (looked in {plugin_dir}).")
    plugin = plugin_dir / f"libq{platform}.so"
    if not plugin.is_file():
        return WindowProblem(platform, f"Qt's '{platform}' platform plugin is not installed ({plugin} is missing).")
    try:
        handle = ctypes.CDLL(str(plugin), mode=os.RTLD_LAZY | os.RTLD_LOCAL)
    except OSError as exc:
        missing = missing_in(str(exc))
        for soname in _ldd_not_found(plugin):
            if soname not in missing:
                missing.append(soname)
        if not missing:  # not a library we can name: let Qt try (and say what it says) rather than block a start
            return None
        names = ", ".join(missing)
        return WindowProblem(
            platform, f"Qt's '{platform}' platform needs system libraries that are missing: {names}.", missing
        )
    del handle  # stays loaded; Qt loads the same file next
    return None


def _ldd_not_found(plugin: Path) -> list[str]:
    """Every library ``ldd`` cannot find (the loader's error names only the first)."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    try:
        out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    found = []
    for line in out.splitlines():
        if "not found" in line:
            name = line.split("=>", 1)[0].strip()
            if name not in found:
                found.append(name)
    return found


def window_problem(environ=None, platform: str | None = None) -> WindowProblem | None:
    """Why Qt would abort on start here, or ``None`` when it can open the window (Linux only; elsewhere ``None``)."""
    env = os.environ if environ is None else environ
    if (platform or sys.platform) != "linux" or env.get(SKIP_ENV) == "1":
        return None
    plugin_dir = qt_plugin_dir()
    problems = []
    for name in candidate_platforms(env):
        if name in HEADLESS:
            return None
        problem = plugin_problem(name, plugin_dir)
        if problem is None:
            reason = _display_missing(name, env)
            if reason is None:
                return None
            problem = WindowProblem(name, reason)
        problems.append(problem)
    return problems[-1] if problems else None


def import_problem(exc: ImportError) -> WindowProblem:
    """PySide6 itself could not load (libEGL, libGL, libfontconfig… missing)."""
    missing = missing_in(str(exc))
    names = ", ".join(missing) if missing else str(exc)
    return WindowProblem("", f"Qt's libraries could not be loaded: {names}.", missing)
