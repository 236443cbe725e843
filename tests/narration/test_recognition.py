"""Speech recognition for screening takes: the word comparison (alignment, normalisation, a cut-off end), choosing a
recogniser, the Whisper model's pinned download (a stand-in hub), and pocketsphinx hearing espeak-ng's speech."""

from __future__ import annotations

import functools
import pickle
import shutil
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf

from core.engine import ChatterboxError, HubModel
from core.engine.model.hub_download import COMMIT
from core.narration.screening import whisper_recogniser
from core.narration.screening.recognition import RecognitionUnavailable, recogniser_for
from core.narration.screening.sphinx_recogniser import SphinxRecogniser, to_pcm16
from core.narration.screening.whisper_recogniser import (
    WHISPER_FILES,
    WHISPER_MODEL,
    WhisperRecogniser,
    download_whisper_model,
    find_whisper_model,
)
from core.narration.screening.word_errors import align, compare_words, words_of
from tests.security.test_security_downloads import FakeHub

RATE = 24_000
ROOT = Path(__file__).resolve().parents[2]


# --- comparing words ------------------------------------------------------------------------------------------------
def test_the_same_words_score_zero():
    c = compare_words("The cat sat on the mat.", "the cat sat on the mat")
    assert (c.wer, c.missing, c.extra, c.expected_words, c.end_missing) == (0.0, [], [], 6, 0)


def test_a_dropped_last_clause_is_missing_at_the_end():
    c = compare_words("She opened the window, because the room was hot.", "she opened the window")
    assert c.missing == ["because", "the", "room", "was", "hot"] and c.extra == []
    assert c.end_missing == 5 and c.wer == pytest.approx(5 / 9)


def test_a_word_missed_in_the_middle_is_not_missing_at_the_end():
    c = compare_words("We went to the big park today.", "we went to the park today")
    assert c.missing == ["big"] and c.end_missing == 0


def test_a_garbled_last_word_counts_at_the_end():
    c = compare_words("He drank a glass of water.", "he drank a glass of waiter")
    assert c.missing == ["water"] and c.extra == ["waiter"] and c.end_missing == 1


def test_numbers_in_digits_and_in_words_are_the_same():
    assert compare_words("I have 3 dogs and 21 cats.", "I have three dogs and twenty-one cats").wer == 0.0
    assert compare_words("The 42nd street.", "the forty second street").wer == 0.0
    assert compare_words("Il a 3 chats.", "il a trois chats", "fr-FR").wer == 0.0


def test_case_punctuation_apostrophes_and_hyphens_are_ignored():
    c = compare_words("“Don’t stop!” she said — it's a well-known song…", "DON'T stop she said it's a well known song")
    assert c.wer == 0.0, c
    assert words_of("Don’t 'quote' me") == ["don't", "quote", "me"]


def test_an_insertion_is_extra_and_counted():
    c = compare_words("Hello there.", "hello there my friend")
    assert c.extra == ["my", "friend"] and c.missing == [] and c.wer == 1.0 and c.end_missing == 0


def test_a_substitution_is_in_both_lists():
    c = compare_words("A cup of tea.", "a cup of coffee")
    assert (c.missing, c.extra, c.wer) == (["tea"], ["coffee"], 0.25)


def test_empty_texts():
    assert compare_words("", "").wer == 0.0
    assert compare_words("", "words").wer == 1.0
    nothing_heard = compare_words("Two words.", "")
    assert nothing_heard.wer == 1.0 and nothing_heard.end_missing == 2


def test_the_alignment_is_a_cheapest_edit_and_puts_ties_late():
    steps = align(["a", "b", "c", "d"], ["a", "x", "c"])
    assert [op for op, _, _ in steps] == ["match", "sub", "match", "del"]
    assert [op for op, _, _ in align(["a", "b", "a"], ["a"])] == ["match", "del", "del"]


def test_languages_without_spaces_are_compared_by_character():
    c = compare_words("我爱你。", "我你", "zh")
    assert c.expected_words == 3 and c.missing == ["爱"]


def test_a_comparison_as_a_dict():
    d = compare_words("One two.", "one").to_dict()
    assert d == {"wer": 0.5, "missing": ["two"], "extra": [], "expected_words": 2, "end_missing": 1}


# --- choosing a recogniser ------------------------------------------------------------------------------------------
def test_the_recognition_modules_import_no_recogniser():
    code = (
        "import sys, core.narration.screening.recognition\n"
        "print(sorted(m for m in ('pocketsphinx', 'faster_whisper', 'ctranslate2') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr


def test_recognition_unavailable_has_a_code_and_says_what_to_do():
    exc = RecognitionUnavailable("asr.not_installed", package="faster-whisper", install="pip install '.[asr]'")
    assert isinstance(exc, ChatterboxError) and exc.code == "asr.not_installed"
    assert str(exc) == "Speech recognition needs faster-whisper: pip install '.[asr]'"
    again = pickle.loads(pickle.dumps(exc))
    assert (again.code, again.data, str(again)) == (exc.code, exc.data, str(exc))


def test_an_unknown_preference_is_refused():
    with pytest.raises(ValueError, match="prefer"):
        recogniser_for("en", "google")


def test_sphinx_is_english_only(sphinx):
    with pytest.raises(RecognitionUnavailable) as caught:
        recogniser_for("fr", "sphinx")
    assert caught.value.code == "asr.language" and caught.value.data["language"] == "fr"
    assert "only English (en), not French (fr)" in str(caught.value) and "pip install '.[asr]'" in str(caught.value)
    with pytest.raises(RecognitionUnavailable) as caught:
        sphinx.transcribe(np.zeros(RATE, np.float32), RATE, "de")
    assert caught.value.code == "asr.language"


def test_sphinx_is_chosen_for_english(tmp_path):
    pytest.importorskip("pocketsphinx")
    assert recogniser_for("en-GB", "sphinx").name == "pocketsphinx"
    assert recogniser_for("en", "auto", models_dir=tmp_path).name == "pocketsphinx"  # no Whisper model there


def test_whisper_without_faster_whisper_is_not_installed(monkeypatch, tmp_path):
    monkeypatch.setattr(whisper_recogniser, "whisper_installed", lambda: False)
    for language, prefer in (("en", "whisper"), ("fr", "auto")):
        with pytest.raises(RecognitionUnavailable) as caught:
            recogniser_for(language, prefer, models_dir=tmp_path)
        assert caught.value.code == "asr.not_installed" and "pip install '.[asr]'" in str(caught.value)


class OfflineHub:
    def HfApi(self):  # the hub's own name
        return self

    def model_info(self, *args, **kwargs):
        raise ConnectionError("[Errno -2] Name or service not known")


def test_whisper_without_its_model_offline_is_model_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(whisper_recogniser, "whisper_installed", lambda: True)
    offline = functools.partial(download_whisper_model, hub=OfflineHub())
    monkeypatch.setattr(whisper_recogniser, "download_whisper_model", offline)
    with pytest.raises(RecognitionUnavailable) as caught:
        recogniser_for("en", "whisper", models_dir=tmp_path)
    assert caught.value.code == "asr.model_missing" and caught.value.data["offline"] is True
    assert caught.value.data["revision"] == WHISPER_MODEL.revision and "No internet connection" in str(caught.value)
    with pytest.raises(RecognitionUnavailable) as caught:
        recogniser_for("fr", "auto", models_dir=tmp_path)  # auto never downloads
    assert caught.value.code == "asr.model_missing" and "reason" in caught.value.data


class StandInWhisper:
    """Answers ``transcribe`` as ``faster_whisper.WhisperModel`` does (lazy segments, info) and records the call."""

    def __init__(self):
        self.calls = []

    def transcribe(self, audio, **options):
        self.calls.append((audio, options))
        return iter([SimpleNamespace(text=" Hello there, "), SimpleNamespace(text="my friend. ")]), None


def test_auto_takes_whisper_when_its_model_is_downloaded(monkeypatch, tmp_path):
    folder = tmp_path / WHISPER_MODEL.folder
    folder.mkdir()
    for name in WHISPER_FILES[:-1]:
        (folder / name).write_bytes(b"x")
    assert find_whisper_model(tmp_path) is None  # one file short
    (folder / WHISPER_FILES[-1]).write_bytes(b"x")
    assert find_whisper_model(tmp_path) == folder
    model = StandInWhisper()
    monkeypatch.setattr(whisper_recogniser, "whisper_installed", lambda: True)
    monkeypatch.setattr(whisper_recogniser, "_load", lambda path: (model, "cpu"))
    recogniser = recogniser_for("pt-BR", "auto", models_dir=tmp_path)
    assert isinstance(recogniser, WhisperRecogniser) and recogniser.folder == folder
    assert recogniser.transcribe(np.zeros(RATE, np.float32), RATE, "pt-BR") == "Hello there, my friend."
    audio, options = model.calls[0]
    assert audio.dtype == np.float32 and len(audio) == 16_000
    assert options == {"language": "pt", "beam_size": 1, "vad_filter": False, "condition_on_previous_text": False}


def test_a_whisper_folder_that_faster_whisper_cannot_load_fails_with_a_code(tmp_path):
    pytest.importorskip("faster_whisper", reason="faster-whisper is optional: pip install '.[asr]'")
    for name in WHISPER_FILES:
        (tmp_path / name).write_bytes(b"not a model")
    with pytest.raises(RecognitionUnavailable) as caught:
        WhisperRecogniser(tmp_path)
    assert caught.value.code == "asr.failed" and caught.value.data["recogniser"] == "faster-whisper"


# --- the Whisper model's download -----------------------------------------------------------------------------------
def test_the_whisper_model_is_pinned_to_a_commit():
    assert COMMIT.fullmatch(WHISPER_MODEL.revision)


@pytest.fixture
def whisper_files() -> dict[str, bytes]:
    files = {name: f"{name} of the model\n".encode() * 50 for name in WHISPER_FILES}
    files.update({"README.md": b"# faster-whisper-base", "evil.pkl": pickle.dumps([1])})
    return files


def test_the_whisper_model_comes_verified_from_its_pinned_commit(tmp_path, whisper_files):
    hub, seen = FakeHub(whisper_files), []
    folder = download_whisper_model(tmp_path, progress=lambda done, total: seen.append((done, total)), hub=hub)
    assert folder == find_whisper_model(tmp_path) == tmp_path / WHISPER_MODEL.folder
    assert hub.calls[0] == ("model_info", WHISPER_MODEL.repo, WHISPER_MODEL.revision, True)
    assert hub.downloads() == [("download", name, WHISPER_MODEL.revision) for name in WHISPER_FILES]
    assert sorted(p.name for p in folder.iterdir()) == sorted(WHISPER_FILES)  # no README, no pickle
    assert all((folder / name).read_bytes() == whisper_files[name] for name in WHISPER_FILES)
    assert seen and seen[-1][1] == sum(len(whisper_files[n]) for n in WHISPER_FILES)


def test_a_whisper_file_that_does_not_match_the_hub_is_not_kept(tmp_path, whisper_files):
    bad = whisper_files["model.bin"][:-1] + b"?"
    with pytest.raises(RecognitionUnavailable) as caught:
        download_whisper_model(tmp_path, hub=FakeHub(whisper_files, deliver={"model.bin": bad}))
    assert caught.value.code == "asr.model_missing" and "does not match the hub" in caught.value.data["reason"]
    assert find_whisper_model(tmp_path) is None and not (tmp_path / WHISPER_MODEL.folder / "model.bin").exists()


def test_an_unpinned_whisper_model_or_another_commit_is_refused(tmp_path, whisper_files):
    branch = HubModel("test", WHISPER_MODEL.repo, "float16", "whisper-test", "main")
    hub = FakeHub(whisper_files)
    with pytest.raises(RecognitionUnavailable, match="not pinned to a commit"):
        download_whisper_model(tmp_path, hub=hub, model=branch)
    assert hub.calls == []
    moved = FakeHub(whisper_files, sha="f" * 40)
    with pytest.raises(RecognitionUnavailable, match="answered with commit"):
        download_whisper_model(tmp_path, hub=moved)
    assert moved.downloads() == []


# --- pocketsphinx hears espeak-ng -----------------------------------------------------------------------------------
PAIRS = [
    ("I would like a cup of tea with milk please.", "She opened the window because the room was hot."),
    ("We went to the park to play with the dog.", "My brother bought a new red car last week."),
    ("The children walked home from school in the rain.", "He drank a glass of water and went to bed."),
    ("Please close the door when you leave the house.", "The cat sat on the mat and looked at the door."),
]


@pytest.fixture(scope="module")
def sphinx() -> SphinxRecogniser:
    pytest.importorskip("pocketsphinx")
    return SphinxRecogniser()


def spoken(text: str, folder: Path) -> np.ndarray:
    """``text`` said by espeak-ng (US English), as a take is: mono float32 at 24 kHz."""
    import soxr

    path = folder / "take.wav"
    subprocess.run(["espeak-ng", "-v", "en-us", "-w", str(path), text], check=True, capture_output=True, timeout=30)
    audio, rate = sf.read(path, dtype="float32")
    return soxr.resample(audio, rate, RATE).astype(np.float32)


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng (apt-get install espeak-ng) to speak")
def test_pocketsphinx_hears_each_take_closer_to_its_own_sentence(sphinx, tmp_path):
    seconds = work = 0.0
    for pair in PAIRS:
        for own, other in (pair, pair[::-1]):
            take = spoken(own, tmp_path)
            started = time.perf_counter()
            heard = sphinx.transcribe(take, RATE, "en")
            work += time.perf_counter() - started
            seconds += len(take) / RATE
            mine, theirs = compare_words(own, heard).wer, compare_words(other, heard).wer
            print(f"own {mine:.2f} other {theirs:.2f} | {own!r} heard as {heard!r}")
            assert mine <= 0.5 and theirs >= mine + 0.3, (own, heard, mine, theirs)
    print(f"pocketsphinx: {work / seconds:.3f} s of work per second of audio ({seconds:.1f} s of takes)")


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="needs espeak-ng (apt-get install espeak-ng) to speak")
def test_a_take_cut_off_early_is_missing_its_end(sphinx, tmp_path):
    sentence = "The children walked home from school in the rain."
    take = spoken(sentence, tmp_path)
    c = compare_words(sentence, sphinx.transcribe(take[: len(take) // 2], RATE, "en"))
    assert c.end_missing >= 3, c


def test_pocketsphinx_reads_16_bit_pcm_at_16_khz():
    pcm = to_pcm16(np.full(RATE, 2.0, np.float32), RATE)
    samples = np.frombuffer(pcm, "<i2")
    assert len(samples) == 16_000 and samples.max() == 32767  # resampled and clipped
    assert to_pcm16(np.zeros(0, np.float32), RATE) == b""
    assert to_pcm16(np.zeros(RATE, np.float32), RATE) == to_pcm16(np.zeros(RATE, np.float32), RATE)  # seeded noise
