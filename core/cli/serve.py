"""``python -m core serve``: the local speech API (OpenAI-compatible) without the window, and with ``--wyoming`` the
Wyoming text-to-speech server (Home Assistant) beside it in the same process, on the same worker (``--no-http``:
Wyoming alone).

Loads the bundle on the inference worker, then serves until Ctrl-C. Exit codes as for every command: 0 stopped,
2 bad input (a bundle that does not load, a port in use, a non-local ``--host`` without ``--api-key``, a
``--wyoming`` address that is not ``tcp://HOST:PORT``), 1 internal.
"""

from __future__ import annotations

import contextlib
import queue
import sys
from pathlib import Path

from core.cli.errors import CliError
from core.cli.parser import Subparsers
from core.cli.runtime import runtime_arguments, runtime_options
from core.wording import describe_error, describe_notice

EXIT_OK = 0
WYOMING_URI = "tcp://127.0.0.1:10200"
"""``--wyoming`` without an address (core.api.wyoming's DEFAULT_URI: not imported here, so that every command does
not load the API's web framework)."""


def add_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the local speech API (OpenAI-compatible POST /v1/audio/speech) on this machine",
        description="An OpenAI-compatible speech endpoint on the local engine: point an OpenAI client at "
        "http://HOST:PORT/v1. Binds 127.0.0.1 by default; any other host needs --api-key.",
    )
    p.add_argument("--bundle", type=Path, required=True, help="the model folder")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    p.add_argument("--api-key", help="require 'Authorization: Bearer KEY' on /v1 (required off loopback)")
    p.add_argument("--cors", action="append", default=[], metavar="ORIGIN", help="allow this browser origin")
    p.add_argument("--library", type=Path, help="voice library folder (default: the app's)")
    p.add_argument("--max-queue", type=int, default=16, help="requests allowed to wait (more get 429; default 16)")
    p.add_argument(
        "--wyoming",
        nargs="?",
        const="",
        metavar="tcp://HOST:PORT",
        help=f"also serve Wyoming text to speech for Home Assistant (default {WYOMING_URI}: this machine only; "
        "any other host is reachable from the network without authentication, and is announced over zeroconf)",
    )
    p.add_argument("--no-http", action="store_true", help="serve Wyoming only, not the HTTP API (needs --wyoming)")
    p.add_argument(
        "--wyoming-language",
        metavar="CODE",
        help="Wyoming: the Multilingual model's language when a request names none",
    )
    runtime_arguments(p)


def run(args) -> int:
    return serve(args, runtime_options(args, threads=args.threads, cache_dir=args.cache_dir))


def serve(args, runtime) -> int:
    from core.api import ApiConfig, ApiServer, check_bind, create_app
    from core.api.wyoming import WyomingConfig, WyomingServer, parse_uri
    from core.engine import BundleError, InferenceWorker, ModelFailed, ModelLoaded, SynthesisOptions, voices_dir
    from core.voices import VoiceLibrary

    if args.no_http and args.wyoming is None:
        raise CliError("--no-http serves nothing without --wyoming")
    if not args.no_http:
        check_bind(args.host, args.port, args.api_key)
    wyoming_address = parse_uri(args.wyoming or WYOMING_URI) if args.wyoming is not None else None
    if args.max_queue < 0:
        raise CliError(f"--max-queue must be 0 or more, not {args.max_queue}")
    worker = InferenceWorker()
    worker.start()
    wyoming: WyomingServer | None = None
    try:
        worker.load(args.bundle, runtime)
        while True:
            try:
                event = worker.events.get(timeout=600)
            except queue.Empty:
                raise BundleError("worker.load_timeout", bundle=str(args.bundle), minutes=10) from None
            if isinstance(event, ModelFailed):
                raise BundleError(event.code, **event.data)
            if isinstance(event, ModelLoaded):
                break
        library = VoiceLibrary(args.library or voices_dir())
        server = None
        if not args.no_http:
            config = ApiConfig(api_key=args.api_key, cors=tuple(args.cors), max_waiting=args.max_queue)
            server = ApiServer(create_app(worker, library, config), args.host, args.port)
        if event.notice:
            print(f"notice: {describe_notice(event.notice, 'cli')}", file=sys.stderr)
        if wyoming_address is not None:
            options = SynthesisOptions(language=args.wyoming_language)
            wyoming_config = WyomingConfig(max_waiting=args.max_queue, options=options)
            jobs = server.jobs if server is not None else None  # one waiting limit, one /health for both
            wyoming = WyomingServer(worker, library, wyoming_config, *wyoming_address, jobs=jobs)
            where = "from the network, without authentication" if wyoming.open else "this machine only"
            print(f"serving Wyoming text to speech on {wyoming.uri} ({where})", file=sys.stderr, flush=True)
            if (problem := wyoming.voice_problem()) is not None:  # each request gets Wyoming's error event meanwhile
                print(
                    f"warning: {describe_error(problem, 'cli')} Every Wyoming request is answered with an error until "
                    "a voice is added to the library (POST /v1/audio/voices, or the window's Voice tab).",
                    file=sys.stderr,
                    flush=True,
                )
        if server is None:
            assert wyoming is not None
            print(f"serving {event.variant} (Ctrl-C stops)", file=sys.stderr, flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                wyoming.serve()
            return EXIT_OK
        if wyoming is not None:
            wyoming.start()
        print(f"serving {event.variant} on {server.url} (Ctrl-C stops)", file=sys.stderr, flush=True)
        server.serve()
    finally:
        if wyoming is not None:
            wyoming.stop()
        worker.shutdown()
    return EXIT_OK
