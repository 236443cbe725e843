"""``project DIR --perform N FILE``: a person's recording of segment N re-voiced into the segment's voice, with the
recording's words and timing, and stored as its chosen take (marked performed, the recording kept beside it)."""

from __future__ import annotations

import sys
from pathlib import Path

from core.cli.errors import CliError
from core.cli.progress_line import ProgressLine
from core.cli.project_edit import segment_number
from core.cli.project_render import bundle_of, remember_bundle
from core.wording import describe_notice


def perform(project, args, runtime) -> dict:
    """``--perform N FILE``: the recording checked before the model loads, re-voiced with progress on stderr,
    stored as segment N's chosen take; what was made (the ``perform`` of the JSON report)."""
    from core.engine import Pipeline
    from core.narration import is_flagged, load_recording, perform_segment

    number = segment_number(args.perform[0])
    segment = project.segment(number)
    file = Path(args.perform[1])
    recording = load_recording(file, number)  # a bad file is said before the model loads
    for warning in recording.warnings:
        print(f"warning: {describe_notice(warning, 'cli')}", file=sys.stderr)
    bundle = bundle_of(project, args)
    remember_bundle(project, args)
    if args.seed is not None and not 0 <= args.seed < 2**31:
        raise CliError(f"--seed must be between 0 and {2**31 - 1}.")
    pipe = Pipeline.from_bundle(bundle, runtime, background=True)
    if pipe.provider_notice:
        print(f"notice: {describe_notice(pipe.provider_notice, 'cli')}", file=sys.stderr)
    line = ProgressLine(sys.stderr)

    def progress(done: float, total: float) -> None:
        line.fraction(done, total, f"re-voicing segment {number}: {done:.1f} of {total:.1f} s")

    try:
        take = perform_segment(project, pipe, segment, file, args.seed, progress=progress, loaded=recording)
    finally:
        line.close()
    return {
        "segment": number,
        "take": segment.takes.index(take) + 1,
        "file": take.file,
        "source": (take.performed or {}).get("source"),
        "recording": str(file),
        "seconds": take.seconds,
        "seed": take.seed,
        "voice": project.voice_of(segment),
        "flagged": is_flagged(take),
        "warnings": [describe_notice(w, "cli") for w in recording.warnings],
    }
