"""First start on a machine that lacks Qt's system libraries: ``python -m app`` names them and the command that
installs them instead of Qt's abort; ``python -m app --check`` says what the machine has."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app import platform_check
from app.platform_check import (
    candidate_platforms,
    install_command,
    linux_family,
    missing_in,
    window_problem,
)

ROOT = Path(__file__).resolve().parents[2]
linux = pytest.mark.skipif(sys.platform != "linux", reason="Qt's xcb platform plugin is Linux's")


def _start(env_changes: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE")}
    env.update(env_changes)
    return subprocess.run(
        [sys.executable, "-m", "app", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def _no_qt_abort(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 3, done.stderr
    assert "This application failed to start" not in done.stderr and "qt.qpa.plugin" not in done.stderr
    assert done.returncode >= 0  # not killed by Qt's abort (SIGABRT)


@linux
def test_a_hidden_xcb_library_is_named_with_the_command_that_installs_it(tmp_path):
    """An LD_LIBRARY_PATH shadow: a broken libxcb-cursor.so.0 found before the system's (or in place of none)."""
    (tmp_path / "libxcb-cursor.so.0").write_bytes(b"not a shared library")
    done = _start({"LD_LIBRARY_PATH": str(tmp_path), "QT_QPA_PLATFORM": "xcb", "DISPLAY": ":99"})
    _no_qt_abort(done)
    assert "cannot open its window" in done.stderr
    assert "libxcb-cursor.so.0" in done.stderr
    assert "sudo apt-get install -y" in done.stderr and "libxcb-cursor0" in done.stderr


@linux
def test_a_missing_platform_plugin_is_said_in_words(tmp_path):
    done = _start({"QT_QPA_PLATFORM_PLUGIN_PATH": str(tmp_path), "QT_QPA_PLATFORM": "xcb", "DISPLAY": ":99"})
    _no_qt_abort(done)
    assert "'xcb' platform plugin is not installed" in done.stderr


def test_no_display_is_said_in_words(monkeypatch):
    monkeypatch.setattr(platform_check, "plugin_problem", lambda *_: None)  # the plugin loads; no display to use
    problem = window_problem({"QT_QPA_PLATFORM": "xcb"}, platform="linux")
    assert problem is not None and "DISPLAY is not set" in problem.message("debian")
    assert window_problem({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"}, platform="linux") is None


def test_headless_platforms_need_no_check_and_the_check_can_be_skipped():
    assert window_problem({"QT_QPA_PLATFORM": "offscreen"}) is None
    assert window_problem({"QT_QPA_PLATFORM": "xcb", "CHATTERBOX_SKIP_PLATFORM_CHECK": "1"}, platform="linux") is None
    assert window_problem({"QT_QPA_PLATFORM": "xcb"}, platform="win32") is None


def test_the_platform_qt_picks():
    assert candidate_platforms({}) == ["xcb"]
    assert candidate_platforms({"XDG_SESSION_TYPE": "wayland", "WAYLAND_DISPLAY": "wayland-0"}) == ["wayland", "xcb"]
    assert candidate_platforms({"QT_QPA_PLATFORM": "wayland;xcb"}) == ["wayland", "xcb"]
    assert candidate_platforms({"QT_QPA_PLATFORM": "offscreen:configfile=x.json"}) == ["offscreen"]


def test_loader_errors_name_the_libraries_and_each_family_gets_its_command():
    error = "libxcb-icccm.so.4: cannot open shared object file: No such file or directory"
    assert missing_in(error) == ["libxcb-icccm.so.4"]
    assert missing_in("/tmp/x/libxcb-cursor.so.0: file too short") == ["libxcb-cursor.so.0"]
    assert install_command(["libxcb-icccm.so.4", "libxcb-keysyms.so.1"], "debian") == (
        "sudo apt-get install -y libxcb-icccm4 libxcb-keysyms1"
    )
    assert install_command(["libxcb-icccm.so.4", "libxcb-shape.so.0", "libxcb-xkb.so.1"], "fedora") == (
        "sudo dnf install -y xcb-util-wm libxcb"
    )
    assert install_command(["libportaudio.so.2"], "arch") == "sudo pacman -S --needed portaudio"


def test_the_linux_family_comes_from_os_release():
    assert linux_family("ID=ubuntu\nID_LIKE=debian\n") == "debian"
    assert linux_family('ID="fedora"\n') == "fedora"
    assert linux_family('ID=rocky\nID_LIKE="rhel centos fedora"\n') == "fedora"
    assert linux_family("ID=manjaro\nID_LIKE=arch\n") == "arch"
    assert linux_family("ID=gentoo\n") == "debian"


def test_check_says_what_the_machine_has():
    done = _start({"QT_QPA_PLATFORM": "offscreen"}, "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "Window: Qt can open the window here." in out
    assert "Sound:" in out and "GPU:" in out
    assert "Error querying device" not in out


@linux
def test_check_fails_when_the_window_cannot_open(tmp_path):
    done = _start({"QT_QPA_PLATFORM_PLUGIN_PATH": str(tmp_path), "QT_QPA_PLATFORM": "xcb", "DISPLAY": ":99"}, "--check")
    assert done.returncode == 1 and "[MISSING] Window" in done.stdout


def test_an_unknown_flag_is_refused_with_the_flags_there_are(capsys):
    from app.__main__ import main

    with pytest.raises(SystemExit) as refused:
        main(["--no-such-flag"])
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "unrecognized arguments: --no-such-flag" in err
    assert "--self-test" in err and "--check" in err  # the usage line lists the flags there are


def test_qts_own_options_are_handed_to_qt(monkeypatch):
    import app.__main__ as entry

    started = []
    monkeypatch.setattr(entry, "_window_problem", lambda: None)
    monkeypatch.setattr("app.application.run", lambda argv: started.append(argv) or 0)
    assert entry.main(["-style", "fusion", "--platform=offscreen", "-reverse"]) == 0
    assert started[0][1:] == ["-style", "fusion", "--platform=offscreen", "-reverse"]
