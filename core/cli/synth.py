"""``python -m core synth``: text to an audio file, streamed, with every runtime switch; ``--json`` prints one object
with the tokens, timings and the options it ran with."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from core.cli.errors import CliError
from core.cli.notices import say_notices
from core.cli.parser import Subparsers
from core.cli.runtime import add_playback_policy, runtime_arguments, runtime_options
from core.cli.sampling import add_sampling_arguments, sampling_given
from core.engine import (
    DECODER_PROMPT_WINDOWS,
    SAMPLE_RATE,
    STREAM_PLANS,
    RuntimeOptions,
    audio_format,
    write_audio_stream,
)

EXIT_OK = 0


def add_parser(sub: Subparsers) -> None:
    """``synth``: text to an audio file, with every runtime switch."""
    defaults = RuntimeOptions()
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


def run(args) -> int:
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


def _runtime(args) -> RuntimeOptions:
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
