"""``nutrireason score``: score run directories from their records alone."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def score_runs(run_dirs: list[Path], bootstrap: int = 1000, bertscore: bool = False,
               bertscore_model: Path | None = None
               ) -> Iterator[tuple[Path, dict[str, Any], float, str | None]]:
    """Score each run (``metrics.json``, ``scores.jsonl`` and the CSV tables written); yield
    (run, metrics, seconds, a note on the run's status or None)."""
    from nutrireason.runs.manifest import read_manifest
    from nutrireason.runs.policy import status_note
    from nutrireason.scoring.score import score_run, write_scores

    if bertscore and bertscore_model is None:  # the packaged all-MiniLM-L6-v2
        from nutrireason.sources.bundles import require

        bertscore_model = require("minilm") / "model"
    for run_dir in run_dirs:
        started = time.perf_counter()
        scores = score_run(run_dir, bootstrap=bootstrap, bertscore=bertscore,
                           bertscore_model=bertscore_model)
        write_scores(run_dir, scores)
        note = status_note(run_dir, read_manifest(run_dir) if run_dir.is_dir() else None)
        yield run_dir, scores, time.perf_counter() - started, note
