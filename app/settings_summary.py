"""A short description of the engine settings a request ran with ("fp32 · KV chain on · prefix cache on · …"), so
requests made with different settings can be told apart in the plots (and in the history, from its saved settings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.engine import RuntimeOptions

from .settings import Key

ALWAYS_SHOWN = 5
"""The first parts (precision and the four switches) are always shown; the rest only where not the default."""
_RUNTIME = RuntimeOptions()


def _on(flag) -> str:
    if isinstance(flag, str):  # a hand-edited history file
        flag = flag.strip().lower() not in ("", "0", "false", "no", "off")
    return "on" if flag else "off"


def describe_settings(values: Mapping) -> tuple[str, ...]:
    """``values``: setting key (``Key.value``) → value, as the history keeps them. Every part is always there, in
    the same order, so two descriptions compare part by part."""

    def get(key: Key, default):
        value = values.get(key.value)
        return default if value is None else value

    precision = get(Key.PRECISION, _RUNTIME.precision)
    if str(precision).startswith("q4"):
        precision = f"{precision} {get(Key.Q4_COMPUTE, _RUNTIME.q4_compute)}"
    threads = int(get(Key.THREADS, 0) or 0)
    return (
        str(precision),
        f"KV chain {_on(get(Key.KV_CHAINING, _RUNTIME.kv_chaining))}",
        f"prefix cache {_on(get(Key.PREFIX_CACHE, _RUNTIME.prefix_cache))}",
        f"cond. cache {_on(get(Key.CONDITIONING_CACHE, _RUNTIME.conditioning_cache))}",
        f"streaming {_on(get(Key.STREAM, _RUNTIME.stream))}",
        str(get(Key.PROVIDER, _RUNTIME.provider)).upper(),
        f"{threads} threads" if threads else "auto threads",
        f"chunks {get(Key.FIRST_CHUNK_TOKENS, _RUNTIME.first_chunk_tokens)}/"
        f"{get(Key.CHUNK_TOKENS, _RUNTIME.chunk_tokens)} tokens",
        f"decoder prompt {int(float(get(Key.DECODER_PROMPT, _RUNTIME.decoder_prompt_seconds)))} s",
        f"{get(Key.STREAM_PLAN, _RUNTIME.stream_plan)} stream plan",
        f"decoder thread {_on(get(Key.DECODER_THREAD, _RUNTIME.decoder_thread))}",
        f"playback {get(Key.PLAYBACK_POLICY, _RUNTIME.playback_policy)}",
        f"take turns {get(Key.TAKE_TURNS, _RUNTIME.take_turns)}",
    )


DEFAULT_PARTS = describe_settings({})


def summary_text(parts: Sequence[str], per_line: int = 0) -> str:
    """The description to show: the main parts, and the others where they differ from the defaults; ``per_line``
    parts on a line (0: one line)."""
    shown = [p for i, p in enumerate(parts) if i < ALWAYS_SHOWN or i >= len(DEFAULT_PARTS) or p != DEFAULT_PARTS[i]]
    step = per_line or max(1, len(shown))
    return "\n".join(" · ".join(shown[i : i + step]) for i in range(0, len(shown), step))


def distinguishing_labels(groups: Sequence[Sequence[str]]) -> list[str]:
    """One label per group of settings: only the parts in which the groups differ ("KV chain on" / "KV chain off");
    a single group gets its whole :func:`summary_text`."""
    if len(groups) < 2:
        return [summary_text(g) for g in groups]
    width = max(len(g) for g in groups)
    padded = [tuple(g) + ("",) * (width - len(g)) for g in groups]
    differing = [i for i in range(width) if len({g[i] for g in padded}) > 1]
    return [" · ".join(g[i] for i in differing if g[i]) or summary_text(g) for g in padded]
