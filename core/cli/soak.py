"""``python -m core soak``: many syntheses through the inference worker in one process; the tokens must stay the same
and resident memory must not grow after warm-up (exit 3 when they do)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.cli.errors import CliError
from core.cli.parser import Subparsers
from core.cli.runtime import Q4_HELP, runtime_options
from core.engine import PRECISIONS, PROVIDERS, Q4_COMPUTE, RuntimeOptions
from core.standin.spec import SIZES, VARIANTS

EXIT_OK, EXIT_SOAK_FAILED = 0, 3
"""3: the soak ran but failed its criteria (tokens drifted, a request failed, or memory kept growing)."""


def add_parser(sub: Subparsers) -> None:
    """``soak``: many syntheses through the inference worker; tokens and memory checked."""
    defaults = RuntimeOptions()
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


def run(args) -> int:
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
    runtime = runtime_options(args, threads=args.threads)
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
