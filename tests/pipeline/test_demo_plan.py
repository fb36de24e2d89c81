"""The demo's evaluation plan comes from the declarations: each benchmark's demo methods per
task (a task may run only the first), its seconds per sample, its run folders."""

from __future__ import annotations

import pytest

from nutrireason.errors import DataError
from nutrireason.pipeline.demo import demo_limits
from nutrireason.pipeline.evaluate import demo_estimate, demo_methods, run_name
from nutrireason.schema import get_benchmark


def test_the_default_demo_plan_by_hand():
    limits = demo_limits(1)
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
    assert demo_estimate(demo_limits(0))[0] == 0


def test_one_task_limit_overrides_the_common_limit():
    limits = demo_limits(0, ["fam.dish=1", "nutrients.carbs=2", "ngqa.text_generation=3"])
    assert limits["fam"] == {"dish": 1, "rank": 0}
    assert limits["nutrients"] == {"carbs": 2, "energy": 0}
    assert limits["ngqa"] == {"binary": 0, "multilabel": 0, "textgen": 3}  # an alias names it
    samples, _ = demo_estimate(limits)
    assert samples == 4 + 2 * 2 + 3 * 3 * 5  # 4 FAM modes; 2 nutrients methods; NGQA levels


@pytest.mark.parametrize(("text", "field_value"), [
    ("fam.rank", "fam.rank"), ("fam.rank=two", "fam.rank=two"), ("rank=1", "rank=1"),
    ("fam.nope=1", "nope"), ("nobench.rank=1", "nobench")])
def test_a_wrong_task_limit_names_what_is_wrong(text, field_value):
    with pytest.raises(DataError) as found:
        demo_limits(1, [text])
    assert (found.value.field, found.value.value) == ("--task-limit", field_value)
