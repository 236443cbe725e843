"""The benchmark command runs end to end and reports every comparison (no timing assertions: see docs)."""

from __future__ import annotations

import json

from core.bench import alternate, summary
from core.cli import main


def test_alternate_interleaves_and_flips_the_order():
    calls = []
    a, b = alternate(4, lambda: calls.append("a") or 1.0, lambda: calls.append("b") or 2.0)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert (a, b) == ([1.0] * 4, [2.0] * 4)
    assert summary("x", "A", a, "B", b)["ratio_b_over_a"] == 2.0


def test_bench_reports_every_comparison(bundles, tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = main(["bench", "--bundle", str(bundles["original"]), "--quick", "--provider", "cpu", "--json", str(out)])
    text = capsys.readouterr()[0]
    assert code == 0
    report = json.loads(out.read_text())
    names = " | ".join(c["name"] for c in report["comparisons"])
    for expected in (
        "short context",
        "long context",
        "CFG",
        "Prefill",
        "conditioning cache",
        "first audio",
        "idle threads",
        "intra-op threads",
    ):
        assert expected in names
    assert all(c["a_median"] > 0 and c["b_median"] > 0 for c in report["comparisons"])
    for key in ("python_overhead_share", "step_over_floor", "memory_bandwidth_gbs", "ttfa_share_of_total"):
        assert report["figures"][key] > 0
    assert report["machine"]["cores"] >= 1 and "ratio" in text
