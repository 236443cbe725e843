"""Tools that measure: the A/B benchmark of every optimisation and the soak test."""

from core.bench.api_bench import add_arguments as bench_api_arguments
from core.bench.api_bench import run as bench_api
from core.bench.cluster_bench import add_arguments as bench_cluster_arguments
from core.bench.cluster_bench import run as bench_cluster
from core.bench.export_bench import bench_export
from core.bench.runner import bench_main
from core.bench.soak import DEFAULT_TEXT, curve_rows, run_soak

__all__ = [
    "DEFAULT_TEXT",
    "bench_api",
    "bench_api_arguments",
    "bench_cluster",
    "bench_cluster_arguments",
    "bench_export",
    "bench_main",
    "curve_rows",
    "run_soak",
]
