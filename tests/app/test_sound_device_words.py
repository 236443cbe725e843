"""PortAudio's messages become sentences a person can act on (``sound.*`` in core/wording)."""

from __future__ import annotations

import pytest

from app.audio.device_errors import device_error, portaudio_missing
from app.audio.playback import Player
from core.wording import describe_error


@pytest.mark.parametrize(
    ("raw", "direction", "code"),
    [
        ("Error querying device -1", "output", "sound.no_output"),
        ("Error opening OutputStream: Invalid number of channels [PaErrorCode -9998]", "output", "sound.no_output"),
        ("Error opening OutputStream: Device unavailable [PaErrorCode -9985]", "output", "sound.output_busy"),
        ("Error opening OutputStream: Invalid sample rate [PaErrorCode -9997]", "output", "sound.output_rate"),
        ("Error starting stream: Unanticipated host error [PaErrorCode -9999]", "output", "sound.output_failed"),
        ("Error querying device -1", "input", "sound.no_input"),
        ("Device unavailable [PaErrorCode -9985]", "input", "sound.input_busy"),
    ],
)
def test_portaudio_errors_get_a_code_and_plain_words(raw, direction, code):
    error = device_error(RuntimeError(raw), direction)
    assert error.code == code
    words = describe_error(error)
    assert "operation failed" not in words and "querying device" not in words


def test_a_missing_portaudio_names_the_package():
    words = describe_error(portaudio_missing(OSError("PortAudio library not found")))
    assert "libportaudio2" in words and "PortAudio" in words


def test_the_player_says_no_output_device_in_words():
    class NoDevice:
        def OutputStream(self, **_kw):
            raise RuntimeError("Error querying device -1")

    import numpy as np

    player = Player(NoDevice())
    assert not player.feed(np.zeros(100, np.float32))
    assert player.error is not None and player.error.startswith("No output device is available —")
