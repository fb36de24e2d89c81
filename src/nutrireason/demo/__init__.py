"""The offline main job's evaluation stage: every NGQA method on a small stratified sample of
every level and task with one model, then scoring and one report."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from nutrireason.models.types import GenerationSettings
from nutrireason.ngqa.config import LEVELS, TASKS
from nutrireason.report import build_report
from nutrireason.runs import RunConfig, RunSummary, run
from nutrireason.scoring.score import score_run, write_scores

DEMO_METHODS = ["plain", "kaping", "cot-zero", "cot-bag", "tog", "oracle"]


@dataclass
class EvalResult:
    runs: list[Path]
    summaries: list[RunSummary]
    report: Path


def evaluate_ngqa(benchmark: Path, out: Path, model: str, per_cell: int,
                  methods: list[str] | None = None, max_tokens: int = 96,
                  log: Callable[[str], None] = print) -> EvalResult:
    """Run ``methods`` x ``model`` on the first ``per_cell`` questions of each (level, task),
    score each run and write one report. Finished samples are skipped on a re-run."""
    settings = GenerationSettings(temperature=0.0, max_tokens=max_tokens, seed=0)
    runs, summaries = [], []
    for task in TASKS:
        for level in LEVELS:
            run_dir = out / "runs" / f"{task}-{level}"
            log(f"evaluating {task} / {level} ...")
            summary = run(RunConfig(benchmark=benchmark / level / f"{task}.jsonl", out=run_dir,
                                    methods=methods or DEMO_METHODS, models=[model],
                                    settings=settings, limit=per_cell, concurrency=1,
                                    progress=True))
            write_scores(run_dir, score_run(run_dir, bootstrap=200))
            runs.append(run_dir)
            summaries.append(summary)
    report = build_report(runs, out / "report")
    return EvalResult(runs, summaries, report)
