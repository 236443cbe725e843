"""The export's flags of ``narrate`` and ``project`` (``--out``, ``--subtitles``, ``--per-chapter``, ``--chapters``,
``--segments``, the encoding, the tags, ``--check``, ``--master`` ...), checked before the model loads, and the export
itself with its progress bar."""

from __future__ import annotations

import sys
from pathlib import Path

from core.cli.errors import CliError


def add_export_arguments(p, formats) -> None:
    p.add_argument("--speed", type=float, help="pace of the whole project, 0.5-2.0 (kept in the project)")
    p.add_argument("--loudness", help="target loudness in LUFS, or podcast (-16), audiobook (-19), broadcast (-23)")
    p.add_argument("--true-peak", type=float, help="true-peak ceiling in dBTP (default -1; kept in the project)")
    p.add_argument("--out", type=Path, help=f"the whole narration as one file ({', '.join(formats)})")
    p.add_argument("--subtitles", type=Path, help="subtitles for --out (.srt or .vtt), one cue per segment")
    p.add_argument("--per-chapter", type=Path, metavar="DIR", help="one file per chapter and a chapter list")
    p.add_argument("--format", choices=[s.lstrip(".") for s in formats], help="chapter file format (default flac)")
    p.add_argument("--chapter-subtitles", choices=("srt", "vtt"), help="a subtitle file beside each chapter file")
    p.add_argument(
        "--name-speakers",
        action="store_true",
        help="name who speaks each line (a project with a cast): in the subtitles (WebVTT <v Name>, SRT 'Name: ') "
        "and the read-along book (each line's title)",
    )
    p.add_argument(
        "--highlight",
        choices=("sentence", "word"),
        help="what a read-along book (--out BOOK.epub) highlights as it is read: sentence (default), or word (word "
        "by word where the takes have word times; other segments by sentence)",
    )
    p.add_argument(
        "--subtitle-words",
        nargs="?",
        const=1,
        type=int,
        metavar="N",
        help="word timing in --subtitles/--chapter-subtitles: WebVTT keeps a cue per segment with a timestamp before "
        "each word; SRT gets a cue per N words (default 1). Segments without word times keep their cue",
    )
    p.add_argument(
        "--chapters",
        metavar="RANGE",
        help="only these chapters (numbers as --list shows: 3, 2-4, 1,3,5-7): rendered "
        "with --render, exported with --export",
    )
    p.add_argument("--segments", metavar="RANGE", help="only these segments (as --chapters): rendered and exported")
    p.add_argument(
        "--cover", type=Path, metavar="IMG", help="cover image (JPEG/PNG) for M4B and MP3 (default: the book's)"
    )
    p.add_argument("--bitrate", help="bitrate of MP3, M4B and Opus, e.g. 64k, 128k, 192k (default: the format's)")
    p.add_argument("--sample-rate", type=int, metavar="HZ", help="sample rate of the files, e.g. 44100 (default 24000)")
    rate = p.add_mutually_exclusive_group()
    rate.add_argument("--vbr", action="store_true", help="MP3 at a variable bitrate (LAME V2)")
    rate.add_argument("--cbr", action="store_true", help="MP3 at a constant bitrate (the default)")
    p.add_argument("--author", help="the book's author, in the files' tags (default: the imported EPUB's author)")
    p.add_argument("--narrator", help="the narrator, in the files' tags")
    p.add_argument("--year", help="the year, in the files' tags")
    p.add_argument(
        "--check", choices=("acx",), help="check every exported file against ACX/Audible's rules (exit 3 if any fails)"
    )
    p.add_argument(
        "--master", choices=("acx",), help="master for ACX/Audible: level, peaks, room tone, 44.1 kHz 192k CBR MP3"
    )
    p.add_argument("--strict", action="store_true", help="refuse to export while takes are flagged for review (exit 2)")


def check_export_arguments(args) -> None:
    """The export's names, formats, pace and loudness are refused before the model loads or anything renders."""
    from core.engine import parse_loudness
    from core.narration import SPEED_RANGE, check_request

    if args.out or args.subtitles or args.per_chapter:
        check_request(export_request(args, None, -1.0))
    else:
        export_request(args, None, -1.0)  # --chapters, --segments, --bitrate: said before the model loads
    if args.speed is not None and not SPEED_RANGE[0] <= args.speed <= SPEED_RANGE[1]:
        raise CliError(f"--speed must be between {SPEED_RANGE[0]} and {SPEED_RANGE[1]}, not {args.speed:g}.")
    parse_loudness(args.loudness)


def export(project, args):
    from core.cli.export_progress import ExportBar
    from core.narration import export_project

    loudness, true_peak = project.finishing.get("loudness"), float(project.finishing.get("true_peak", -1.0))
    bar = ExportBar(sys.stderr)
    try:
        return export_project(project, export_request(args, loudness, true_peak), bar.update)
    finally:
        bar.close()


def export_request(args, loudness: float | None, true_peak: float):
    from core.engine import EncodeSettings, parse_bitrate
    from core.narration import BookInfo, ExportRequest

    chapter_format = f".{args.format}" if args.format else (args.out.suffix.lower() if args.out else ".flac")
    encoding = EncodeSettings(args.sample_rate, parse_bitrate(args.bitrate), bool(args.vbr))
    return ExportRequest(
        out=args.out,
        subtitles=args.subtitles,
        per_chapter=args.per_chapter,
        chapter_format=chapter_format,
        chapter_subtitles=f".{args.chapter_subtitles}" if args.chapter_subtitles else None,
        loudness=loudness,
        true_peak=true_peak,
        chapters=range_numbers(args.chapters, "chapters"),
        segments=range_numbers(args.segments, "segments"),
        encoding=encoding,
        cover=args.cover,
        book=BookInfo(author=args.author, narrator=args.narrator, year=args.year),
        check=args.check,
        master=args.master,
        strict=bool(getattr(args, "strict", False)),
        name_speakers=bool(getattr(args, "name_speakers", False)),
        highlight=getattr(args, "highlight", None) or "sentence",
        subtitle_words=getattr(args, "subtitle_words", None),
    )


def range_numbers(text: str | None, what: str) -> tuple[int, ...] | None:
    from core.narration import parse_numbers

    return None if text is None else parse_numbers(text, what)


def chosen_numbers(project, args) -> list[int] | None:
    """The segment numbers ``--chapters`` and ``--segments`` choose (``None``: every one)."""
    chapters, segments = range_numbers(args.chapters, "chapters"), range_numbers(args.segments, "segments")
    if chapters is None and segments is None:
        return None
    from core.narration import ProjectError

    for number in chapters or ():
        if not 1 <= number <= len(project.chapters):
            raise ProjectError("export.no_chapter", number=number, count=len(project.chapters))
    return [
        n
        for n, s in enumerate(project.segments, 1)
        if (chapters is None or s.chapter + 1 in chapters) and (segments is None or n in segments)
    ]
