"""The sampling flags of ``synth``, ``narrate`` and ``project`` (``--temperature``, ``--top-k`` ... ``--language``,
``--seed``, ``--greedy``), and the options they give."""

from __future__ import annotations

import argparse

SAMPLING = (
    ("temperature", float),
    ("top-k", int),
    ("top-p", float),
    ("min-p", float),
    ("repetition-penalty", float),
    ("cfg-weight", float),
    ("exaggeration", float),
    ("max-new-tokens", int),
)


def add_sampling_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--language")
    p.add_argument("--seed", type=int)
    p.add_argument("--greedy", action="store_true")
    for name, kind in SAMPLING:
        p.add_argument(f"--{name}", type=kind)


def sampling_given(args) -> dict:
    """The sampling options given on the command line (``add_sampling_arguments``), by SynthesisOptions field."""
    names = [name.replace("-", "_") for name, _kind in SAMPLING] + ["language"]
    given = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    return given | ({"greedy": True} if args.greedy else {})
