"""The offline main job's evaluation stages: every NGQA method on a small sample of every level
and task, every FAM-Bench prompting mode on a small sample of both tasks, the symbolic
references (NGQA oracle, FAM-Bench rule-based reference) on the full sets, then scoring and one
report over all runs. Finished samples are skipped on a re-run, and a run is scored again only
when its records, the scoring code or the bootstrap changed (:class:`ScoreStage`, the build
stages' rule)."""

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
from nutrireason.schema import METRICS_FILE, RECORDS_FILE, SCORES_FILE, get_benchmark
from nutrireason.scoring.score import score_run, write_scores

# The methods that declare themselves part of the demo
DEMO_METHODS = declared("ngqa", demo=True)
FAM_MODES = declared("fam", demo=True)
# A ranking item is five long calls (the ranking, then each dish for cross-task consistency):
# the demo ranks in the first mode only (baseline), the dish task uses all four.
DEMO_RANK_MODES = FAM_MODES[:1]
NGQA_MAX_TOKENS = 64  # the demo's NGQA answer budget: a verdict, tags or two sentences
# Seconds per sample of the bundled SmolLM2 on 2 cores, measured on the demo's own samples
# (llama.cpp on every core, one sample at a time): an NGQA question per method, a FAM-Bench
# dish, a ranking item (five calls); and the references on the full sets, scoring and the report.
SECONDS_NGQA, SECONDS_DISH, SECONDS_RANK, SECONDS_FIXED = 1.4, 4.3, 18.0, 51.0


def demo_estimate(per_cell: int, fam_limits: dict[str, int]) -> tuple[int, float]:
    """(model samples, estimated seconds for the bundled model on 2 cores) of the demo's
    evaluation with these limits."""
    ngqa = per_cell * len(get_benchmark("ngqa").levels) * len(get_benchmark("ngqa").tasks) * \
        len(DEMO_METHODS)
    dish = fam_limits.get("dish", 0) * len(FAM_MODES)
    rank = fam_limits.get("rank", 0) * len(DEMO_RANK_MODES)
    seconds = ngqa * SECONDS_NGQA + dish * SECONDS_DISH + rank * SECONDS_RANK + SECONDS_FIXED
    return ngqa + dish + rank, seconds
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


def evaluate_ngqa(benchmark: Path, out: Path, model: str, per_cell: int,
                  methods: list[str] | None = None, max_tokens: int = NGQA_MAX_TOKENS,
                  log: Callable[[str], None] = print, report: bool = True) -> EvalResult:
    """Run ``methods`` x ``model`` on the first ``per_cell`` questions of each (level, task),
    score each run and (unless ``report`` is False) write one report."""
    settings = GenerationSettings(temperature=0.0, max_tokens=max_tokens, seed=0)
    result = EvalResult()
    spec = get_benchmark("ngqa")
    for task in (t.name for t in spec.tasks):
        for level in spec.levels:
            run_dir = out / "runs" / f"{task}-{level}"
            log(f"evaluating NGQA {task} / {level} ...")
            result.summaries.append(_run_and_score(RunConfig(
                benchmark=spec.file(benchmark, task, level), out=run_dir,
                methods=methods or [*DEMO_METHODS, *declared("ngqa", reference=True)],
                models=[model],
                settings=settings, limit=per_cell, concurrency=1)))
            result.runs.append(run_dir)
    if report:
        result.report = build_report(result.runs, out / "report")
    return result


def evaluate_fam(benchmark: Path, out: Path, model: str, limits: dict[str, int],
                 methods: list[str] | None = None, max_tokens: int = 128,
                 log: Callable[[str], None] = print) -> EvalResult:
    """Run the FAM-Bench modes x ``model`` on the first ``limits[task]`` instances of each task
    (dish, rank; the instance files are already shuffled, so the first ones are a random
    sample); a task with limit 0 is skipped."""
    settings = GenerationSettings(temperature=0.0, max_tokens=max_tokens, seed=0)
    result = EvalResult()
    for task in (t.option for t in get_benchmark("fam").tasks):
        if not limits.get(task):
            continue
        run_dir = out / "runs" / f"fam-{task}"
        log(f"evaluating FAM-Bench {task} ...")
        result.summaries.append(_run_and_score(RunConfig(
            benchmark=get_benchmark("fam").file(benchmark, task), out=run_dir,
            methods=methods or (DEMO_RANK_MODES if task == "rank" else FAM_MODES),
            models=[model], settings=settings, limit=limits[task], concurrency=1)))
        result.runs.append(run_dir)
    return result


def evaluate_references(ngqa: Path, fam: Path, out: Path,
                        log: Callable[[str], None] = print) -> EvalResult:
    """The NGQA oracle and the FAM-Bench reference on every question of the full sets."""
    result = EvalResult()
    spec, fam_spec = get_benchmark("ngqa"), get_benchmark("fam")
    oracle, reference = declared("ngqa", reference=True)[0], declared("fam", reference=True)[0]
    cells = [(spec.file(ngqa, task.name, level), oracle, f"oracle-{task.name}-{level}")
             for task in spec.tasks for level in spec.levels]
    cells += [(fam_spec.file(fam, task), reference, f"reference-fam-{task}")
              for task in (t.option for t in fam_spec.tasks)]
    log(f"running the symbolic references on the full sets ({len(cells)} runs) ...")
    for benchmark, method, name in cells:
        run_dir = out / "runs" / name
        result.summaries.append(_run_and_score(RunConfig(
            benchmark=benchmark, out=run_dir, methods=[method], models=[REFERENCE_MODEL],
            concurrency=1, progress=False), bootstrap=0))
        result.runs.append(run_dir)
    return result


def evaluate_all(ngqa: Path, fam: Path, out: Path, model: str, per_cell: int,
                 fam_limits: dict[str, int], log: Callable[[str], None] = print) -> EvalResult:
    """Both benchmarks with ``model``, the references on the full sets, one report."""
    samples, seconds = demo_estimate(per_cell, fam_limits)
    log(f"evaluation: {samples} model samples; about {seconds / 60:.1f} min with the bundled "
        "SmolLM2 on 2 cores (longer with a slower model)")
    result = EvalResult()
    if per_cell:
        result.add(evaluate_ngqa(ngqa, out, model, per_cell, methods=DEMO_METHODS, log=log,
                                 report=False))
    result.add(evaluate_fam(fam, out, model, fam_limits, log=log))
    result.add(evaluate_references(ngqa, fam, out, log=log))
    log("writing the report ...")
    result.report = build_report(result.runs, out / "report")
    return result
