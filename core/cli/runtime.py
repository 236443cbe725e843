"""How the model runs, on the command line: the runtime flags every model command shares (``--precision``,
``--q4-compute``, ``--provider``, ``--threads``, the graph rewrites, the decoder's, ``--playback-policy``) and the
:class:`RuntimeOptions` they give (:func:`runtime_options`, with each command's own fields)."""

from __future__ import annotations

import argparse
from pathlib import Path

from core.cli.errors import CliError
from core.engine import AUTO_SMOOTH_RTF, PLAYBACK_POLICIES, InvalidOptions, RuntimeOptions

Q4_HELP = "4-bit language models on the CPU: int8 compute (default, faster) or fp32 compute (as exported)"
DECODER_PRECISION_HELP = (
    "the speech decoder on the CPU: q8 (int8 matrix products, made once from the float32 file; a quarter to a "
    "third faster), fp32, or auto (default: q8 on the CPU for every model, the file's own precision on CUDA)"
)


def add_playback_policy(p: argparse.ArgumentParser, defaults: RuntimeOptions) -> None:
    p.add_argument(
        "--playback-policy",
        choices=PLAYBACK_POLICIES,
        default=defaults.playback_policy,
        help="when streamed playback starts: fast (with the first audio, stalls accepted), smooth (when the forecast "
        "from the measured costs says nothing later will be late), auto (smooth when the measured real-time factor "
        f"is {AUTO_SMOOTH_RTF} or more; default)",
    )


def runtime_arguments(p: argparse.ArgumentParser, cache_dir: bool = True, lm_batch: bool = False) -> None:
    """How the model runs: precision, 4-bit compute, provider, threads (and the conditioning cache folder, and for
    project renders the language-model batch)."""
    from core.engine import PRECISIONS, PROVIDERS, Q4_COMPUTE, RuntimeOptions

    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--q4-compute", choices=Q4_COMPUTE, default=RuntimeOptions().q4_compute, help=Q4_HELP)
    p.add_argument("--provider", choices=PROVIDERS, default="auto")
    p.add_argument("--threads", type=int)
    graph_rewrite_arguments(p)
    decoder_arguments(p)
    if cache_dir:
        p.add_argument("--cache-dir", type=Path, help="conditioning cache folder (default: the user cache dir)")
    if lm_batch:
        p.add_argument(
            "--lm-batch",
            type=int,
            default=RuntimeOptions().lm_batch,
            help="sentences the language model generates together while rendering (Turbo; 1: one at a time)",
        )
        p.add_argument(
            "--no-joined-decoding",
            action="store_true",
            help="decode every sentence of a batch in its own decoder call (default: up to 12 s per call)",
        )


def graph_rewrite_arguments(p: argparse.ArgumentParser) -> None:
    """The language model's graph as exported instead of rewritten at load (``--no-shape-folding``,
    ``--no-fused-attention``, ``--no-shared-kv-cache``)."""
    p.add_argument(
        "--no-shape-folding",
        action="store_true",
        help="run the language model's graph as exported (default: its shape arithmetic folded into constants)",
    )
    p.add_argument(
        "--no-fused-attention",
        action="store_true",
        help="run each layer's attention as exported (default: one MultiHeadAttention operator per layer)",
    )
    p.add_argument(
        "--no-shared-kv-cache",
        action="store_true",
        help="append to the language model's cache by copying it every step (default: written in place, in one "
        "buffer per layer)",
    )


def decoder_arguments(p: argparse.ArgumentParser) -> None:
    """The speech decoder's precision, flow steps and convolution layout (``--decoder-precision``,
    ``--decoder-flow-steps``, ``--no-blocked-convolutions``), and whether it takes turns with the language model
    (``--take-turns``)."""
    from core.engine import DECODER_PRECISIONS, TAKE_TURNS, RuntimeOptions

    p.add_argument(
        "--decoder-precision",
        choices=DECODER_PRECISIONS,
        default=RuntimeOptions().decoder_precision,
        help=DECODER_PRECISION_HELP,
    )
    p.add_argument(
        "--decoder-flow-steps",
        type=int,
        default=RuntimeOptions().decoder_flow_steps,
        help="flow-matching steps of the Original/Multilingual decoder (default 5, half the exported 10; 10 as "
        "exported; fewer are faster and less refined; Turbo keeps its 2)",
    )
    p.add_argument(
        "--no-blocked-convolutions",
        action="store_true",
        help="run the speech decoder's convolutions 1-D, as exported (default on the CPU: 2-D, in onnxruntime's "
        "blocked channel layout; the same arithmetic, faster)",
    )
    p.add_argument(
        "--take-turns",
        choices=TAKE_TURNS,
        default=RuntimeOptions().take_turns,
        help="the language model and the speech decoder take turns, each with every core to itself and its idle "
        "threads spinning while it runs: auto (default: when both run on the CPU), always, or never (the decoder "
        "runs beside the language model where the plan lets it, its threads sleeping)",
    )


def runtime_options(args, **fields) -> RuntimeOptions:
    """The options of the runtime flags ``args`` has (``runtime_arguments``; a flag a command lacks keeps its default)
    and the command's own ``fields``; a value out of range is the command line's refusal (:class:`CliError`)."""
    try:
        common = {
            "provider": args.provider,
            "precision": args.precision,
            "q4_compute": args.q4_compute,
            "shape_folding": not getattr(args, "no_shape_folding", False),
            "fused_attention": not getattr(args, "no_fused_attention", False),
            "shared_kv_cache": not getattr(args, "no_shared_kv_cache", False),
            "decoder_precision": getattr(args, "decoder_precision", "auto"),
            "decoder_flow_steps": getattr(args, "decoder_flow_steps", None),
            "blocked_convolutions": not getattr(args, "no_blocked_convolutions", False),
            "take_turns": getattr(args, "take_turns", "auto"),
        }
        return RuntimeOptions(**common, **fields)
    except InvalidOptions:
        raise
    except ValueError as exc:
        raise CliError(str(exc)) from exc
