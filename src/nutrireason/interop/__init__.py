"""The benchmarks where researchers already work (issue 21): Hugging Face datasets with a card
(:mod:`.hf`), inspect_ai tasks (:mod:`.inspect_tasks`), lm-evaluation-harness task export
(:mod:`.lm_eval_export`) and the NGQA graph as GraphML (:mod:`.graph`).

Each needs the optional extra ``interop`` (``pip install 'nutrireason[interop]'``); importing
this package needs nothing beyond the core.
"""

from __future__ import annotations

from pathlib import Path


def default_build(benchmark: str) -> Path:
    """Where ``nutrireason <benchmark> build`` leaves the benchmark in the data home."""
    from nutrireason.paths import builds_dir
    from nutrireason.schema import get_benchmark

    return builds_dir() / get_benchmark(benchmark).build_dir
