"""Sound-device failures in words: PortAudio's own messages ("Error querying device -1", "[PaErrorCode -9985]")
turned into a coded :class:`ChatterboxError` whose sentence (``core/wording``, ``sound.*``) says what is wrong and what
still works."""

from __future__ import annotations

import re

from core.engine import ChatterboxError

NO_DEVICE = re.compile(
    r"querying device -1|no default (output|input) device|invalid device|-9996|-9998|invalid number of channels",
    re.IGNORECASE,
)
BUSY = re.compile(r"device unavailable|-9985|device or resource busy|-9986", re.IGNORECASE)
RATE = re.compile(r"invalid sample rate|-9997", re.IGNORECASE)


def portaudio_missing(exc: BaseException) -> ChatterboxError:
    """The PortAudio library itself could not be loaded (``import sounddevice`` raised)."""
    return ChatterboxError("sound.portaudio_missing", reason=str(exc))


def device_error(exc: BaseException, direction: str = "output") -> ChatterboxError:
    """What opening a stream raised, as a code: no device, a busy device, a sample rate it refuses, or other."""
    text = str(exc)
    output = direction == "output"
    if NO_DEVICE.search(text):
        return (
            ChatterboxError("sound.no_output", reason=text)
            if output
            else ChatterboxError("sound.no_input", reason=text)
        )
    if BUSY.search(text):
        if output:
            return ChatterboxError("sound.output_busy", reason=text)
        return ChatterboxError("sound.input_busy", reason=text)
    if RATE.search(text):
        if output:
            return ChatterboxError("sound.output_rate", reason=text)
        return ChatterboxError("sound.input_rate", reason=text)
    if output:
        return ChatterboxError("sound.output_failed", reason=text)
    return ChatterboxError("sound.input_failed", reason=text)
