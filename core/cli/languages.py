"""``python -m core languages``: each language's text steps and files.

``languages [--bundle B] [--download zh|ru] [--json]`` lists the 23 languages with their steps and what is missing;
``--download`` fetches a language's files (pinned, checked, with progress on stderr).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from core.cli.parser import Subparsers
from core.cli.progress_line import ProgressLine
from core.engine import (
    COMMON_STEPS,
    DOWNLOADS,
    TextInputError,
    after_download,
    all_languages,
    cangjie_downloader,
    pkuseg_downloader,
    stress_downloader,
)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "languages",
        help="list each language's text steps and files; download a language's files",
        description="Lists the Multilingual model's 23 languages: the steps their text goes through before it is "
        "tokenized and which of their files are missing. --download fetches them: "
        + "; ".join(f"{code}: {what}" for code, what in DOWNLOADS.items())
        + ".",
    )
    p.add_argument("--bundle", type=Path, help="a Multilingual model folder (where the Chinese table goes)")
    p.add_argument("--download", choices=sorted(DOWNLOADS), help="fetch this language's files")
    p.add_argument("--models-dir", type=Path, help="where the language data lives (default: the app's models)")
    p.add_argument("--json", action="store_true")


def run(args) -> int:
    if args.download:
        status = _download(args)
        if status != EXIT_OK:
            return status
    rows = all_languages(args.bundle, args.models_dir)
    if args.json:
        print(
            json.dumps(
                {
                    "common_steps": list(COMMON_STEPS),
                    "languages": [
                        {
                            "code": r.code,
                            "name": r.name,
                            "steps": list(r.steps),
                            "ready": r.ready,
                            "missing": list(r.required_missing),
                            "optional_missing": list(r.optional_missing),
                            "improves": r.improves,
                        }
                        for r in rows
                    ],
                },
                ensure_ascii=False,
            )
        )
        return EXIT_OK
    print(f"every language: {', '.join(COMMON_STEPS)}")
    for r in rows:
        steps = ", ".join(r.steps) or "-"
        state = "ready" if r.ready else f"missing {', '.join(r.required_missing)}"
        extra = f" (optional, not installed: {', '.join(r.optional_missing)})" if r.optional_missing else ""
        print(f"{r.code}  {r.name:<11} {steps} — {state}{extra}")
    return EXIT_OK


def _download(args) -> int:
    if args.download == "zh":
        if args.bundle is None:
            raise TextInputError("text.language_bundle_needed", language="zh")
        downloads: list[Any] = [cangjie_downloader(args.bundle), pkuseg_downloader(args.models_dir)]
    else:
        try:
            downloads = [stress_downloader(args.models_dir)]
        except ImportError:
            print(
                "error: Russian stress needs the stressonnx package: pip install --no-deps stressonnx", file=sys.stderr
            )
            return EXIT_BAD_INPUT
    line = ProgressLine(sys.stderr)
    try:
        for download in downloads:
            download.start()
            while not download.finished:
                download.join(0.2)
                total = download.total_bytes
                line.fraction(download.progress(), total or 1, f"{download.progress() / 1e6:.1f} MB")
            if download.error:
                line.close()
                print(f"error: {download.error}", file=sys.stderr)
                return EXIT_FAILED
    except KeyboardInterrupt:
        for download in downloads:
            download.cancel()
        raise
    finally:
        line.close()
        after_download()
    return EXIT_OK
