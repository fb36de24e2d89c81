"""``nutrireason score``: score run directories from their records alone; ``report``'s
request."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.options import REQUIRED, setting


@dataclass
class ScoreRequest:
    """What ``nutrireason score`` is asked."""

    run_dirs: list[Path] = setting("Run directories to (re)score.", REQUIRED, argument=True)
    bootstrap: int = setting("Bootstrap resamples for 95 % CIs.", 1000, min=0)
    bertscore: bool = setting("BERTScore text answers (extra `bertscore`).", False)
    bertscore_model: Path | None = setting("BERTScore model (default: MiniLM).")
    cluster: str | None = setting(
        "The meta key samples cluster on for the intervals (user_id, food_id, recipe_id, "
        "recipe_ids; `item`: each item alone; default: each task's own).")

    def runs(self) -> Iterator[tuple[Path, dict[str, Any], float, str | None]]:
        """:func:`score_runs` with these settings."""
        return score_runs(self.run_dirs, self.bootstrap, self.bertscore, self.bertscore_model,
                          self.cluster)


@dataclass
class ReportRequest:
    """What ``nutrireason report`` is asked."""

    run_dirs: list[Path] = setting("Scored run directories.", REQUIRED, argument=True)
    out: Path = setting("Report directory.", REQUIRED)
    keep_last: bool = setting("Where runs score the same group, show the last run's numbers "
                              "(with a warning) instead of refusing.", False)
    reviews: Path | None = setting("A `review export` folder: show its agreement too.")
    overwrite: bool = setting("Write into an --out folder that holds other files.", False)

    def build(self, note: Callable[[str], None]) -> Path:
        """The report folder's HTML file (:func:`~nutrireason.report.build_report`)."""
        from nutrireason.report import build_report

        return build_report(list(self.run_dirs), self.out, self.keep_last, note, self.reviews,
                            self.overwrite)


def score_runs(run_dirs: list[Path], bootstrap: int = 1000, bertscore: bool = False,
               bertscore_model: Path | None = None, cluster: str | None = None
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
                           bertscore_model=bertscore_model, cluster=cluster)
        write_scores(run_dir, scores)
        note = status_note(run_dir, read_manifest(run_dir) if run_dir.is_dir() else None)
        yield run_dir, scores, time.perf_counter() - started, note
