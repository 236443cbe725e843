"""Rendering a project on the command line (``narrate``, ``project DIR --render`` and ``--regenerate N``): the
model's options, the render (here or on a Ray cluster), and its finish: the export, the report, and the refusal when
segments failed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from core.cli.cluster import render_on_cluster, wants_cluster
from core.cli.errors import CliError
from core.cli.project_export import chosen_numbers, export
from core.cli.project_report import json_report, performed_line, print_summary
from core.cli.review import take_policy
from core.cli.runtime import runtime_options
from core.wording import describe_failure, describe_notice

EXIT_OK = 0
EXIT_CHECK_FAILED = 3
"""``--check``: a file was written but does not meet the store's rules."""


def render_runtime(args):
    """The model's options for ``narrate`` and ``project``: nobody listens, so one decoder call per segment (1.29x
    faster than streaming), and the language model's batch."""
    return runtime_options(
        args,
        threads=args.threads,
        cache_dir=args.cache_dir,
        stream=False,
        lm_batch=args.lm_batch,
        joined_decoding=not args.no_joined_decoding,
    )


def render(project, args, runtime, bar, numbers, seed=None, regenerate=False):
    from core.engine import Pipeline
    from core.narration import regenerate as regenerate_one
    from core.narration import render_pending, render_todo

    if not regenerate:
        numbers = chosen_numbers(project, args)
    policy = take_policy(args, project)  # bad counts, a recogniser not installed: said before the model loads
    todo = 1 if regenerate else len(render_todo(project, numbers, policy))
    if not todo:
        return None
    pipe = Pipeline.from_bundle(bundle_of(project, args), runtime, background=True)
    if pipe.provider_notice:
        print(f"notice: {describe_notice(pipe.provider_notice, 'cli')}", file=sys.stderr)
    try:
        if regenerate:
            return regenerate_one(project, pipe, numbers[0], seed, bar.update, policy=policy)
        if wants_cluster(args):
            return render_on_cluster(project, args, pipe, bar, numbers, policy)
        return render_pending(project, pipe, bar.update, numbers=numbers, policy=policy)
    except KeyboardInterrupt:
        bar.close()
        counts = project.counts()
        print(
            f"{counts['rendered']} of {len(project.segments)} segments are rendered and saved; run the same "
            "command again to continue.",
            file=sys.stderr,
        )
        raise
    finally:
        bar.close()


def finish(
    project, args, summary, failures_shown: frozenset[int] | set[int] = frozenset(), performed: dict | None = None
) -> int:
    """Export, report, and refuse (exit 2) when segments failed: the reason of each failure is said once, by the
    progress line that showed it or else here. ``performed``: what ``--perform`` made (said first, and in the JSON
    as ``perform``)."""
    result = None
    chosen = chosen_numbers(project, args)
    failed = [
        s
        for n, s in enumerate(project.segments, 1)
        if project.status(s) == "failed" and (chosen is None or n in chosen)
    ]
    wants_export = args.out or args.subtitles or args.per_chapter
    if wants_export and not failed:
        result = export(project, args)
    if args.json:
        report = json_report(project, summary, result)
        if performed is not None:
            report["perform"] = performed
        print(json.dumps(report))
    else:
        if performed is not None:
            print(performed_line(performed))
        print_summary(project, summary, result)
    if failed:
        exported = " Nothing was exported." if wants_export else ""
        raise CliError(failed_text(project, failed, failures_shown) + exported)
    if result is not None and result.checks and not all(c["passed"] for c in result.checks):
        return EXIT_CHECK_FAILED
    return EXIT_OK


def failed_text(project, failed: list, failures_shown) -> str:
    unseen = [s for s in failed if project.number(s) not in failures_shown]
    if not unseen:
        numbers = ", ".join(str(project.number(s)) for s in failed[:10]) + ("…" if len(failed) > 10 else "")
        return f"{len(failed)} segment(s) failed ({numbers}); the reason of each is above."
    first = unseen[0]
    which = "the first, segment" if first is failed[0] else "segment"
    return f"{len(failed)} segment(s) failed; {which} {project.number(first)}: {describe_failure(first, 'cli')}"


def bundle_of(project, args) -> Path:
    """The model folder to render with: ``--bundle``, else the one the project remembers."""
    from core.narration import ProjectError

    if args.bundle is not None:
        return Path(args.bundle)
    if project.bundle is None:
        raise CliError("Rendering needs the model: add --bundle DIR.")
    if not Path(project.bundle).is_dir():
        raise ProjectError("project.bundle_missing", folder=project.bundle)
    return Path(project.bundle)


def remember_bundle(project, args) -> None:
    if args.bundle is not None:
        project.bundle = str(Path(args.bundle).resolve())
