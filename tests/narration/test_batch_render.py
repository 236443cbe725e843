"""Rendering a project with nobody listening: the language model generates several sentences in one batch and the
decoder joins neighbouring sentences in one call. Every segment must come out as it would one at a time: the same
tokens for the same seed, the same samples (the stand-in decoder turns each token into its own samples, so joined
and separate decoding agree exactly), with fewer decoder calls."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from core.cli.main import main
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.projects.project import create_project
from core.narration.rendering.render import render_pending
from core.standin import make_standin

# Seven segments: sentences of very different lengths (so rows are padded and stop at different steps) and a pause.
TEXT = """Hi. The sun rose over the quiet hills far away today. Birds sang.

A farmer walked slowly to the distant field with his old dog and a basket. He carried seeds.

Short one. [pause:0.5s] Then a much longer sentence follows here with many more words than the others had before."""


def pipeline(bundle, **runtime) -> Pipeline:
    # The float32 decoder: joined and separate calls give the same samples exactly, which these tests hold. The int8
    # decoder quantizes each call's activations with that call's own scale, so a joined call moves by a hair
    # (tests/engine/test_decoder_levers.py holds int8 streaming close to one-shot).
    runtime.setdefault("decoder_precision", "fp32")
    return Pipeline.from_bundle(bundle, RuntimeOptions(stream=False, **runtime))


def render(tmp_path, name, pipe, voice, text=TEXT, seed=5, cancelled=None):
    project = create_project(tmp_path / name, "Batch")
    import_document(project, parse_text(text, "Batch"), str(voice), None, tmp_path, source_identity("b", text, None))
    project.seed = seed
    project.save()
    summary = render_pending(project, pipe, cancelled=cancelled)
    takes = []
    for segment in project.segments:
        if segment.chosen is None:
            takes.append(None)
            continue
        take = segment.takes[segment.chosen]
        audio, _rate = sf.read(project.path(take.file), dtype="float32")
        takes.append((take.tokens, audio))
    return summary, takes


@pytest.fixture
def spy(monkeypatch):
    """Counts the batches the render generates (rows per batch)."""
    sizes = []
    real = Pipeline.generate_rows

    def counting(pipe, conditioning, key, rows, cancelled):
        sizes.append(len(rows))
        return real(pipe, conditioning, key, rows, cancelled)

    monkeypatch.setattr(Pipeline, "generate_rows", counting)
    return sizes


def assert_same_takes(one, other):
    assert len(one) == len(other)
    for number, (a, b) in enumerate(zip(one, other), 1):
        assert a[0] == b[0], f"segment {number}: tokens differ"
        assert a[1].shape == b[1].shape and np.array_equal(a[1], b[1]), f"segment {number}: samples differ"


@pytest.mark.parametrize("chaining", [True, False])
def test_batched_rows_get_the_tokens_each_sentence_gets_alone(bundles, voice_wav, chaining):
    pipe = pipeline(bundles["turbo"], kv_chaining=chaining)
    sentences = ["Hi.", "The sun rose over the quiet hills far away today.", "Birds sang.", "He carried seeds."]
    options = [SynthesisOptions(seed=seed) for seed in (3, 11, 12, 40)]
    rows = [pipe.request_rows(text, option)[0] for text, option in zip(sentences, options)]
    assert len({row.ids.shape[1] for row in rows}) > 2  # rows of different lengths: padding is exercised
    voice = pipe.condition(voice_wav)
    batched = pipe.generate_rows(voice.conditioning, voice.key, rows)
    alone = [pipe.synthesize(text, voice_wav, option) for text, option in zip(sentences, options)]
    assert [g.tokens for g in batched] == [r.speech_tokens for r in alone]
    assert [g.stop_reason for g in batched] == [r.stop_reasons[0] for r in alone] == ["stop_token"] * 4
    assert len({len(g.tokens) for g in batched}) > 1  # rows finished at different steps


def test_unmasked_padding_would_change_the_tokens(bundles, voice_wav, monkeypatch):
    """The check above can fail: a runner that leaves the padding visible gets other tokens for the short rows."""
    pipe = pipeline(bundles["turbo"])
    rows = [pipe.request_rows(text, SynthesisOptions(seed=1))[0] for text in ("Hi.", "A much longer sentence here.")]
    voice = pipe.condition(voice_wav)
    good = pipe.generate_rows(voice.conditioning, voice.key, rows)
    import core.engine.generation.lm_runners as lm_runners

    real = lm_runners.KVRunner.prefill_rows

    def unmasked(self, blocks):
        logits = real(self, blocks)
        self._row_mask[:] = 1
        return logits

    monkeypatch.setattr(lm_runners.KVRunner, "prefill_rows", unmasked)
    bad = pipe.generate_rows(voice.conditioning, voice.key, rows)
    assert good[1].tokens == bad[1].tokens  # the longest row has no padding
    assert good[0].tokens != bad[0].tokens


def test_a_batched_render_gives_every_segment_the_take_it_gets_alone(tmp_path, bundles, voice_wav, spy):
    serial = pipeline(bundles["turbo"], lm_batch=1, joined_decoding=False)
    _summary, one = render(tmp_path, "one.cbproj", serial, voice_wav)
    assert spy == []
    batched = pipeline(bundles["turbo"], lm_batch=4)
    summary, four = render(tmp_path, "four.cbproj", batched, voice_wav)
    assert summary.rendered == len(four) == 7 and not summary.failed
    assert spy and max(spy) <= 4 and sum(spy) >= 6
    assert_same_takes(one, four)
    assert batched.decoder_calls < serial.decoder_calls  # neighbours were decoded together


def test_joined_decoding_can_be_switched_off(tmp_path, bundles, voice_wav, spy):
    joined = pipeline(bundles["turbo"], lm_batch=4)
    separate = pipeline(bundles["turbo"], lm_batch=4, joined_decoding=False)
    _s, a = render(tmp_path, "a.cbproj", joined, voice_wav)
    _s, b = render(tmp_path, "b.cbproj", separate, voice_wav)
    assert_same_takes(a, b)
    assert separate.decoder_calls == 7  # one per sentence
    assert joined.decoder_calls < 7


def test_joined_decoding_cuts_each_sentence_where_it_ends(bundles, voice_wav):
    pipe = pipeline(bundles["turbo"])
    cond = pipe.condition(voice_wav).conditioning
    sentences = [[5, 6, 7], [100, 200], [3000, 3001, 3002, 3003]]
    pieces = pipe.decode_joined(cond, sentences)
    alone = [pipe.decode(cond, tokens) for tokens in sentences]
    assert [p.size for p in pieces] == [a.size for a in alone] == [6 * 960, 5 * 960, 7 * 960]
    for piece, single in zip(pieces, alone):
        assert np.array_equal(piece, single)


@pytest.mark.parametrize("variant, batch", [("original", 4), ("multilingual", 4), ("turbo", 1)])
def test_without_a_batch_sentences_are_generated_ahead_and_joined_in_the_decoder(
    tmp_path, bundles, voice_wav, spy, variant, batch
):
    """Original/Multilingual (no position_ids; guidance on by default) cannot pad rows, and lm_batch 1 asks for
    none: the sentences are generated one at a time ahead, and neighbours still share decoder calls."""
    serial = pipeline(bundles[variant], lm_batch=1, joined_decoding=False)
    _s, one = render(tmp_path, "one.cbproj", serial, voice_wav)
    ahead = pipeline(bundles[variant], lm_batch=batch)
    if variant != "turbo":
        assert not ahead.can_batch(SynthesisOptions(seed=1, cfg_weight=0.0))  # no position_ids input
    summary, again = render(tmp_path, "ahead.cbproj", ahead, voice_wav)
    assert summary.rendered == 7 and spy == []
    assert_same_takes(one, again)
    assert ahead.decoder_calls < serial.decoder_calls == 7


def test_a_failed_batch_falls_back_to_one_at_a_time(tmp_path, bundles, voice_wav, monkeypatch):
    serial = pipeline(bundles["turbo"], lm_batch=1, joined_decoding=False)
    _s, one = render(tmp_path, "one.cbproj", serial, voice_wav)

    def broken(*args, **kwargs):
        raise RuntimeError("onnxruntime ran out of memory")

    monkeypatch.setattr(Pipeline, "generate_rows", broken)
    summary, again = render(tmp_path, "again.cbproj", pipeline(bundles["turbo"], lm_batch=4), voice_wav)
    assert summary.rendered == 7 and not summary.failed
    assert_same_takes(one, again)


def test_cancel_during_a_batch_keeps_the_project_consistent(tmp_path, bundles, voice_wav):
    calls = []

    def cancel_soon():
        calls.append(1)
        return len(calls) > 3  # while the first batch is generating

    summary, takes = render(
        tmp_path, "c.cbproj", pipeline(bundles["turbo"], lm_batch=4), voice_wav, cancelled=cancel_soon
    )
    assert summary.cancelled and summary.rendered == 0 and takes == [None] * 7


def test_runaway_rows_lose_their_repeated_tail_as_alone(tmp_path, voice_wav):
    bundle = make_standin(tmp_path / "repeating", "turbo", seed=3, repeating=True)
    pipe = pipeline(bundle)
    options = SynthesisOptions(seed=2, repetition_penalty=1.0, greedy=True)
    texts = ["Hello there, how are you today my friend?", "Fine."]
    rows = [pipe.request_rows(text, options)[0] for text in texts]
    voice = pipe.condition(voice_wav)
    batched = pipe.generate_rows(voice.conditioning, voice.key, rows)
    alone = [pipe.synthesize(text, voice_wav, options) for text in texts]
    assert batched[0].stop_reason.startswith("runaway") and alone[0].stop_reasons[0] == batched[0].stop_reason
    assert [g.tokens for g in batched] == [r.speech_tokens for r in alone]


def test_the_batch_is_a_runtime_option_and_a_cli_flag(tmp_path, bundles, voice_wav, capsys):
    with pytest.raises(ValueError, match="lm_batch"):
        RuntimeOptions(lm_batch=0)
    text = tmp_path / "book.txt"
    text.write_text(TEXT, encoding="utf-8")
    args = [
        "narrate",
        str(text),
        "--project",
        str(tmp_path / "p.cbproj"),
        "--bundle",
        str(bundles["turbo"]),
        "--voice",
        str(voice_wav),
        "--seed",
        "5",
        "--json",
    ]
    assert main([*args, "--lm-batch", "0"]) == 2
    assert "lm_batch must be between 1 and 16" in capsys.readouterr().err
    assert main([*args, "--lm-batch", "3", "--no-joined-decoding"]) == 0


def test_cancel_stops_a_long_joined_decoder_call_at_once(tmp_path, bundles, voice_wav):
    import threading
    import time

    pipe = pipeline(bundles["turbo"], lm_batch=4)
    decoder = pipe._parts.decoder
    stopped, entered = threading.Event(), threading.Event()

    def slow_joined(cond, sentences, seed=None):  # a joined call that runs until the decoder is interrupted
        entered.set()
        if not stopped.wait(30):
            raise AssertionError("the decoder call was never interrupted")
        raise RuntimeError("Exiting due to terminate flag being set to true.")

    decoder.decode_joined = slow_joined
    decoder.interrupt = stopped.set
    started = time.perf_counter()
    summary, takes = render(tmp_path, "c.cbproj", pipe, voice_wav, cancelled=entered.is_set)
    assert summary.cancelled and takes == [None] * 7
    assert time.perf_counter() - started < 5
