"""``python -m core make-standin OUT``: a stand-in bundle with the real interface and random weights (``--variant``,
``--size``, ``--precision``, ``--names``, ``--repeating``, ``--noisy-decoder``)."""

from __future__ import annotations

import time
from pathlib import Path

from core.cli.parser import Subparsers
from core.standin.naming import NAMINGS
from core.standin.spec import PRECISIONS as STANDIN_PRECISIONS
from core.standin.spec import SIZES, VARIANTS

EXIT_OK = 0


def add_parser(sub: Subparsers) -> None:
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


def run(args) -> int:
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
