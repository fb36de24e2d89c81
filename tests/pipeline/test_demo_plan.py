"""The demo's evaluation plan comes from the declarations: each benchmark's demo methods per
task (a task may run only the first), its seconds per sample, its run folders."""

from __future__ import annotations

import pytest

from nutrireason.pipeline.demo import demo_limits
from nutrireason.pipeline.evaluate import demo_estimate, demo_methods, run_name
from nutrireason.schema import get_benchmark


def test_the_default_demo_plan_by_hand():
    limits = demo_limits(1, {"dish": 1, "rank": 1})
    assert (limits["ngqa"], limits["fam"]) == ({"binary": 1, "multilabel": 1, "textgen": 1},
                                               {"dish": 1, "rank": 1})
    limits = {name: limits[name] for name in ("ngqa", "fam")}  # other benchmarks apart
    # NGQA: 3 tasks x 3 levels x 5 demo methods = 45 samples at 1.4 s; FAM-Bench: 4 modes on
    # one dish at 4.3 s, the baseline on one ranking item at 18 s; 51 s for the rest
    samples, seconds = demo_estimate(limits)
    assert samples == 45 + 4 + 1
    assert seconds == pytest.approx(45 * 1.4 + 4 * 4.3 + 18.0 + 51.0)


def test_a_task_may_run_only_the_first_demo_methods():
    fam = get_benchmark("fam")
    assert demo_methods("fam", fam.task("dish")) == ["fam-baseline", "fam-cot", "fam-ki",
                                                      "fam-cot-ki"]
    assert demo_methods("fam", fam.task("rank")) == ["fam-baseline"]


def test_run_folders_name_the_benchmark_task_and_level():
    ngqa, fam = get_benchmark("ngqa"), get_benchmark("fam")
    assert run_name(ngqa, ngqa.task("binary"), "sparse") == "ngqa-binary-sparse"
    assert run_name(fam, fam.task("dish"), "") == "fam-dish"


def test_zero_limits_plan_nothing():
    assert demo_estimate(demo_limits(0, {"dish": 0, "rank": 0}))[0] == 0
