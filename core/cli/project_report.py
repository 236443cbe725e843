"""What ``project`` and ``narrate`` print: the JSON report (segments, chapters, render, export), the listing and
summary, a line per checked file and per performed take, and ``--dump-json``."""

from __future__ import annotations

import json
from pathlib import Path

from core.cli.progress_line import short
from core.cli.project_speech import speech_fields, speech_report
from core.cli.review import flagged_fields
from core.wording import describe_failure

EXIT_OK = 0


def json_report(project, summary, result) -> dict:
    timeline = result.timeline if result else {}
    segments = []
    for number, segment in enumerate(project.segments, 1):
        take = project.chosen_take(segment)
        place = timeline.get(number)
        segments.append(
            {
                "number": number,
                "id": segment.id,
                "text": segment.text,
                "kind": segment.kind,
                "chapter": segment.chapter + 1,
                "voice": project.voice_of(segment),
                "status": project.status(segment),
                "seed": take.seed if take else None,
                "takes": len(segment.takes),
                "chosen": segment.chosen + 1 if segment.chosen is not None else None,
                "performed": take is not None and take.is_performed,
                "pause_after": segment.pause_after,
                "pause_exact": segment.pause_exact,
                "speed": project.speed_of(segment),
                "start": round(place.start, 3) if place else None,
                "end": round(place.end, 3) if place else None,
                "error": describe_failure(segment, "cli") if segment.error else None,
                "skipped": project.is_skipped(segment),
                **speech_fields(project, segment),
                **flagged_fields(project, segment),
            }
        )
    out = {
        "project": str(project.folder),
        "title": project.title,
        "counts": project.counts(),
        "chapters": chapter_rows(project),
        "segments": segments,
        "model": project.model,
        "finishing": project.finishing,
        "bundle": project.bundle,
        **speech_report(project),
    }
    if summary is not None:
        out["render"] = {
            "rendered": summary.rendered,
            "failed": summary.failed,
            "cancelled": summary.cancelled,
            "audio_seconds": round(summary.audio_seconds, 3),
            "seconds": round(summary.elapsed_s, 3),
            "rtf": round(summary.rtf, 4),
            "flagged": summary.flagged,
            "extra_takes": summary.extra_takes,
        }
        if summary.cluster is not None:
            out["cluster"] = summary.cluster
    if result is not None:
        out["export"] = {
            "files": result.files,
            "seconds": round(result.seconds, 3),
            "loudness": result.loudness,
            "chapters": result.chapters,
            "checks": result.checks,
            "flagged": result.flagged,
        }
    return out


def chapter_rows(project) -> list[dict]:
    sizes = [0] * len(project.chapters)
    for segment in project.segments:
        sizes[segment.chapter] += 1
    return [
        {"number": i, "title": c.title, "skipped": c.skipped, "segments": sizes[i - 1], "voice": c.voice}
        for i, c in enumerate(project.chapters, 1)
    ]


def print_chapters(project) -> None:
    for chapter in chapter_rows(project):
        skipped = "  (skipped)" if chapter["skipped"] else ""
        print(f"chapter {chapter['number']:>3}  {chapter['segments']:>5} segment(s)  {chapter['title']}{skipped}")


def print_summary(project, summary, result) -> None:
    counts = project.counts()
    if summary is not None:
        print(
            f"rendered {summary.rendered} segment(s), {summary.audio_seconds:.1f} s of audio in "
            f"{summary.elapsed_s:.1f} s (RTF {summary.rtf:.2f})"
            + (f"; {summary.failed} failed" if summary.failed else "")
        )
    if not result:
        for number, segment in enumerate(project.segments, 1):
            status = project.status(segment)
            takes = f"{len(segment.takes)} take(s)" if segment.takes else "no takes"
            chosen = f", take {segment.chosen + 1}" if segment.chosen is not None else ""
            review = "  (needs review)" if flagged_fields(project, segment)["flagged"] else ""
            take = project.chosen_take(segment)
            performed = "  (performed)" if take is not None and take.is_performed else ""
            speaker = f"  [{segment.speaker}]" if segment.speaker else ""
            print(f"{number:>4}  {status:<8}  {takes}{chosen:<9}  {short(segment.text)}{speaker}{performed}{review}")
    skipped = f", {counts['skipped']} skipped" if counts["skipped"] else ""
    print(
        f"{counts['rendered']} rendered, {counts['pending']} pending, {counts['failed']} failed{skipped} "
        f"of {len(project.segments)} segments in {project.folder}"
    )
    if result:
        for file in result.files:
            extra = f" ({file['seconds']:.1f} s)" if "seconds" in file else ""
            print(f"wrote {file['path']}{extra}")
        for level in result.loudness:
            if "target_rms_db" in level:
                print(
                    f"level {level['after_rms_db']} dBFS RMS (target {level['target_rms_db']}), true peak "
                    f"{level['true_peak_db']} dBTP: {level['path']}"
                )
            else:
                print(
                    f"loudness {level['after_lufs']} LUFS (target {level['target_lufs']}), true peak "
                    f"{level['true_peak_db']} dBTP: {level['path']}"
                )
        for check in result.checks:
            print(check_line(check))


def check_line(check: dict) -> str:
    """One line per checked file: the figures, then PASS or FAIL with what fails."""

    def figure(value, unit: str) -> str:
        return "–" if value is None else f"{value:.1f}{unit}"

    rate = f"{check['sample_rate'] / 1000:g} kHz" if check.get("sample_rate") else "–"
    bitrate = f"{round(check['bitrate'] / 1000)}k" if check.get("bitrate") else "–"
    kind = "CBR" if check.get("cbr") else ("VBR" if check.get("cbr") is False else "")
    verdict = "PASS" if check["passed"] else "FAIL: " + "; ".join(check["failures"])
    return (
        f"check {Path(check['path']).name}: RMS {figure(check['rms_db'], ' dB')}, "
        f"peak {figure(check['peak_db'], ' dB')}, "
        f"noise floor {figure(check['noise_floor_db'], ' dB')}, head {figure(check['head_s'], ' s')}, tail "
        f"{figure(check['tail_s'], ' s')}, {rate} {bitrate} {kind}  {verdict}"
    )


def performed_line(performed: dict) -> str:
    voice = performed["voice"] or "the model's voice"
    review = "; the take screen flags it for review" if performed["flagged"] else ""
    return (
        f"segment {performed['segment']}: take {performed['take']} performed from {Path(performed['recording']).name} "
        f"({performed['seconds']:.1f} s) in {voice}; the recording is kept as {performed['source']}{review}"
    )


def dump_json(project, out: Path, as_json: bool) -> int:
    project.dump_json(out)
    if as_json:
        print(json.dumps({"project": str(project.folder), "dump": str(out), "segments": len(project.segments)}))
    else:
        print(f"{project.folder}: {len(project.segments)} segments written to {out}")
    return EXIT_OK
