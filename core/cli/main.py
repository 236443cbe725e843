"""``python -m core``: make-standin, info, synth, convert, bench, bench-export, bench-api, soak, narrate, project,
serve.
A public interface: keep flags, JSON fields and exit codes.

Exit codes: 0 success; 2 bad input or bad bundle, or a render that could not finish (failed segments, a Ray cluster
that went away: one-line message on stderr, no traceback); 1 internal error;
3 ``soak``: the soak ran but failed its criteria (tokens drifted, a request failed, or memory kept growing);
``narrate``/``project --check``: the files were written but one fails the store's rules.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

from core.cli import align, convert, languages, narrate, project, serve, text, voices
from core.cli.cluster import check_cluster_arguments, claim_status, note_finished, run_watched, watched
from core.cli.errors import CliError
from core.cli.notices import say_notices
from core.cli.parser import CliParser, Subparsers
from core.cli.runtime import (
    Q4_HELP,
    add_playback_policy,
    decoder_arguments,
    graph_rewrite_arguments,
    runtime_arguments,
    runtime_options,
)
from core.cli.sampling import add_sampling_arguments, sampling_given
from core.engine import (
    DECODER_PROMPT_WINDOWS,
    PRECISIONS,
    PROVIDERS,
    Q4_COMPUTE,
    SAMPLE_RATE,
    STREAM_PLANS,
    ChatterboxError,
    RuntimeOptions,
    audio_format,
    write_audio_stream,
)
from core.standin.naming import NAMINGS
from core.standin.spec import PRECISIONS as STANDIN_PRECISIONS
from core.standin.spec import SIZES, VARIANTS
from core.wording import describe_error

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT, EXIT_SOAK_FAILED = 0, 1, 2, 3
log = logging.getLogger("core.cli.main")


def build_parser() -> argparse.ArgumentParser:
    defaults = RuntimeOptions()
    parser = CliParser(prog="python -m core", description="Chatterbox TTS ONNX pipeline (no GUI).")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)
    for add in (
        _add_make_standin,
        _add_info,
        _add_bench,
        _add_bench_export,
        _add_bench_project,
        _add_bench_screen,
        _add_bench_words,
        _add_bench_short_lines,
        _add_bench_text,
        _add_bench_cast,
        _add_bench_convert,
        _add_bench_api,
        _add_bench_cluster,
        _add_soak,
        _add_synth,
    ):
        add(sub, defaults)
    for command in (convert, narrate, project, serve, text, languages, voices, align):
        command.add_parser(sub)
    return parser


def _add_make_standin(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``make-standin OUT``: a stand-in bundle with the real interface and random weights."""
    p = sub.add_parser("make-standin", help="build a stand-in bundle with the real interface and random weights")
    p.add_argument("out", type=Path)
    p.add_argument("--variant", choices=VARIANTS, default="turbo")
    p.add_argument("--size", choices=SIZES, default="tiny")
    p.add_argument(
        "--precision",
        choices=STANDIN_PRECISIONS,
        default="fp32",
        help="fp32; q4 (int4 language model); fp16 (language model with a float16 KV cache)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--names",
        choices=NAMINGS,
        default="contract",
        help="tensor names: the contract's, the cond_emb/prompt_token family, or positional only",
    )
    p.add_argument(
        "--repeating",
        action="store_true",
        help="greedy decoding repeats a token unless the repetition penalty covers the whole history",
    )
    p.add_argument(
        "--noisy-decoder",
        action="store_true",
        help="the decoder draws random noise on every call, as the real decoders do",
    )


def _add_info(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``info BUNDLE``: what a bundle is and how its tensors were matched."""
    p = sub.add_parser(
        "info", help="describe a bundle: variant, graphs, precisions, dims, dtypes and the tensor names it uses"
    )
    p.add_argument("bundle", type=Path)
    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--q4-compute", choices=Q4_COMPUTE, default=defaults.q4_compute, help=Q4_HELP)
    p.add_argument("--provider", choices=PROVIDERS, default="cpu")


def _add_bench(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench``: every optimisation against its baseline."""
    p = sub.add_parser("bench", help="measure every optimisation against its baseline (A/B interleaved)")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--bundle", type=Path, help="a real or stand-in bundle")
    source.add_argument("--standin", choices=VARIANTS, default="turbo", help="build/reuse a stand-in (default)")
    p.add_argument("--size", choices=SIZES, default="full")
    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--q4-compute", choices=Q4_COMPUTE, default=defaults.q4_compute, help=Q4_HELP)
    p.add_argument("--provider", choices=PROVIDERS, default="auto")
    p.add_argument("--threads", type=int)
    p.add_argument("--lm-batch", type=int, default=defaults.lm_batch, help="the book comparison's batch (default 4)")
    graph_rewrite_arguments(p)
    decoder_arguments(p)
    p.add_argument("--quick", action="store_true", help="fewer repetitions and a 5 s utterance")
    p.add_argument(
        "--runs",
        type=int,
        help="runs of each side of the streaming comparisons (plan: start fast, play smoothly, one-shot); "
        "default 2, 1 with --quick",
    )
    add_playback_policy(p, defaults)
    p.add_argument(
        "--only",
        help="comma-separated subset: kv,overhead,fold,attention,shared,floor,cfg,prefix,conditioning,streaming,"
        "spinning,threads,decoder,convs,q4,plan,book,cold,export; and, only when named, decoder_levers (each decoder "
        "lever's cost and output SNR on one set of tokens)",
    )
    p.add_argument("--json", type=Path, help="also write the full report as JSON")


def _add_bench_export(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-export``: the streaming export's speed and memory on stand-in books."""
    p = sub.add_parser(
        "bench-export",
        help="export speed (x real time, M4B and MP3 with pace and loudness) and peak memory by book length",
        description="Builds projects of stand-in audio (no synthesis), exports the first with pace 1.1 and -19 LUFS "
        "to each format, then exports each length to M4B in a fresh process and reports its peak memory above the "
        "loaded project.",
    )
    p.add_argument("--hours", default="1,10", help="book lengths in hours, comma-separated (default 1,10)")
    p.add_argument("--formats", default="m4b,mp3", help="formats for the speed run (default m4b,mp3)")
    p.add_argument("--folder", type=Path, help="where the stand-in books and spools go (default: the temp folder)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")


def _bench_export(args) -> int:
    import json

    from core.bench import bench_export

    hours = tuple(float(h) for h in args.hours.split(","))
    report = bench_export(hours, tuple(f.strip() for f in args.formats.split(",")), args.folder)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def _add_bench_project(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-project``: the project store at book size (per take, a long render, opening)."""
    p = sub.add_parser(
        "bench-project",
        help="a take's bookkeeping on 1,000- and 10,000-segment projects, a long render's time per tenth, and the "
        "time and memory to open a long project in the command line and the window",
        description="Builds stand-in projects (no synthesis) of each size, stores takes spread over each and times "
        "their bookkeeping beside a whole project.json rewrite (what earlier versions did per take); opens each in a "
        "fresh process; then renders a long project on the tiny stand-in with a few tokens a segment.",
    )
    p.add_argument("--sizes", default="1000,10000", help="project sizes in segments, comma-separated")
    p.add_argument("--render-segments", type=int, default=10000, help="segments of the render (0: no render)")
    p.add_argument("--bundle", type=Path, help="the model of the render (default: the tiny Original stand-in)")
    p.add_argument("--folder", type=Path, help="where the projects go (default: the temp folder)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")


def _bench_project(args) -> int:
    import json

    from core.bench.project_bench import bench_project

    sizes = tuple(int(n) for n in args.sizes.split(","))
    report = bench_project(sizes, args.render_segments, args.bundle, args.folder)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def _add_sentences_render_arguments(p: argparse.ArgumentParser) -> None:
    """What a bench that renders a few sentences takes (``bench-screen``, ``bench-words``): the model, a voice, how
    many sentences and how long each may be."""
    p.add_argument("--bundle", type=Path, required=True, help="the model (the faithful Turbo bundle: see PERFORMANCE)")
    p.add_argument("--voice", type=Path, help="a reference recording (Turbo has no voice of its own)")
    p.add_argument("--sentences", type=int, default=12)
    p.add_argument(
        "--max-new-tokens",
        type=int,
        default=100,
        help="speech tokens a sentence may have (100: 4 s; random weights never say STOP)",
    )


def _add_bench_screen(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-screen``: the take screen's cost per take against the render's, in one run."""
    p = sub.add_parser(
        "bench-screen",
        help="what screening a take costs (with and without speech recognition) as a share of rendering it",
        description="Renders a few sentences with BUNDLE, then times the take screen (and speech recognition) on "
        "each take the render made; reports both per take and as a share of the take's render time.",
    )
    _add_sentences_render_arguments(p)
    p.add_argument("--asr", choices=("auto", "whisper", "sphinx", "none"), default="auto")
    p.add_argument("--folder", type=Path, help="where the project goes (default: the temp folder)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    runtime_arguments(p, cache_dir=False)


def _bench_screen(args) -> int:
    import json

    from core.bench.screen_bench import bench_screen

    asr = None if args.asr == "none" else args.asr
    report = bench_screen(
        args.bundle, args.voice, args.sentences, asr, _runtime(args), args.folder, args.max_new_tokens
    )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def _add_bench_words(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-words``: finding the takes' words against the render, in one run."""
    p = sub.add_parser(
        "bench-words",
        help="what finding each take's words costs as a share of rendering it (and on real speech)",
        description="Renders a few sentences with BUNDLE without and with word times, reports the aligner's time as "
        "a share of the render and the render's ratio, and the aligner's rate on espeak-ng speech.",
    )
    _add_sentences_render_arguments(p)
    p.add_argument("--folder", type=Path, help="where the projects go (default: the temp folder)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    runtime_arguments(p, cache_dir=False)


def _bench_words(args) -> int:
    import json

    from core.bench.words_bench import bench_words

    report = bench_words(args.bundle, args.voice, args.sentences, _runtime(args), args.folder, args.max_new_tokens)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def _add_bench_short_lines(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-short-lines``: the take screen's flags on one- and two-word lines against sentences, with and without
    the short-line cap, in one run."""
    p = sub.add_parser(
        "bench-short-lines",
        help="what the take screen flags on one- and two-word lines against sentences, with and without their cap",
        description="Speaks --lines short lines of dialogue and as many sentences with the same seeds, each with the "
        "options a project gives it and with those a render gives it (a short line's cap), interleaved; screens "
        "every take as a render does and reports per side and kind of line the flags by reason, how generation "
        "stopped, speech tokens against their cap, and seconds.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--bundle", type=Path, help="a real or stand-in bundle")
    source.add_argument("--standin", choices=VARIANTS, default="turbo", help="build/reuse a stand-in (default)")
    p.add_argument("--size", choices=SIZES, default="tiny", help="stand-in size (with --standin)")
    p.add_argument(
        "--never-stops",
        action="store_true",
        help="with --standin: one whose language model never says STOP before its cap (the worst case)",
    )
    p.add_argument("--lines", type=int, default=100, help="short lines, and sentences (default 100 each)")
    p.add_argument("--seed", type=int, default=1000, help="line i is spoken with seed + i on both sides")
    p.add_argument("--voice", type=Path, help="reference recording (default: the bundle's voice, or a synthetic one)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    runtime_arguments(p, cache_dir=False)


def _bench_short_lines(args) -> int:
    import tempfile

    from core.bench.short_lines_bench import bench_short_lines, never_stopping_standin, table
    from core.standin import cached_standin

    if args.lines < 1:
        raise CliError(f"--lines must be at least 1, not {args.lines}")
    if args.never_stops and args.bundle:
        raise CliError("--never-stops builds a stand-in: use it with --standin, not --bundle")
    with tempfile.TemporaryDirectory(prefix="chatterbox-short-lines-") as scratch:
        if args.bundle:
            bundle = args.bundle
        elif args.never_stops:
            bundle = never_stopping_standin(Path(scratch) / args.standin, args.standin, args.size)
        else:
            precision = args.precision if args.precision in STANDIN_PRECISIONS else "fp32"
            bundle = cached_standin(
                args.standin, args.size, precision, announce=lambda m: print(m, file=sys.stderr, flush=True)
            )
        report = bench_short_lines(bundle, args.lines, args.voice, _runtime(args), args.seed)
        if args.never_stops:
            report["bundle"] = f"{args.standin} stand-in ({args.size}) that never says STOP"
    print(table(report), flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return 0


def _add_bench_text(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-text``: the text front end's cost per sentence and language against the language model's."""
    p = sub.add_parser(
        "bench-text",
        help="what the text front end costs per sentence in each language, as a share of the language model's time",
        description="For one sentence in each language the bundle reads, times the text front end (prepare and "
        "encode, warm; each language's one-time loads apart, as first use) and the language model generating that "
        "sentence's speech tokens, interleaved in one run; reports both and their ratio (issue 50: under 2 percent).",
    )
    p.add_argument("--bundle", type=Path, required=True, help="the model (a faithful bundle: see PERFORMANCE)")
    p.add_argument("--runs", type=int, default=3, help="language-model runs per language (the median is reported)")
    p.add_argument("--calls", type=int, default=50, help="front-end calls per language and run")
    p.add_argument("--languages", help="language codes, comma-separated (default: every language the model reads)")
    p.add_argument("--models-dir", type=Path, help="where the language data lives (default: the app's models)")
    p.add_argument(
        "--json",
        nargs="?",
        const="-",
        help="print the report as JSON instead of the table, or with a path, also write it there",
    )
    runtime_arguments(p, cache_dir=False)


def _bench_text(args) -> int:
    import json
    from dataclasses import replace

    from core.bench.text_front_end_bench import BenchTextError, bench_text, table

    languages = [c.strip() for c in args.languages.split(",") if c.strip()] if args.languages else None
    runtime = replace(_runtime(args), threads=args.threads)
    try:
        report = bench_text(args.bundle, runtime, args.runs, args.calls, languages, args.models_dir)
    except BenchTextError as exc:
        raise CliError(str(exc)) from exc
    if args.json == "-":
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(table(report))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    return 0


def _add_bench_cast(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-cast BOOK``: how long attributing every quotation of a book takes, and its peak memory."""
    p = sub.add_parser(
        "bench-cast",
        help="time the attribution of every quotation of a book (who says each line) and its peak memory",
        description="Reads BOOK (a text file, paragraphs separated by blank lines), repeats it to --mb megabytes, "
        "and times the attribution of its quotations (median of --runs) and its peak memory (tracemalloc). With "
        "--annotated, scores it instead on novels whose quotations a person annotated with their speakers (the "
        "Project Dialogism Novel Corpus's folders: novel_text.txt, quotation_info.csv, character_info.csv).",
    )
    p.add_argument("book", type=Path, nargs="?")
    p.add_argument(
        "--annotated",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="annotated novels' folders (PDNC's data/*): the share of quotations given the right speaker, by type",
    )
    p.add_argument("--mb", type=float, default=1.0, help="megabytes of text to attribute (the book repeated)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--language", default="en")
    p.add_argument("--json", action="store_true")


def _score_cast(args) -> int:
    import json

    from core.bench.attribution_accuracy import TYPES, score_novels

    needed = ("novel_text.txt", "quotation_info.csv", "character_info.csv")
    for folder in args.annotated:
        missing = [name for name in needed if not (folder / name).is_file()]
        if missing:
            raise CliError(f"{folder} is not an annotated novel's folder: it lacks {', '.join(missing)}.")
    try:
        report = score_novels(args.annotated)
    except (OSError, UnicodeDecodeError, ValueError, SyntaxError, KeyError) as exc:
        raise CliError(f"The annotated novels cannot be read: {exc}") from exc
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    for novel in [*report["novels"], {**report, "novel": "all"}]:
        types = novel["by_type"]
        kinds = "  ".join(f"{kind} {types[kind]['accuracy']:.1%} of {types[kind]['quotations']}" for kind in TYPES)
        print(
            f"{novel['novel']}: {novel['accuracy']:.1%} of {novel['quotations']} quotations ({kinds}); most frequent "
            f"speaker {novel['most_frequent_speaker']:.1%}, two quotes back {novel['two_quotes_back']:.1%}"
        )
    return 0


def _bench_cast(args) -> int:
    import json

    from core.bench.attribution_bench import bench_cast

    if args.annotated:
        return _score_cast(args)
    if args.book is None:
        raise CliError("bench-cast needs a BOOK to time, or --annotated DIR ... to score.")
    if args.runs < 1 or args.mb <= 0:
        raise CliError("--runs must be at least 1 and --mb above 0")
    try:
        report = bench_cast(args.book, args.mb, args.runs, args.language)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise CliError(f"{args.book} cannot be read as a UTF-8 text book: {exc}") from exc
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(
            f"{report['characters_of_text'] / 1e6:.2f} MB, {report['quotes']} quotes, {report['characters']} "
            f"characters: {report['seconds']} s (runs {report['runs_s']}), peak {report['peak_mb']} MB, "
            f"{report['unsure_share']:.0%} of lines unsure"
        )
    return 0


def _add_bench_convert(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-convert``: voice conversion's speed and first audio, and the seeded noise against the graph's."""
    p = sub.add_parser(
        "bench-convert",
        help="voice conversion: first audio and x real time, and the seeded decoder noise against the graph's own",
        description="Converts SOURCE (or synthetic speech of --seconds) into VOICE after a warm-up, then decodes the "
        "same tokens alternately with the float32 decoder as exported and with its noise seeded.",
    )
    p.add_argument("--bundle", type=Path, required=True, help="the model (a faithful bundle: see PERFORMANCE)")
    p.add_argument("--voice", type=Path, help="the target voice (Turbo has no voice of its own)")
    p.add_argument("--source", type=Path, help="the recording to convert (default: synthetic speech)")
    p.add_argument("--seconds", type=float, default=30.0, help="length of the synthetic source")
    p.add_argument("--noise-calls", type=int, default=3, help="decoder calls per side in the noise comparison")
    p.add_argument("--runs", type=int, default=1, help="conversions of each side (decoder thread on, off)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    runtime_arguments(p, cache_dir=False)


def _bench_convert(args) -> int:
    from core.bench.convert_bench import bench_convert

    report = bench_convert(
        args.bundle, args.voice, args.source, args.seconds, _runtime(args), args.noise_calls, say=_say, runs=args.runs
    )
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    return EXIT_OK


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _add_bench_api(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-api``: the local speech API through HTTP (first bytes per format, fair turns)."""
    from core.bench import bench_api_arguments

    p = sub.add_parser(
        "bench-api",
        help="the speech API as a client sees it: first audio of each format next to the total, and fair turns",
        description="Serves a bundle (or a stand-in) on loopback and measures, in one run, each format's first byte "
        "and first audio on a five-sentence input next to the whole response, and the first byte of a one-sentence "
        "request sent while a 20-sentence request streams, in sentences' time.",
    )
    bench_api_arguments(p)


def _bench_api(args) -> int:
    from core.bench import bench_api

    return bench_api(args)


def _add_bench_cluster(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``bench-cluster``: a project rendered locally, by one Ray actor and by two (needs Ray)."""
    from core.bench import bench_cluster_arguments

    p = sub.add_parser(
        "bench-cluster",
        help="a 40-sentence project rendered locally, with 1 and with 2 Ray actors: wall time, speed-up, start-up",
        description="Renders the same seeded project three times on this computer: locally, then on a local Ray "
        "instance with 1 and with 2 actors; reports wall times, speed-ups, Ray's start-up and each actor's "
        "throughput, and checks that the audio is the same.",
    )
    bench_cluster_arguments(p)


def _bench_cluster(args) -> int:
    from core.bench import bench_cluster

    return bench_cluster(args)


def _add_soak(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``soak``: many syntheses through the inference worker; tokens and memory checked."""
    p = sub.add_parser(
        "soak",
        help="many syntheses in one process: same tokens every time, no memory growth after warm-up",
        description="Speak one text --requests times through the app's inference worker with a fixed seed; after "
        "each request read the process's resident memory (after gc.collect()). Passes when every request gives the "
        "tokens of the first and resident memory grows at most --max-growth-mb from request --warmup to the last.",
        epilog="Exit codes: 0 the soak passed; 3 it ran but failed its criteria (tokens differ, a request failed, or "
        "memory grew more than --max-growth-mb); 2 bad input or bundle; 1 internal error.",
    )
    source = p.add_mutually_exclusive_group()
    source.add_argument("--bundle", type=Path, help="a real or stand-in bundle")
    source.add_argument("--standin", choices=VARIANTS, default="turbo", help="build/reuse a stand-in (default)")
    p.add_argument("--size", choices=SIZES, default="full", help="stand-in size (with --standin)")
    p.add_argument("--requests", type=int, default=50, help="consecutive requests (default 50)")
    p.add_argument("--warmup", type=int, default=10, help="memory growth is measured from this request (default 10)")
    p.add_argument("--text", default=None, help="what to say (default: one sentence)")
    p.add_argument("--voice", type=Path, help="reference recording (default: the bundle's voice, or a synthetic one)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--q4-compute", choices=Q4_COMPUTE, default=defaults.q4_compute, help=Q4_HELP)
    p.add_argument("--provider", choices=PROVIDERS, default="auto")
    p.add_argument("--threads", type=int)
    p.add_argument("--max-growth-mb", type=float, default=30.0, help="allowed RSS growth after warm-up (default 30)")
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")


def _add_synth(sub: Subparsers, defaults: RuntimeOptions) -> None:
    """``synth``: text to an audio file, with every runtime switch."""
    p = sub.add_parser("synth", help="synthesize text to an audio file")
    p.add_argument("--bundle", type=Path, required=True)
    text = p.add_mutually_exclusive_group(required=True)
    text.add_argument("--text")
    text.add_argument("--text-file", type=Path)
    p.add_argument("--voice", type=Path, help="reference recording (default: the bundle's default_voice.wav)")
    p.add_argument("--out", type=Path, required=True, help="output file (.wav, .flac, .ogg, .opus or .mp3)")
    add_sampling_arguments(p)
    runtime_arguments(p, cache_dir=False)
    p.add_argument("--no-kv-chaining", action="store_true", help="plain loop: copy the KV cache through numpy")
    p.add_argument("--no-conditioning-cache", action="store_true", help="run the speech encoder every time")
    p.add_argument("--no-prefix-cache", action="store_true", help="prefill the voice's conditioning rows every time")
    p.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="decode in chunks while the language model generates (default on)",
    )
    p.add_argument("--first-chunk-tokens", type=int, default=defaults.first_chunk_tokens)
    p.add_argument("--chunk-tokens", type=int, default=defaults.chunk_tokens)
    p.add_argument(
        "--stream-plan",
        choices=STREAM_PLANS,
        default=defaults.stream_plan,
        help="adaptive: as few decoder calls as keep playback fed (default); fixed: every --chunk-tokens",
    )
    add_playback_policy(p, defaults)
    p.add_argument("--no-decoder-thread", action="store_true", help="decode on the inference thread, between LM steps")
    p.add_argument(
        "--decoder-prompt-seconds",
        type=float,
        default=defaults.decoder_prompt_seconds,
        help="seconds of the reference the decoder sees on every call (default 3, its most voiced stretch; up to 10 "
        "as upstream, slower)",
    )
    p.add_argument(
        "--decoder-prompt-window",
        choices=DECODER_PROMPT_WINDOWS,
        default=defaults.decoder_prompt_window,
        help="which part of a longer reference a shorter prompt keeps: best (the most voiced stretch) or first",
    )
    p.add_argument("--no-trim-silence", action="store_true", help="keep trailing silence after each sentence")
    p.add_argument("--cache-dir", type=Path, help="conditioning cache folder (default: the user cache dir)")
    p.add_argument("--json", action="store_true", help="print one JSON object with tokens and timings")


def main(argv: list[str] | None = None) -> int:
    claim_status()  # in the child of a command with --ray: where it says that it finished (core/cli/cluster.py)
    try:
        return _main(argv)
    finally:
        note_finished()


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help (0) or a usage error (2): return the code instead of exiting
        return int(exc.code or 0)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    try:
        if watched(args):  # Ray may end the process that renders: a child renders, this one says what happened
            check_cluster_arguments(args)  # a refusal is said at once
            return run_watched(list(sys.argv[1:] if argv is None else argv))
        commands = {
            "make-standin": _make_standin,
            "info": _info,
            "synth": _synth,
            "convert": convert.run,
            "bench": _bench,
            "bench-export": _bench_export,
            "bench-project": _bench_project,
            "bench-screen": _bench_screen,
            "bench-words": _bench_words,
            "bench-short-lines": _bench_short_lines,
            "bench-text": _bench_text,
            "bench-cast": _bench_cast,
            "bench-convert": _bench_convert,
            "bench-api": _bench_api,
            "bench-cluster": _bench_cluster,
            "soak": _soak,
            "narrate": narrate.run,
            "project": project.run,
            "serve": serve.run,
            "text": text.run,
            "languages": languages.run,
            "voices": voices.run,
            "align": align.run,
        }
        return commands[args.command](args)
    except ChatterboxError as exc:
        print(f"error: {describe_error(exc, 'cli')}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as exc:
        if args.verbose:
            log.exception("internal error")
        print(f"internal error: {type(exc).__name__}: {exc} (run with --verbose for details)", file=sys.stderr)
        return EXIT_INTERNAL


def _bench(args) -> int:
    from core.bench import bench_main

    return bench_main(args)  # a stand-in precision it cannot build is refused by cached_standin


def _soak(args) -> int:
    import tempfile
    from dataclasses import replace

    from core.bench import DEFAULT_TEXT, curve_rows, run_soak
    from core.standin import cached_standin

    if args.requests < 2:
        raise CliError(f"--requests must be at least 2, not {args.requests}")
    if not 1 <= args.warmup < args.requests:
        raise CliError(f"--warmup must be between 1 and --requests - 1 ({args.requests - 1}), not {args.warmup}")
    if args.max_growth_mb != args.max_growth_mb:  # NaN
        raise CliError("--max-growth-mb must be a number")
    runtime = _runtime(args)
    bundle = args.bundle or cached_standin(
        args.standin, args.size, args.precision, announce=lambda message: print(message, file=sys.stderr, flush=True)
    )
    text = DEFAULT_TEXT if args.text is None else args.text

    def progress(number, total, rss, request_ms):
        if number in rows:
            rss_text = f"{rss:8.1f} MB" if rss is not None else "       ? MB"
            print(f"  request {number:>4}  RSS {rss_text}  {request_ms:8.0f} ms", flush=True)

    rows = set(curve_rows(args.requests, args.warmup))
    if not args.json:
        print(f"soak: {args.requests} requests, seed {args.seed}, bundle {bundle}", flush=True)
    with tempfile.TemporaryDirectory(prefix="chatterbox-soak-") as cache_dir:  # a fresh conditioning cache
        report = run_soak(
            bundle,
            replace(runtime, cache_dir=Path(cache_dir)),
            text,
            args.voice,
            requests=args.requests,
            seed=args.seed,
            progress=None if args.json else progress,
            warmup=args.warmup,
        )
    problems = report.problems(args.max_growth_mb)
    if report.provider_notice:
        print(f"notice: {report.provider_notice}", file=sys.stderr)  # worded by run_soak
    if args.json:
        print(json.dumps(report.to_dict(args.max_growth_mb)))
    else:
        if report.identical_tokens:
            tokens = f"identical in all {report.requests} requests ({report.tokens_per_request[0]} tokens each)"
        else:
            tokens = (
                f"{report.distinct_token_sequences} distinct sequences; differ from request 1 in requests "
                f"{report.mismatched_requests}"
            )
        print(f"tokens: {tokens}")
        if report.growth_mb is None:
            print(f"memory: cannot be read on this platform ({report.rss_source})")
        else:
            start, end = report.rss_mb[report.warmup - 1], report.rss_mb[-1]
            print(
                f"memory ({report.rss_source}): {start:.1f} MB at request {report.warmup} -> {end:.1f} MB at request "
                f"{report.requests}: growth {report.growth_mb:+.1f} MB (limit {args.max_growth_mb:g} MB)"
            )
        lm = report.providers.get("language_model")
        print(f"median request {report.median_request_ms:.0f} ms ({report.variant}, language model on {lm})")
        for failure in report.failures[:5]:
            print(f"failed: {failure}")
        print("verdict: PASS" if not problems else f"verdict: FAIL ({'; '.join(problems)})")
    return EXIT_OK if not problems else EXIT_SOAK_FAILED


def _make_standin(args) -> int:
    from core.standin import make_standin

    started = time.perf_counter()
    out = make_standin(
        args.out,
        args.variant,
        args.size,
        args.precision,
        args.seed,
        names=args.names,
        repeating=args.repeating,
        decoder_noise=args.noisy_decoder,
    )
    extras = "".join(
        [
            f", {args.names} names" if args.names != "contract" else "",
            ", repeating" if args.repeating else "",
            ", noisy decoder" if args.noisy_decoder else "",
        ]
    )
    print(
        f"built {args.size} {args.variant} stand-in ({args.precision}{extras}) in {out} "
        f"({time.perf_counter() - started:.1f} s)"
    )
    return EXIT_OK


def _runtime(args):
    if args.command in ("soak", "bench-convert"):
        return runtime_options(args, threads=args.threads)
    if args.command != "synth":
        return runtime_options(args)
    return runtime_options(
        args,
        threads=args.threads,
        kv_chaining=not args.no_kv_chaining,
        conditioning_cache=not args.no_conditioning_cache,
        prefix_cache=not args.no_prefix_cache,
        stream=args.stream,
        first_chunk_tokens=args.first_chunk_tokens,
        chunk_tokens=args.chunk_tokens,
        stream_plan=args.stream_plan,
        playback_policy=args.playback_policy,
        decoder_thread=not args.no_decoder_thread,
        decoder_prompt_seconds=args.decoder_prompt_seconds,
        decoder_prompt_window=args.decoder_prompt_window,
        cache_dir=args.cache_dir,
    )


def _info(args) -> int:
    from core.engine import Pipeline

    pipe = Pipeline.from_bundle(args.bundle, _runtime(args))
    info, files, caps = pipe.info, pipe.files, pipe.capabilities
    report = {
        "bundle": str(files.root),
        "variant": info.variant,
        "graphs": {
            name: {
                "file": path.name,
                "precision": files.precisions[name],
                "available": list(files.available[name]),
                "provider": caps.providers[name],
            }
            for name, path in files.graphs.items()
        },
        "layers": info.layers,
        "kv_heads": info.kv_heads,
        "head_dim": info.head_dim,
        "hidden": info.hidden,
        "logits_vocab": info.logits_vocab,
        "kv_inputs": len(info.past_names),
        "dtypes": {
            "kv": np.dtype(info.kv_dtype).name,
            "inputs_embeds": np.dtype(info.embeds_dtype).name,
            "logits": np.dtype(info.logits_dtype).name,
        },
        "supports_cfg": caps.supports_cfg,
        "languages": list(caps.languages),
        "default_voice": caps.has_default_voice,
        "tensor_names": info.tensor_names(),
        "q4_compute": caps.q4_compute,
    }
    print(json.dumps(report, indent=2))
    return EXIT_OK


def _synth(args) -> int:
    from core.engine import Pipeline, SynthesisOptions, SynthesisRequest

    if args.text is not None:
        text = args.text
    else:
        try:
            text = args.text_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError(f"Cannot read {args.text_file}: {exc}. Use a UTF-8 text file.") from exc
    audio_format(args.out)  # an unknown suffix is refused before the model loads
    options = SynthesisOptions(**sampling_given(args), seed=args.seed, trim_silence=not args.no_trim_silence)
    pipe = Pipeline.from_bundle(args.bundle, _runtime(args), background=True)  # slow graphs load while it speaks
    pipe.resolve(options)  # reject bad options before any work
    stream = pipe.stream(SynthesisRequest(text, args.voice, options))
    samples = write_audio_stream(args.out, (chunk.samples for chunk in stream), SAMPLE_RATE)  # flat memory
    result = stream.report
    warnings, notice = say_notices(result.warnings, pipe.provider_notice)
    if args.json:
        print(
            json.dumps(
                {
                    "variant": pipe.info.variant,
                    "providers": pipe.providers,
                    "provider_notice": notice,
                    "kv_chaining": pipe.runtime.kv_chaining,
                    "q4_compute": pipe.capabilities.q4_compute,
                    "stream": pipe.runtime.stream,
                    "stream_plan": pipe.runtime.stream_plan,
                    "playback_policy": pipe.runtime.playback_policy,
                    "forecast": result.forecast,
                    "decoder_thread": pipe.runtime.decoder_thread,
                    "decoder_prompt_seconds": pipe.runtime.decoder_prompt_seconds,
                    "decoder_prompt_window": pipe.runtime.decoder_prompt_window,
                    "decoder_precision": pipe.files.precisions["conditional_decoder"],
                    "conditioning_cache": pipe.runtime.conditioning_cache,
                    "prefix_cache": pipe.runtime.prefix_cache,
                    "sample_rate": SAMPLE_RATE,
                    "audio_seconds": round(samples / SAMPLE_RATE, 4),
                    "speech_tokens": result.speech_tokens,
                    "seed": result.seed,
                    "stop_reasons": result.stop_reasons,
                    "warnings": warnings,
                    "out": str(args.out),
                    "timings": {k: round(v, 3) for k, v in result.timings.items()},
                    "chunks": result.chunks,
                    "cache": result.cache,
                }
            )
        )
    return EXIT_OK
