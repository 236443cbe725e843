"""Stand-in bundles: the real Chatterbox ONNX interface with random weights, built offline (needs ``onnx``)."""

from core.standin.build import cached_standin, make_standin, synthetic_voice
from core.standin.spec import PRECISIONS, SIZES, VARIANTS, StandinSpec, spec_for

__all__ = [
    "PRECISIONS",
    "SIZES",
    "VARIANTS",
    "StandinSpec",
    "cached_standin",
    "make_standin",
    "spec_for",
    "synthetic_voice",
]
