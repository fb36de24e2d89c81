"""Scores of a ``quantity`` task (a number against the gold number): accuracy within the
task's tolerance, the share within 20 %, the mean absolute error over the answers read, and the
unparseable rate, against hand-computed values; through ``score_records`` for a registered task
declaring the shape."""

from __future__ import annotations

import pytest

import nutrireason.schema as schema
from nutrireason.errors import NutriReasonError
from nutrireason.schema import BenchmarkSpec, Record, TaskSpec, benchmark_names
from nutrireason.scoring.metrics import quantity_table
from nutrireason.scoring.score import score_records

# (answer, gold, read): errors 5, 10, 2, -, 0.5 on golds 40, 40, 8, 30, 100
ANSWERS = [(45.0, 40.0, True), (30.0, 40.0, True), (10.0, 8.0, True), (None, 30.0, False),
           (100.5, 100.0, True)]


def test_the_measures_by_hand():
    pred, gold, ok = zip(*ANSWERS, strict=True)
    point = quantity_table(pred, gold, ok, tolerance=7.5).point()
    # within 7.5: 45 (5), 10 (2), 100.5 (0.5) = 3 of 5; 30 is 10 off
    assert point["accuracy"] == pytest.approx(3 / 5)
    # within 20 % of the gold: 45 (12.5 %), 100.5 (0.5 %) = 2 of 5; 30 is 25 % off, 10 is 25 %
    assert point["within_20pct"] == pytest.approx(2 / 5)
    # the mean absolute error over the four answers read: (5 + 10 + 2 + 0.5) / 4
    assert point["mae"] == pytest.approx(17.5 / 4)
    assert point["unparseable_rate"] == pytest.approx(1 / 5)


def test_nothing_read_is_all_unparseable():
    point = quantity_table([None, "x"], [10.0, 20.0], [False, True], tolerance=7.5).point()
    assert point == {"accuracy": 0.0, "within_20pct": 0.0, "mae": 0.0, "unparseable_rate": 1.0}


@pytest.fixture
def counting_benchmark():
    benchmark_names()
    saved = (dict(schema._FACTORIES), dict(schema._SPECS))

    @schema.register_benchmark("counting")
    def counting_spec() -> BenchmarkSpec:
        return BenchmarkSpec(name="counting", title="Counting", build_dir="counting",
                             tasks=(TaskSpec(name="count_carbs", option="carbs",
                                             label="Carbohydrates", file="carbs.jsonl",
                                             answer="quantity", unit="g", tolerance=7.5),),
                             meta_keys=("task",))

    yield
    for target, old in zip((schema._FACTORIES, schema._SPECS), saved, strict=True):
        target.clear()
        target.update(old)
    schema._TASK_OWNER.clear()
    schema._META_KEYS.clear()


def test_a_registered_quantity_task_is_scored_by_its_tolerance(counting_benchmark):
    records = [Record(key=f"k{i}", item_id=f"i{i}", method="plain", model="m", status="ok",
                      parsed=p, parse_ok=ok, gold=g, meta={"task": "count_carbs"})
               for i, (p, g, ok) in enumerate(ANSWERS)]
    scores = score_records(records, bootstrap=0)
    (group,) = scores["groups"]
    values = {name: stat["value"] for name, stat in group["metrics"].items()}
    assert values == pytest.approx({"accuracy": 0.6, "within_20pct": 0.4, "mae": 4.375,
                                    "unparseable_rate": 0.2})
    # the per-sample verdict is the accuracy column: right within 7.5 g
    assert [s.correct for s in scores.samples] == [True, False, True, False, True]


def test_a_quantity_task_must_declare_its_tolerance():
    with pytest.raises(NutriReasonError, match="declares no tolerance"):
        TaskSpec(name="t", option="t", label="t", file="t.jsonl", answer="quantity")
