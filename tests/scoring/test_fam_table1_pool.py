"""FAM-Bench Table 1 on each model's common pool (paper Table 1 caption): the text-input
prompting modes are scored only on the items all of them answered validly, CTC is pooled
(micro) over that pool, and metrics.json keeps the full runs in its groups. ``score`` computes
the pools (metrics.json ``pools``); the report's Table 1 only reads them."""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest

from nutrireason.display.groups import groups_frame
from nutrireason.display.table import to_csv, to_markdown
from nutrireason.fam.report import fam_pool_entries, fam_table1, fam_tables
from nutrireason.schema import Record, record_key
from nutrireason.scoring import fam_metrics
from nutrireason.scoring.score import score_records

MODEL = "scripted/pool"
SALT = [{"line": "1 tsp salt", "food": "salt", "canonical": "salt"},
        {"line": "1 cup oats", "food": "oats", "canonical": "oats"}]
GOLD_RANK = ["B", "A", "D", "C"]


def dish(method: str, number: int, decision: str | None, *, gold: str = "not_recommend",
         model: str = MODEL, cited: list[str] | None = None, status: str = "ok") -> Record:
    """A fam_dish record; ``decision`` None is an unparseable answer."""
    item_id = f"dish-{number:05d}"
    parsed = {"decision": decision, "ingredients": cited or []}
    return Record(key=record_key(item_id, method, model), item_id=item_id, method=method,
                  model=model, status=status, parsed=parsed if status == "ok" else None,
                  parse_ok=decision is not None and status == "ok",
                  gold={"decision": gold, "condition": "hypertension", "rationale": ["salt"],
                        "ingredients": SALT},
                  meta={"task": "fam_dish", "conditions": ["hypertension"]})


def rank(method: str, number: int, ranking: list[str], decisions: dict[str, Any] | None,
         *, model: str = MODEL) -> Record:
    """A fam_rank record with the model's own option decisions (None: not asked)."""
    item_id = f"rank-{number:05d}"
    parsed: dict[str, Any] = {"ranking": ranking}
    if decisions is not None:
        parsed["option_decisions"] = decisions
    return Record(key=record_key(item_id, method, model), item_id=item_id, method=method,
                  model=model, status="ok", parsed=parsed, parse_ok=bool(ranking),
                  gold={"ranking": GOLD_RANK}, meta={"task": "fam_rank"})


def decided(rec: str) -> dict[str, str]:
    """Option decisions: the letters in ``rec`` recommended, the others not."""
    return {k: "recommend" if k in rec else "not_recommend" for k in "ABCD"}


def table_for(records: list[Record], *, with_pools: bool = True):
    metrics = score_records(records, bootstrap=0)
    frame = groups_frame([metrics])
    return fam_table1(frame, fam_pool_entries([metrics]) if with_pools else None), metrics


def cells(table) -> dict[str, dict[str, str]]:
    """Cells by mode label, then by "<task number>:<column label>"."""
    labels = [("1:" if "1" in c.group else "2:") + c.label for c in table.columns]
    return {f"{row[0]} | {row[1]}": dict(zip(labels, row[2:], strict=True))
            for row in table.rows}


def full_run(metrics: dict, method: str, task: str, name: str) -> float:
    group = next(g for g in metrics["groups"] if g["method"] == method and g["task"] == task)
    return group["metrics"][name]["value"]


# --- the pool itself -------------------------------------------------------------------------


@pytest.mark.parametrize(("record", "valid"), [
    (dish("fam-ki", 1, "recommend"), True),
    (dish("fam-ki", 1, "not_recommend"), True),
    (dish("fam-ki", 1, None), False),  # unparseable
    (dish("fam-ki", 1, "recommend", status="error"), False),
    (rank("fam-ki", 1, ["B", "A", "D", "C"], decided("AB")), True),
    (rank("fam-ki", 1, ["B"], decided("AB")), True),  # a partial ranking is a ranking
    (rank("fam-ki", 1, [], decided("AB")), False),  # no ranking
    (rank("fam-ki", 1, ["B", "A", "D", "C"], None), False),  # no option decisions
    (rank("fam-ki", 1, ["B", "A", "D", "C"], decided("AB") | {"C": None}), False),
    (rank("fam-ki", 1, ["B", "A", "D", "C"], decided("AB") | {"C": "maybe"}), False),
])
def test_valid_answer(record, valid):
    ok = record.status == "ok" and record.parse_ok
    assert fam_metrics.valid_answer(record.meta["task"], record.parsed, record.gold, ok) is valid


def test_common_pool_is_the_intersection_of_valid_answers():
    answers = {"A": {f"i{n}": ({"decision": "recommend"}, {}, True) for n in range(1, 5)},
               "B": {f"i{n}": ({"decision": "recommend"}, {}, True) for n in range(1, 4)}
               | {"i4": ({"decision": None}, {}, False)}}
    assert fam_metrics.common_pool("fam_dish", answers) == ["i1", "i2", "i3"]
    assert fam_metrics.common_pool("fam_dish", {}) == []


# --- Task 1 on the pool ----------------------------------------------------------------------


def task1_records() -> list[Record]:
    """Baseline answers items 1-4 (right on 1, 2, 4); CoT answers 1-3 (right on 1 only) and
    fails to parse item 4. Gold is not_recommend throughout."""
    baseline = [dish("fam-baseline", n, d, cited=["salt"]) for n, d in
                [(1, "not_recommend"), (2, "not_recommend"), (3, "recommend"),
                 (4, "not_recommend")]]
    cot = [dish("fam-cot", n, d) for n, d in
           [(1, "not_recommend"), (2, "recommend"), (3, "recommend"), (4, None)]]
    return baseline + cot


def test_task1_modes_are_scored_on_the_items_both_answered():
    table, metrics = table_for(task1_records())
    rows = cells(table)
    # Full runs: baseline 3/4, CoT 1/4 (the unparseable item 4 counts as wrong).
    assert full_run(metrics, "fam-baseline", "fam_dish", "accuracy") == 0.75
    assert full_run(metrics, "fam-cot", "fam_dish", "accuracy") == 0.25
    # Pool {1, 2, 3}: baseline 2/3, CoT 1/3.
    assert rows[f"{MODEL} | baseline"]["1:Acc."] == "66.67"
    assert rows[f"{MODEL} | CoT"]["1:Acc."] == "33.33"
    # Unparseable stays the full run's (on the pool it would always be 0).
    assert rows[f"{MODEL} | CoT"]["1:Unparseable"] == "25.00"
    assert rows[f"{MODEL} | baseline"]["1:Unparseable"] == "0.00"
    # Rationale F1 on the pool: baseline cites the gold "salt" on items 1-3 (F1 1.0).
    assert rows[f"{MODEL} | baseline"]["1:Micro-F1"] == "1.0000"
    assert rows[f"{MODEL} | CoT"]["1:Micro-F1"] == "0.0000"


def test_pool_size_is_shown_and_in_the_csv():
    table, _ = table_for(task1_records())
    assert f"Pool size: {MODEL}: Task 1 n = 3." in table.notes
    assert "Pool size" in to_markdown(table)
    rows = list(csv.DictReader(io.StringIO(to_csv(table))))
    assert [(r["method"], r["fam_dish_n"], r["fam_dish_pooled"]) for r in rows] == [
        ("fam-baseline", "3", "True"), ("fam-cot", "3", "True")]
    assert float(rows[0]["fam_dish_accuracy"]) == pytest.approx(2 / 3)


def test_without_pools_the_rows_are_the_full_runs():
    table, metrics = table_for(task1_records(), with_pools=False)
    rows = cells(table)
    assert rows[f"{MODEL} | baseline"]["1:Acc."] == "75.00"
    assert rows[f"{MODEL} | CoT"]["1:Acc."] == "25.00"
    assert any("no common pool" in note for note in table.notes)
    assert fam_tables(groups_frame([metrics]))["fam_table1"].rows == table.rows
    del metrics["pools"]  # a run scored without pools: the report pools nothing itself
    assert fam_tables(groups_frame([metrics]), fam_pool_entries([metrics]))[
        "fam_table1"].rows == table.rows


def test_score_writes_the_pool_into_metrics_json():
    metrics = score_records(task1_records(), bootstrap=50)
    assert [(p["model"], p["task"], p["methods"], p["n"]) for p in metrics["pools"]] == [
        (MODEL, "fam_dish", ["fam-baseline", "fam-cot"], 3)]
    accuracy = metrics["pools"][0]["metrics"]["fam-baseline"]["accuracy"]
    assert accuracy["value"] == pytest.approx(2 / 3)
    assert accuracy["low"] <= accuracy["value"] <= accuracy["high"]
    # Only text-input prompting modes are pooled; a run without one has no "pools" key.
    assert "pools" not in score_records([dish("fam-reference", 1, "recommend"),
                                         dish("fam-cot[image]", 1, "recommend")], bootstrap=0)
    assert fam_metrics.pooled_method("fam-cot-ki-limits")
    assert not fam_metrics.pooled_method("fam-cot-ki[text+image]")


def test_errors_leave_the_pool():
    records = task1_records()
    records[1] = dish("fam-baseline", 2, None, status="error")  # baseline item 2: an error
    table, _ = table_for(records)
    assert f"Pool size: {MODEL}: Task 1 n = 2." in table.notes  # items 1 and 3
    rows = cells(table)
    assert rows[f"{MODEL} | baseline"]["1:Acc."] == "50.00"  # right on 1, wrong on 3
    assert rows[f"{MODEL} | CoT"]["1:Acc."] == "50.00"  # right on 1, wrong on 3


def test_an_empty_pool_shows_dashes():
    records = [dish("fam-baseline", 1, "recommend"), dish("fam-cot", 2, "recommend")]
    table, _ = table_for(records)
    rows = cells(table)
    assert rows[f"{MODEL} | baseline"]["1:Acc."] == "-"
    assert rows[f"{MODEL} | baseline"]["1:Unparseable"] == "0.00"
    assert f"Pool size: {MODEL}: Task 1 n = 0." in table.notes


def test_modes_scored_in_separate_runs_leave_their_model_and_task_unpooled():
    records = task1_records()
    runs = [score_records([r for r in records if r.method == method], bootstrap=0)
            for method in ("fam-baseline", "fam-cot")]
    table = fam_table1(groups_frame(runs), fam_pool_entries(runs))
    assert table is not None
    assert cells(table)[f"{MODEL} | baseline"]["1:Acc."] == "75.00"  # the full runs
    assert cells(table)[f"{MODEL} | CoT"]["1:Acc."] == "25.00"
    assert any("not pooled (fam-baseline not in a common pool" in note for note in table.notes)


def test_each_model_has_its_own_pool_and_other_rows_are_full_runs():
    other = "other/model"
    records = task1_records() + [
        dish("fam-baseline", n, "not_recommend", model=other) for n in (1, 2, 3, 4)] + [
        dish("fam-cot", n, "recommend", model=other) for n in (1, 2, 3, 4)] + [
        dish("fam-reference", n, "not_recommend") for n in (1, 2)] + [
        dish("fam-baseline[image]", n, d) for n, d in [(1, "recommend"), (2, None),
                                                       (3, "not_recommend"),
                                                       (4, "not_recommend")]]
    table, _ = table_for(records)
    rows = cells(table)
    # Models in table order (scoring sorts the groups, so other/model comes first).
    assert [row[0] for row in table.rows][0] == other
    assert f"Pool size: {other}: Task 1 n = 4; {MODEL}: Task 1 n = 3." in table.notes
    assert rows[f"{other} | baseline"]["1:Acc."] == "100.00"
    assert rows[f"{other} | CoT"]["1:Acc."] == "0.00"
    assert rows[f"{MODEL} | baseline"]["1:Acc."] == "66.67"
    # Neither the reference nor an image variant joins (or shrinks) the pool.
    assert rows[f"{MODEL} | reference"]["1:Acc."] == "100.00"
    assert rows[f"{MODEL} | baseline (image)"]["1:Acc."] == "50.00"  # 2 of 4, full run
    csv_rows = {r["method"] + "@" + r["model"]: r
                for r in csv.DictReader(io.StringIO(to_csv(table)))}
    assert csv_rows[f"fam-reference@{MODEL}"]["fam_dish_pooled"] == "False"
    assert csv_rows[f"fam-baseline[image]@{MODEL}"]["fam_dish_n"] == "4"


def test_the_limit_modes_share_the_pool():
    records = task1_records() + [dish("fam-ki-limits", n, "not_recommend") for n in (1, 2)]
    table, _ = table_for(records)
    assert f"Pool size: {MODEL}: Task 1 n = 2." in table.notes
    assert [row[1] for row in table.rows] == ["baseline", "CoT", "KI+limits"]


# --- Task 2 and CTC on the pool --------------------------------------------------------------


def test_ranking_pool_needs_a_ranking_and_every_option_decision():
    records = [rank("fam-ki", n, GOLD_RANK, decided("AB")) for n in (1, 2, 3)] + [
        rank("fam-cot-ki", 1, GOLD_RANK, decided("AB")),
        rank("fam-cot-ki", 2, ["A", "B", "C", "D"], decided("AB") | {"D": None}),
        rank("fam-cot-ki", 3, ["C", "A", "B", "D"], decided("AB"))]
    table, metrics = table_for(records)
    rows = cells(table)
    assert f"Pool size: {MODEL}: Task 2 n = 2." in table.notes  # items 1 and 3
    assert full_run(metrics, "fam-cot-ki", "fam_rank", "top1_accuracy") == pytest.approx(1 / 3)
    assert rows[f"{MODEL} | CoT+KI"]["2:Top-1"] == "50.00"  # right on 1, wrong on 3
    assert rows[f"{MODEL} | KI"]["2:Top-1"] == "100.00"


def test_ctc_on_the_pool_is_micro_averaged():
    # Item 1: A recommended, B-D not; ranking puts A first: 3 of 3 pairs agree (ratio 1).
    # Item 2: A, B recommended; ranking C, A, D, B: only (A, D) agrees, 1 of 4 pairs.
    # Item 3: answered by CoT only, so outside the pool (its 4 pairs would all agree).
    cot = [rank("fam-cot", 1, ["A", "B", "C", "D"], decided("A")),
           rank("fam-cot", 2, ["C", "A", "D", "B"], decided("AB")),
           rank("fam-cot", 3, ["A", "B", "C", "D"], decided("AB"))]
    baseline = [rank("fam-baseline", n, GOLD_RANK, decided("B")) for n in (1, 2)] + [
        rank("fam-baseline", 3, [], None)]
    table, metrics = table_for(cot + baseline)
    micro, macro = (3 + 1) / (3 + 4), (1 + 1 / 4) / 2
    assert round(micro, 4) != round(macro, 4)
    csv_rows = {r["method"]: r for r in csv.DictReader(io.StringIO(to_csv(table)))}
    assert float(csv_rows["fam-cot"]["fam_rank_ctc"]) == pytest.approx(micro)
    assert csv_rows["fam-cot"]["fam_rank_n"] == "2"
    assert cells(table)[f"{MODEL} | CoT"]["2:CTC"] == f"{micro:.4f}"
    # The full run (metrics.json) keeps item 3: (3 + 1 + 4) / (3 + 4 + 4).
    assert full_run(metrics, "fam-cot", "fam_rank", "ctc") == pytest.approx(8 / 11)
    assert cells(table)[f"{MODEL} | baseline"]["2:CTC"] == "1.0000"  # B first: 3 of 3 twice
