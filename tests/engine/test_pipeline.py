"""End-to-end synthesis on tiny stand-ins, KV chaining parity, and nothing hard-coded about the dims."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from core.engine.constants import SAMPLES_PER_TOKEN
from core.engine.generation.decode_loop import DecodeStats, generate
from core.engine.generation.lm_runners import ChainedKV, CopiedKV
from core.engine.generation.sampler import Sampler
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.standin import make_standin, spec_for

TEXT = "The quick brown fox jumps over the lazy dog."


def _pipe(bundle, **runtime):
    return Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu", **runtime))


def _voice_for(variant, voice_wav):
    return voice_wav if variant == "turbo" else None  # None: the bundle's default voice


def test_each_variant_synthesizes_24khz_mono_of_960_samples_per_token(variant_bundle, voice_wav):
    variant, bundle = variant_bundle
    pipe = _pipe(bundle)
    result = pipe.synthesize(TEXT, _voice_for(variant, voice_wav), SynthesisOptions(seed=1, trim_silence=False))
    assert result.sample_rate == 24000
    assert result.audio.ndim == 1 and result.audio.dtype == np.float32
    decoded = len(result.speech_tokens) + (3 if variant == "turbo" else 0)  # Turbo decodes 3 silence tokens too
    assert result.audio.size == SAMPLES_PER_TOKEN * decoded
    assert 20 < len(result.speech_tokens) < 400
    assert result.stop_reasons == ["stop_token"]
    assert all(0 <= t <= 6560 for t in result.speech_tokens)
    assert np.abs(result.audio).max() > 0.1


@pytest.mark.parametrize("mode", ["greedy", "seeded"])
def test_chained_and_plain_loops_give_identical_tokens(variant_bundle, voice_wav, mode):
    variant, bundle = variant_bundle
    options = SynthesisOptions(greedy=True) if mode == "greedy" else SynthesisOptions(seed=1234)
    voice = _voice_for(variant, voice_wav)
    chained = _pipe(bundle, kv_chaining=True).synthesize(TEXT, voice, options)
    plain = _pipe(bundle, kv_chaining=False).synthesize(TEXT, voice, options)
    assert chained.speech_tokens == plain.speech_tokens
    assert np.array_equal(chained.audio, plain.audio)


def test_cfg_runs_as_batch_two_and_matches_across_loops(bundles, monkeypatch):
    import core.engine.model.model_parts

    batches = []

    class Spy(ChainedKV):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            batches.append(self.batch)

    monkeypatch.setattr(core.engine.model.model_parts, "ChainedKV", Spy)
    bundle = bundles["original"]
    options = SynthesisOptions(greedy=True, cfg_weight=0.5)
    chained = _pipe(bundle, kv_chaining=True)
    assert chained.capabilities.supports_cfg
    tokens_cfg = chained.synthesize(TEXT, None, options).speech_tokens
    assert set(batches) == {2}
    batches.clear()
    assert tokens_cfg == _pipe(bundle, kv_chaining=False).synthesize(TEXT, None, options).speech_tokens
    # With CFG off the unconditional row is absent; the stand-in's tokens then follow row 0 alone.
    no_cfg = chained.synthesize(TEXT, None, replace(options, cfg_weight=0.0)).speech_tokens
    assert set(batches) == {1}
    assert len(no_cfg) == len(tokens_cfg)


def test_same_seed_same_tokens_and_output_varies_with_text_voice_and_seed(bundles, voice_wav, other_voice_wav):
    pipe = _pipe(bundles["turbo"])
    a = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=5)).speech_tokens
    assert a == pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=5)).speech_tokens
    assert a != pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=6)).speech_tokens
    greedy = SynthesisOptions(greedy=True)
    base = pipe.synthesize(TEXT, voice_wav, greedy).speech_tokens
    assert base != pipe.synthesize(TEXT, other_voice_wav, greedy).speech_tokens
    longer = pipe.synthesize(TEXT + " And then it ran far away into the woods.", voice_wav, greedy)
    assert len(longer.speech_tokens) > len(base) + 20  # tokens grow with the text


def test_a_stale_past_changes_the_tokens(bundles):
    """Feeding the previous step's past once must derail the stand-in: the KV cache really matters."""
    pipe = _pipe(bundles["original"])
    parts = pipe._parts
    cond = parts.voices.encode(pipe.default_voice())
    params = pipe.resolve(SynthesisOptions(greedy=True))
    ids = parts.tokenizer.encode(parts.tokenizer.prepare(TEXT)[0])
    prompt = [np.concatenate([cond.audio_features, parts.embedder.text(ids, 0.5, cfg=False)], axis=1)]

    class StaleOnce(CopiedKV):
        def step(self, token):
            if self.generated_fed == 5:
                previous = dict(self.past)
                logits = super().step(token)
                self.past = previous  # the next step sees a stale cache
                self.total -= 1
                return logits
            return super().step(token)

    def run(kv_class):
        kv = kv_class(parts.sessions["language_model"], parts.sessions["embed_tokens"], pipe.info, 1, 0.5)
        return list(generate(kv, prompt, Sampler(params, 0, 8194), 300, 0.0, DecodeStats()))

    good = run(CopiedKV)
    assert good == run(ChainedKV)
    assert run(StaleOnce)[:7] == good[:7]
    assert run(StaleOnce) != good


def test_other_dims_run_unchanged(tmp_path, voice_wav):
    spec = replace(spec_for("turbo", "tiny"), layers=3, heads=4, head_dim=6, mlp_dim=40)
    bundle = make_standin(tmp_path / "odd", spec=spec)
    pipe = _pipe(bundle)
    assert (pipe.info.layers, pipe.info.kv_heads, pipe.info.head_dim, pipe.info.hidden) == (3, 4, 6, 24)
    assert len(pipe.info.past_names) == 6
    chained = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(greedy=True))
    plain = _pipe(bundle, kv_chaining=False).synthesize(TEXT, voice_wav, SynthesisOptions(greedy=True))
    assert chained.speech_tokens == plain.speech_tokens and len(chained.speech_tokens) > 10


def test_precision_falls_back_to_fp32_per_graph(tmp_path):
    bundle = make_standin(tmp_path / "q4", "original", precision="q4")
    pipe = _pipe(bundle, precision="q4", decoder_precision="fp32")
    assert pipe.files.precisions == {
        "speech_encoder": "fp32",
        "embed_tokens": "fp32",
        "language_model": "q4",
        "conditional_decoder": "fp32",
    }
    # The decoder's own setting (auto: int8 for the Original decoder) overrides the fallback for that graph only.
    assert _pipe(bundle, precision="q4").files.precisions == {**pipe.files.precisions, "conditional_decoder": "q8"}
    # Asking for fp32 where only the q4 language model exists still finds a usable graph.
    assert _pipe(bundle).files.precisions["language_model"] == "q4"
    result = pipe.synthesize(TEXT, None, SynthesisOptions(greedy=True, trim_silence=False))
    assert result.audio.size == SAMPLES_PER_TOKEN * len(result.speech_tokens) > 0


def test_timings_and_providers_are_reported(bundles, voice_wav):
    pipe = _pipe(bundles["turbo"])
    assert pipe.providers == dict.fromkeys(pipe.providers, "cpu") and len(pipe.providers) == 4
    timings = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=2)).timings
    for key in ("prefill_ms", "first_token_ms", "step_ms_median", "decoder_ms", "total_ms", "rtf"):
        assert timings[key] > 0, key
    assert timings["first_token_ms"] >= timings["prefill_ms"]


def test_cancellation_is_checked_between_steps(bundles, voice_wav):
    from core.engine.errors import SynthesisCancelled

    pipe = _pipe(bundles["turbo"])
    calls = []

    def cancelled():
        calls.append(1)
        return len(calls) > 3

    with pytest.raises(SynthesisCancelled):
        pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1), cancelled=cancelled)
    assert len(calls) == 4
