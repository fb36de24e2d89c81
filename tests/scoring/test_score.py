"""score_run on a small run made by the engine: schema, oracle = 1.0, errors counted apart."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from nutrireason.models.errors import ModelError
from nutrireason.models.retry import RetryPolicy
from nutrireason.models.scripted import register
from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.ngqa.questions import gold_answers
from nutrireason.runs import RunConfig, run
from nutrireason.scoring import score_run, write_scores

PROFILES = [  # (food tags, user conditions, link edges, diets)
    (["high_sodium", "low_carb"], ["hypertension"], [("hypertension", "contradict",
                                                      "high_sodium")], []),
    (["low_carb", "high_sugar"], ["diabetes"], [("diabetes", "match", "low_carb"),
                                                ("diabetes", "contradict", "high_sugar")],
     ["keto"]),
    (["low_sugar", "low_carb"], ["diabetes"], [("diabetes", "match", "low_carb"),
                                               ("diabetes", "match", "low_sugar")], ["keto"]),
]
ANSWERS: dict[str, str] = {}  # food name -> the gold answer as text


def items(path: Path) -> Path:
    config = load_ngqa_config()
    lines = []
    for task in ("binary", "multi_label", "text_generation"):
        for i in range(6):
            tags, conditions, links, diets = PROFILES[i % 3]
            food = f"Food{task}{i}"
            triples = [(food, "belongs to", t) for t in tags]
            triples += [("user", "has", c) for c in conditions] + links
            gold = gold_answers([t for t in triples if t[1] in ("match", "contradict")], config)
            answer = gold[task]
            ANSWERS[food] = ", ".join(answer) if isinstance(answer, list) else answer
            signal = [t for t in triples if t[0] == "user" or t[1] != "belongs to"
                      or any(t[2] == link[2] for link in links)]
            lines.append({"id": f"{task}-{i}", "task": task, "level": "sparse" if i < 3
                          else "complex", "food": food, "question": f"Is {food} healthy?",
                          "triples": triples, "answer": answer, "signal": signal,
                          "conditions": conditions, "diets": diets})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def gold_reply(request) -> str:
    text = request.messages[-1].text()
    food = next(f for f in sorted(ANSWERS, key=len, reverse=True) if f"{f} " in text)
    if food.endswith("0"):
        raise ModelError("auth", "refused")  # one error per task, never an answer
    return ANSWERS[food]


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("scoring")
    register("gold_reply", gold_reply)
    run(RunConfig(benchmark=items(tmp / "items.jsonl"), out=tmp / "run",
                  methods=["oracle", "plain"], models=["scripted/gold_reply"], cache=False,
                  progress=False, retry=RetryPolicy(max_attempts=1, base_delay=0.001)))
    scores = score_run(tmp / "run", bootstrap=200)
    write_scores(tmp / "run", scores)
    return tmp / "run", scores


DESIGN_KEYS = {"naive_low", "naive_high", "design_effect"}
MEAN_KEYS = {"se", "naive_se"}  # only for metrics that are means of per-sample values


def check_metric(m: dict) -> None:
    assert set(m) - MEAN_KEYS == {"value", "low", "high"} | DESIGN_KEYS
    assert all(isinstance(v, float) for k, v in m.items() if k != "design_effect")
    assert m["low"] <= m["value"] <= m["high"]
    assert m["naive_low"] <= m["value"] <= m["naive_high"]
    assert m["design_effect"] is None or m["design_effect"] >= 0


def test_metrics_json_matches_the_schema(scored):
    run_dir, scores = scored
    data = json.loads((run_dir / "metrics.json").read_text())
    assert data == json.loads(json.dumps(scores))
    assert set(data) == {"run", "records", "bertscore_model", "groups", "breakdowns"}
    assert data["records"] == 36 and data["bertscore_model"] is None
    assert isinstance(data["run"], str) and len(data["groups"]) == 12
    names = {"binary": {"accuracy", "precision", "recall", "f1", "unparseable_rate"},
             "multi_label": {"accuracy", "precision", "recall", "f1", "subset_accuracy",
                             "unparseable_rate"},
             "text_generation": {"rouge1", "rouge2", "rougeL", "bleu", "unparseable_rate"}}
    for g in data["groups"]:
        assert set(g) == {"method", "model", "task", "level", "n", "errors", "error_rate",
                          "clusters", "metrics", "efficiency", "retrieval", "method_stats",
                          "reading"}
        assert g["clusters"]["by"] == "user_id" and 1 <= g["clusters"]["count"] <= g["n"]
        assert set(g["reading"]) == {"truncated_rate", "refusal_rate", "hedge_rate", "rules",
                                     "reasons", "reasoning_tokens"}
        assert sum(g["reading"]["rules"].values()) == g["n"]
        assert set(g["metrics"]) == names[g["task"]]
        for m in g["metrics"].values():
            check_metric(m)
        assert set(g["efficiency"]) == {"calls_per_sample", "prompt_tokens",
                                        "completion_tokens", "latency_s"}
        assert set(g["retrieval"]) == {"precision", "recall", "f1"}
        for m in g["retrieval"].values():
            check_metric(m)
    assert set(data["breakdowns"]) == {"condition", "diet"}
    for key in ("condition", "diet"):
        for b in data["breakdowns"][key]:
            assert set(b) == {"method", "model", "task", key, "n", "metrics"}
    conditions = {b["condition"] for b in data["breakdowns"]["condition"]}
    assert conditions == {"hypertension", "diabetes"}
    assert {b["diet"] for b in data["breakdowns"]["diet"]} == {"keto"}
    rows = list(csv.DictReader((run_dir / "metrics_groups.csv").open()))
    assert {r["metric"] for r in rows} >= {"accuracy", "retrieval_f1", "efficiency_latency_s"}
    assert list(csv.DictReader((run_dir / "metrics_diets.csv").open()))[0]["diet"] == "keto"


def test_oracle_and_gold_replies_score_one_and_errors_are_counted_apart(scored):
    _, scores = scored
    for g in scores["groups"]:
        assert all(m["value"] == 1.0 for k, m in g["metrics"].items()
                   if k != "unparseable_rate"), g
        assert g["metrics"]["unparseable_rate"]["value"] == 0.0
        if g["method"] == "oracle":
            assert (g["n"], g["errors"], g["error_rate"]) == (3, 0, 0.0)
            assert g["efficiency"]["calls_per_sample"] == 0
        elif g["level"] == "sparse":  # item 0 of each task errors: scored on the other two
            assert (g["n"], g["errors"]) == (2, 1) and g["error_rate"] == pytest.approx(1 / 3)
            assert g["efficiency"]["calls_per_sample"] == 1
        else:
            assert (g["n"], g["errors"]) == (3, 0)
    plain_hyper = [b for b in scores["breakdowns"]["condition"]
                   if b["method"] == "plain" and b["condition"] == "hypertension"]
    assert [b["n"] for b in plain_hyper] == [1, 1, 1]  # items 0 (error) and 3 per task


def test_bertscore_without_the_dependency_names_the_extra(scored, monkeypatch):
    import sys

    from nutrireason.models.errors import MissingDependency

    run_dir, _ = scored
    monkeypatch.setitem(sys.modules, "bert_score", None)
    with pytest.raises(MissingDependency, match="bertscore"):
        score_run(run_dir, bootstrap=0, bertscore=True)
