"""``python -m app --screenshots DIR``: the real window, offscreen, on stand-in data, each main view saved as a PNG.

The docs' pictures are made by this command (``docs/images/``), so they can be made again whenever the window
changes. What it does is what a user does, through the window's own methods: pick a model (the first-start dialog
is shot first), clone a voice, speak a text, re-voice a recording, make a project of a short book in chapters,
render it, find its characters, review its unsure lines, play a take with its words highlighted, open the export
dialog and the Local API settings.

Stand-in data: the model is the offline test model (its "speech" is shaped noise, not words), the voice a recording
of espeak-ng where it is installed (a synthetic voice otherwise). The aligner cannot place words on noise, so the
take shown with its words highlighted gets word times spread over its length, as the aligner would store them.

Each image is checked not to be blank (enough distinct colours, not one flat colour); ``report.json`` lists them.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from .headless import offscreen_without_display, say, wait_until

SIZE = (1280, 800)
SPEAK_TEXT = (
    "The kettle had just begun to sing when the letter arrived. Nobody in the house had expected it, "
    "and for a moment nobody dared to open it."
)
BOOK = """[chapter: The Letter]

Emma came down early and found Harriet at the window, the letter still in her hand.

“Is it from him?” asked Emma.

“It is,” said Harriet. “He writes very well, I think.”

“Then read it to me, and we shall see.”

[chapter: The Walk]

The lane was wet after the rain, and Mr. Knightley walked beside them in silence.

“You are quiet this morning,” said Emma.

“I am thinking,” he replied, “which you may find strange.”

The rain began again, harder than before.

“Shall we turn back?”

[chapter: Home]

They reached Hartfield before the clouds came back, and the fire was already lit.
"""
VOICE_WORDS = (
    "Good evening. My name is Alex, and I read stories aloud. This recording lets the narrator borrow my voice."
)
MIN_COLOURS = 24
"""An image with fewer distinct colours than this is blank (a flat or almost flat rectangle)."""


class ScreenshotError(RuntimeError):
    """A view could not be reached or came out blank: the message says which."""


def take_screenshots(out: Path, timeout: float = 240.0) -> int:
    """Write every view's PNG and ``report.json`` into ``out``; 0 when each is there and not blank, 1 otherwise."""
    offscreen_without_display()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        with tempfile.TemporaryDirectory(prefix="chatterbox-screenshots-") as home:
            shots = _Shots(out, Path(home), timeout)
            shots.run()
    except Exception as exc:  # noqa: BLE001 - a failure is a message and exit code 1, as the self-test's
        say(f"screenshots failed: {type(exc).__name__}: {exc}", sys.stderr)
        if sys.stderr is not None:
            traceback.print_exc(file=sys.stderr)
        return 1
    report = {"images": shots.images, "seconds": round(time.monotonic() - shots.started, 1)}
    (out / "report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    blank = [name for name, image in shots.images.items() if image["colours"] < MIN_COLOURS]
    if blank:
        say(f"screenshots failed: blank image(s): {', '.join(blank)}", sys.stderr)
        return 1
    say(json.dumps(report), sys.stdout)
    return 0


class _Shots:
    """The window and the steps between its views (one instance per run)."""

    def __init__(self, out: Path, home: Path, timeout: float):
        self.out, self.home, self.timeout = out, home, timeout
        self.started = time.monotonic()
        self.images: dict[str, dict] = {}

    def run(self) -> None:
        from PySide6.QtCore import QSettings

        from .application import make_application
        from .audio.playback import Player
        from .audio.virtual_device import VirtualSoundDevice
        from .main_window import MainWindow
        from .paths import AppPaths
        from .settings import Settings

        self.app = make_application()
        settings = Settings(QSettings(str(self.home / "settings.ini"), QSettings.Format.IniFormat))
        self.paths = AppPaths.under(self.home / "appdata")
        window = MainWindow(settings, self.paths, player=Player(VirtualSoundDevice(speed=8.0)))
        self.window = window
        window.resize(*SIZE)
        window.show()
        self._settle()
        try:
            self._first_start()
            self._load_model()
            voice = self._voice()
            self._speak(voice)
            self._revoice(voice)
            self._project()
            self._cast()
            self._review()
            self._word_highlight()
            self._export_dialog()
            self._local_api()
        finally:
            if window.studio_panel.project is not None:
                window.studio_panel.save()  # nothing left to ask about on closing
            window.close()
            self.app.processEvents()

    # --- the views -------------------------------------------------------------------------------------------------
    def _first_start(self) -> None:
        from .widgets.model_dialog import ModelDialog

        dialog = ModelDialog(self.paths.models, self.window)
        dialog.show()
        self._settle()
        self._save("first-start", dialog)
        dialog.reject()

    def _load_model(self) -> None:
        bundle = self.window.build_standin("original")
        loaded: list = []
        self.window.bridge.model_loaded.connect(loaded.append)
        self.window.bridge.model_failed.connect(loaded.append)
        self.window.load_model(bundle)
        self._wait(lambda: bool(loaded), "the test model to load")
        if isinstance(loaded[0], str):
            raise ScreenshotError(f"the test model did not load: {loaded[0]}")

    def _voice(self) -> Path:
        """A reference recording in the library (espeak-ng's voice where it is installed), chosen for the Speak tab."""
        panel = self.window.voice_panel
        for name, variant, pitch in (("Bea", "en+f3", 210), ("Alex", "en", 120)):  # Alex stays chosen
            path = self.home / f"{name.lower()}.wav"
            _reference_recording(path, VOICE_WORDS.replace("Alex", name), variant, pitch)
            if not panel.select_file(path):
                raise ScreenshotError(f"the reference recording was refused: {self.window.message.text()}")
            panel.save_voice(name)  # Save to library…, as a user keeps a voice
        return path

    def _speak(self, voice: Path) -> None:
        panel = self.window.speak_panel
        self.window.modes.setCurrentWidget(panel)
        panel.text.set_text(SPEAK_TEXT)
        done: list = []
        panel.request_done.connect(done.append)
        panel.playback_finished.connect(lambda: done.append("played"))
        panel.speak_button.click()
        self._wait(lambda: "played" in done or False in done, "Speak to finish")
        if False in done:
            raise ScreenshotError(f"the Speak request failed: {self.window.message.text()}")
        self._settle(0.4)  # the plots' redraw timers
        self._save("speak")

    def _revoice(self, voice: Path) -> None:
        panel = self.window.revoice_panel
        self.window.modes.setCurrentWidget(panel)
        source = self.home / "to-revoice.wav"
        _reference_recording(source, "This sentence was recorded once, and is spoken again in another voice.")
        panel.open_source(source)
        self._wait(lambda: panel.source is not None, "the recording to re-voice to open")
        done: list = []
        panel.request_done.connect(done.append)
        panel.revoice()
        self._wait(lambda: bool(done), "re-voicing to finish")
        if not done[0]:
            raise ScreenshotError(f"re-voicing failed: {self.window.message.text()}")
        self._settle(0.4)
        self._save("revoice")

    def _project(self) -> None:
        window = self.window
        studio = window.studio_panel
        window.speak_panel.text.set_text(BOOK)
        project = window.project_files.new_from_text(BOOK, self.home / "The Letter.cbproj")
        if project is None:
            raise ScreenshotError(f"the project could not be made: {window.message.text()}")
        window.modes.setCurrentWidget(studio)
        studio.listen.setChecked(False)  # rendering as fast as it can, not as fast as it is heard
        self._render(lambda: studio.render_pending())
        self._render(lambda: studio.regenerate(3))  # a second take of one line
        studio.segments.select(3)
        self._settle(0.3)
        self._save("project")

    def _cast(self) -> None:
        studio = self.window.studio_panel
        found: list = []
        studio.cast_finder.finished.connect(lambda _f: found.append(True))
        studio.cast_finder.failed.connect(lambda m: found.append(m))
        if not studio.find_characters():
            raise ScreenshotError("finding the characters could not start")
        self._wait(lambda: bool(found), "the characters to be found")
        if found[0] is not True:
            raise ScreenshotError(f"finding the characters failed: {found[0]}")
        from .studio.cast_panel import VoiceChoice

        if not studio.choose_character_voice("Emma", VoiceChoice("library", "Bea", "Bea · library")):
            raise ScreenshotError(f"Emma's voice could not be set: {studio.status.text()}")
        self._settle(0.3)
        self.window.show_cast()
        self._settle(0.2)
        self._save("cast")
        self._render(lambda: studio.render_pending())  # Emma's lines, in her new voice

    def _review(self) -> None:
        studio = self.window.studio_panel
        self.window.tabs.setCurrentWidget(self.window.voice_panel)
        studio.toggle_review(True)
        self._settle(0.3)
        self._save("review")
        studio.toggle_review(False)

    def _word_highlight(self) -> None:
        studio = self.window.studio_panel
        project = self._open_project()
        number, segment = next((n, s) for n, s in enumerate(project.segments, 1) if "Knightley" in s.text)
        take = project.chosen_take(segment)
        if take is None:
            raise ScreenshotError(f"segment {number} has no take to play")
        if (take.alignment or {}).get("placed", 0.0) < 0.8:  # the aligner found few words in the test model's tones
            take.alignment = {"words": _spread(segment.text, take.seconds), "placed": 1.0, "aligner": "stand-in"}
        studio.play_segment(number)
        reading = studio.reading
        self._wait(
            lambda: reading.current is not None and reading.current >= 4,
            lambda: (
                f"a word to be highlighted ({reading.number}, {reading.current}, {len(reading.words)} words,"
                f" {studio.status.text()!r})"
            ),
            20.0,
        )
        studio.pause()
        self._settle(0.2)
        self._save("word-highlight")
        studio.stop()

    def _export_dialog(self) -> None:
        from .studio.export_choices import ExportChoices
        from .studio.export_dialog import ExportDialog

        studio = self.window.studio_panel
        folder = self.home / "Audiobooks"
        folder.mkdir(exist_ok=True)
        dialog = ExportDialog(self._open_project(), folder, ExportChoices(format=".m4b"), (), studio)
        dialog.show()
        self._settle(0.2)
        self._save("export", dialog)
        dialog.reject()

    def _local_api(self) -> None:
        window = self.window
        window.tabs.setCurrentWidget(window.settings_scroll)
        window.settings_scroll.ensureWidgetVisible(window.api_panel)
        self._settle(0.2)
        self._save("local-api", window.api_panel)

    # --- helpers ---------------------------------------------------------------------------------------------------
    def _open_project(self):
        project = self.window.studio_panel.project
        if project is None:
            raise ScreenshotError("no project is open")
        return project

    def _render(self, start: Callable[[], None]) -> None:
        bridge, done = self.window.bridge, []
        bridge.render_done.connect(lambda _rid, summary: done.append(summary))
        bridge.request_failed.connect(lambda _rid, message: done.append(message))
        start()
        studio = self.window.studio_panel
        self._wait(lambda: bool(done), lambda: f"the render to finish (the studio says: {studio.status.text()!r})")
        if isinstance(done[0], str):
            raise ScreenshotError(f"rendering failed: {done[0]}")
        self._settle(0.2)

    def _save(self, name: str, widget=None) -> None:
        image = (widget or self.window).grab().toImage()
        path = self.out / f"{name}.png"
        if not image.save(str(path)):
            raise ScreenshotError(f"{path} could not be written")
        self.images[name] = {
            "path": str(path),
            "size": f"{image.width()}x{image.height()}",
            "colours": _colours(image),
            "at_s": round(time.monotonic() - self.started, 1),
        }

    def _settle(self, seconds: float = 0.1) -> None:
        wait_until(self.app, lambda: False, seconds)

    def _wait(self, condition: Callable[[], bool], what: str | Callable[[], str], limit: float | None = None) -> None:
        left = self.timeout - (time.monotonic() - self.started)
        if not wait_until(self.app, condition, max(5.0, min(left, limit or left))):
            raise ScreenshotError(f"waited in vain for {what() if callable(what) else what}")


def _colours(image) -> int:
    """How many distinct colours the image has (up to 4096 sampled pixels)."""
    width, height = image.width(), image.height()
    step = max(1, int((width * height / 4096) ** 0.5))
    return len({image.pixel(x, y) for x in range(0, width, step) for y in range(0, height, step)})


def _spread(text: str, seconds: float) -> list[list]:
    """The words of ``text`` spread over ``seconds`` by their length (the stand-in's audio has no words to align)."""
    import re

    words = re.findall(r"[\w’'-]+", text)
    total = sum(len(w) + 2 for w in words) or 1
    placed, at = [], 0.1
    for word in words:
        length = (seconds - 0.2) * (len(word) + 2) / total
        placed.append([word, round(at, 3), round(at + length * 0.9, 3)])
        at += length
    return placed


def _reference_recording(path: Path, words: str = VOICE_WORDS, variant: str = "en", pitch: int = 140) -> None:
    """A spoken recording at 24 kHz: espeak-ng's (``variant``), else a synthetic voice at ``pitch`` Hz (the test
    model takes either)."""
    import soundfile as sf

    from core.engine import SAMPLE_RATE
    from core.standin import synthetic_voice

    espeak = shutil.which("espeak-ng")
    if espeak is not None:
        raw = path.with_suffix(".espeak.wav")
        made = subprocess.run([espeak, "-v", variant, "-w", str(raw), words], capture_output=True, timeout=60)
        if made.returncode == 0 and raw.is_file():
            import soxr

            audio, rate = sf.read(raw, dtype="float32")
            sf.write(path, soxr.resample(audio, rate, SAMPLE_RATE), SAMPLE_RATE)
            raw.unlink()
            return
    sf.write(path, synthetic_voice(6.0, seed=pitch, pitch_hz=pitch), SAMPLE_RATE)
