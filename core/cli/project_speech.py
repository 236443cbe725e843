"""Text prepared for speech on the command line: the lexicon, spoken forms, the dialogue and chapter voices and the
language (``narrate --dialogue-voice``; ``project DIR --lexicon``, ``--lexicon-add``, ``--set-spoken`` ...), and
their fields in the JSON report."""

from __future__ import annotations

import argparse
import sys

from core.cli.errors import CliError
from core.cli.project_edit import segment_number
from core.cli.voices import project_voice

EXIT_OK = 0


def add_narrate_speech_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--dialogue-voice",
        metavar="NAME",
        help="a second voice for quoted speech (sentences are cut at their quotes); --language also sets the "
        "language the book is read in (sentences, numbers, abbreviations)",
    )


def add_project_speech_arguments(p: argparse.ArgumentParser, action) -> None:
    action.add_argument("--lexicon", action="store_true", help="the pronunciation lexicon (with --json: as JSON)")
    action.add_argument(
        "--lexicon-add", nargs=2, metavar=("WORD", "SPOKEN"), help="say WORD as SPOKEN everywhere (whole words)"
    )
    action.add_argument("--lexicon-remove", metavar="WORD", help="remove WORD from the lexicon")
    action.add_argument(
        "--set-spoken", nargs=2, metavar=("N", "TEXT"), help="what segment N says (its text stays); 'auto' resets it"
    )
    action.add_argument(
        "--set-dialogue-voice", metavar="NAME", help="the voice of quoted speech ('none': the narrator's)"
    )
    action.add_argument(
        "--set-chapter-voice", nargs=2, metavar=("C", "NAME"), help="the voice of chapter C ('none': the narrator's)"
    )
    action.add_argument("--set-language", metavar="CODE", help="the language the book is read in (en, de, fr, ...)")
    p.add_argument("--match-case", action="store_true", help="with --lexicon-add: only where the case matches")
    p.add_argument("--dialogue-voice", metavar="NAME", help="with --import: a second voice for quoted speech")
    p.add_argument("--language", metavar="CODE", help="with --import: the language the book is read in")


def speech_edit(project, args) -> None:
    """One of the speech edits of ``project DIR`` (each makes only the segments it changes pending)."""
    if args.lexicon_add is not None:
        word, spoken = args.lexicon_add
        changed = project.set_lexicon(word, spoken, args.match_case)
        case = " (matching case)" if args.match_case else ""
        print(f"lexicon: {word!r} → {spoken!r}{case}; {len(changed)} segment(s) change", file=sys.stderr)
    elif args.lexicon_remove is not None:
        changed = project.remove_lexicon(args.lexicon_remove)
        print(f"lexicon: {args.lexicon_remove!r} removed; {len(changed)} segment(s) change", file=sys.stderr)
    elif args.set_spoken is not None:
        number, text = args.set_spoken
        segment = project.segment(segment_number(number))
        project.set_spoken(segment, None if text.strip().lower() == "auto" else text)
    elif args.set_dialogue_voice is not None:
        project.set_dialogue_voice(project_voice(project, args, args.set_dialogue_voice))
        mixed = project.mixed_speech()
        if mixed and project.dialogue_voice is not None:
            print(
                f"{len(mixed)} segment(s) hold speech and narration together (the first: segment "
                f"{project.number(mixed[0])}) and stay with the narrator; --cut-at-quotes cuts them (every other "
                "segment keeps its takes).",
                file=sys.stderr,
            )
    elif args.set_chapter_voice is not None:
        chapter, name = args.set_chapter_voice
        try:
            number = int(chapter)
        except ValueError:
            raise CliError(f"{chapter!r} is not a chapter number.") from None
        project.set_chapter_voice(number, project_voice(project, args, name))
    elif args.set_language is not None:
        project.set_language(args.set_language)


def print_lexicon(project) -> int:
    if not project.lexicon:
        print(f"The lexicon of {project.folder} is empty; add words with --lexicon-add WORD SPOKEN.")
    for word, entry in sorted(project.lexicon.items(), key=lambda item: item[0].casefold()):
        print(f"{word}  →  {entry.spoken}" + ("  (matching case)" if entry.match_case else ""))
    return EXIT_OK


def speech_fields(project, segment) -> dict:
    return {
        "written": segment.text,
        "spoken": project.spoken_text(segment),
        "spoken_override": segment.spoken,
        "dialogue": segment.dialogue,
        "speaker": segment.speaker,
        "speaker_confidence": segment.speaker_confidence,
    }


def speech_report(project) -> dict:
    return {
        "language": project.language,
        "dialogue_voice": project.dialogue_voice,
        "lexicon": [
            {"word": word, "spoken": entry.spoken, "match_case": entry.match_case}
            for word, entry in sorted(project.lexicon.items(), key=lambda item: item[0].casefold())
        ],
    }
