"""``python -m core bench-screen``: what screening a take costs beside rendering it, in one run.

A project of a few sentences is rendered with the model given — the faithful Turbo bundle is where a real user's time
goes (docs/PERFORMANCE.md); each sentence is capped at ``max_new_tokens``, as the faithful bundles' random weights
never say STOP — and each segment's render time comes from the render's own progress events. Then, on every take the
render made, the same run times the screen alone (the measures of the take's tokens, audio and text, and the
verdict: what every render now does per take) and, where a recogniser is available, speech recognition of the take
(what ``--asr`` adds). The report gives both per take and as a share of the take's render time.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import soundfile as sf

from core.engine import Pipeline, RuntimeOptions
from core.narration import Project, create_project, render_pending
from core.narration.importing.book_import import parse_text
from core.narration.importing.build import import_document, source_identity
from core.narration.screening import Thresholds, judge, measure_take
from core.narration.screening.recognition import RecognitionUnavailable, recogniser_for
from core.narration.screening.screen import book_context
from core.narration.screening.word_errors import compare_words

TEXT = (
    "The sun rose over the hills. Birds began to sing in the old oak tree. A farmer walked to the field with a "
    "basket of seeds on his arm. He stopped at the gate and looked at the sky. Clouds were gathering in the west, "
    "grey and heavy with rain. By noon the first drops fell on the dusty road. The children ran inside, laughing. "
    "Their mother lit the lamp and put the kettle on the stove. Outside, the wind turned the pages of the day. "
    "Nobody minded the weather that evening. Stories were told until the fire burned low. Then the house was quiet."
)
REPEATS = 5
"""Times the screen is run on each take (the median is reported)."""


def first_sentences(count: int) -> str:
    """The first ``count`` sentences of :data:`TEXT`."""
    return ". ".join(TEXT.split(". ")[:count]).rstrip(".") + "."


def text_project(folder: Path, title: str, text: str, voice: Path | None, max_new_tokens: int) -> Project:
    """A saved, unrendered project of ``text`` read in ``voice``, seeded, each sentence capped at ``max_new_tokens``
    (random weights never say STOP: that is a sentence's length)."""
    project = create_project(folder, title)
    identity = source_identity(title, text, None)
    import_document(project, parse_text(text, title), str(voice) if voice else None, None, Path.cwd(), identity)
    project.seed = 7
    project.settings["max_new_tokens"] = max_new_tokens
    project.save()
    return project


def bench_screen(
    bundle: Path,
    voice: Path | None,
    sentences: int = 12,
    asr: str | None = "auto",
    runtime: RuntimeOptions | None = None,
    folder: Path | None = None,
    max_new_tokens: int = 100,
) -> dict:
    work = Path(folder or tempfile.mkdtemp(prefix="bench-screen-"))
    project = text_project(work / "Screen.cbproj", "Screen bench", first_sentences(sentences), voice, max_new_tokens)
    pipe = Pipeline.from_bundle(bundle, runtime or RuntimeOptions())
    ends: dict[int, float] = {}

    def progress(event) -> None:
        if event.kind == "segment":
            ends[event.number] = event.elapsed_s

    summary = render_pending(project, pipe, progress)
    recogniser, asr_note = None, None
    if asr:
        try:
            recogniser = recogniser_for(project.language, asr)
        except RecognitionUnavailable as exc:
            asr_note = str(exc)
    context, thresholds = book_context(project), Thresholds()
    rows = []
    previous = 0.0
    for number, segment in enumerate(project.segments, 1):
        take = project.chosen_take(segment)
        if take is None or number not in ends:
            continue
        render_s, previous = ends[number] - previous, ends[number]
        audio, _rate = sf.read(project.path(take.file), dtype="float32")
        spoken = project.spoken_text(segment)
        stops = (take.screen or {}).get("measures", {}).get("stop_reasons", [])
        times = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            measures = measure_take(audio, spoken, take.tokens, stops)
            judge(measures, thresholds, context.rate(None, thresholds), context.book_loudness(thresholds))
            times.append(time.perf_counter() - started)
        row = {
            "segment": number,
            "audio_s": round(audio.size / 24000, 2),
            "render_s": round(render_s, 3),
            "screen_ms": round(statistics.median(times) * 1000, 2),
        }
        if recogniser is not None:
            started = time.perf_counter()
            heard = recogniser.transcribe(audio, 24000, project.language)
            row["asr_ms"] = round((time.perf_counter() - started) * 1000, 1)
            row["wer"] = round(compare_words(spoken, heard).wer, 2)  # meaningless speech: a check that it ran
        rows.append(row)
        print(_line(row), flush=True)
    render_total = sum(r["render_s"] for r in rows)
    report = {
        "bundle": str(bundle),
        "variant": pipe.capabilities.variant,
        "takes": len(rows),
        "audio_s": round(sum(r["audio_s"] for r in rows), 2),
        "render_s": round(render_total, 2),
        "render_rtf": round(summary.rtf, 3),
        "screen_ms_per_take": round(statistics.median(r["screen_ms"] for r in rows), 2) if rows else None,
        "screen_share": round(sum(r["screen_ms"] for r in rows) / 1000 / render_total, 5) if render_total else None,
        "rows": rows,
    }
    if recogniser is not None and rows:
        report["asr"] = recogniser.name
        report["asr_ms_per_take"] = round(statistics.median(r["asr_ms"] for r in rows), 1)
        report["asr_share"] = round(sum(r["asr_ms"] for r in rows) / 1000 / render_total, 4)
    elif asr_note:
        report["asr"] = None
        report["asr_note"] = asr_note
    print(_summary(report), flush=True)
    project.close()
    return report


def _line(row: dict) -> str:
    asr = f"  asr {row['asr_ms']:7.1f} ms" if "asr_ms" in row else ""
    return (
        f"segment {row['segment']:>3}  {row['audio_s']:5.2f} s of audio  render {row['render_s']:7.3f} s  "
        f"screen {row['screen_ms']:6.2f} ms{asr}"
    )


def _summary(report: dict) -> str:
    lines = [
        f"{report['takes']} takes, {report['audio_s']} s of audio rendered in {report['render_s']} s "
        f"(RTF {report['render_rtf']}) on {report['variant']}",
        f"screen: {report['screen_ms_per_take']} ms a take (median) = {report['screen_share']:.3%} of the render time",
    ]
    if report.get("asr_share") is not None:
        lines.append(
            f"speech recognition ({report['asr']}): {report['asr_ms_per_take']} ms a take (median) = "
            f"{report['asr_share']:.1%} of the render time"
        )
    elif report.get("asr_note"):
        lines.append(f"speech recognition not measured: {report['asr_note']}")
    return "\n".join(lines)
