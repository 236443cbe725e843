"""The benchmark's method: alternate the two sides of a comparison in one process, compare medians."""

from __future__ import annotations

import statistics


def alternate(reps: int, a, b) -> tuple[list[float], list[float]]:
    """Run ``a`` and ``b`` alternately ``reps`` times each (order flips every round); return both sample lists."""
    xs, ys = [], []
    for i in range(reps):
        if i % 2 == 0:
            xs.append(a())
            ys.append(b())
        else:
            ys.append(b())
            xs.append(a())
    return xs, ys


def summary(name: str, a_label: str, a: list[float], b_label: str, b: list[float], unit: str = "ms") -> dict:
    ma, mb = statistics.median(a), statistics.median(b)
    return {
        "name": name,
        "a": a_label,
        "a_median": ma,
        "b": b_label,
        "b_median": mb,
        "unit": unit,
        "ratio_b_over_a": mb / ma if ma else float("nan"),
        "samples": len(a),
    }
