"""Write a complete stand-in bundle: four graphs with ``.onnx_data`` sidecars, tokenizer.json and a default voice."""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import soundfile as sf

from core.engine import SAMPLE_RATE
from core.standin.audio_graphs import build_conditional_decoder, build_speech_encoder
from core.standin.embed_graph import build_embed_tokens
from core.standin.lm_graph import build_language_model
from core.standin.naming import NAMINGS, renaming
from core.standin.spec import PRECISIONS, StandinSpec, spec_for
from core.standin.tokenizer_files import cangjie_table, tokenizer_json

log = logging.getLogger(__name__)
MARKER_FILE = "standin.json"
STANDIN_VERSION = 4
"""Bumped when the stand-ins' graphs change, so that a cached one is rebuilt (2: calibrated decoder and encoder)."""


def make_standin(
    out: Path | str,
    variant: str = "turbo",
    size: str = "tiny",
    precision: str = "fp32",
    seed: int = 0,
    spec: StandinSpec | None = None,
    names: str = "contract",
    repeating: bool = False,
    decoder_noise: bool = False,
) -> Path:
    """Build a stand-in bundle in ``out`` and return its path.

    ``precision="q4"`` writes only ``language_model_q4`` (int4 MatMulNBits) beside fp32 graphs for the other three,
    as the original/multilingual repositories ship them; the runtime's per-graph fallback picks fp32 for the rest.
    ``precision="fp16"`` likewise writes ``language_model_fp16`` with a float16 KV cache. ``names`` picks the tensor
    names (:mod:`.naming`); ``repeating`` makes greedy decoding repeat a token unless the repetition penalty covers
    the whole history; ``decoder_noise`` gives the decoder the real ones' random nodes.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown stand-in precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if names not in NAMINGS:
        raise ValueError(f"unknown naming {names!r}; choose one of {', '.join(NAMINGS)}")
    spec = spec or spec_for(variant, size)
    if repeating:
        spec = replace(spec, repeating=True)
    if decoder_noise:
        spec = replace(spec, decoder_noise=True)
    out = Path(out)
    onnx_dir = out / "onnx"
    onnx_dir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    lm_suffix = {"fp32": "", "q4": "_q4", "fp16": "_fp16"}[precision]
    for graph, file in (
        (build_speech_encoder(spec, seed), "speech_encoder.onnx"),
        (build_embed_tokens(spec, seed), "embed_tokens.onnx"),
        (build_language_model(spec, precision, seed), f"language_model{lm_suffix}.onnx"),
        (build_conditional_decoder(spec, seed), "conditional_decoder.onnx"),
    ):
        graph.rename(renaming(names, graph))
        graph.save(onnx_dir / file)
    (out / "tokenizer.json").write_text(tokenizer_json(spec), encoding="utf-8")
    if spec.variant == "multilingual":
        (out / "Cangjie5_TC.json").write_text(cangjie_table(), encoding="utf-8")
    if spec.variant != "turbo":
        sf.write(out / "default_voice.wav", synthetic_voice(seconds=6.0, seed=seed), SAMPLE_RATE, subtype="PCM_16")
    meta = {"standin": True, "precision": precision, "seed": seed, "names": names, **asdict(spec)}
    (out / MARKER_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")
    log.info("built %s %s stand-in in %s (%.1f s)", spec.variant, precision, out, time.perf_counter() - started)
    return out


def cached_standin(variant: str, size: str, precision: str, announce=None) -> Path:
    """A stand-in kept in the user cache folder (built on first use), shared by ``bench`` and ``soak``.

    ``announce(message)`` is told before a build (it can take a minute at full size).
    """
    from core.engine import InvalidOptions, user_cache

    if precision not in PRECISIONS:
        raise InvalidOptions("standin.precision", precision=precision, choices=list(PRECISIONS))
    bundle = user_cache() / "standins" / f"{variant}-{size}-{precision}-v{STANDIN_VERSION}"
    if not (bundle / "standin.json").is_file():
        if announce is not None:
            announce(f"building the {size} {variant} stand-in ({precision}) in {bundle} ...")
        make_standin(bundle, variant, size, precision)
    return bundle


def synthetic_voice(seconds: float = 6.0, seed: int = 0, pitch_hz: float = 140.0) -> np.ndarray:
    """A voice-like test signal: a harmonic glottal tone with vibrato, syllable-rate envelope and breath noise."""
    rng = np.random.default_rng(seed + 100)
    n = int(seconds * SAMPLE_RATE)
    t = np.arange(n) / SAMPLE_RATE
    f0 = pitch_hz * (1 + 0.03 * np.sin(2 * math.pi * 5.5 * t) + 0.05 * np.sin(2 * math.pi * 0.4 * t))
    phase = 2 * math.pi * np.cumsum(f0) / SAMPLE_RATE
    tone = sum(np.sin(k * phase) / k for k in range(1, 12))
    syllables = np.clip(1.6 * np.sin(2 * math.pi * 1.9 * t), 0.0, 1.0)  # words with short gaps between them
    wav = tone * syllables + 0.004 * rng.standard_normal(n)
    return (0.3 * wav / np.max(np.abs(wav))).astype(np.float32)
