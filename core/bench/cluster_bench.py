"""``python -m core bench-cluster``: one project rendered on this computer, by one Ray actor and by two.

The same seeded project of ``--sentences`` sentences (default 40, in two chapters) is rendered three times from
scratch, each into its own folder: locally (:func:`core.narration.render_pending`, as ``project --render`` does),
then on a local Ray instance with 1 actor and with 2 actors (:func:`core.narration.cluster_steps`). Reported: wall
time of each, speed-up against the local render, Ray's start-up (``ray.init`` of a local instance, then the actors
loading their model, which a cluster render pays once per render), each actor's throughput (audio seconds per
second it spent rendering), and whether the three renders gave the same tokens and the same samples (they must: the
decoder's noise comes from each take's seed, :mod:`core.engine.model.seeded_noise`). Every
render uses the same runtime (``--threads`` included), so actors on one machine share its cores: on a laptop two
actors compete for the same CPU, on a cluster each has its own.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile as sf

WORDS = (  # noqa: SIM905 - a sentence is easier to read than a list of its words
    "the river turned slowly past the mill and the old stone bridge where children waited for the boats to pass "
    "under the arches while their mothers talked about the harvest and the coming winter"
).split()


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bundle", type=Path, help="a model folder (default: the tiny Turbo stand-in)")
    p.add_argument("--sentences", type=int, default=40, help="sentences of the project (default 40)")
    p.add_argument("--precision", default="fp32", help="the language model's precision (q4 for the q4 bundles)")
    p.add_argument("--max-tokens", type=int, help="cap each sentence's speech tokens (random weights never stop)")
    p.add_argument("--threads", type=int, help="onnxruntime threads of every pipeline (default: all cores)")
    p.add_argument("--actors", default="1,2", help="actor counts to measure, comma-separated (default 1,2)")
    p.add_argument("--folder", type=Path, help="where the projects go (default: a temporary folder, removed)")
    p.add_argument("--json", type=Path, help="also write the report as JSON")


def book_text(sentences: int) -> str:
    """``sentences`` sentences of 6 to 17 words in two chapters (deterministic)."""
    lines = []
    for i in range(sentences):
        count = 6 + (i * 7) % 12
        words = [WORDS[(i * 5 + k) % len(WORDS)] for k in range(count)]
        lines.append(" ".join(words).capitalize() + ".")
    half = sentences // 2
    return f"[chapter: One]\n{' '.join(lines[:half])}\n\n[chapter: Two]\n{' '.join(lines[half:])}"


def run(args: argparse.Namespace) -> int:
    from core.engine import Pipeline, RuntimeOptions
    from core.narration import (
        ClusterStats,
        cluster_steps,
        connect,
        create_project,
        import_document,
        parse_text,
        render_pending,
        run_steps,
        source_identity,
    )
    from core.narration.cluster.connect import disconnect
    from core.standin import make_standin, synthetic_voice

    folder = args.folder or Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    folder.mkdir(parents=True, exist_ok=True)
    bundle = args.bundle or make_standin(folder / "standin-turbo", "turbo", size="tiny", seed=7)
    voice = folder / "voice.wav"
    sf.write(voice, synthetic_voice(8.0, seed=3, pitch_hz=170), 24000)
    text = book_text(args.sentences)
    runtime = RuntimeOptions(provider="cpu", precision=args.precision, threads=args.threads, stream=False)

    def project(name: str):
        made = create_project(folder / name, "Bench")
        import_document(made, parse_text(text, "Bench"), str(voice), None, folder, source_identity("b", text, None))
        made.seed = 17
        if args.max_tokens:
            made.settings["max_new_tokens"] = args.max_tokens
        made.save()
        return made

    started = time.perf_counter()
    pipe = Pipeline.from_bundle(bundle, runtime)
    load_s = time.perf_counter() - started
    print(f"model loaded in {load_s:.1f} s; {args.sentences} sentences; runtime threads={args.threads}")

    report: dict = {"bundle": str(bundle), "sentences": args.sentences, "threads": args.threads, "load_s": load_s}
    report["max_tokens"] = args.max_tokens
    local = project("local")
    started = time.perf_counter()
    summary = render_pending(local, pipe)
    wall = time.perf_counter() - started
    report["local"] = {"wall_s": wall, "audio_s": summary.audio_seconds, "segments": summary.rendered}
    print(f"local:    {wall:7.1f} s for {summary.audio_seconds:.0f} s of audio ({summary.audio_seconds / wall:.2f}x)")
    reference = _takes(local)

    started = time.perf_counter()
    connect(None)
    report["ray_init_s"] = time.perf_counter() - started
    print(f"ray.init (a local instance): {report['ray_init_s']:.1f} s")
    runs = []
    try:
        for actors in (int(a) for a in args.actors.split(",")):
            target = project(f"actors{actors}")
            stats = ClusterStats()
            started = time.perf_counter()
            summary = run_steps(cluster_steps(target, lambda: pipe, None, None, None, None, actors, stats))
            wall = time.perf_counter() - started
            found_takes = _takes(target)
            same_tokens = [t for t, _ in found_takes] == [t for t, _ in reference]
            same = found_takes == reference
            per_actor = {
                name: round(found["audio_s"] / found["busy_s"], 3) if found["busy_s"] else 0.0
                for name, found in stats.per_actor.items()
            }
            found = {
                "actors": stats.actors,
                "wall_s": wall,
                "startup_s": stats.startup_s,
                "speedup": report["local"]["wall_s"] / wall,
                "speedup_after_startup": report["local"]["wall_s"] / max(wall - stats.startup_s, 1e-9),
                "audio_s_per_s_by_actor": per_actor,
                "same_tokens_as_local": same_tokens,
                "same_audio_as_local": same,
            }
            runs.append(found)
            print(
                f"{actors} actor(s): {wall:6.1f} s (start-up {stats.startup_s:.1f} s), {found['speedup']:.2f}x the "
                f"local render ({found['speedup_after_startup']:.2f}x after start-up); audio s per s by actor: "
                f"{', '.join(f'{v:.2f}' for v in per_actor.values())}; same tokens: {same_tokens}, same samples: {same}"
            )
    finally:
        disconnect()
        if args.folder is None:
            shutil.rmtree(folder, ignore_errors=True)
    report["ray"] = runs
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    # Tokens and samples must match: the decoder's noise comes from each take's seed (it was unseeded before
    # issue 37, when only the tokens matched on a faithful or real decoder).
    return 0 if all(r["same_tokens_as_local"] and r["same_audio_as_local"] for r in runs) else 1


def _takes(project) -> list:
    found = []
    for segment in project.segments:
        take = segment.takes[segment.chosen]
        audio, _rate = sf.read(project.path(take.file), dtype="float32")
        found.append((tuple(take.tokens), _digest(audio)))
    return found


def _digest(audio: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(audio).tobytes()).hexdigest()
