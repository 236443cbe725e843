"""Perform this line: a segment's take made from a person's own recording of it, re-voiced into the segment's voice
(the engine's voice conversion; what ElevenLabs Studio calls speech-to-speech).

A narrator fixes a line the model reads wrongly by saying it: the recording keeps its words, timing and intonation
and comes out in the voice that reads the segment (its own, the dialogue voice, its chapter's or the narrator's:
:meth:`~core.narration.projects.project.Project.voice_of`), exactly as long as the recording. It becomes a take like
any other: a FLAC file in ``takes/`` and a row of the store (the file first, the row after), the segment's chosen
take, screened (:mod:`core.narration.screening`: it has no speech tokens, so nothing of theirs is judged), exported.
It is marked :attr:`~core.narration.projects.project.Take.performed`, and it goes outdated as every take does: an
edit of the text, the voice or an audio setting makes the segment pending again (its render key).

The recording itself is kept beside the take (``takes/00012-3.source.wav``: the file as it was given, or, for a
recording made in memory, its samples as FLAC), so it can be re-voiced into another voice later: performing the
line again from that file shares it (and its name) rather than copying it. A render with re-takes never takes a
performed take over (:func:`~core.narration.rendering.take_choice.render_todo`).

Three parts, so that a front end can run the slow one elsewhere (the window runs it on the inference worker):

1. :func:`plan_performance`: the recording loaded and checked, the voice found; worded errors, nothing changed;
2. the conversion: ``pipeline.convert_stream(plan.request())`` (or the worker's ``convert``);
3. :func:`store_performance`: the take written, screened, chosen and stored.

:func:`perform_segment` runs the three in a row (the command line).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.engine import (
    SAMPLE_RATE,
    AudioWriteError,
    Capabilities,
    ConversionRequest,
    Pipeline,
    RequestReport,
    SourceRecording,
    VoiceReference,
    copy_file_atomic,
    load_source,
    write_audio,
)
from core.narration.projects.project import (
    SOURCE_MARK,
    TAKES_DIR,
    Project,
    ProjectError,
    Segment,
    Take,
    performance_file,
)
from core.narration.projects.voices import voice_reference
from core.narration.rendering.render import add_take, capabilities_identity
from core.narration.screening import Screener

PerformProgress = Callable[[float, float], None]
"""``(seconds converted, seconds in all)`` as the conversion goes."""
RECORDED = "recording"
"""The name a performance made in memory (the microphone) is kept under."""


@dataclass(frozen=True)
class Performance:
    """A recording checked and ready to be re-voiced into one segment's voice (:func:`plan_performance`)."""

    segment: Segment
    number: int
    """The segment's 1-based number when it was planned (its words, should it be gone by the time it is stored)."""
    recording: SourceRecording
    file: Path | None
    """The recording's file (kept as it is), or ``None``: it came as samples (kept as FLAC)."""
    voice: VoiceReference | None
    """The segment's voice, loaded (``None``: the model's own)."""
    voice_name: str | None
    key: str
    """The segment's render key when it was planned: the take is for this text, voice and these settings (an edit
    while the conversion runs leaves it outdated, as a render's take would be)."""
    seed: int | None = None

    @property
    def seconds(self) -> float:
        return self.recording.seconds

    @property
    def name(self) -> str:
        return self.file.name if self.file is not None else RECORDED

    def request(self, request_id: int = 0) -> ConversionRequest:
        """What the engine converts (``Pipeline.convert_stream``, ``InferenceWorker.convert``)."""
        return ConversionRequest(self.recording, self.voice, self.seed, request_id)


def plan_performance(
    project: Project,
    segment: Segment,
    source: Path | str | SourceRecording,
    capabilities: Capabilities,
    seed: int | None = None,
    loaded: SourceRecording | None = None,
) -> Performance:
    """``source`` (a recording's file, or one loaded) checked for re-voicing into ``segment``'s voice with the model
    ``capabilities`` describe. Raises worded errors (a missing or unreadable file, a silent, too short or too long
    recording: :class:`~core.engine.VoiceReferenceError`; no voice for a model without one of its own:
    ``render.no_voice``) and changes nothing, but the model's name in a project never rendered. ``loaded``: the
    file's recording, already checked by :func:`load_recording` (the command line checks it before the model
    loads)."""
    number = project.number(segment)
    name = project.voice_of(segment)
    if name is None and not capabilities.has_default_voice:
        raise ProjectError("render.no_voice", variant=capabilities.variant, segment=number)
    if isinstance(source, SourceRecording):
        recording, file = source, None
    else:
        file = Path(source).expanduser()
        recording = loaded if loaded is not None else load_recording(file, number)
    voice = voice_reference(project, name, {})
    if not project.model:  # never rendered: it takes the model's name, as a render would, so its first render
        project.model = capabilities_identity(capabilities)  # does not find this take outdated
    return Performance(segment, number, recording, file, voice, name, project.render_key(segment), seed)


def load_recording(file: Path | str, number: int) -> SourceRecording:
    """The recording of segment ``number`` in ``file``, loaded and checked (``perform.no_recording`` when there is no
    such file; the engine's words for one it cannot use)."""
    file = Path(file).expanduser()
    if not file.exists():
        raise ProjectError("perform.no_recording", path=str(file), segment=number)
    return load_source(file)


def store_performance(project: Project, plan: Performance, audio: np.ndarray, report: RequestReport) -> Take:
    """The converted ``audio`` stored as ``plan``'s segment's chosen take, marked performed, with the recording kept
    beside it: the files written first, then the segment's row in one transaction; a failure takes everything back
    (the files removed, the take list as it was) and raises ``project.save_failed``."""
    segment = plan.segment
    try:
        project.number(segment)
    except ValueError:  # deleted or merged away while it was converted
        raise ProjectError("project.no_segment", number=plan.number, count=len(project.segments)) from None
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    screen = Screener(project).screen(segment, audio, [], [], performed=True)
    take, undo = add_take(project, segment, audio, int(report.seed or 0), [], dict(report.timings), screen, plan.key)
    kept = _kept_in_project(project, plan.file)
    rel = kept or performance_file(take.file, _suffix(plan.file))
    written: Path | None = None
    try:
        if kept is None:
            written = project.path(rel)
            if plan.file is not None:
                copy_file_atomic(plan.file, written)
            else:
                write_audio(written, plan.recording.samples, SAMPLE_RATE)
    except (OSError, AudioWriteError) as exc:
        undo()
        reason = str(getattr(exc, "strerror", None) or exc)
        raise ProjectError("project.save_failed", folder=str(project.folder), reason=reason) from exc
    take.performed = {"source": rel, "name": _kept_name(segment, rel) if kept else plan.name}
    try:
        project.save([segment])
    except ProjectError:
        undo()
        if written is not None:
            written.unlink(missing_ok=True)
        raise
    return take


def perform_segment(
    project: Project,
    pipeline: Pipeline,
    segment: Segment,
    source: Path | str | SourceRecording,
    seed: int | None = None,
    cancelled: Callable[[], bool] | None = None,
    progress: PerformProgress | None = None,
    loaded: SourceRecording | None = None,
) -> Take:
    """Re-voice ``source`` into ``segment``'s voice and store it as the segment's chosen take, marked performed (the
    three parts in a row). Bad recordings are refused before the model runs; a cancel
    (:class:`~core.engine.SynthesisCancelled`) stores nothing. ``loaded``: as for :func:`plan_performance`."""
    plan = plan_performance(project, segment, source, pipeline.capabilities, seed, loaded)
    stream = pipeline.convert_stream(plan.request(), cancelled)
    blocks, done = [], 0
    for chunk in stream:
        blocks.append(chunk.samples)
        done += chunk.samples.size
        if progress is not None:
            progress(done / SAMPLE_RATE, plan.seconds)
    audio = np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
    return store_performance(project, plan, audio, stream.report)


def performance_source(project: Project, take: Take) -> Path | None:
    """The kept recording a performed take was made from (``None``: not performed, or the file is gone)."""
    if take.performed is None:
        return None
    path = project.path(str(take.performed.get("source")))
    return path if path.is_file() else None


def _kept_in_project(project: Project, file: Path | None) -> str | None:
    """``file`` is a recording this project already keeps (performing a line again from it): its name there."""
    if file is None or SOURCE_MARK not in file.name:
        return None
    try:
        inside = file.resolve().parent == (project.folder / TAKES_DIR).resolve()
    except OSError:
        return None
    return f"{TAKES_DIR}/{file.name}" if inside else None


def _kept_name(segment: Segment, rel: str) -> str:
    """The name a kept recording came with (performing again from it keeps the name the user knows)."""
    for take in segment.takes:
        if take.performed is not None and take.performed.get("source") == rel and take.performed.get("name"):
            return str(take.performed["name"])
    return rel.rsplit("/", 1)[-1]


def _suffix(file: Path | None) -> str:
    """The kept copy's suffix: the recording's own (a plain one), FLAC for samples."""
    suffix = file.suffix.lower() if file is not None else ".flac"
    return suffix if re.fullmatch(r"\.[a-z0-9]{1,8}", suffix) else ".audio"
