"""Audio in and out: reference recordings, the speech decoder, finishing (pace, loudness) and file formats."""
