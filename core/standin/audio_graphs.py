"""Stand-in ``speech_encoder`` and ``conditional_decoder`` graphs.

The encoder turns a reference recording into conditioning that depends on the recording (so different voices give
different tokens), with the real output names, ranks and the token/frame relation the decoder relies on
(``speaker_features`` has two frames per prompt token). The decoder turns each new speech token into 960 samples
(40 ms) of an audible tone whose pitch follows the token id, faded at both ends so token seams are smooth, and
silent for the silence token 4299.
"""

from __future__ import annotations

import math

import numpy as np

from core.engine import SAMPLE_RATE, SAMPLES_PER_TOKEN, SILENCE_TOKEN
from core.standin.graph_builder import F32, I64, GraphBuilder
from core.standin.spec import StandinSpec

MAX_PROMPT_TOKENS = 250  # 10 s of reference at 25 tokens/s, as the real decoder prompt
SPEAKER_DIM = 192
MEL_BINS = 80
VOICE_CODES = 97
ENCODER_DIM = 1024


def build_speech_encoder(spec: StandinSpec, seed: int) -> GraphBuilder:
    rng = np.random.default_rng(seed + 1)
    H = spec.hidden
    b = GraphBuilder("speech_encoder")
    audio = b.input("audio_values", F32, ["batch_size", "num_samples"])

    # Prompt tokens: one per 960 samples of the first 10 s, from each frame's energy.
    n = b.dim(audio, 1)
    p = b.op("Min", b.op("Div", n, b.const([SAMPLES_PER_TOKEN], np.int64)), b.const([MAX_PROMPT_TOKENS], np.int64))
    cropped = b.op(
        "Slice", audio, b.const([0], np.int64), b.mul(p, b.const([SAMPLES_PER_TOKEN], np.int64)), b.const([1], np.int64)
    )
    frames = b.op("Reshape", cropped, b.const([0, -1, SAMPLES_PER_TOKEN], np.int64))
    frame_rms = b.op(
        "Sqrt", b.add(b.op("ReduceMean", b.mul(frames, frames), b.const([2], np.int64), keepdims=0), b.const(1e-12))
    )  # [B, P]
    tokens = b.op(
        "Mod", b.op("Cast", b.op("Floor", b.mul(frame_rms, b.const(65536.0))), to=I64), b.const(6561, np.int64)
    )

    # Whole-recording statistics drive the speaker embedding and the conditioning rows.
    sq = b.mul(audio, audio)
    rms = b.op("Sqrt", b.add(b.op("ReduceMean", sq, b.const([1], np.int64), keepdims=1), b.const(1e-12)))
    mean_abs = b.op("ReduceMean", b.op("Abs", audio), b.const([1], np.int64), keepdims=1)
    peak = b.op("ReduceMax", b.op("Abs", audio), b.const([1], np.int64), keepdims=1)
    stats = b.op("Concat", b.mul(rms, b.const(10.0)), b.mul(mean_abs, b.const(10.0)), peak, axis=1)  # [B, 3]
    w_spk = rng.standard_normal((3, SPEAKER_DIM), dtype=np.float32)
    speaker_in = b.matmul(stats, b.init("speaker.weight", w_spk))
    if spec.encoder_layers:  # work over the whole reference, as the real encoder does; a trace of it in the output
        work = b.op("Reshape", frames, b.const([0, -1, SAMPLES_PER_TOKEN // 8], np.int64))  # 8 frames per token
        proj = rng.standard_normal((SAMPLES_PER_TOKEN // 8, ENCODER_DIM), dtype=np.float32) * np.float32(0.1)
        work = b.op("Tanh", b.matmul(work, b.init("encoder.proj", proj)))
        for i in range(spec.encoder_layers):
            w = rng.standard_normal((ENCODER_DIM, ENCODER_DIM), dtype=np.float32) / np.float32(math.sqrt(ENCODER_DIM))
            work = b.op("Tanh", b.matmul(work, b.init(f"encoder.layers.{i}.weight", w)))
        trace = b.op("ReduceMean", work, b.const([1, 2], np.int64), keepdims=0)  # [B]
        speaker_in = b.add(speaker_in, b.mul(b.op("Unsqueeze", trace, b.const([1], np.int64)), b.const(1e-6)))
    speaker = b.op("Tanh", speaker_in)

    base = rng.standard_normal((spec.cond_rows, H), dtype=np.float32)
    w_cond = rng.standard_normal((3, H), dtype=np.float32)
    cond = b.op(
        "Tanh",
        b.add(
            b.init("cond.base", base),
            b.op("Unsqueeze", b.matmul(stats, b.init("cond.weight", w_cond)), b.const([1], np.int64)),
        ),
    )
    # Exact markers the stand-in LM reads: channel 0 = 1 (conditioning row), channel 1 = an integer voice code.
    code = b.op(
        "Cast",
        b.op("Mod", b.op("Cast", b.op("Floor", b.mul(rms, b.const(10007.0))), to=I64), b.const(VOICE_CODES, np.int64)),
        to=F32,
    )  # [B, 1]
    marker = b.op("Concat", b.add(b.mul(code, b.const(0.0)), b.const(1.0)), code, axis=1)  # [B, 2]
    marker = b.op(
        "Pad", b.op("Unsqueeze", marker, b.const([1], np.int64)), b.const([0, 0, 0, 0, 0, H - 2], np.int64)
    )  # [B, 1, H]
    keep = np.ones((1, 1, H), np.float32)
    keep[..., :2] = 0.0
    features = b.add(b.mul(cond, b.init("cond.keep", keep)), marker)

    w_mel = rng.standard_normal((1, 2 * MEL_BINS), dtype=np.float32)
    mel = b.op("Tanh", b.matmul(b.op("Unsqueeze", frame_rms, b.const([2], np.int64)), b.init("mel.weight", w_mel)))
    mel = b.op("Reshape", mel, b.const([0, -1, MEL_BINS], np.int64))  # two frames per prompt token

    b.output(features, "audio_features", F32, ["batch_size", "num_cond_rows", H])
    b.output(tokens, "audio_tokens", I64, ["batch_size", "num_prompt_tokens"])
    b.output(speaker, "speaker_embeddings", F32, ["batch_size", SPEAKER_DIM])
    b.output(mel, "speaker_features", F32, ["batch_size", "num_frames", MEL_BINS])
    return b


def build_conditional_decoder(spec: StandinSpec, seed: int) -> GraphBuilder:
    rng = np.random.default_rng(seed + 2)
    b = GraphBuilder("conditional_decoder")
    tokens = b.input("speech_tokens", I64, ["batch_size", "num_speech_tokens"])
    speaker = b.input("speaker_embeddings", F32, ["batch_size", SPEAKER_DIM])
    features = b.input("speaker_features", F32, ["batch_size", "num_frames", MEL_BINS])

    # The prompt part is cut off: P = frames / 2 prompt tokens lead the sequence.
    p = b.op("Div", b.dim(features, 1), b.const([2], np.int64))
    new = b.op("Slice", tokens, p, b.dim(tokens, 1), b.const([1], np.int64))  # [B, N]

    # Work shaped like the real decoder's (sized for full stand-ins): the flow-matching part runs over every token,
    # the voice prompt's included, for `decoder_steps` passes (a fixed cost per call that grows with the prompt);
    # the vocoder part then runs `vocoder_steps` passes over the new tokens only. Each token is `decoder_frames`
    # frames through shared layers.
    table = rng.standard_normal((6561, spec.decoder_dim), dtype=np.float32)
    frames = rng.standard_normal((spec.decoder_frames, spec.decoder_dim), dtype=np.float32)
    hidden = b.add(
        b.op(
            "Unsqueeze",
            b.op("Gather", b.init("decoder.embed", table), b.op("Mod", tokens, b.const(6561, np.int64))),
            b.const([2], np.int64),
        ),
        b.init("decoder.frames", frames),
    )  # [B, P + N, F, D]
    hidden = b.op("Reshape", hidden, b.const([0, -1, spec.decoder_dim], np.int64))
    weights = [
        b.init(
            f"decoder.layers.{i}.weight",
            rng.standard_normal((spec.decoder_dim, spec.decoder_dim), dtype=np.float32)
            / np.float32(math.sqrt(spec.decoder_dim)),
        )
        for i in range(spec.decoder_layers)
    ]
    for _ in range(spec.decoder_steps):
        for w in weights:
            hidden = b.op("Tanh", b.matmul(hidden, w))
    hidden = b.op(
        "Slice",
        hidden,
        b.mul(p, b.const([spec.decoder_frames], np.int64)),
        b.const([2**62], np.int64),
        b.const([1], np.int64),
    )  # the new tokens' frames
    for _ in range(spec.vocoder_steps):
        for w in weights:
            hidden = b.op("Tanh", b.matmul(hidden, w))
    per_frame = b.op("ReduceMean", hidden, b.const([2], np.int64), keepdims=0)  # [B, N*F]
    per_frame = b.op("Reshape", per_frame, b.const([0, -1, spec.decoder_frames], np.int64))
    texture = b.op("Sigmoid", b.op("ReduceMean", per_frame, b.const([2], np.int64), keepdims=1))  # [B, N, 1]

    semitone = b.op("Cast", b.op("Mod", new, b.const(36, np.int64)), to=F32)
    freq = b.mul(b.op("Pow", b.const(2.0), b.op("Div", semitone, b.const(12.0))), b.const(110.0))
    voice = b.add(
        b.const(1.0), b.mul(b.op("Tanh", b.op("ReduceMean", speaker, b.const([1], np.int64), keepdims=1)), b.const(0.1))
    )  # [B, 1]
    freq = b.op("Unsqueeze", b.mul(freq, voice), b.const([2], np.int64))  # [B, N, 1]
    t = np.arange(SAMPLES_PER_TOKEN, dtype=np.float32) * np.float32(2 * math.pi / SAMPLE_RATE)
    wave = b.op("Sin", b.mul(freq, b.init("decoder.time", t[None, None, :])))
    fade = np.ones(SAMPLES_PER_TOKEN, np.float32)
    ramp = np.sin(np.linspace(0, math.pi / 2, 48, dtype=np.float32)) ** 2
    fade[:48], fade[-48:] = ramp, ramp[::-1]
    audible = b.op("Cast", b.op("Not", b.op("Equal", new, b.const(SILENCE_TOKEN, np.int64))), to=F32)
    amp = b.mul(b.op("Unsqueeze", audible, b.const([2], np.int64)), b.add(b.const(0.25), b.mul(texture, b.const(0.1))))
    wave = b.mul(b.mul(wave, amp), b.init("decoder.fade", fade))
    wave = b.op("Reshape", wave, b.const([0, -1], np.int64))
    if spec.decoder_noise:  # as the real decoders: a noise over the samples and a random phase, fresh each call
        hiss = b.op("RandomNormalLike", wave, dtype=1, scale=0.01)
        phase = b.op("RandomUniformLike", b.op("ConstantOfShape", b.const([1, 9], np.int64)), dtype=1)
        wave = b.add(b.add(wave, hiss), b.mul(b.op("ReduceMean", phase, keepdims=0), b.const(0.001)))
    b.output(wave, "waveform", F32, ["batch_size", "num_samples"])
    return b
