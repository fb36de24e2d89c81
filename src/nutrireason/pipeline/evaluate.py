"""The offline main job's evaluation stages: every benchmark's demo methods (NGQA's Graph-RAG
methods, FAM-Bench's prompting modes, ...) on a small sample of every task and level, each
benchmark's symbolic reference (NGQA's oracle, FAM-Bench's rule-based reference) on the full
sets, then scoring and one report over all runs. Finished samples are skipped on a re-run,
and a run is scored again only when its records, the scoring code or the bootstrap changed
(:class:`ScoreStage`, the build stages' rule)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nutrireason.methods.base import declared
from nutrireason.models.types import GenerationSettings
from nutrireason.pipeline.stage import Stage
from nutrireason.report import build_report
from nutrireason.runs import RunConfig, RunSummary, run
from nutrireason.schema import (
    METRICS_FILE,
    RECORDS_FILE,
    SCORES_FILE,
    BenchmarkSpec,
    TaskSpec,
    get_benchmark,
)
from nutrireason.scoring.score import score_run, write_scores

# The methods that declare themselves part of the demo
DEMO_METHODS = declared("ngqa", demo=True)
FAM_MODES = declared("fam", demo=True)
SECONDS_FIXED = 51.0  # the references on the full sets, scoring and the report (2 cores)


def demo_methods(benchmark: str, task: TaskSpec) -> list[str]:
    """The demo methods ``benchmark`` declares, the first ``task.demo_methods`` of them when
    the task limits them (a ranking item is five long calls: ranked in the first mode)."""
    methods = declared(benchmark, demo=True)
    return methods[:task.demo_methods] if task.demo_methods else methods


DEMO_RANK_MODES = demo_methods("fam", get_benchmark("fam").tasks[-1])


def demo_estimate(limits: dict[str, dict[str, int]]) -> tuple[int, float]:
    """(model samples, estimated seconds for the bundled model on 2 cores) of the demo's
    evaluation with ``limits`` (benchmark -> ``--task`` name -> items per level)."""
    samples, seconds = 0, SECONDS_FIXED
    for name, per_task in limits.items():
        spec = get_benchmark(name)
        for task in spec.tasks:
            count = per_task.get(task.option, 0) * len(spec.levels or ("",)) * \
                len(demo_methods(name, task))
            samples += count
            seconds += count * task.demo_seconds
    return samples, seconds


REFERENCE_MODEL = "scripted/none"  # the references answer without a model; it refuses calls


@dataclass
class EvalResult:
    runs: list[Path] = field(default_factory=list)
    summaries: list[RunSummary] = field(default_factory=list)
    report: Path | None = None

    def add(self, other: EvalResult) -> EvalResult:
        self.runs += other.runs
        self.summaries += other.summaries
        return self


@dataclass
class ScoreStage(Stage):
    """Scoring one run, under the build stages' freshness rule: up to date while the run's
    records, the scoring code and the bootstrap are what the last scoring read (its stamp,
    ``score.stage.json`` in the run folder) and metrics.json and scores.jsonl exist."""

    run_dir: Path
    bootstrap: int = 200
    label = "scores"
    name = "score"

    @property
    def target(self) -> Path:
        return self.run_dir

    @property
    def stamp_path(self) -> Path:
        return self.run_dir / "score.stage.json"

    def inputs(self) -> list[Path]:
        return [self.run_dir / RECORDS_FILE]

    def settings(self) -> dict[str, Any]:
        return {"bootstrap": self.bootstrap}

    def outputs(self) -> list[Path]:
        return [self.run_dir / METRICS_FILE, self.run_dir / SCORES_FILE]

    def build(self) -> dict[str, Path]:
        return write_scores(self.run_dir, score_run(self.run_dir, bootstrap=self.bootstrap))


def _run_and_score(config: RunConfig, bootstrap: int = 200) -> RunSummary:
    summary = run(config)
    if summary.interrupted:
        raise KeyboardInterrupt
    ScoreStage(config.out, bootstrap).ensure()
    return summary


def run_name(spec: BenchmarkSpec, task: TaskSpec, level: str) -> str:
    """A demo run's folder: ``<benchmark>-<task>`` and its level where the benchmark has
    levels (``ngqa-binary-sparse``, ``fam-dish``)."""
    return "-".join(part for part in (spec.name, task.option, level) if part)


def evaluate_benchmark(name: str, build: Path, out: Path, model: str, limits: dict[str, int],
                       methods: list[str] | None = None, max_tokens: int | None = None,
                       log: Callable[[str], None] = print, report: bool = False) -> EvalResult:
    """Run the demo methods of benchmark ``name`` (or ``methods``) x ``model`` on the first
    ``limits[task]`` items of each task (per level; the item files are shuffled, so the first
    are a random sample), score each run and, with ``report``, write one report. A task with
    limit 0 is skipped."""
    spec = get_benchmark(name)
    settings = GenerationSettings(temperature=0.0, seed=0,
                                  max_tokens=max_tokens or spec.demo_max_tokens)
    result = EvalResult()
    for task in spec.tasks:
        if not limits.get(task.option):
            continue
        for level in spec.levels or ("",):
            run_dir = out / "runs" / run_name(spec, task, level)
            log(f"evaluating {spec.title} {task.option}{f' / {level}' if level else ''} ...")
            result.summaries.append(_run_and_score(RunConfig(
                benchmark=spec.file(build, task.name, level), out=run_dir,
                methods=methods or demo_methods(name, task), models=[model],
                settings=settings, limit=limits[task.option], concurrency=1)))
            result.runs.append(run_dir)
    if report:
        result.report = build_report(result.runs, out / "report")
    return result


def evaluate_ngqa(benchmark: Path, out: Path, model: str, per_cell: int,
                  methods: list[str] | None = None, max_tokens: int | None = None,
                  log: Callable[[str], None] = print, report: bool = True) -> EvalResult:
    """NGQA's demo methods and its reference (or ``methods``) x ``model`` on the first
    ``per_cell`` questions of each (level, task); scored, and one report."""
    spec = get_benchmark("ngqa")
    return evaluate_benchmark("ngqa", benchmark, out, model,
                              dict.fromkeys((t.option for t in spec.tasks), per_cell),
                              methods or [*DEMO_METHODS, *declared("ngqa", reference=True)],
                              max_tokens, log, report)


def evaluate_references(builds: dict[str, Path], out: Path,
                        log: Callable[[str], None] = print) -> EvalResult:
    """Each benchmark's reference method (the symbolic answer from its own knowledge: NGQA's
    oracle, FAM-Bench's rule-based reference) on every item of its full sets."""
    result = EvalResult()
    cells = []
    for name, build in builds.items():
        spec, references = get_benchmark(name), declared(name, reference=True)
        cells += [(spec.file(build, task.name, level), references[0],
                   "reference-" + run_name(spec, task, level))
                  for task in spec.tasks for level in spec.levels or ("",) if references]
    log(f"running the symbolic references on the full sets ({len(cells)} runs) ...")
    for benchmark, method, name in cells:
        run_dir = out / "runs" / name
        result.summaries.append(_run_and_score(RunConfig(
            benchmark=benchmark, out=run_dir, methods=[method], models=[REFERENCE_MODEL],
            concurrency=1, progress=False), bootstrap=0))
        result.runs.append(run_dir)
    return result


def evaluate_all(builds: dict[str, Path], out: Path, model: str,
                 limits: dict[str, dict[str, int]],
                 log: Callable[[str], None] = print) -> EvalResult:
    """Every benchmark of ``builds`` with ``model`` (``limits``: benchmark -> ``--task``
    name -> items per level), the references on the full sets, one report."""
    samples, seconds = demo_estimate(limits)
    log(f"evaluation: {samples} model samples; about {seconds / 60:.1f} min with the bundled "
        "SmolLM2 on 2 cores (longer with a slower model)")
    result = EvalResult()
    for name, build in builds.items():
        result.add(evaluate_benchmark(name, build, out, model, limits.get(name, {}), log=log))
    result.add(evaluate_references(builds, out, log=log))
    log("writing the report ...")
    result.report = build_report(result.runs, out / "report")
    return result
