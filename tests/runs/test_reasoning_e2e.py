"""A reasoning model end to end: `nutrireason run` against a local OpenAI-compatible server
(127.0.0.1, stops by itself) that thinks in a separate ``reasoning_content`` field, in
``<think>`` blocks and in harmony channels, drafts wrong answers in its thinking, refuses once
and is cut off at the token limit; then `score` and `report`.

Each reply is written with the answer a careful grader takes from it (the final answer only;
a cut-off reply has none) and the test checks that records, metrics.json and the report say
the same.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.schema import read_records
from tests.methods.test_fam_methods import CABBAGE, RANK_DISHES, dish_item, rank_item
from tests.models.fake_openai import FakeOpenAI
from tests.report import page_samples

pytest.importorskip("openai")

TRIPLES = [["user", "has", "hypertension"], ["Soup, chicken noodle", "has", "high_sodium"],
           ["hypertension", "contradict", "high_sodium"]]


def ngqa_item(number: int, task: str, question: str, answer: Any) -> dict[str, Any]:
    return {"id": f"q{number}", "task": task, "level": "sparse", "question": question,
            "food": "Soup, chicken noodle", "triples": TRIPLES, "edges": [], "answer": answer}


NGQA = [
    # (item, the server's reply, what the grader reads: value or None, reason)
    (ngqa_item(1, "binary", "Is Soup one a healthy food for the user?", "No"),
     {"content": "No", "reasoning_tokens": 41,
      "reasoning_content": "I have to answer Yes or No. At first glance yes, but sodium..."},
     "No", None),
    (ngqa_item(2, "binary", "Is Soup two a healthy food for the user?", "Yes"),
     {"content": "<think>\nThe answer is no? Wait, the graph says low sodium.\n</think>\n\n"
                 "**Yes**"},
     "Yes", None),
    (ngqa_item(3, "binary", "Is Soup three a healthy food for the user?", "No"),
     {"content": "", "finish_reason": "length", "reasoning_tokens": 512,
      "reasoning_content": "The user has hypertension, so it might be no. Let me double-check"},
     None, "truncated"),
    (ngqa_item(4, "binary", "Is Soup four a healthy food for the user?", "No"),
     {"content": "I can't provide medical advice. Please consult your doctor or a dietitian."},
     None, "refusal"),
    (ngqa_item(5, "multi_label", "What tags of Soup five connect it to the user?",
               ["high_sodium", "low_protein"]),
     {"content": "<think>\n- low_carb\n- high_sugar\n</think>\nThe tags that connect the food "
                 "to the user are high sodium and low protein."},
     ["high_sodium", "low_protein"], None),
    (ngqa_item(6, "text_generation", "Is Soup six a healthy food for the user? Explain.",
               "No, because the food is high in sodium."),
     {"content": "<|channel|>analysis<|message|>Draft: Yes, because the food is low in carb."
                 "<|end|><|start|>assistant<|channel|>final<|message|>No, because the food is "
                 "high in sodium.<|return|>"},
     "No, because the food is high in sodium.", None),
]

DISH_JSON = {"decision": "not_recommend",
             "rationale_ingredients": [{"condition": "Hypertension",
                                        "ingredients": ["olive oil"]}]}


def fam_reply(body: dict[str, Any]) -> dict[str, Any]:
    """Rank: a JSON draft in the thinking, a numbered list by title as the answer. Dish: a
    draft "recommend" in the thinking, the final JSON after it."""
    system = body["messages"][0]["content"]
    if system.startswith("You compare four dishes"):
        return {"content": '<think>{"ranking": ["A", "B", "C", "D"]}</think>\n'
                           "1. Braised Cabbage\n2. Olive Oil Toast\n3. Pan-Seared Sirloin\n"
                           "4. Breakfast Hash"}
    payload = json.loads(body["messages"][1]["content"])
    title = payload["recipe"]["title"]
    if title == "Breakfast Hash":
        return {"content": '{"decision": "not_rec', "finish_reason": "length"}
    return {"content": '<think>{"decision": "recommend"}</think>\n```json\n'
                       f"{json.dumps(DISH_JSON)}\n```"}


def ngqa_reply(body: dict[str, Any]) -> dict[str, Any]:
    text = body["messages"][-1]["content"]
    for item, reply, _, _ in NGQA:
        if item["question"] in text:
            return reply
    raise AssertionError(f"no reply scripted for {text[:80]!r}")


def invoke(*args: Any):
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result


def write_items(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def run_cli(items: Path, out: Path, method: str, url: str):
    return invoke("run", items, "--out", out, "--no-cache", "--no-progress", "--method", method,
                  "--model", f"openai-compatible/thinker@{url}", "--concurrency", "1")


@pytest.fixture(scope="module")
def ngqa_run(tmp_path_factory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("reasoning-ngqa")
    items = write_items(root / "ngqa.jsonl", [item for item, _, _, _ in NGQA])
    with FakeOpenAI(ngqa_reply) as server:
        result = run_cli(items, root / "run", "plain", server.url)
    assert result.exit_code == 0, result.output
    return root / "run", result.output


def test_records_hold_the_final_answers_and_the_reasoning_apart(ngqa_run):
    run_dir, _ = ngqa_run
    records = {r.item_id: r for r in read_records(run_dir / "records.jsonl")}
    for item, reply, value, reason in NGQA:
        record = records[item["id"]]
        assert record.status == "ok"
        assert record.parse_ok is (reason is None), item["id"]
        assert record.reading["reason"] == reason, item["id"]
        if reason is None:
            assert record.parsed == value, item["id"]
        assert record.finish_reasons == [reply.get("finish_reason", "stop")]
    assert records["q1"].reasoning == [NGQA[0][1]["reasoning_content"]]
    assert records["q1"].reading["form"] == "reasoning_field"
    assert records["q1"].usage["reasoning_tokens"] == 41
    assert records["q2"].reasoning[0].startswith("The answer is no?")
    assert records["q2"].reading == {"rule": "verdict_first", "reason": None, "form": "think"}
    assert records["q3"].usage["reasoning_tokens"] == 512
    assert records["q6"].reading["form"] == "harmony"
    assert "Draft: Yes" in records["q6"].reasoning[0]


def test_the_run_summary_counts_cut_off_answers_and_refusals_and_warns(ngqa_run):
    _, output = ngqa_run
    assert "2 unparseable" in output and "1 cut off, 1 refusals" in output
    # 1 of the 4 binary answers cut off (25 %): above 5 %, so the run names the setting
    assert "plain | openai-compatible/thinker | binary: 1 of 4 answers (25%) were cut off" \
        in " ".join(output.split())
    assert "--max-tokens" in output


def test_score_reports_truncated_and_refusal_rates_and_scores_the_final_answers(ngqa_run):
    run_dir, _ = ngqa_run
    result = invoke("score", run_dir, "--bootstrap", "0")
    assert result.exit_code == 0, result.output
    metrics = json.loads((run_dir / "metrics.json").read_text())
    groups = {g["task"]: g for g in metrics["groups"]}
    binary = groups["binary"]
    assert binary["reading"]["truncated_rate"] == 0.25
    assert binary["reading"]["refusal_rate"] == 0.25
    assert binary["reading"]["reasons"] == {"refusal": 1, "truncated": 1}
    assert binary["metrics"]["accuracy"]["value"] == 0.5  # q1, q2 right; q3, q4 unparseable
    assert binary["metrics"]["unparseable_rate"]["value"] == 0.5
    assert binary["reading"]["reasoning_tokens"] == pytest.approx((41 + 0 + 512 + 0) / 4, abs=20)
    assert groups["multi_label"]["metrics"]["subset_accuracy"]["value"] == 1.0
    assert groups["text_generation"]["metrics"]["rougeL"]["value"] == 1.0
    rows = (run_dir / "metrics_groups.csv").read_text()
    assert "reading_truncated_rate" in rows and "reading_refusal_rate" in rows


def test_the_report_shows_rates_rules_and_the_reasoning_folded(ngqa_run, tmp_path):
    run_dir, _ = ngqa_run
    assert invoke("score", run_dir, "--bootstrap", "0").exit_code == 0
    result = invoke("report", run_dir, "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    page = tmp_path / "report" / "report.html"
    html = page.read_text()
    assert 'id="reading"' in html and "Cut off" in html and "25.0% (!)" in html
    assert 'id="filter-rule"' in html and 'id="filter-reason"' in html
    samples = {s["item"]: s for s in page_samples(page)}
    assert samples["q3"]["reason"] == "truncated" and samples["q4"]["reason"] == "refusal"
    assert samples["q1"]["calls"][0]["reasoning"].startswith("I have to answer Yes or No")
    assert samples["q1"]["calls"][0]["response"] == "No"
    assert samples["q2"]["calls"][0]["response"] == "**Yes**"
    assert samples["q3"]["calls"][0]["response"] == ""
    assert samples["q3"]["calls"][0]["finish_reason"] == "length"
    reading_md = (tmp_path / "report" / "reading.md").read_text()
    assert "refusal 1" in reading_md and "truncated 1" in reading_md


def test_fam_bench_reads_the_final_json_and_a_ranking_by_titles(tmp_path):
    items = write_items(tmp_path / "fam.jsonl",
                        [dish_item(1, CABBAGE, "hypertension", REC, ["cabbage"]), rank_item()])
    with FakeOpenAI(fam_reply) as server:
        result = run_cli(items, tmp_path / "run", "fam-baseline", server.url)
    assert result.exit_code == 0, result.output
    records = {r.item_id: r for r in read_records(tmp_path / "run" / "records.jsonl")}
    dish = records["dish-00001"]
    assert dish.parsed == {"decision": NOT_REC, "ingredients": ["olive oil"]}
    assert dish.reading == {"rule": "json", "reason": None, "form": "think"}
    rank = records["rank-00001"]
    titles = {k: d["view"]["title"] for k, d in RANK_DISHES.items()}
    assert [titles[k] for k in rank.parsed["ranking"]] == [
        "Braised Cabbage", "Olive Oil Toast", "Pan-Seared Sirloin", "Breakfast Hash"]
    assert rank.reading["rule"] == "numbered"
    # The hash option's dish call was cut off: no decision for it, the reason recorded.
    assert rank.parsed["option_decisions"]["C"] is None
    assert rank.extra["option_readings"]["C"]["reason"] == "truncated"
    assert rank.finish_reasons.count("length") == 1
    assert invoke("score", tmp_path / "run", "--bootstrap", "0").exit_code == 0
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    by_task = {g["task"]: g for g in metrics["groups"]}
    assert by_task["fam_dish"]["metrics"]["accuracy"]["value"] == 0.0  # gold REC, read NOT_REC
    assert by_task["fam_rank"]["metrics"]["top1_accuracy"]["value"] == 1.0
