"""The window's controllers without a window: requests and results, the voice choice, the history's actions."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf
from PySide6.QtCore import QSettings

from app.controllers.history import HistoryController, LoadBack
from app.controllers.models import load_progress_text
from app.controllers.speak import (
    NO_MODEL,
    NO_TEXT,
    NO_VOICE,
    PlaybackState,
    SpeakController,
    history_fields,
    playback_text,
    speak_problem,
)
from app.controllers.voices import VoiceController
from app.history import History
from app.settings import Key, Settings
from core.engine import ChatterboxError
from core.voices import VoiceLibrary


@pytest.fixture
def settings(tmp_path) -> Settings:
    return Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))


def model(has_default_voice: bool = True):
    caps = SimpleNamespace(has_default_voice=has_default_voice, lm_precision="fp32")
    return SimpleNamespace(capabilities=caps, variant="original", bundle=Path("/models/standin"))


# --- speak ---------------------------------------------------------------------------------------------------------
def test_speak_problems_in_the_order_a_user_meets_them():
    assert speak_problem("  \n", None, False) == NO_TEXT
    assert speak_problem("Hello.", None, True) == NO_MODEL
    assert speak_problem("Hello.", model(has_default_voice=False), False) == NO_VOICE
    assert speak_problem("Hello.", model(has_default_voice=False), True) is None
    assert speak_problem("Hello.", model(), False) is None


def test_a_finished_request_becomes_the_last_result_with_its_fields_and_seed():
    speak = SpeakController()
    speak.begin(7, {"text": "Hello.", "seed": 0})
    speak.add_chunk(np.ones(10, np.float32))
    speak.add_chunk(np.ones(5, np.float32))
    fields = speak.finish(7, SimpleNamespace(seed=42), fallback={"text": "unused"})
    assert fields == {"text": "Hello.", "seed": 42} and speak.last_audio.size == 15
    assert speak.request is None and speak.ended == ""
    # A report of a request the panel does not know keeps the fields it is given; no audio keeps nothing.
    speak.begin(8, {"text": "Next."})
    assert speak.finish(9, SimpleNamespace(seed=1), fallback={"text": "other"}) is None
    assert speak.last_audio.size == 0


def test_a_stopped_request_keeps_its_audio_once_and_only_while_it_is_current():
    speak = SpeakController()
    speak.begin(3, {"text": "Long text."})
    assert speak.take_stopped(current=3) is None  # no audio yet: nothing to keep
    speak.begin(4, {"text": "Long text."})
    speak.add_chunk(np.ones(8, np.float32))
    assert speak.take_stopped(current=5) is None  # another request is current
    speak.begin(6, {"text": "Long text."})
    speak.add_chunk(np.ones(8, np.float32))
    audio, fields = speak.take_stopped(current=6)
    assert audio.size == 8 and fields == {"text": "Long text."}
    assert speak.take_stopped(current=6) is None  # once
    assert speak.stop() and speak.ended == "stopped" and speak.last_audio.size == 8


def test_only_the_panels_own_request_fails_it():
    speak = SpeakController()
    assert not speak.owns(1)
    speak.begin(1, {})
    assert speak.owns(1) and not speak.owns(2)  # a project render's id is not the panel's
    speak.fail()
    assert speak.ended == "failed" and not speak.owns(1)


def test_history_fields_name_the_voice_model_seed_and_the_settings_that_shape_the_sound(settings):
    fields = history_fields("Hi.", None, model(), "Narrator", "Narrator", settings)
    assert fields["seed"] == 0 and fields["voice"] == "Narrator" and fields["model"] == "standin"
    assert fields["variant"] == "original" and fields["precision"] == "fp32"
    assert Key.TEMPERATURE.value in fields["settings"] and Key.TEXT.value not in fields["settings"]
    assert history_fields("Hi.", 5, None, "default", "", settings)["model"] == ""


@pytest.mark.parametrize(
    ("state", "text"),
    [
        (PlaybackState(1.0, lost=True, generating=True), "audio output lost"),
        (PlaybackState(1.0, no_output=True, ended="stopped"), "no audio output"),
        (PlaybackState(2.5, ended="stopped", generating=True), "stopped · played 2.5 s"),
        (PlaybackState(1.0, generating=True, starved=True), "buffering… (generation is behind playback)"),
        (PlaybackState(1.0, generating=True), "generating… · played 1.0 s"),
        (PlaybackState(3.0, finished=True), "finished · played 3.0 s"),
        (PlaybackState(0.5), "playing · 0.5 s"),
    ],
)
def test_the_playback_status_line(state, text):
    assert playback_text(state) == text


def test_load_progress_names_the_graphs():
    text = load_progress_text({"language_model": 1.25, "conditional_decoder": None, "custom": 0.5})
    assert text == "language model ✓ 1.2 s · decoder … · custom ✓ 0.5 s"
    making = load_progress_text({"conditional_decoder_q8": None})
    assert making == "making the int8 decoder (once) …"  # the first load of an Original model: about a minute
    preparing = load_progress_text({"language_model_rewrite": 10.8})
    assert preparing == "preparing the language model (once) ✓ 10.8 s"  # folded and checked on a first load


# --- voices --------------------------------------------------------------------------------------------------------
def test_choosing_saving_removing_and_undoing_voices(tmp_path, settings, voice_wav, other_voice_wav):
    voices = VoiceController(VoiceLibrary(tmp_path / "voices"), settings)
    assert voices.title(has_default=True) == "Default voice" and voices.title(has_default=False) == "No voice"
    assert voices.project_voice() is None and voices.history_label() == ("default", "")
    assert voices.needs_recording(model(has_default_voice=False)) and not voices.needs_recording(model())
    voices.select_file(voice_wav)
    assert voices.title(True) == voice_wav.name and settings.get(Key.VOICE) == str(voice_wav)
    assert voices.project_voice() == voices.voice.source and voices.remembered() == (voice_wav, "")
    assert voices.save("Narrator") and voices.name == "Narrator" and settings.get(Key.VOICE) == "Narrator"
    assert voices.remembered() == (voices.get("Narrator").path, "Narrator")
    voices.select_file(other_voice_wav)
    voices.save("Villain")
    assert voices.names() == ["Narrator", "Villain"] and voices.history_label() == ("Villain", "Villain")

    voices.remove("Narrator")  # not the current one
    assert voices.name == "Villain" and voices.undo_text() == "Removed “Narrator”."
    voices.remove("Villain")  # the current one: back to the default voice
    assert voices.voice is None and settings.get(Key.VOICE) == "" and voices.names() == []
    entry, was_current = voices.undo()
    assert entry.name == "Villain" and was_current and voices.undo_text() == "Removed “Narrator”."
    entry, was_current = voices.undo()
    assert entry.name == "Narrator" and not was_current and voices.undo_text() == ""
    assert voices.undo() is None and voices.names() == ["Narrator", "Villain"]


def test_a_bad_recording_changes_nothing(tmp_path, settings, voice_wav):
    voices = VoiceController(VoiceLibrary(tmp_path / "voices"), settings)
    voices.select_file(voice_wav)
    junk = tmp_path / "notes.wav"
    junk.write_text("not audio")
    with pytest.raises(ChatterboxError):
        voices.select_file(junk)
    assert Path(voices.voice.source) == voice_wav and settings.get(Key.VOICE) == str(voice_wav)
    voices.use_default()
    assert not voices.save("Nothing to save")  # the default voice has no recording


# --- history -------------------------------------------------------------------------------------------------------
def add(controller: HistoryController, text: str, **fields):
    audio = np.sin(np.arange(2400) / 10).astype(np.float32) * 0.2
    return controller.add(audio, {"text": text, "voice": "default", "seed": 1, "variant": "original", **fields})


def test_history_changes_reach_the_subscribers(tmp_path):
    controller = HistoryController(History(tmp_path / "history"))
    seen = []
    controller.subscribe(lambda: seen.append(len(controller.entries)))
    first = add(controller, "First.")
    second = add(controller, "Second.")
    assert seen == [1, 2] and controller.find(first.id) is first and controller.find(None) is None
    assert controller.audio(second).size == 2400
    controller.delete(second)
    controller.clear()
    assert seen == [1, 2, 1, 0] and controller.entries == []


def test_load_back_restores_the_voice_that_still_exists(tmp_path, voice_wav):
    library = VoiceLibrary(tmp_path / "voices")
    library.add("Narrator", voice_wav)
    controller = HistoryController(History(tmp_path / "history"))
    by_name = add(controller, "A.", voice="Narrator", voice_source="Narrator", seed=1234)
    assert controller.load_back(by_name, library) == LoadBack("A.", library_voice="Narrator", seed=1234)
    recording = add(controller, "B.", voice=voice_wav.name, voice_source=str(voice_wav), seed=0)
    assert controller.load_back(recording, library) == LoadBack("B.", recording=voice_wav)
    default = add(controller, "C.", seed=9)
    assert controller.load_back(default, library) == LoadBack("C.", default_voice=True, seed=9)
    gone = tmp_path / "gone.wav"
    sf.write(gone, np.zeros(10, np.float32), 24000)
    lost = add(controller, "D.", voice="gone.wav", voice_source=str(gone))
    gone.unlink()
    assert controller.load_back(lost, library) == LoadBack("D.", seed=1)  # the text only


# --- studio --------------------------------------------------------------------------------------------------------
def studio_project(tmp_path):
    from core.narration import create_project, import_document, parse_text, source_identity

    text = "The first sentence. The second one.\n\nA new paragraph."
    project = create_project(tmp_path / "Story.cbproj", "Story")
    import_document(project, parse_text(text, "Story"), None, None, None, source_identity("text", text, None))
    project.save()
    return project


def test_the_studio_controller_tracks_edits_renders_and_unsaved_changes(tmp_path):
    from app.controllers.studio import NO_PROJECT, StudioController

    studio = StudioController()
    assert studio.summary() == NO_PROJECT and studio.pending(None) == 0 and not studio.set_pace(1.2)
    studio.open(studio_project(tmp_path))
    assert not studio.dirty and studio.pending(None) == 3 and studio.pending(2) == 1
    assert "3 segments in 1 chapter(s): 0 rendered, 3 pending, 0 failed" in studio.summary()
    studio.set_pause(1, 0.8)
    assert studio.dirty and studio.summary().endswith(" · unsaved changes")
    studio.save()
    assert not studio.dirty and studio.project.segments[0].pause_after == 0.8
    assert not studio.set_pace(1.0) and studio.set_pace(1.25) and studio.pace() == 1.25 and studio.dirty
    studio.set_speed(2, 1.0)
    assert studio.project.segments[1].speed is None  # 1.0 × the project's pace: no speed of its own
    studio.set_speed(2, 0.9)
    assert studio.project.segments[1].speed == 0.9
    studio.started(11)
    assert studio.owns(11) and not studio.owns(12) and not studio.dirty  # the render saves as it goes
    studio.ended()
    assert studio.rendering is None and not studio.owns(11)
    studio.edit_text(3, "Another paragraph.")
    assert studio.project.segments[2].text == "Another paragraph." and studio.dirty


def test_the_studio_words_for_progress_and_a_finished_render():
    from app.controllers.studio import done_text, progress_text

    step = SimpleNamespace(done=2, total=4, audio_seconds=65.0, eta_s=30.0)
    assert progress_text(step) == "Segment 2 of 4 · 1:05 of audio · 0:30 left"
    assert (
        progress_text(SimpleNamespace(done=4, total=4, audio_seconds=5.0, eta_s=0.0))
        == "Segment 4 of 4 · 0:05 of audio"
    )
    summary = SimpleNamespace(rendered=3, failed=1, audio_seconds=12.0, elapsed_s=3.0, rtf=0.25)
    assert done_text(summary) == "Rendered 3 segment(s), 0:12 of audio in 0:03 (RTF 0.25); 1 failed."
