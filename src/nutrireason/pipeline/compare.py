"""``nutrireason compare`` and ``nutrireason power``: what the commands are asked and what they
write (the statistics are in :mod:`nutrireason.scoring.compare`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.options import REQUIRED, setting
from nutrireason.storage import write_json_atomic, write_text_atomic

BY = ("Group by these, comma-separated: task, level, a benchmark's breakdowns (condition, "
      "diet, category), method, model (a sample counts for every condition or diet it names).")
METRIC = ("The per-sample value compared (a scores.jsonl value, e.g. accuracy, subset_accuracy, "
          "rougeL, top1_accuracy, mrr; default: each task's headline).")
CLUSTER = ("The meta key samples cluster on (user_id, food_id, recipe_id, recipe_ids; `item`: "
           "each item alone; default: each task's own).")


@dataclass
class CompareRequest:
    """What ``nutrireason compare`` is asked."""

    run_a: Path = setting("Scored run A.", REQUIRED, argument=True)
    run_b: Path = setting("Scored run B (may be A again, with --a-method/--b-method).",
                          REQUIRED, argument=True)
    by: str = setting(BY, "task,level")
    metric: str | None = setting(METRIC)
    cluster: str | None = setting(CLUSTER)
    a_method: str | None = setting("Only this method of run A.")
    a_model: str | None = setting("Only this model of run A.")
    b_method: str | None = setting("Only this method of run B.")
    b_model: str | None = setting("Only this model of run B.")
    alpha: float = setting("Family-wise error rate (Holm over the groups).", 0.05,
                           min=0.0001, max=0.5)
    resamples: int = setting("Paired cluster bootstrap resamples for the intervals.", 2000,
                             min=0)
    seed: int = setting("Bootstrap seed.", 0)
    out: Path | None = setting("Also write comparison.json and comparison.csv here.")
    as_json: bool = setting("Print only the comparison as JSON on stdout, for scripts.", False,
                            "--json")

    def run(self) -> dict[str, Any]:
        from nutrireason.scoring.compare import compare_runs, comparison_csv, parse_by

        result = compare_runs(self.run_a, self.run_b, parse_by(self.by), self.metric,
                              self.cluster, self.resamples, self.seed, self.alpha,
                              self.a_method, self.a_model, self.b_method, self.b_model)
        if self.out is not None:
            if self.out.exists() and not self.out.is_dir():
                raise DataError(self.out, "exists and is not a folder", field="--out")
            self.out.mkdir(parents=True, exist_ok=True)
            write_json_atomic(self.out / "comparison.json", result)
            write_text_atomic(self.out / "comparison.csv", comparison_csv(result))
        return result


@dataclass
class PowerRequest:
    """What ``nutrireason power`` is asked."""

    difference: float = setting("The difference to detect (a metric's own scale: 0.03 is 3 "
                                "points of accuracy).", REQUIRED)
    runs: list[Path] | None = setting("A scored run (its variance and clusters), or two "
                                      "(their paired differences); repeat --runs.")
    baseline: float | None = setting("Instead of runs: the 0/1 metric's baseline rate.",
                                     min=0.0, max=1.0)
    metric: str | None = setting(METRIC)
    by: str = setting(BY, "task,level")
    cluster: str | None = setting(CLUSTER)
    correlation: float = setting("Per-item correlation between the two arms compared (one "
                                 "run or --baseline; 0 is conservative).", 0.0, min=-1.0,
                                 max=1.0)
    design_effect: float = setting("With --baseline: the variance inflation from clustering.",
                                   1.0, min=1.0)
    alpha: float = setting("Two-sided significance level.", 0.05, min=0.0001, max=0.5)
    power: float = setting("The power wanted.", 0.8, min=0.5, max=0.999)
    as_json: bool = setting("Print only the result as JSON on stdout, for scripts.", False,
                            "--json")

    def run(self) -> dict[str, Any]:
        from nutrireason.scoring.compare import baseline_power, parse_by, power_rows

        if not self.difference > 0:
            raise DataError(None, "the difference to detect must be positive",
                            field="--difference", value=self.difference)
        if (self.baseline is None) == (not self.runs):
            raise DataError(None, "give --runs RUN (once or twice) or --baseline RATE",
                            field="--runs / --baseline")
        common = {"difference": self.difference, "alpha": self.alpha, "power": self.power}
        if self.baseline is not None:
            return common | {"rows": [baseline_power(self.baseline, self.difference,
                                                     self.correlation, self.design_effect,
                                                     self.alpha, self.power)]}
        rows = power_rows(list(self.runs or []), self.difference, parse_by(self.by),
                          self.metric, self.cluster, self.correlation, self.alpha, self.power)
        return common | {"runs": [str(r) for r in self.runs or []], "rows": rows}


def emit(result: dict[str, Any], as_json: bool, kind: str) -> None:
    """Print ``result``: JSON on stdout for scripts, else the ``kind`` ("comparison" or
    "power") table."""
    from nutrireason.pipeline.show import console, print_comparison, print_power

    if as_json:
        console.out(json.dumps(result, indent=2, allow_nan=False), highlight=False)
    else:
        (print_comparison if kind == "comparison" else print_power)(result)
