"""The cast on the command line: ``project DIR --cast`` attributes the book (keeping what a person set) and lists its
characters; ``--set-speaker N NAME``, ``--merge-character A --into B``, ``--rename-character A --to B``,
``--add-character NAME``, ``--cast-voice NAME VOICE`` edit it, each undone by ``--undo``; ``narrate ... --cast``
attributes the book as it imports it (its sentences cut at their quotes, so that a character reads only their words).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from core.cli.voices import project_voice, voice_library


def add_narrate_cast_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cast",
        action="store_true",
        help="find the book's characters and who says each line (sentences are cut at their quotes); give them "
        "voices with project DIR --cast-voice",
    )


def add_project_cast_arguments(p: argparse.ArgumentParser, action) -> None:
    action.add_argument(
        "--cast",
        action="store_true",
        help="find who says each line again (what you set is kept) and list the characters (with --json: as JSON)",
    )
    action.add_argument(
        "--set-speaker", nargs=2, metavar=("N", "NAME"), help="character NAME says segment N ('narrator': narration)"
    )
    action.add_argument("--merge-character", metavar="A", help="A and B are one character (with --into B)")
    action.add_argument("--rename-character", metavar="A", help="call character A by another name (with --to B)")
    action.add_argument("--add-character", metavar="NAME", help="a character the book's text did not reveal")
    action.add_argument(
        "--cast-voice",
        nargs=2,
        metavar=("NAME", "VOICE"),
        help="character NAME reads in VOICE (as --voice takes it; 'none': the dialogue voice, else the narrator's)",
    )
    p.add_argument("--into", metavar="B", help="the character that --merge-character A merges into")
    p.add_argument("--to", metavar="B", help="the new name of --rename-character A")
    p.add_argument("--gender", choices=("m", "f"), help="the gender of --add-character NAME")


# --- editing ----------------------------------------------------------------------------------------------------------
def cast_edit(project, args, history) -> bool:
    """Run the cast edit the arguments name, recorded in ``history``; whether there was one."""
    from core.cli.errors import CliError
    from core.narration import cast

    if args.set_speaker is not None:
        number, name = args.set_speaker
        speaker = None if cast.is_narrator(name) else name
        edit = cast.set_speaker(project, _number(number), speaker)
        said = project.segment(edit.number).speaker or "the narrator"
        print(f"segment {edit.number}: {said} (kept when the book is attributed again)", file=sys.stderr)
    elif args.merge_character is not None:
        if args.into is None:
            raise CliError("--merge-character A needs --into B: the character that A's lines and names go to.")
        edit = cast.merge_character(project, args.merge_character, args.into)
        print(f"cast: {args.merge_character!r} merged into {_name(project, edit)} ({_lines(edit)})", file=sys.stderr)
    elif args.rename_character is not None:
        if args.to is None:
            raise CliError("--rename-character A needs --to B: the character's new name.")
        edit = cast.rename_character(project, args.rename_character, args.to)
        print(f"cast: {args.rename_character!r} is now {_name(project, edit)} ({_lines(edit)})", file=sys.stderr)
    elif args.add_character is not None:
        edit = cast.add_character(project, args.add_character, args.gender)
        print(f"cast: {_name(project, edit)} added", file=sys.stderr)
    elif args.cast_voice is not None:
        name, voice = args.cast_voice
        character = cast.find_character(project, name)  # an unknown character is said before a voice is copied in
        edit = cast.set_character_voice(project, character.name, project_voice(project, args, voice))
        reads = f"voice {character.voice!r}" if character.voice else "the dialogue voice, else the narrator's"
        print(f"cast: {character.name} reads in {reads}", file=sys.stderr)
    else:
        return False
    history.record(edit)
    return True


def _number(text: str) -> int:
    from core.cli.errors import CliError

    try:
        return int(text)
    except ValueError:
        raise CliError(f"{text!r} is not a segment number.") from None


def _name(project, edit) -> str:
    return project.cast[edit.number - 1].name


def _lines(edit) -> str:
    return f"{len(edit.speakers or [])} line(s)"


# --- attributing ------------------------------------------------------------------------------------------------------
def attribute(project) -> tuple[bool, float]:
    """Attribute the book, recording the edit (when it changed anything) in the project's undo history, and save;
    whether it changed anything, and the seconds it took."""
    from core.narration import History, attribute_project, cast

    started = time.perf_counter()
    history = History.load(project)
    edit = attribute_project(project)
    seconds = time.perf_counter() - started
    changed = not cast.is_empty(edit)
    if changed:
        history.record(edit)
        history.save(project)
    return changed, seconds


def attribute_on_import(project) -> None:
    """``narrate ... --cast``: the book attributed once imported (a line on stderr says what was found)."""
    from core.narration.attribution import UNSURE

    _changed, seconds = attribute(project)
    spoken = [s for s in project.segments if s.speaker is not None]
    unsure = sum(1 for s in spoken if not s.speaker_fixed and (s.speaker_confidence or 0) < UNSURE)
    print(
        f"cast: {len(project.cast)} character(s) say {len(spoken)} segment(s), {unsure} of them unsure "
        f"({seconds:.2f} s); list them with project {project.folder} --cast",
        file=sys.stderr,
    )


def cast_command(project, args) -> int:
    """``project DIR --cast``: attribute again (keeping what a person set), then list the characters."""
    changed, seconds = attribute(project)
    report = cast_report(project, voice_library(args))
    report["changed"], report["seconds"] = changed, round(seconds, 3)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        _print_cast(report)
    return 0


def cast_report(project, library) -> dict:
    """The characters with their lines, and how the book's segments are spoken (the JSON of ``--cast``)."""
    from core.narration import suggest_voices
    from core.narration.attribution import UNSURE

    lines: dict[str, list] = {c.name: [] for c in project.cast}
    unknown = narration = 0
    for segment in project.segments:
        if segment.speaker in lines:
            lines[segment.speaker].append(segment)
        elif segment.speaker is None and segment.speaker_confidence is not None and not segment.speaker_fixed:
            unknown += 1
        else:
            narration += 1

    def unsure(segments) -> int:
        return sum(1 for s in segments if not s.speaker_fixed and (s.speaker_confidence or 0) < UNSURE)

    characters = [
        {
            "name": c.name,
            "aliases": list(c.aliases),
            "gender": c.gender,
            "voice": c.voice,
            "lines": len(lines[c.name]),
            "unsure": unsure(lines[c.name]),
            "fixed": sum(1 for s in lines[c.name] if s.speaker_fixed),
            "suggested_voices": [] if c.voice else suggest_voices(project, c, library),
        }
        for c in project.cast
    ]
    return {
        "project": str(project.folder),
        "characters": characters,
        "narration": narration,
        "unknown": unknown,
        "unsure": sum(c["unsure"] for c in characters),
        "unsure_below": UNSURE,
        "mixed": len(project.mixed_speech()),
        "dialogue_voice": project.dialogue_voice,
    }


def _print_cast(report: dict) -> None:
    if not report["characters"]:
        print("No character says a line of this book (or it has no quoted speech).")
    width = max((len(c["name"]) for c in report["characters"]), default=0)
    fallback = f"the dialogue voice ({report['dialogue_voice']})" if report["dialogue_voice"] else "the narrator's"
    for c in report["characters"]:
        voice = c["voice"] or fallback
        unsure = f", {c['unsure']} unsure" if c["unsure"] else ""
        aliases = f"  also {', '.join(c['aliases'])}" if c["aliases"] else ""
        suggested = f"  (suggested: {', '.join(c['suggested_voices'])})" if c["suggested_voices"] else ""
        print(f"{c['name']:<{width}}  {c['gender'] or '-'}  {c['lines']:>4} line(s){unsure}  voice: {voice}{aliases}")
        if suggested:
            print(f"{'':<{width}}  {suggested.strip()}")
    said = sum(c["lines"] for c in report["characters"])
    print(
        f"{len(report['characters'])} character(s) say {said} segment(s) ({report['unsure']} unsure, below "
        f"{report['unsure_below']:g}); {report['unknown']} quoted segment(s) with no known speaker; "
        f"{report['narration']} narration"
        + ("; attribution changed speakers (--undo takes it back)" if report["changed"] else "")
    )
    if report["mixed"]:
        print(
            f"{report['mixed']} segment(s) hold speech and narration together and stay with the narrator; "
            "--cut-at-quotes cuts them (every other segment keeps its takes), then --cast again.",
            file=sys.stderr,
        )
