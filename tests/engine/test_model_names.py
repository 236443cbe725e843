"""Every real export loads, whatever its tensor names: aliases, positional order, a float16 KV cache.

A stand-in written with other names has the same weights as the contract-named one (same seed), so it must give the
same tokens and samples; ``info`` must say which mapping it used; a graph that fits neither names nor order fails
with a message naming the file.
"""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from core.cli.main import main
from core.engine.errors import ModelSignatureError
from core.engine.model.model_info import ALIASES
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.wording import describe_error

TEXT = "Hello there. How are you today?"
SEED = 7  # the conftest bundles' seed: same weights


def _synth(bundle, voice, precision="fp32", **runtime):
    pipe = Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu", precision=precision, **runtime))
    return pipe, pipe.synthesize(TEXT, voice, SynthesisOptions(greedy=True))


@pytest.mark.parametrize("variant", ["turbo", "original"])
@pytest.mark.parametrize("names", ["cond-emb", "positional"])
def test_renamed_exports_give_the_tokens_and_audio_of_the_contract_names(bundles, renamed, voice_wav, variant, names):
    _, reference = _synth(bundles[variant], voice_wav)
    pipe, result = _synth(renamed[variant, names], voice_wav)
    assert result.speech_tokens == reference.speech_tokens and len(result.speech_tokens) > 10
    assert np.array_equal(result.audio, reference.audio)
    expected = "aliases" if names == "cond-emb" else "order"
    assert pipe.info.encoder.matched_by == expected and pipe.info.decoder.matched_by == expected
    if names == "cond-emb":
        assert pipe.info.encoder.audio_features == "cond_emb" and pipe.info.encoder.audio_tokens == "prompt_token"
        assert pipe.info.past_names[0] == "past.0.key" and pipe.info.present_names[0] == "present.0.key"
    else:
        assert pipe.info.lm.logits == "output.0" and pipe.info.past_names[0] == f"input.{len(pipe.info.lm.roles) - 1}"


@pytest.mark.parametrize("variant", ["turbo", "original"])
@pytest.mark.parametrize("chaining", [True, False])
def test_a_float16_kv_cache_synthesizes_chained_and_plain(bundles, renamed, voice_wav, variant, chaining):
    pipe, result = _synth(renamed[variant, "fp16"], voice_wav, "fp16", kv_chaining=chaining)
    assert pipe.info.kv_dtype == np.float16 and pipe.info.embeds_dtype == np.float32
    assert pipe.capabilities.precisions["language_model"] == "fp16"
    assert pipe.capabilities.precisions["speech_encoder"] == "fp32"  # per-graph fallback
    _, reference = _synth(bundles[variant], voice_wav)
    # The stand-in's decisions are exact small integers, which float16 holds: the same tokens as the fp32 cache.
    assert result.speech_tokens == reference.speech_tokens


def test_info_reports_the_mapping_it_used(capsys, renamed, bundles):
    for bundle, how in (
        (bundles["turbo"], "names"),
        (renamed["turbo", "cond-emb"], "aliases"),
        (renamed["original", "positional"], "order"),
    ):
        assert main(["info", str(bundle), "--provider", "cpu"]) == 0
        report = json.loads(capsys.readouterr().out)["tensor_names"]
        assert report["speech_encoder"]["matched_by"] == how
        assert set(report) == {"speech_encoder", "embed_tokens", "language_model", "conditional_decoder"}
    assert report["speech_encoder"]["tensors"]["audio_features"] == "output.0"
    assert report["language_model"]["kv"]["count"] == 4  # tiny stand-in: 2 layers


@pytest.mark.parametrize("names", ["cond-emb", "positional"])
def test_renamed_and_fp16_bundles_synthesize_through_the_cli(capsys, renamed, voice_wav, tmp_path, names):
    for bundle, precision in ((renamed["original", names], "fp32"), (renamed["turbo", "fp16"], "fp16")):
        out = tmp_path / f"{bundle.name}.wav"
        code = main(
            [
                "synth",
                "--bundle",
                str(bundle),
                "--text",
                TEXT,
                "--voice",
                str(voice_wav),
                "--out",
                str(out),
                "--precision",
                precision,
                "--provider",
                "cpu",
                "--json",
            ]
        )
        captured = capsys.readouterr()
        assert code == 0, captured.err
        assert json.loads(captured.out)["audio_seconds"] > 1 and out.is_file()


def _swap(source, target, graph, replacement_graph, tmp_path):
    bundle = shutil.copytree(source, tmp_path / target)
    for suffix in (".onnx", ".onnx_data"):
        shutil.copy(bundle / "onnx" / f"{replacement_graph}{suffix}", bundle / "onnx" / f"{graph}{suffix}")
    return bundle


def test_a_graph_that_fits_neither_names_nor_order_names_the_file(renamed, tmp_path):
    # The decoder in the place of the speech encoder: no known output names, and its one output is no conditioning.
    bundle = _swap(
        renamed["original", "positional"], "decoder-as-encoder", "speech_encoder", "conditional_decoder", tmp_path
    )
    with pytest.raises(ModelSignatureError) as caught:
        Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu"))
    assert caught.value.code == "bundle.signature_mismatch" and caught.value.data["file"] == "speech_encoder.onnx"
    assert re.search(r"input.0. in its place is int64", caught.value.data["problem"])
    assert re.search(
        r"speech_encoder\.onnx does not match .*input.0. in its place is int64", describe_error(caught.value, "cli")
    )
    # The encoder in the place of the decoder: its input is audio, not speech tokens.
    bundle = _swap(
        renamed["turbo", "cond-emb"], "encoder-as-decoder", "conditional_decoder", "speech_encoder", tmp_path
    )
    with pytest.raises(ModelSignatureError) as caught:
        Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu"))
    assert caught.value.code == "bundle.signature_mismatch"
    assert caught.value.data["file"] == "conditional_decoder.onnx"


def test_every_alias_list_starts_with_the_contract_name():
    contract = {
        "speech_encoder": ("audio_values", "audio_features", "audio_tokens", "speaker_embeddings", "speaker_features"),
        "embed_tokens": ("input_ids", "position_ids", "exaggeration", "inputs_embeds"),
        "language_model": ("inputs_embeds", "attention_mask", "position_ids", "logits"),
        "conditional_decoder": ("speech_tokens", "speaker_embeddings", "speaker_features", "waveform"),
    }
    assert {graph: tuple(roles) for graph, roles in ALIASES.items()} == contract
    assert all(names[0] == role for roles in ALIASES.values() for role, names in roles.items())


def test_outputs_in_the_wrong_order_without_names_are_refused(renamed):
    """Positional agreement is checked by dtype and rank: tokens where the features belong fail, naming the file."""
    from types import SimpleNamespace

    from core.engine.model.bundle import locate_bundle
    from core.engine.model.model_info import read_model_info
    from core.engine.model.sessions import SessionFactory

    files = locate_bundle(renamed["original", "positional"])
    factory = SessionFactory(RuntimeOptions(provider="cpu"))
    sessions = {name: factory.create(name, path) for name, path in files.graphs.items()}
    encoder = sessions["speech_encoder"]
    outputs = encoder.get_outputs()
    sessions["speech_encoder"] = SimpleNamespace(
        get_inputs=encoder.get_inputs, get_outputs=lambda: [outputs[1], outputs[0], *outputs[2:]]
    )
    with pytest.raises(ModelSignatureError) as caught:
        read_model_info(sessions, files.graphs, is_multilingual=False)
    assert caught.value.data["file"] == "speech_encoder.onnx"
    assert re.search(r"'output\.1' in its place is int64", caught.value.data["problem"])
    sessions["speech_encoder"] = encoder
    assert read_model_info(sessions, files.graphs, is_multilingual=False).encoder.matched_by == "order"
