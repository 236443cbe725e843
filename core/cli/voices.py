"""``python -m core voices``: the voice library the window and ``--cast-voice`` share.

``voices [--library DIR] [--json]`` lists each saved voice: its name, recording, length and whose voice it is
(``gender``: ``m``, ``f`` or ``null``, not said). ``--gender NAME m|f|none`` says whose voice ``NAME`` is: a
project's characters are suggested the library's voices of their gender (``project DIR --cast``). With ``--json``
one object: ``{"library": DIR, "voices": [{"name", "path", "seconds", "gender"}]}``.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.cli.errors import CliError
from core.cli.parser import Subparsers

EXIT_OK = 0
GENDER_VALUES = {"m": "m", "f": "f", "none": None}
GENDER_WORDS = {"m": "a man's voice", "f": "a woman's voice", None: "not said"}


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "voices",
        help="list the voice library; say whose voice a saved voice is (a cast is offered voices by gender)",
        description="Lists the voices saved in the library (the window's Voice tab and --cast-voice use it). "
        "--gender NAME m|f|none says whose voice NAME is: a project's characters are suggested the library's "
        "voices of their gender first.",
    )
    p.add_argument("--library", type=Path, help="voice library folder (default: the app's)")
    p.add_argument("--gender", nargs=2, metavar=("NAME", "m|f|none"), help="say whose voice NAME is")
    p.add_argument("--json", action="store_true")


def voice_library(args):
    """The voice library ``--library`` names, or the app's (``voices``, ``narrate``, ``project``)."""
    from core.engine import voices_dir
    from core.voices import VoiceLibrary

    return VoiceLibrary(getattr(args, "library", None) or voices_dir())


def project_voice(project, args, name: str) -> str | None:
    """A voice name for the project (copied in from the library or a file when new); 'none' or 'narrator' → ``None``,
    the narrator's (a chapter's, quoted speech's or a character's voice)."""
    from core.narration import resolve_voices

    if name.strip().lower() in ("none", "narrator"):
        return None
    return resolve_voices(project, [name], voice_library(args), Path.cwd())[name]


def run(args) -> int:
    library = voice_library(args)
    if args.gender is not None:
        name, value = args.gender
        if value.lower() not in GENDER_VALUES:
            raise CliError(f"--gender {name} needs m, f or none, not {value!r}.")
        saved = {v.name: v for v in library.voices()}
        if name not in saved:
            known = ", ".join(sorted(saved)) or "none saved yet"
            raise CliError(f"The library has no voice {name!r} (its voices: {known}).")
        try:
            library.set_gender(name, GENDER_VALUES[value.lower()])
        except OSError as exc:
            raise CliError(f"The library cannot be written ({exc.strerror or exc}).") from exc
    voices = library.voices()
    if args.json:
        listed = [{"name": v.name, "path": str(v.path), "seconds": v.seconds, "gender": v.gender} for v in voices]
        print(json.dumps({"library": str(library.directory), "voices": listed}))
        return EXIT_OK
    if not voices:
        print(f"No voices saved in {library.directory} yet (save one from the window's Voice tab).")
    width = max((len(v.name) for v in voices), default=0)
    for v in voices:
        print(f"{v.name:<{width}}  {v.seconds:5.1f} s  {GENDER_WORDS[v.gender]}")
    return EXIT_OK
