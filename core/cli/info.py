"""``python -m core info BUNDLE``: what a bundle is (variant, graphs, precisions, dims, dtypes) and how its tensors
were matched, as one JSON object."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from core.cli.parser import Subparsers
from core.cli.runtime import Q4_HELP, runtime_options
from core.engine import PRECISIONS, PROVIDERS, Q4_COMPUTE, RuntimeOptions

EXIT_OK = 0


def add_parser(sub: Subparsers) -> None:
    """``info BUNDLE``: what a bundle is and how its tensors were matched."""
    defaults = RuntimeOptions()
    p = sub.add_parser(
        "info", help="describe a bundle: variant, graphs, precisions, dims, dtypes and the tensor names it uses"
    )
    p.add_argument("bundle", type=Path)
    p.add_argument("--precision", choices=PRECISIONS, default="fp32")
    p.add_argument("--q4-compute", choices=Q4_COMPUTE, default=defaults.q4_compute, help=Q4_HELP)
    p.add_argument("--provider", choices=PROVIDERS, default="cpu")


def run(args) -> int:
    from core.engine import Pipeline

    pipe = Pipeline.from_bundle(args.bundle, runtime_options(args))
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
