"""The forced aligner in a child process (core/engine/alignment/process.py): the same words as in the caller's
process, the calling thread free while the child works (pocketsphinx holds the GIL), a child that died started
again, and the frozen app's multiprocessing child answering as the script's ``-c`` child."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from core.engine import (
    AlignerFailed,
    AlignerProcess,
    Alignment,
    AlignmentError,
    WordTime,
    align,
    shared_aligner,
    split_words,
)
from core.engine.alignment.process import (
    _ProcessChild,
    _StdioChild,
    _unframed,
    decode_answer,
    decode_request,
    encode_answer,
    encode_request,
)
from tests.alignment_support import RATE, SENTENCES, needs_espeak, recording


@needs_espeak
def test_the_child_places_the_same_words_as_the_callers_process():
    sentence = SENTENCES["en"][0]
    audio, _truth = recording(split_words(sentence), "en", 0)
    aligner = AlignerProcess()
    try:
        apart = aligner.align(audio, RATE, sentence, "en")
        spoken = aligner.align(audio[: RATE // 2], RATE, "Twelve.", "en", "twelve")  # the same child, a spoken form
    finally:
        aligner.close()
    assert apart == align(audio, RATE, sentence, "en")
    assert apart.placed_share >= 0.9
    assert 0 < aligner.cpu_seconds < 60  # the child's own CPU time, reported with each answer
    assert [w.word for w in spoken.words] in ([], ["Twelve."], ["Twelve"])


@needs_espeak
def test_the_calling_process_keeps_running_while_the_child_aligns():
    """A thread counting while an alignment runs in the child counts on: the GIL is the caller's own."""
    sentence = " ".join(SENTENCES["en"][:3])
    audio, _truth = recording(split_words(sentence), "en", 1)
    aligner = AlignerProcess()
    aligner.align(audio, RATE, sentence, "en")  # started and warm: what is measured is the alignment
    ticks, stop = [0], threading.Event()

    def count() -> None:
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    try:
        counter.start()
        started = time.perf_counter()
        aligner.align(audio, RATE, sentence, "en")
        spent = time.perf_counter() - started
    finally:
        stop.set()
        counter.join()
        aligner.close()
    # at a tick a millisecond, a thread locked out of the GIL for the whole alignment would count almost nothing
    assert ticks[0] >= 0.3 * spent * 1000, f"{ticks[0]} ticks in {spent:.2f} s"


def test_a_child_that_died_is_started_again():
    rng = np.random.default_rng(1)
    audio = (0.1 * rng.standard_normal(RATE)).astype(np.float32)
    aligner = AlignerProcess()

    def attempt():
        try:
            return aligner.align(audio, RATE, "One more time.", "en")
        except AlignmentError as exc:  # noise may place nothing: then the same refusal both times
            return exc.code

    try:
        first = attempt()
        aligner._channel.process.kill()  # type: ignore[union-attr]
        aligner._channel.process.wait()  # type: ignore[union-attr]
        again = attempt()
    finally:
        aligner.close()
    assert again == first  # the same answer from a new process
    assert aligner._channel is None


def test_the_frozen_apps_child_answers_as_the_scripts_child():
    """The frozen app has no ``-c``: its child is a multiprocessing process on a pipe, with the same answers."""
    rng = np.random.default_rng(2)
    request = encode_request((0.1 * rng.standard_normal(RATE)).astype(np.float32), RATE, "Quite so.", "en", None)
    answers = []
    for make in (_ProcessChild, _StdioChild):
        child = make()
        try:
            child.send_bytes(request)
            answers.append(child.recv_bytes())
        finally:
            child.close()
        assert child.process.poll() is not None if isinstance(child, _StdioChild) else not child.process.is_alive()
    headers = [_unframed(answer)[0] for answer in answers]
    assert all(header.pop("cpu_s") >= 0 for header in headers)  # each child's own CPU time
    assert headers[0] == headers[1]
    try:
        found = decode_answer(answers[0])
        assert found.total_words == 2
    except AlignmentError as exc:  # noise: nothing placed, the same refusal from both
        assert exc.code == "align.not_matching"


def test_what_crosses_the_pipe_is_data_never_code():
    """Requests and answers are a JSON header and raw samples: they come back as they went, an error with its code
    and facts, and a garbled message is the aligner's failure, not something run."""
    audio = np.linspace(-1, 1, 480, dtype=np.float32)
    back = decode_request(encode_request(audio, RATE, "Zoë’s “text”", "fr", "zoé"))
    assert np.array_equal(back[0], audio) and back[1:] == (RATE, "Zoë’s “text”", "fr", "zoé")
    found = Alignment([WordTime("Zoë’s", 0.1234567, 0.5)], 0.02, "fr", "pocketsphinx", 2)
    assert decode_answer(encode_answer("words", found)) == found
    with pytest.raises(AlignmentError) as refused:
        decode_answer(encode_answer("error", AlignmentError("align.no_audio", seconds=0.0)))
    assert refused.value.code == "align.no_audio" and refused.value.data == {"seconds": 0.0}
    with pytest.raises(AlignerFailed, match="broke"):
        decode_answer(encode_answer("failed", "RuntimeError: broke"))
    no_words = b"\x11" + b"\x00" * 7 + b'{"kind": "words"}'
    for garbled in (b"", b"\xff" * 12, b"\x05\x00\x00\x00\x00\x00\x00\x00[1,2]", no_words):
        with pytest.raises(AlignerFailed):
            decode_answer(garbled)


def test_the_shared_aligner_is_one_child_for_the_whole_process(monkeypatch):
    from core.engine.alignment import process

    monkeypatch.setattr(process, "_shared", None)  # not the tests' stand-in
    first = shared_aligner()
    assert isinstance(first, AlignerProcess) and shared_aligner() is first
    assert first._channel is None  # no child until the first alignment


def test_a_failed_child_is_reported_as_the_aligners_failure(monkeypatch):
    aligner = AlignerProcess()

    class Broken:
        def send_bytes(self, message):
            raise OSError("pipe closed")

        def recv_bytes(self):
            raise EOFError

        def close(self):
            pass

    monkeypatch.setattr(aligner, "_start", lambda: Broken())
    with pytest.raises(AlignerFailed):
        aligner.align(np.zeros(RATE, np.float32), RATE, "Hello.", "en")
