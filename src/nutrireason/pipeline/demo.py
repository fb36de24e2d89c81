"""The main job on the offline default as a list of stages plus evaluation, callable from
Python: ``run_demo()`` is what ``nutrireason demo`` runs."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nutrireason.options import setting
from nutrireason.paths import builds_dir
from nutrireason.pipeline.stage import Stage, StageResult, build_stages
from nutrireason.schema import benchmark_names, get_benchmark

DEMO_MODEL = "llamacpp/smollm2?n_ctx=4096"


def demo_stages(workers: int = 2) -> list[Stage]:
    """The build stages of the main job, in the order their declarations give, with their
    default inputs and outputs."""
    return build_stages(workers=workers)


@dataclass
class DemoResult:
    stages: list[StageResult] = field(default_factory=list)
    evaluation: Any = None  # demo.EvalResult when the evaluation ran
    evaluation_seconds: float = 0.0


@dataclass
class DemoRequest:
    """What ``nutrireason demo`` is asked: the model and how many items it answers."""

    index_url: str | None = setting("Package index URL (default: pip's).")
    model: str = setting("Model for the evaluation (any provider string).", DEMO_MODEL)
    limit: int = setting("Questions per NGQA (level, task), and items per task of any other "
                         "benchmark but FAM-Bench, in the evaluation (0: none; all limits 0 "
                         "skip the evaluation).", 1, min=0)
    fam_dish_limit: int = setting("FAM-Bench dish items evaluated per mode.", 1, min=0)
    fam_rank_limit: int = setting("FAM-Bench ranking items (5 calls each; ranked in the "
                                  "baseline mode only).", 1, min=0)
    out: Path | None = setting("Demo output directory.")

    def run(self, on_stage: Callable[[Stage, StageResult], None] | None = None,
            log: Callable[[str], None] = print) -> DemoResult:
        """:func:`run_demo` with these settings."""
        return run_demo(self.model, self.limit, {"dish": self.fam_dish_limit,
                                                 "rank": self.fam_rank_limit},
                        self.out, self.index_url, on_stage=on_stage, log=log)


def demo_limits(limit: int, fam_limits: dict[str, int]) -> dict[str, dict[str, int]]:
    """Items per task (and level) of each registered benchmark in the demo: ``fam_limits``
    for FAM-Bench's tasks, ``limit`` for every task of the others."""
    limits = {}
    for name in benchmark_names():
        tasks = [task.option for task in get_benchmark(name).tasks]
        limits[name] = {task: fam_limits.get(task, 0) for task in tasks} if name == "fam" \
            else dict.fromkeys(tasks, limit)
    return limits


def run_demo(model: str = DEMO_MODEL, limit: int = 1, fam_limits: dict[str, int] | None = None,
             out: Path | None = None, index_url: str | None = None,
             stages: list[Stage] | None = None,
             on_stage: Callable[[Stage, StageResult], None] | None = None,
             log: Callable[[str], None] = print) -> DemoResult:
    """Pull the bundles, ensure every stage, then evaluate ``model`` on ``limit`` questions per
    NGQA (level, task) and ``fam_limits`` FAM-Bench items per task, score and report. Stages
    that are up to date are skipped; evaluation resumes finished samples."""
    from nutrireason.sources.bundles import pull

    fam_limits = fam_limits if fam_limits is not None else {"dish": 1, "rank": 1}
    pull(None, index_url=index_url, log=log)
    result = DemoResult()
    for stage in stages if stages is not None else demo_stages():
        done = stage.ensure()
        result.stages.append(done)
        if on_stage is not None:
            on_stage(stage, done)
    limits = demo_limits(limit, fam_limits)
    if any(n for per_task in limits.values() for n in per_task.values()):
        from nutrireason.pipeline.evaluate import evaluate_all
        from nutrireason.pipeline.stage import declared_stages, default_target

        started = time.perf_counter()
        builds = {cls.benchmark: default_target(key) for key, cls in declared_stages().items()
                  if cls.benchmark}
        result.evaluation = evaluate_all(builds, out or builds_dir() / "demo", model,
                                         {name: limits.get(name, {}) for name in builds},
                                         log=log)
        result.evaluation_seconds = time.perf_counter() - started
    return result
