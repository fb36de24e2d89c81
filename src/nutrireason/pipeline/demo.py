"""The main job on the offline default as a list of stages plus evaluation, callable from
Python: ``run_demo()`` is what ``nutrireason demo`` runs."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
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
    limit: int = setting("Items per task of every benchmark in the evaluation (per level where "
                         "a benchmark has levels; 0: none; with every limit 0 the evaluation "
                         "is skipped).", 1, min=0)
    task_limit: list[str] | None = setting(
        "One task's items instead of --limit, as BENCHMARK.TASK=N (`fam.rank=0`); "
        "repeatable.")
    out: Path | None = setting("Demo output directory.")

    def run(self, on_stage: Callable[[Stage, StageResult], None] | None = None,
            log: Callable[[str], None] = print) -> DemoResult:
        """:func:`run_demo` with these settings."""
        return run_demo(self.model, self.limit, self.task_limit, self.out, self.index_url,
                        on_stage=on_stage, log=log)


def demo_limits(limit: int, task_limits: Sequence[str] | None = None
                ) -> dict[str, dict[str, int]]:
    """Items per task (and level) of each registered benchmark in the demo: ``limit`` for
    every task, except those ``task_limits`` names (``"fam.rank=0"``: benchmark, the task's
    ``--task`` name or alias, the count)."""
    limits = {name: dict.fromkeys((task.option for task in get_benchmark(name).tasks), limit)
              for name in benchmark_names()}
    for text in task_limits or []:
        name, task, count = _task_limit(text)
        limits[name][task] = count
    return limits


def _task_limit(text: str) -> tuple[str, str, int]:
    where, _, count = text.partition("=")
    name, _, task = where.strip().partition(".")
    if not task or not count.strip().isdigit():
        raise DataError(None, f"not a task limit: {text!r}", field="--task-limit", value=text,
                        expected="BENCHMARK.TASK=N with N a whole number, e.g. fam.rank=0")
    try:
        spec = get_benchmark(name)
        return spec.name, spec.task(task.strip()).option, int(count)
    except DataError as exc:
        raise DataError(None, f"{exc.problem} in {text!r}",
                        field="--task-limit", value=exc.value, expected=exc.expected) from None


def run_demo(model: str = DEMO_MODEL, limit: int = 1, task_limits: Sequence[str] | None = None,
             out: Path | None = None, index_url: str | None = None,
             stages: list[Stage] | None = None,
             on_stage: Callable[[Stage, StageResult], None] | None = None,
             log: Callable[[str], None] = print) -> DemoResult:
    """Pull the bundles, ensure every stage, then evaluate ``model`` on ``limit`` items per
    task (and level) of every benchmark, ``task_limits`` apart (:func:`demo_limits`), score
    and report. Stages that are up to date are skipped; evaluation resumes finished
    samples."""
    from nutrireason.sources.bundles import pull

    limits = demo_limits(limit, task_limits)  # a wrong one is refused before any work
    pull(None, index_url=index_url, log=log)
    result = DemoResult()
    for stage in stages if stages is not None else demo_stages():
        done = stage.ensure()
        result.stages.append(done)
        if on_stage is not None:
            on_stage(stage, done)
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
