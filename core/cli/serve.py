"""``python -m core serve``: the local speech API (OpenAI-compatible) without the window.

Loads the bundle on the inference worker, then serves until Ctrl-C. Exit codes as for every command: 0 stopped,
2 bad input (a bundle that does not load, a port in use, a non-local ``--host`` without ``--api-key``), 1 internal.
"""

from __future__ import annotations

import queue
import sys
from pathlib import Path

from core.cli.errors import CliError
from core.wording import describe_notice

EXIT_OK = 0


def add_parser(sub, runtime_arguments) -> None:
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
    runtime_arguments(p)


def serve(args, runtime) -> int:
    from core.api import ApiConfig, ApiServer, check_bind, create_app
    from core.engine import BundleError, InferenceWorker, ModelFailed, ModelLoaded, voices_dir
    from core.voices import VoiceLibrary

    check_bind(args.host, args.port, args.api_key)
    if args.max_queue < 0:
        raise CliError(f"--max-queue must be 0 or more, not {args.max_queue}")
    worker = InferenceWorker()
    worker.start()
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
        config = ApiConfig(api_key=args.api_key, cors=tuple(args.cors), max_waiting=args.max_queue)
        app = create_app(worker, VoiceLibrary(args.library or voices_dir()), config)
        server = ApiServer(app, args.host, args.port)
        if event.notice:
            print(f"notice: {describe_notice(event.notice, 'cli')}", file=sys.stderr)
        print(f"serving {event.variant} on {server.url} (Ctrl-C stops)", file=sys.stderr, flush=True)
        server.serve()
    finally:
        worker.shutdown()
    return EXIT_OK
