"""The stand-in bundles copy the contract's interface and the behaviours the runtime relies on."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from core.standin import make_standin

CPU = ["CPUExecutionProvider"]


def _session(bundle, name):
    return ort.InferenceSession(str(bundle / "onnx" / f"{name}.onnx"), providers=CPU)


def _sig(args):
    return [(a.name, a.type, list(a.shape)) for a in args]


def test_files_follow_the_bundle_layout(variant_bundle):
    variant, bundle = variant_bundle
    for name in ("speech_encoder", "embed_tokens", "language_model", "conditional_decoder"):
        assert (bundle / "onnx" / f"{name}.onnx").is_file()
        assert (bundle / "onnx" / f"{name}.onnx_data").is_file()
    assert (bundle / "tokenizer.json").is_file()
    assert (bundle / "default_voice.wav").is_file() == (variant != "turbo")


def test_language_model_signature(variant_bundle):
    variant, bundle = variant_bundle
    lm = _session(bundle, "language_model")
    inputs = _sig(lm.get_inputs())
    kv_start = 3 if variant == "turbo" else 2
    assert inputs[0][:2] == ("inputs_embeds", "tensor(float)")
    assert inputs[1][:2] == ("attention_mask", "tensor(int64)")
    assert (inputs[2][0] == "position_ids") == (variant == "turbo")
    assert inputs[kv_start][0] == "past_key_values.0.key"
    assert inputs[kv_start][2][0] == "batch_size" and isinstance(inputs[kv_start][2][2], str)
    outputs = _sig(lm.get_outputs())
    assert outputs[0][0] == "logits"
    assert outputs[0][2][-1] == (6563 if variant == "turbo" else 8194)
    past = [n for n, _, _ in inputs[kv_start:]]
    assert [n for n, _, _ in outputs[1:]] == [n.replace("past_key_values", "present") for n in past]


def test_embed_and_audio_graph_signatures(variant_bundle):
    variant, bundle = variant_bundle
    embed_inputs = [a.name for a in _session(bundle, "embed_tokens").get_inputs()]
    assert embed_inputs == (["input_ids"] if variant == "turbo" else ["input_ids", "position_ids", "exaggeration"])
    enc = _session(bundle, "speech_encoder")
    assert [o.name for o in enc.get_outputs()] == [
        "audio_features",
        "audio_tokens",
        "speaker_embeddings",
        "speaker_features",
    ]
    dec = _session(bundle, "conditional_decoder")
    assert [i.name for i in dec.get_inputs()] == ["speech_tokens", "speaker_embeddings", "speaker_features"]
    assert [o.name for o in dec.get_outputs()] == ["waveform"]


def test_encoder_rows_and_decoder_samples_per_token(variant_bundle):
    variant, bundle = variant_bundle
    audio = (0.2 * np.sin(np.arange(24000 * 3) / 20)).astype(np.float32)[None]
    feats, tokens, spk, mel = _session(bundle, "speech_encoder").run(None, {"audio_values": audio})
    assert feats.shape[1] == (375 if variant == "turbo" else 33)
    assert tokens.shape == (1, 75) and mel.shape == (1, 150, 80) and spk.shape == (1, 192)
    new = np.array([[1, 2, 3, 4299, 5]], dtype=np.int64)
    wav = _session(bundle, "conditional_decoder").run(
        None, {"speech_tokens": np.concatenate([tokens, new], 1), "speaker_embeddings": spk, "speaker_features": mel}
    )[0]
    assert wav.shape == (1, 5 * 960)
    per_token = wav[0].reshape(5, 960)
    assert np.all(np.abs(per_token[3]) == 0)  # the silence token is silent
    assert all(np.abs(per_token[i]).max() > 0.1 for i in (0, 1, 2, 4))  # the others are audible
    assert not np.allclose(per_token[0], per_token[1])  # and depend on the token


def test_tokenizer_templates(variant_bundle):
    variant, bundle = variant_bundle
    tok = Tokenizer.from_file(str(bundle / "tokenizer.json"))
    if variant == "turbo":
        ids = tok.encode("Hello there [laugh] friend.").ids
        assert ids[-2:] == [50256, 50256]
        assert 50275 in ids  # [laugh] is the last of the 19 tags
        assert tok.get_vocab_size(with_added_tokens=True) == 50276
    else:
        text = "[en]hello there" if variant == "multilingual" else "Hello there"
        ids = tok.encode(text).ids
        assert ids[:2] == [6563, 255] and ids[-3:] == [0, 6561, 6561]
        assert 2 in ids  # the normalizer turned the space into [SPACE]


def test_q4_language_model_uses_matmulnbits(tmp_path):
    bundle = make_standin(tmp_path / "q4", "original", precision="q4")
    assert (bundle / "onnx" / "language_model_q4.onnx").is_file()
    assert not (bundle / "onnx" / "language_model.onnx").exists()
    import onnx

    ops = {
        n.op_type
        for n in onnx.load(str(bundle / "onnx" / "language_model_q4.onnx"), load_external_data=False).graph.node
    }
    assert "MatMulNBits" in ops
