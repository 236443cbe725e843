"""The conditioning cache (memory + disk, survives a restart, recovers from corruption) and the voice-prefix KV
cache (identical greedy tokens to a full prefill, for every variant, CFG included)."""

from __future__ import annotations

import errno
import os

import numpy as np
import pytest

from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.wording import describe_notice

TEXT = "Caching makes the second request fast."


def _pipe(bundle, cache_dir, **runtime):
    return Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu", cache_dir=cache_dir, **runtime))


def test_same_voice_skips_the_encoder_also_after_a_restart(bundles, voice_wav, other_voice_wav, tmp_path):
    # The fixed stream plan: the adaptive one sizes its windows from the decoder costs measured so far (kept on
    # disk, shared with the suite's other tests), and the int8 decoder's output depends on the windows.
    pipe = _pipe(bundles["turbo"], tmp_path, stream_plan="fixed")
    first = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1))
    assert pipe.encoder_runs == 1 and first.report.cache["conditioning"] == "miss"
    second = pipe.synthesize("Another sentence entirely.", voice_wav, SynthesisOptions(seed=1))
    assert pipe.encoder_runs == 1 and second.report.cache["conditioning"] == "memory"
    pipe.synthesize(TEXT, other_voice_wav, SynthesisOptions(seed=1))
    assert pipe.encoder_runs == 2

    restarted = _pipe(bundles["turbo"], tmp_path, stream_plan="fixed")  # a new process would see exactly this
    again = restarted.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1))
    assert restarted.encoder_runs == 0 and again.report.cache["conditioning"] == "disk"
    assert again.speech_tokens == first.speech_tokens
    assert np.array_equal(again.audio, first.audio)


@pytest.mark.parametrize("damage", ["garbage", "truncated", "wrong_shape", "empty"])
def test_a_corrupt_cache_file_is_discarded_and_rebuilt(bundles, voice_wav, tmp_path, damage):
    pipe = _pipe(bundles["original"], tmp_path)
    reference = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(greedy=True))
    (cache_file,) = tmp_path.glob("*.npz")
    if damage == "garbage":
        cache_file.write_bytes(b"not a zip file at all" * 10)
    elif damage == "truncated":
        cache_file.write_bytes(cache_file.read_bytes()[:200])
    elif damage == "empty":
        cache_file.write_bytes(b"")
    else:
        np.savez(
            cache_file,
            audio_features=np.zeros((2, 2)),
            audio_tokens=np.zeros((1, 3), np.int64),
            speaker_embeddings=np.zeros((1, 192)),
            speaker_features=np.zeros((1, 6, 80)),
        )
    restarted = _pipe(bundles["original"], tmp_path)
    result = restarted.synthesize(TEXT, voice_wav, SynthesisOptions(greedy=True))
    assert restarted.encoder_runs == 1 and result.report.cache["conditioning"] == "miss"
    assert result.speech_tokens == reference.speech_tokens
    assert _pipe(bundles["original"], tmp_path).condition(voice_wav).source == "disk"  # rebuilt on disk


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write a read-only folder")
def test_an_unwritable_cache_folder_only_costs_speed(bundles, voice_wav, tmp_path):
    tmp_path.chmod(0o500)
    try:
        pipe = _pipe(bundles["turbo"], tmp_path / "cache")
        assert pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1)).audio.size > 0
    finally:
        tmp_path.chmod(0o700)


def test_a_cache_path_that_is_a_file_only_costs_speed(bundles, voice_wav, tmp_path):
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be")
    pipe = _pipe(bundles["turbo"], blocker)
    assert pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1)).audio.size > 0
    assert pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1)).report.cache["conditioning"] == "memory"


def test_a_full_disk_while_caching_warns_and_leaves_no_file(bundles, voice_wav, tmp_path, monkeypatch):
    def full(file, **arrays):
        file.write(b"PK half an archive")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("core.engine.caches.conditioning_cache.np.savez", full)
    pipe = _pipe(bundles["turbo"], tmp_path / "cache")
    result = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1))
    assert result.audio.size > 0 and "No space left on device" in result.report.cache["write_error"]
    assert [w.code for w in result.warnings] == ["cache.write_failed"]
    assert "could not be saved to the cache" in describe_notice(result.warnings[0])
    assert list((tmp_path / "cache").iterdir()) == []  # no partial or corrupt entry
    again = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1))
    assert again.report.cache["conditioning"] == "memory" and not again.warnings


def test_conditioning_cache_off_runs_the_encoder_every_time(bundles, voice_wav, tmp_path):
    pipe = _pipe(bundles["turbo"], tmp_path, conditioning_cache=False)
    for _ in range(2):
        assert pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1)).report.cache["conditioning"] == "off"
    assert pipe.encoder_runs == 2 and not list(tmp_path.glob("*.npz"))


@pytest.mark.parametrize("cfg_weight", [0.0, 0.5])
@pytest.mark.parametrize("chaining", [True, False])
def test_prefix_cache_gives_the_tokens_of_a_full_prefill(variant_bundle, voice_wav, tmp_path, cfg_weight, chaining):
    variant, bundle = variant_bundle
    if variant == "turbo" and cfg_weight:
        pytest.skip("Turbo has no CFG")
    voice = voice_wav if variant == "turbo" else None
    options = SynthesisOptions(greedy=True, cfg_weight=cfg_weight)
    cached = _pipe(bundle, tmp_path, prefix_cache=True, kv_chaining=chaining)
    full = _pipe(bundle, tmp_path, prefix_cache=False, kv_chaining=chaining)
    texts = ["First request with this voice.", "A second one reuses the prefix. And a third sentence."]
    for text in texts:
        a, b = cached.synthesize(text, voice, options), full.synthesize(text, voice, options)
        assert a.speech_tokens == b.speech_tokens and len(a.speech_tokens) > 10
        assert np.array_equal(a.audio, b.audio)
    assert cached.prefix_misses == 1 and cached.prefix_hits == 2  # 3 sentences, one voice


def test_prefix_positions_continue_after_the_cached_rows(bundles, voice_wav, tmp_path):
    pipe = _pipe(bundles["turbo"], tmp_path)
    result = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(greedy=True))
    prefix = next(iter(pipe._parts.prefixes._items.values()))
    assert prefix.total == 375  # Turbo's conditioning rows
    assert result.report.cache == {"conditioning": "miss", "prefix_hits": 0, "prefix_misses": 1, "encoder_runs": 1}


def test_switches_apply_to_the_next_request_without_reloading(bundles, voice_wav, tmp_path):
    from dataclasses import replace

    pipe = _pipe(bundles["turbo"], tmp_path)
    pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1))
    off = replace(pipe.runtime, prefix_cache=False, stream=False, kv_chaining=False)
    result = pipe.synthesize(TEXT, voice_wav, SynthesisOptions(seed=1), runtime=off)
    assert result.report.cache["prefix"] == "off" and len(result.chunks) == 1
    with pytest.raises(ValueError) as caught:  # InvalidOptions is a ValueError
        pipe.update_runtime(replace(off, threads=1))
    assert caught.value.code == "options.needs_reload" and caught.value.data == {"fields": ["threads"]}
