"""Where the benchmarks' builds are in the data home (the exports' default inputs)."""

from __future__ import annotations

from pathlib import Path


def default_build(benchmark: str) -> Path:
    """Where ``nutrireason <benchmark> build`` leaves the benchmark in the data home."""
    from nutrireason.paths import builds_dir
    from nutrireason.schema import get_benchmark

    return builds_dir() / get_benchmark(benchmark).build_dir
