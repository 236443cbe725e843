"""A real app process for the crash test: prepares settings, a library voice and a history entry, then starts a long
narration (mode ``speak``) or an export (mode ``export``) and prints a marker; the test kills it with SIGKILL there."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEventLoop, QSettings, QTimer

from app.application import make_application
from app.audio.playback import Player
from app.audio.virtual_device import VirtualSoundDevice
from app.main_window import MainWindow
from app.paths import AppPaths
from app.settings import Key, Settings


def wait_for(signal, timeout_ms: int = 60000) -> None:
    loop = QEventLoop()
    signal.connect(loop.quit)
    QTimer.singleShot(timeout_ms, loop.quit)
    loop.exec()


def main(root: Path, bundle: Path, voice: Path, mode: str) -> None:
    app = make_application()
    settings = Settings(QSettings(str(root / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings, AppPaths.under(root / "home"), player=Player(VirtualSoundDevice(speed=40)))
    window.show()
    window.load_model(bundle)
    wait_for(window.bridge.model_loaded)
    window.voice_panel.select_file(voice)
    window.voice_panel.save_voice("Narrator")
    window.speak_panel.text.set_text("A short sentence for the history.")
    window.speak_panel.speak()
    wait_for(window.speak_panel.playback_finished)
    settings.set(Key.RANDOM_SEED, False)  # changed just before the crash
    settings.set(Key.SEED, 4242)
    if mode == "speak":
        window.bridge.chunk_ready.connect(lambda _chunk: print("SPEAKING", flush=True))
        window.speak_panel.text.set_text(" ".join(f"Sentence {i} of a long narration." for i in range(200)))
        window.speak_panel.speak()
    else:
        import soundfile

        real_write = soundfile.SoundFile.write

        def slow_write(self, data):
            real_write(self, data)
            print("EXPORTING", flush=True)  # the temporary file is complete but not yet renamed
            time.sleep(600)

        soundfile.SoundFile.write = slow_write
        window.exporter.export(window.speak_panel.last_audio, path=root / "export" / "narration.wav")
    app.exec()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
