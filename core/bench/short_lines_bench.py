"""``python -m core bench-short-lines``: what the take screen flags on one- and two-word lines against ordinary
sentences, with and without the short-line cap (:mod:`core.narration.rendering.short_lines`), in one run.

``lines`` short lines of dialogue ("Yes.", "Oh!", "No?", "Indeed.", "Oh, really?", …) and as many ordinary sentences
are spoken with the same seeds (line ``i`` with ``seed + i``) and the bundle's voice (a synthetic one where the model
has none), each twice: *before*, with the options a project gives it (no settings of its own), and *after*, with the
options a render now gives it (a short line's cap). The two sides are interleaved line by line (which side goes first
flips every line), so that both see the same machine.

Each side is a book of its own: every take is measured as a render measures it (:func:`measure_take`) and counted in
its side's context as it comes (each voice's rate, the loudness), and at the end every take is judged against its
whole side (as a render's :func:`~core.narration.rendering.take_choice.settle_screens` does). Reported per side and
kind of line: the takes flagged and the count of each reason, how each sentence's generation stopped, speech tokens
and the cap they ran under (the engine's text-length cap, or the short line's), seconds of audio and the time it took;
and how many takes came out with the same tokens on both sides.

``never_stops``: a stand-in whose language model never says STOP before its cap (what the faithful bundles' random
weights do, and what a real model may do on very short input: contract §6) — the worst case, where every take runs to
its cap.
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import soundfile as sf

from core.engine import SAMPLE_RATE, Pipeline, RuntimeOptions, SynthesisOptions, SynthesisRequest
from core.narration.rendering.short_lines import LEAD_TOKENS, PACE, SHORT_WORDS, is_short_line, with_short_line_cap
from core.narration.screening import BookContext, Thresholds, judge, measure_take
from core.narration.screening.measures import TakeMeasures

SHORT_LINES = (
    "Yes.",
    "No.",
    "Oh!",
    "No?",
    "Indeed.",
    "Why?",
    "Hi!",
    "Really?",
    "Go!",
    "Stop!",
    "Oh, really?",
    "Thank you.",
    "Of course.",
    "Not now.",
    "Come here!",
    "Well?",
    "Never!",
    "Good night.",
    "I see.",
    "Ah.",
    "Certainly.",
    "What?",
    "Run!",
    "Hush.",
    "Wait!",
    "Quite so.",
    "Very well.",
    "Nonsense!",
    "Please.",
    "Goodbye.",
    "Help!",
    "Perhaps.",
    "I know.",
    "Don't!",
    "Listen.",
    "Look!",
    "Oh dear.",
    "Hello?",
    "Thanks.",
    "Enough!",
)
"""One- and two-word lines of dialogue, taken in turn."""
WORDS = (  # noqa: SIM905 - a sentence of words reads better than a list
    "the a river morning quiet old house garden window light road farmer basket seeds child mother evening bird "
    "song wind hill stone bridge water door table bread letter story night star cloud rain summer winter forest"
).split(" ")
VERBS = "walked carried opened found watched heard crossed painted lifted remembered followed".split(" ")  # noqa: SIM905
NEVER_STOPS = 64
"""Speech tokens per prompt position of the ``never_stops`` stand-in: past every cap the engine sets."""
SIDES = ("before", "after")
KINDS = ("short", "normal")


def normal_sentences(count: int, seed: int = 0) -> list[str]:
    """Ordinary sentences of 6 to 14 words."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = [rng.choice(WORDS) for _ in range(rng.randint(5, 13))]
        words.insert(1, rng.choice(VERBS))
        text = " ".join(words)
        out.append(text[0].upper() + text[1:] + ".")
    return out


def short_lines(count: int) -> list[str]:
    return [SHORT_LINES[i % len(SHORT_LINES)] for i in range(count)]


def never_stopping_standin(folder: Path, variant: str, size: str = "tiny") -> Path:
    """A stand-in of ``variant`` whose language model runs to the cap on every sentence."""
    from core.standin import make_standin, spec_for

    spec = replace(spec_for(variant, size), speech_tokens_per_text_token=NEVER_STOPS)
    return make_standin(folder, variant, size, seed=7, spec=spec)


def bench_short_lines(
    bundle: Path,
    lines: int = 100,
    voice: Path | None = None,
    runtime: RuntimeOptions | None = None,
    seed: int = 1000,
    progress=None,
) -> dict:
    """The report (a dict; see the module's docstring). ``progress(done, total)`` after each line."""
    if lines < 1:
        raise ValueError("lines must be at least 1")
    pipe = Pipeline.from_bundle(bundle, runtime or RuntimeOptions())
    with tempfile.TemporaryDirectory(prefix="bench-short-lines-") as scratch:
        if voice is None and not pipe.capabilities.has_default_voice:
            from core.standin import synthetic_voice

            voice = Path(scratch) / "voice.wav"
            sf.write(voice, synthetic_voice(6.0, seed=3, pitch_hz=170), SAMPLE_RATE)
        texts = {"short": short_lines(lines), "normal": normal_sentences(lines)}
        takes: dict[str, dict[str, list[dict]]] = {side: {kind: [] for kind in KINDS} for side in SIDES}
        contexts = {side: BookContext() for side in SIDES}
        for i in range(lines):
            for kind in ("normal", "short"):  # a book's short lines come among its sentences
                text = texts[kind][i]
                plain = SynthesisOptions(seed=seed + i)
                for side in SIDES if i % 2 == 0 else SIDES[::-1]:
                    options = plain if side == "before" else with_short_line_cap(text, plain, pipe)
                    take = _speak(pipe, text, voice, options)
                    contexts[side].add(None, take["measures"])
                    takes[side][kind].append(take)
            if progress is not None:
                progress(i + 1, lines)
    thresholds = Thresholds()
    report: dict = {
        "bundle": str(bundle),
        "variant": pipe.capabilities.variant,
        "lines": lines,
        "seeds": [seed, seed + lines - 1],
        "short_line": {
            "words": SHORT_WORDS,
            "pace": PACE.get(pipe.capabilities.variant),
            "lead_tokens": LEAD_TOKENS,
            "short": sum(is_short_line(t) for t in texts["short"]),
            "normal": sum(is_short_line(t) for t in texts["normal"]),
        },
        "sides": {},
        "same_tokens": {
            kind: sum(a["tokens"] == b["tokens"] for a, b in zip(takes["before"][kind], takes["after"][kind]))
            for kind in KINDS
        },
    }
    for side in SIDES:
        context = contexts[side]
        rate = context.rate(None, thresholds)
        loudness = context.book_loudness(thresholds)
        report["sides"][side] = {
            "rate_s_per_letter": None if rate is None else round(rate, 4),
            **{kind: _summary(takes[side][kind], thresholds, rate, loudness) for kind in KINDS},
        }
    return report


def _speak(pipe: Pipeline, text: str, voice: Path | None, options: SynthesisOptions) -> dict:
    cap = max(row.cap for row in pipe.request_rows(text, options).values())
    started = time.perf_counter()
    stream = pipe.stream(SynthesisRequest(text, voice, options))
    blocks = [chunk.samples for chunk in stream]
    elapsed = time.perf_counter() - started
    audio = np.concatenate(blocks) if blocks else np.zeros(0, np.float32)
    report = stream.report
    tokens = list(report.speech_tokens)
    return {
        "tokens": tokens,
        "cap": cap,
        "stops": [reason.partition(":")[0] for reason in report.stop_reasons],
        "seconds": audio.size / SAMPLE_RATE,
        "elapsed_s": elapsed,
        "measures": measure_take(audio, text, tokens, report.stop_reasons),
    }


def _summary(takes: list[dict], thresholds: Thresholds, rate: float | None, loudness: float | None) -> dict:
    flags: Counter = Counter()
    stops: Counter = Counter()
    flagged = 0
    for take in takes:
        verdict = judge(take["measures"], thresholds, rate, loudness)
        flagged += verdict.flagged
        flags.update(reason["code"] for reason in verdict.reasons)
        stops.update(take["stops"])
    tokens = [len(t["tokens"]) for t in takes]
    caps = [t["cap"] for t in takes]
    seconds = [t["seconds"] for t in takes]
    return {
        "takes": len(takes),
        "flagged": flagged,
        "flags": dict(sorted(flags.items())),
        "stop_reasons": dict(sorted(stops.items())),
        "tokens": _spread(tokens),
        "cap": _spread(caps),
        "at_cap": sum(1 for t in takes if "token_cap" in t["stops"]),
        "seconds": _spread(seconds, 2),
        "excess_s": _excess(takes, rate),
        "render_s": round(sum(t["elapsed_s"] for t in takes), 2),
    }


def _spread(values: list, digits: int = 1) -> dict:
    return {"median": round(float(statistics.median(values)), digits), "max": round(float(max(values)), digits)}


def _excess(takes: list[dict], rate: float | None) -> float | None:
    """Median seconds of speech beyond what the voice's rate gives the take's letters (what ``too_long`` judges)."""
    if rate is None:
        return None
    measures: list[TakeMeasures] = [t["measures"] for t in takes]
    return round(float(statistics.median(m.speech_seconds - rate * m.letters for m in measures)), 2)


def table(report: dict) -> str:
    """The report as lines of text."""
    lines = [
        f"bench-short-lines: {report['lines']} short lines and {report['lines']} sentences on {report['variant']} "
        f"({report['bundle']}), seeds {report['seeds'][0]}-{report['seeds'][1]}",
        f"short-line cap: lines of at most {report['short_line']['words']} words, "
        f"{report['short_line']['pace']} speech tokens a text token + {report['short_line']['lead_tokens']} "
        f"(short lines among them: {report['short_line']['short']}; among the sentences: "
        f"{report['short_line']['normal']})",
        f"{'':14} {'flagged':>7}  {'tokens med/max':>14}  {'cap med/max':>11}  {'at cap':>6}  {'s med/max':>11}  "
        f"{'excess s':>8}  {'render s':>8}  reasons · stops",
    ]
    for kind in KINDS:
        for side in SIDES:
            row = report["sides"][side][kind]
            reasons = ", ".join(f"{k} {v}" for k, v in row["flags"].items()) or "-"
            stops = ", ".join(f"{k} {v}" for k, v in row["stop_reasons"].items())
            excess = "-" if row["excess_s"] is None else f"{row['excess_s']:.2f}"
            lines.append(
                f"{kind + ' ' + side:14} {row['flagged']:>7}  "
                f"{row['tokens']['median']:>6.0f}/{row['tokens']['max']:<7.0f}  "
                f"{row['cap']['median']:>4.0f}/{row['cap']['max']:<6.0f}  {row['at_cap']:>6}  "
                f"{row['seconds']['median']:>5.2f}/{row['seconds']['max']:<5.2f}  {excess:>8}  "
                f"{row['render_s']:>8.2f}  "
                f"{reasons} · {stops}"
            )
    same = report["same_tokens"]
    lines.append(
        f"same tokens before and after: short {same['short']}/{report['lines']}, "
        f"sentences {same['normal']}/{report['lines']}; "
        f"voice rate {report['sides']['before']['rate_s_per_letter']} s a letter"
    )
    return "\n".join(lines)
