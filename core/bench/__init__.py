"""Tools that measure: the A/B benchmark of every optimisation and the soak test."""

from core.bench.api_bench import main as bench_api_main
from core.bench.export_bench import bench_export
from core.bench.runner import bench_main
from core.bench.soak import DEFAULT_TEXT, curve_rows, run_soak

__all__ = ["DEFAULT_TEXT", "bench_api_main", "bench_export", "bench_main", "curve_rows", "run_soak"]
