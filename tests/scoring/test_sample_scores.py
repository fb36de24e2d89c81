"""scores.jsonl: one SampleScore per record, read off the same per-sample columns the group
metrics are means of, so a group's metric is the mean of its samples' values."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nutrireason.errors import NutriReasonError
from nutrireason.schema import (
    METRICS_FILE,
    SCORES_FILE,
    Record,
    read_records,
    read_scores,
    record_key,
)
from nutrireason.scoring import metrics as M
from nutrireason.scoring.score import score_records, score_run, write_scores

MODEL = "scripted/samples"
SALT = [{"line": "1 tsp salt", "food": "salt", "canonical": "salt"},
        {"line": "1 cup oats", "food": "oats", "canonical": "oats"}]
SIGNAL = [["user", "has", "hypertension"], ["hypertension", "contradict", "high_sodium"]]


def rec(task: str, index: int, parsed: Any, gold: Any, *, method: str = "plain",
        level: str = "sparse", parse_ok: bool = True, status: str = "ok",
        retrieved: list | None = None, signal: list | None = None,
        conditions: tuple[str, ...] = ()) -> Record:
    item_id = f"{task}-{level}-{index}"
    return Record(key=record_key(item_id, method, MODEL), item_id=item_id, method=method,
                  model=MODEL, status=status, parsed=None if status == "error" else parsed,
                  parse_ok=parse_ok and status == "ok", gold=gold, retrieved=retrieved,
                  usage={"prompt_tokens": 10 + index, "completion_tokens": 3}, n_calls=1,
                  latency_s=0.1 * index,
                  error={"type": "Timeout", "message": "timed out"} if status == "error"
                  else None,
                  meta={"task": task, "level": level, "signal": signal or [],
                        "conditions": list(conditions), "diets": []})


def records() -> list[Record]:
    """Every task, right and wrong answers, an unparseable one and an error per family, two
    levels, retrieval on some tog samples only."""
    out: list[Record] = []
    for level in ("sparse", "complex"):
        for method in ("plain", "tog"):
            def tog(i: int, method: str = method) -> dict[str, Any]:
                if method != "tog":
                    return {}
                got = [SIGNAL[0], ["food", "is", "salty"]] if i % 2 else SIGNAL[:1]
                return {"retrieved": got, "signal": SIGNAL if i != 3 else []}

            binary = [("Yes", "Yes"), ("No", "Yes"), ("Maybe", "No"), ("No", "No")]
            for i, (p, g) in enumerate(binary):
                out.append(rec("binary", i, p, g, method=method, level=level,
                               conditions=("hypertension",) if i < 2 else (), **tog(i)))
            labels = [(["low_carb", "high_sugar"], ["high_sugar", "low_carb"]),
                      (["low_carb"], ["low_carb", "high_sodium"]), ([], []),
                      (["high_sodium"], ["low_sugar"])]
            for i, (p, g) in enumerate(labels):
                out.append(rec("multi_label", i, p, g, method=method, level=level,
                               parse_ok=i != 3, **tog(i)))
            texts = [("No, it is high in sodium.", "No, it is high in sodium."),
                     ("Yes, it is fine.", "No, it is high in sugar."),
                     ("It depends on the sugar.", "No, it is high in sugar."),
                     ("", "Yes, low in carbs.")]
            for i, (p, g) in enumerate(texts):
                out.append(rec("text_generation", i, p, g, method=method, level=level,
                               parse_ok=i != 3, **tog(i)))
            out.append(rec("binary", 9, None, "Yes", method=method, level=level,
                           status="error"))
    dish_gold = {"decision": "not_recommend", "condition": "hypertension",
                 "rationale": ["salt"], "ingredients": SALT}
    for i, (decision, cited) in enumerate([("not_recommend", ["salt"]), ("recommend", []),
                                           (None, []), ("not_recommend", ["oats"])]):
        out.append(rec("fam_dish", i, {"decision": decision, "ingredients": cited}, dish_gold,
                       method="fam-cot", level="", parse_ok=decision is not None))
    rank_gold = {"ranking": ["B", "A", "D", "C"]}
    decisions = {"A": "recommend", "B": "recommend", "C": "not_recommend",
                 "D": "not_recommend"}
    for i, ranking in enumerate([["B", "A", "D", "C"], ["A", "B", "C", "D"], ["C", "B"], []]):
        out.append(rec("fam_rank", i, {"ranking": ranking, "option_decisions": decisions},
                       rank_gold, method="fam-cot", level="", parse_ok=bool(ranking)))
    out += [rec("lookup", 0, "42", "42"), rec("lookup", 1, "41", "42"),
            rec("lookup", 2, "42", "42", parse_ok=False)]
    return out


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("samples") / "run"
    path.mkdir()
    (path / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records()))
    write_scores(path, score_run(path, bootstrap=100))
    return path


def by_key(run_dir: Path) -> dict[str, Any]:
    return read_scores(run_dir)


def test_one_score_per_record_in_records_order(run_dir):
    lines = (run_dir / SCORES_FILE).read_text().splitlines()
    keys = [json.loads(line)["key"] for line in lines]
    assert keys == [r.key for r in read_records(run_dir)]
    scores = by_key(run_dir)
    for record in read_records(run_dir):
        score = scores[record.key]
        assert (score.item_id, score.method, score.model, score.task, score.level,
                score.status, score.parse_ok) == (
            record.item_id, record.method, record.model, record.task, record.level,
            record.status, record.parse_ok)


def test_metrics_json_holds_no_samples(run_dir):
    text = (run_dir / METRICS_FILE).read_text()
    data = json.loads(text)
    # "pools": FAM-Bench Table 1's common pool (this run has a prompting mode, fam-cot).
    assert set(data) == {"run", "records", "bertscore_model", "groups", "breakdowns", "pools"}
    scores = score_run(run_dir, bootstrap=100)
    assert text == json.dumps(scores, indent=2, sort_keys=True, default=str) + "\n"
    assert len(scores.samples) == data["records"]


def _means(run_dir: Path) -> dict[tuple, dict[str, list[float]]]:
    columns: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for score in by_key(run_dir).values():
        key = (score.method, score.model, score.task, score.level)
        for name, value in score.values.items():
            columns[key][name].append(value)
    return columns


def test_group_metrics_are_the_means_of_the_sample_values(run_dir):
    data = json.loads((run_dir / METRICS_FILE).read_text())
    columns = _means(run_dir)
    checked = set()
    for group in data["groups"]:
        key = (group["method"], group["model"], group["task"], group["level"])
        values = columns[key]
        for name, column in values.items():
            if name.startswith("retrieval_"):
                metric = group["retrieval"][name.removeprefix("retrieval_")]
            else:
                metric = group["metrics"][name]
                assert len(column) == group["n"]  # every scored sample, no error record
            assert np.mean(column) == pytest.approx(metric["value"], abs=1e-12), (key, name)
            checked.add((group["task"], name))
        has_retrieval = any(name.startswith("retrieval_") for name in values)
        assert has_retrieval == (group["retrieval"] is not None)
    assert checked >= {
        ("binary", "accuracy"), ("binary", "unparseable_rate"), ("binary", "retrieval_f1"),
        ("multi_label", "accuracy"), ("multi_label", "subset_accuracy"),
        ("text_generation", "rouge1"), ("text_generation", "rouge2"),
        ("text_generation", "rougeL"), ("fam_dish", "accuracy"),
        ("fam_dish", "recommend_rate"), ("fam_rank", "top1_accuracy"), ("fam_rank", "mrr"),
        ("fam_rank", "kendall_tau"), ("fam_rank", "ctc_coverage"), ("lookup", "accuracy")}


def test_breakdown_metrics_are_the_means_of_the_sample_values(run_dir):
    data = json.loads((run_dir / METRICS_FILE).read_text())
    scores = by_key(run_dir)
    conditions = {r.key: r.meta.get("conditions") or [] for r in read_records(run_dir)}
    for entry in data["breakdowns"]["condition"]:
        members = [s for s in scores.values() if s.status == "ok"
                   and (s.method, s.model, s.task) == (entry["method"], entry["model"],
                                                       entry["task"])
                   and entry["condition"] in conditions[s.key]]
        assert len(members) == entry["n"]
        for name in members[0].values:
            if not name.startswith("retrieval_"):
                assert np.mean([s.values[name] for s in members]) == pytest.approx(
                    entry["metrics"][name]["value"])


def test_correct_per_task(run_dir):
    scores = by_key(run_dir)

    def get(task: str, index: int, method: str = "plain", level: str = "sparse"):
        return scores[record_key(f"{task}-{level}-{index}", method, MODEL)]

    assert [get("binary", i).correct for i in range(4)] == [True, False, False, True]
    assert get("binary", 2).values["unparseable_rate"] == 1.0  # "Maybe": neither yes nor no
    # multi-label: exact set match; the partial answer is wrong but has Jaccard 1/2.
    assert [get("multi_label", i).correct for i in range(4)] == [True, False, True, False]
    assert get("multi_label", 1).values["accuracy"] == 0.5
    assert get("multi_label", 3).values == {"accuracy": 0.0, "subset_accuracy": 0.0,
                                            "unparseable_rate": 1.0}
    # text generation: no verdict, ROUGE per sample; unparseable scores as "".
    texts = [get("text_generation", i) for i in range(4)]
    assert [s.correct for s in texts] == [None] * 4
    assert texts[0].values["rougeL"] == 1.0 and 0 < texts[1].values["rougeL"] < 1
    assert set(texts[0].values) == {"rouge1", "rouge2", "rougeL", "unparseable_rate"}
    assert texts[3].values["rougeL"] == 0.0 and texts[3].values["unparseable_rate"] == 1.0
    # FAM: the decision; top-1 with MRR and Kendall tau.
    assert [get("fam_dish", i, "fam-cot", "").correct for i in range(4)] == [
        True, False, False, True]
    ranks = [get("fam_rank", i, "fam-cot", "") for i in range(4)]
    assert [s.correct for s in ranks] == [True, False, False, False]
    assert ranks[1].values["mrr"] == 0.5 and ranks[0].values["kendall_tau"] == 1.0
    assert ranks[3].values["unparseable_rate"] == 1.0 and ranks[3].values["mrr"] == 0.0
    # other tasks: exact match; unparseable is wrong even when it matches.
    assert [get("lookup", i).correct for i in range(3)] == [True, False, False]
    # errors: no verdict, no values.
    error = get("binary", 9)
    assert (error.status, error.correct, error.values, error.parse_ok) == ("error", None, {},
                                                                          False)


def test_retrieval_values_only_where_retrieval_counts(run_dir):
    scores = by_key(run_dir)
    tog = [scores[record_key(f"binary-sparse-{i}", "tog", MODEL)] for i in range(4)]
    assert [("retrieval_f1" in s.values) for s in tog] == [True, True, True, False]  # 3: no signal
    assert tog[0].values["retrieval_precision"] == 1.0
    assert tog[0].values["retrieval_recall"] == 0.5
    plain = scores[record_key("binary-sparse-0", "plain", MODEL)]
    assert not any(name.startswith("retrieval_") for name in plain.values)


def test_bertscore_values(monkeypatch):
    def fake(preds, refs, model=None):
        return np.array([len(p) / 100 for p in preds]), "fake/model"

    monkeypatch.setattr(M, "bertscore_f1", fake)
    chosen = [r for r in records() if r.task == "text_generation" and r.method == "plain"]
    scores = score_records(chosen, bootstrap=0, bertscore=True)
    for group in scores["groups"]:
        values = [s.values["bertscore_f1"] for s in scores.samples
                  if (s.level, s.status) == (group["level"], "ok")]
        assert np.mean(values) == pytest.approx(group["metrics"]["bertscore_f1"]["value"])
    first = next(s for s in scores.samples if s.item_id == "text_generation-sparse-0")
    assert first.values["bertscore_f1"] == pytest.approx(len("No, it is high in sodium.") / 100)
    unparseable = next(s for s in scores.samples if s.item_id == "text_generation-sparse-3")
    assert unparseable.values["bertscore_f1"] == 0.0


def test_write_scores_needs_the_scored_result(tmp_path):
    scores = score_records(records(), bootstrap=0)
    with pytest.raises(NutriReasonError, match="per-sample scores"):
        write_scores(tmp_path, json.loads(json.dumps(scores)))
    paths = write_scores(tmp_path, scores)
    assert paths["scores"] == tmp_path / SCORES_FILE
    assert len(read_scores(tmp_path)) == len(records())
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temp file


@pytest.mark.parametrize("make", [
    lambda: M.binary_table(["Yes", "No", "x"], ["Yes", "Yes", "No"], [True, True, True]),
    lambda: M.multilabel_table([["a"], ["a", "b"]], [["a", "b"], ["a", "b"]], [True, False]),
    lambda: M.text_table(["a b c", "b c"], ["a b", "b c d"], [True, True], [0.5, 0.25]),
    lambda: M.retrieval_table([[["a", "b", "c"]], []], [[["a", "b", "c"]], [["x", "y", "z"]]]),
    lambda: M.combine(M.mean_table({"x": [1.0, 0.0]}), M.mean_table({"y": [0.25, 0.75]})),
])
def test_table_values_are_the_columns_the_metrics_mean(make):
    table = make()
    point = table.point()
    assert table.values()
    for name, column in table.values().items():
        assert column.shape == (table.n,)
        assert column.mean() == pytest.approx(point[name])
        assert table.subset(np.array([1])).values()[name][0] == column[1]
