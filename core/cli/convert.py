"""``python -m core convert SOURCE --voice TARGET --bundle DIR --out OUT``: re-voice a recording (voice conversion).

The recording keeps its words and timing and takes the target's voice (:mod:`core.engine.streaming.conversion`).
The output is written as it is converted (every format ``synth`` writes); progress goes to stderr, one JSON object to
stdout with ``--json``. Bad recordings get the words a bad reference recording gets.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.cli.notices import say_notices
from core.cli.parser import Subparsers
from core.cli.progress_line import ProgressLine
from core.cli.runtime import runtime_arguments, runtime_options
from core.engine import SAMPLE_RATE, ConversionRequest, Pipeline, audio_format, load_source, write_audio_stream

EXIT_OK = 0


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "convert",
        help="re-voice a recording: its words and timing in another voice",
        description="Re-voices SOURCE (any length up to 30 minutes; wav, flac, ogg or mp3; any rate or channel count) "
        "into the voice of TARGET, keeping its words, timing and intonation.",
    )
    p.add_argument("source", type=Path, help="the recording to re-voice")
    p.add_argument("--voice", type=Path, help="target voice recording (default: the bundle's default_voice.wav)")
    p.add_argument("--bundle", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True, help="output file (.wav, .flac, .ogg, .opus or .mp3)")
    p.add_argument("--seed", type=int, help="the decoder noise's seed: the same seed gives the same audio")
    runtime_arguments(p)
    p.add_argument(
        "--decoder-prompt-seconds",
        type=float,
        default=3.0,
        help="seconds of the target recording the decoder sees on every call (default 3; up to 10, slower)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object with the windows and timings")


def run(args) -> int:
    runtime = runtime_options(
        args, threads=args.threads, cache_dir=args.cache_dir, decoder_prompt_seconds=args.decoder_prompt_seconds
    )
    return convert(args, runtime)


def convert(args, runtime) -> int:
    audio_format(args.out)  # an unknown suffix is refused before anything loads
    source = load_source(args.source)  # a bad recording is refused before the model loads
    pipe = Pipeline.from_bundle(args.bundle, runtime, background=True)
    stream = pipe.convert_stream(ConversionRequest(source, args.voice, args.seed))
    progress = ProgressLine(sys.stderr)
    total = source.seconds
    done = 0.0

    def chunks():
        nonlocal done
        for chunk in stream:
            done += chunk.seconds
            progress.fraction(done, total, f"converted {done:.1f} of {total:.1f} s")
            yield chunk.samples

    try:
        samples = write_audio_stream(args.out, chunks(), SAMPLE_RATE)
    finally:
        progress.close()
    report = stream.report
    warnings, notice = say_notices(report.warnings, pipe.provider_notice)
    if args.json:
        print(
            json.dumps(
                {
                    "variant": pipe.info.variant,
                    "providers": pipe.providers,
                    "provider_notice": notice,
                    "decoder_precision": pipe.files.precisions["conditional_decoder"],
                    "decoder_prompt_seconds": pipe.runtime.decoder_prompt_seconds,
                    "source": str(args.source),
                    "source_rate": source.source_rate,
                    "source_channels": source.channels,
                    "source_seconds": round(total, 4),
                    "sample_rate": SAMPLE_RATE,
                    "audio_seconds": round(samples / SAMPLE_RATE, 4),
                    "seed": report.seed,
                    "speech_tokens": len(report.speech_tokens),
                    "windows": report.chunks,
                    "warnings": warnings,
                    "out": str(args.out),
                    "timings": report.timings,
                    "cache": report.cache,
                }
            )
        )
    return EXIT_OK
