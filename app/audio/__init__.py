"""Playback: a ring buffer fed from the GUI thread, drained by the PortAudio callback."""
