"""The structural edits of ``project DIR`` (``--edit``, ``--delete``, ``--skip``, ``--merge``, ``--split``, the
chapters', ``--cut-at-quotes``; each undone by ``--undo``, done again by ``--redo``) and the numbers they are given."""

from __future__ import annotations

from core.cli.cast import cast_edit
from core.cli.errors import CliError
from core.cli.words import add_align_argument


def add_edit_arguments(action, p) -> None:
    """The project's structural edits (each undoable with --undo) and the import that renders nothing."""
    action.add_argument("--delete", type=int, metavar="N", help="delete segment N (its takes stay on disk for --undo)")
    action.add_argument("--skip", type=int, metavar="N", help="leave segment N out of rendering and export")
    action.add_argument("--unskip", type=int, metavar="N", help="narrate a skipped segment N again")
    action.add_argument("--merge", type=int, metavar="N", help="merge segment N with segment N+1")
    action.add_argument("--split", type=int, metavar="N", help="split segment N in two (with --at CHARS)")
    action.add_argument("--rename-chapter", type=int, metavar="C", help="retitle chapter C (with --text)")
    action.add_argument("--chapter-starts", type=int, metavar="N", help="segment N starts a new chapter (--title)")
    action.add_argument("--chapter-joins", type=int, metavar="N", help="the chapter segment N starts joins the last")
    action.add_argument("--skip-chapter", type=int, metavar="C", help="leave chapter C out of rendering and export")
    action.add_argument("--unskip-chapter", type=int, metavar="C", help="narrate a skipped chapter C again")
    action.add_argument(
        "--cut-at-quotes",
        action="store_true",
        help="cut every sentence that holds speech and narration together at its quotes (for a dialogue voice or a "
        "cast; the parts are new, pending segments)",
    )
    add_align_argument(action)
    action.add_argument("--undo", action="store_true", help="take back the last edit (kept in the project)")
    action.add_argument("--redo", action="store_true", help="do the last undone edit again")
    action.add_argument(
        "--import",
        dest="import_book",
        metavar="BOOK",
        help="create the project from BOOK (or bring it up to date) and render nothing: review it first",
    )
    p.add_argument("--at", type=int, metavar="CHARS", help="where to split (with --split): length of the first part")
    p.add_argument("--title", help="the new chapter's title (with --chapter-starts; default its first words)")
    p.add_argument("--voice", help="the voice of an imported book (with --import; as for narrate)")


def edit_command(project, args):
    """Run the structural edit the arguments name (``--edit`` too); the history that records it, or ``None``."""
    from core.narration import History, editing

    history = History.load(project)
    if args.edit is not None:
        if args.text is None:
            raise CliError("--edit N needs --text with the new words.")
        history.record(editing.edit_text(project, args.edit, args.text))
    elif args.delete is not None:
        history.record(editing.delete(project, args.delete))
    elif args.skip is not None or args.unskip is not None:
        skipped = args.skip is not None
        history.record(editing.set_skipped(project, args.skip if skipped else args.unskip, skipped))
    elif args.merge is not None:
        history.record(editing.merge(project, args.merge))
    elif args.split is not None:
        if args.at is None:
            raise CliError("--split N needs --at CHARS: how many characters of segment N stay in the first part.")
        history.record(editing.split(project, args.split, args.at))
    elif args.rename_chapter is not None:
        if args.text is None:
            raise CliError("--rename-chapter C needs --text with the new title.")
        history.record(editing.rename_chapter(project, args.rename_chapter, args.text))
    elif args.chapter_starts is not None:
        history.record(editing.chapter_starts(project, args.chapter_starts, args.title))
    elif args.chapter_joins is not None:
        history.record(editing.chapter_joins(project, args.chapter_joins))
    elif args.skip_chapter is not None or args.unskip_chapter is not None:
        skipped = args.skip_chapter is not None
        number = args.skip_chapter if skipped else args.unskip_chapter
        history.record(editing.set_chapter_skipped(project, number, skipped))
    elif args.cut_at_quotes:
        history.record(editing.cut_at_quotes(project))
    elif args.undo or args.redo:
        try:
            if args.undo:
                history.undo(project)
            else:
                history.redo(project)
        finally:
            if history.stale:
                history.save(project)  # emptied: the project itself is left as it is
    elif not cast_edit(project, args, history):  # the cast's edits (core/cli/cast.py)
        return None
    return history


def segment_number(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CliError(f"{text!r} is not a segment number.") from None


def parse_number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise CliError(f"{text!r} is not a number for {what}.") from None
