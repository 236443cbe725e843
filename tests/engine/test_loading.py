"""Cold start: the four graphs load in parallel; the speech encoder and the decoder may go on loading while the model
is already usable (the first call that needs them waits), and every graph reports its progress."""

from __future__ import annotations

import shutil
import threading

import pytest

import core.engine as w
from core.engine.errors import ModelLoadError
from core.engine.model.model_parts import BACKGROUND, DECODER_Q8_PROGRESS, LM_REWRITE_PROGRESS, LoadingSession
from core.engine.options import RuntimeOptions, SynthesisOptions
from core.engine.pipeline import Pipeline
from core.engine.streaming.synthesis import SynthesisRequest
from core.wording import describe_error
from tests.engine.test_worker import next_event

GRAPHS = {"speech_encoder", "embed_tokens", "language_model", "conditional_decoder"}
ONCE = {DECODER_Q8_PROGRESS, LM_REWRITE_PROGRESS}
"""Stages only a model's first load on this machine reports (their results are kept): which test loads first varies."""


def test_progress_is_reported_for_every_graph_and_the_tokens_do_not_change(bundles, voice_wav):
    events = []
    lock = threading.Lock()

    def progress(graph, seconds):
        with lock:
            events.append((graph, seconds))

    runtime = RuntimeOptions(provider="cpu")
    pipe = Pipeline.from_bundle(bundles["original"], runtime, progress=progress, background=True)
    assert all(isinstance(pipe._parts.sessions[g], LoadingSession) for g in BACKGROUND)
    options = SynthesisOptions(greedy=True)
    tokens = pipe.synthesize("Hello there.", voice_wav, options).speech_tokens
    assert (
        tokens
        == Pipeline.from_bundle(bundles["original"], runtime)
        .synthesize("Hello there.", voice_wav, options)
        .speech_tokens
    )
    started = {g for g, s in events if s is None}
    finished = {g for g, s in events if s is not None}
    assert started == finished and started - ONCE == GRAPHS
    assert all(s >= 0 for _g, s in events if s is not None)


def test_the_model_is_usable_before_a_slow_decoder_has_loaded(bundles, voice_wav, monkeypatch):
    """The decoder's load is held back: loading returns, the language model runs, the decode waits for it."""
    import core.engine.model.sessions

    release = threading.Event()
    original = core.engine.model.sessions.SessionFactory.create

    def slow_create(self, name, path, *args, **kwargs):
        if name == "conditional_decoder":
            assert release.wait(30)
        return original(self, name, path, *args, **kwargs)

    monkeypatch.setattr(core.engine.model.sessions.SessionFactory, "create", slow_create)
    pipe = Pipeline.from_bundle(bundles["turbo"], RuntimeOptions(provider="cpu"), background=True)
    assert not pipe._parts.sessions["conditional_decoder"].ready
    assert pipe.info.decoder.waveform == "waveform"  # the signature came from the graph file
    timer = threading.Timer(0.3, release.set)
    timer.start()
    result = pipe.synthesize("Hello there.", voice_wav, SynthesisOptions(seed=1))
    timer.join()
    assert result.audio.size > 0 and pipe._parts.sessions["conditional_decoder"].ready


@pytest.mark.parametrize("graph", BACKGROUND)
def test_a_broken_graph_loading_in_the_background_fails_the_request_with_its_message(
    bundles, tmp_path, voice_wav, graph
):
    bundle = shutil.copytree(bundles["turbo"], tmp_path / "broken")
    data = bundle / "onnx" / f"{graph}.onnx_data"
    data.write_bytes(data.read_bytes()[: data.stat().st_size // 2])  # truncated weights
    pipe = Pipeline.from_bundle(bundle, RuntimeOptions(provider="cpu", conditioning_cache=False), background=True)
    with pytest.raises(ModelLoadError) as caught:
        pipe.synthesize("Hello there.", voice_wav, SynthesisOptions(seed=1))
    assert caught.value.code == "bundle.sidecar_truncated" and caught.value.data["graph_file"] == f"{graph}.onnx"
    assert f"{graph}.onnx" in describe_error(caught.value)
    with pytest.raises(ModelLoadError):  # and it stays a clear error, request after request
        pipe.synthesize("Hello again.", voice_wav, SynthesisOptions(seed=1))


def test_the_worker_reports_load_progress_before_the_model_is_loaded(bundles, voice_wav, tmp_path):
    worker = w.InferenceWorker()
    worker.start()
    try:
        worker.load(bundles["original"], RuntimeOptions(provider="cpu", cache_dir=tmp_path / "cache"))
        seen: list = []
        next_event(worker, (w.ModelLoaded,), seen=seen)
        progress = [e for e in seen if isinstance(e, w.LoadProgress)]
        assert {e.graph for e in progress if e.seconds is None} - ONCE == GRAPHS
        rid = worker.new_request_id()
        worker.speak(SynthesisRequest("Hello there.", None, SynthesisOptions(seed=1), rid))
        more: list = []
        assert isinstance(next_event(worker, (w.Finished, w.Failed), seen=more), w.Finished)
        finished = {
            e.graph for e in progress + [e for e in more if isinstance(e, w.LoadProgress)] if e.seconds is not None
        }
        assert finished - ONCE == GRAPHS
    finally:
        assert worker.shutdown()


def test_the_decoder_and_encoder_skip_the_quadratic_memory_reuse_plan(bundles):
    """onnxruntime's reuse planner took 74 of the Original decoder's 78 s of load; the language model keeps it."""
    pipe = Pipeline.from_bundle(bundles["turbo"], RuntimeOptions(provider="cpu"))
    reuse = {name: s.get_session_options().enable_mem_reuse for name, s in pipe._parts.sessions.items()}
    assert reuse == {
        "speech_encoder": False,
        "embed_tokens": True,
        "language_model": True,
        "conditional_decoder": False,
    }
