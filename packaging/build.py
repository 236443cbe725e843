"""Build the onedir desktop app into dist/ChatterboxDesk, report its size, optionally prove it works.

python packaging/build.py                 # lean CPU build
python packaging/build.py --gpu           # also carries onnxruntime's CUDA provider and the nvidia-* libraries
python packaging/build.py --self-test OUT # then run the frozen app's self-test offscreen
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from core.engine import APP_NAME as NAME  # noqa: E402 - the repository root first


def size_of(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def strip_binaries(app_dir: Path) -> dict:
    """Strip symbols from the shared libraries and extension modules (Linux): libpython, Qt's ICU, tokenizers,
    numpy… ship with theirs (~60 MB in all). Libraries in ``*.libs`` folders are left alone: auditwheel grafted them
    with patchelf, and stripping such a file breaks it ("ELF load command address/offset not page-aligned", measured
    on numpy's OpenBLAS). The frozen self-test proves the rest still loads and runs."""
    strip = shutil.which("strip")
    if not sys.platform.startswith("linux") or strip is None:
        return {"stripped": 0, "saved_bytes": 0}
    count = saved = 0
    for path in sorted(app_dir.rglob("*")):
        if not path.is_file() or path.is_symlink() or any(p.endswith(".libs") for p in path.parent.parts):
            continue
        if not (".so" in path.name or path.name == NAME) or path.read_bytes()[:4] != b"\x7fELF":
            continue
        before = path.stat().st_size
        backup = path.with_name(path.name + ".unstripped")
        shutil.copy2(path, backup)
        done = subprocess.run([strip, "--strip-unneeded", str(path)], capture_output=True)
        if done.returncode != 0:
            backup.replace(path)  # strip refused the file: keep it as it was
            continue
        backup.unlink()
        if path.stat().st_size < before:
            count, saved = count + 1, saved + before - path.stat().st_size
    return {"stripped": count, "saved_bytes": saved}


def size_report(app_dir: Path) -> dict:
    parts = []
    for top in (app_dir, app_dir / "_internal"):
        for entry in top.iterdir() if top.is_dir() else []:
            if entry.name != "_internal" and not entry.is_symlink():
                parts.append((size_of(entry), str(entry.relative_to(app_dir))))
    parts.sort(reverse=True)
    return {"total_bytes": size_of(app_dir), "largest": [{"path": p, "bytes": b} for b, p in parts[:10]]}


def run_self_test(app_dir: Path, out: Path, timeout: int = 600) -> dict:
    exe = app_dir / (NAME + (".exe" if sys.platform == "win32" else ""))
    env = dict(os.environ)
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    started = time.perf_counter()
    proc = subprocess.run([str(exe), "--self-test", str(out)], capture_output=True, text=True, timeout=timeout, env=env)
    seconds = time.perf_counter() - started
    problems = []
    if proc.returncode != 0:
        problems.append(f"exit code {proc.returncode}: {proc.stderr[-2000:]}")
    report_file, png = out / "report.json", out / "window.png"
    if not png.is_file() or png.stat().st_size < 10_000:
        problems.append("window.png is missing or empty")
    report = json.loads(report_file.read_text()) if report_file.is_file() else {}
    if not report.get("ok") or report.get("samples_played", 0) < report.get("samples_generated", 1):
        problems.append(f"report.json is not a passing report: {report}")
    for screen in report.get("first_start", []):  # the first window on each screen, from the frozen app itself
        if not screen.get("fits") or not Path(screen.get("png", "")).is_file():
            problems.append(f"the first window does not fit {screen.get('screen')}: {screen.get('outside')}")
    return {"seconds": round(seconds, 1), "problems": problems, "report": report}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpu", action="store_true", help="carry the CUDA provider and nvidia-* runtime libraries")
    parser.add_argument("--self-test", type=Path, metavar="OUT", help="run the frozen app's self-test afterwards")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = parser.parse_args(argv)

    env = dict(os.environ, CHATTERBOX_GPU_BUILD="1" if args.gpu else "0")
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "PyInstaller",
            "--noconfirm",
            "--clean",
            "--log-level",
            "WARN",
            "--distpath",
            str(args.dist),
            "--workpath",
            str(ROOT / "build" / "pyinstaller"),
            str(ROOT / "packaging" / "chatterbox_desk.spec"),
        ],
        check=True,
        env=env,
        cwd=ROOT,
    )
    build_s = time.perf_counter() - started
    app_dir = args.dist / NAME
    sys.path.insert(0, str(ROOT))
    from app import __version__

    (app_dir / "VERSION").write_text(f"{__version__}{'-gpu' if args.gpu else ''}\n", encoding="utf-8")
    stripped = strip_binaries(app_dir)
    summary = {
        "version": __version__,
        "gpu": args.gpu,
        "build_seconds": round(build_s, 1),
        **stripped,
        **size_report(app_dir),
    }
    print(
        f"\nbuilt {app_dir} in {build_s:.0f} s: {summary['total_bytes'] / 1e6:.0f} MB "
        f"({stripped['saved_bytes'] / 1e6:.0f} MB of symbols stripped from {stripped['stripped']} files)"
    )
    for part in summary["largest"]:
        print(f"  {part['bytes'] / 1e6:8.1f} MB  {part['path']}")
    code = 0
    if args.self_test:
        result = run_self_test(app_dir, args.self_test)
        summary["self_test"] = result
        if result["problems"]:
            print("frozen self-test FAILED: " + "; ".join(result["problems"]), file=sys.stderr)
            code = 1
        else:
            print(f"frozen self-test passed in {result['seconds']} s: {json.dumps(result['report'])}")
    (args.dist / "build-report.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
