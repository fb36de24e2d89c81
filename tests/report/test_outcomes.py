"""The report decides nothing itself: sample outcomes come from scores.jsonl, pooled numbers
from metrics.json (weighted as the scorer defines each metric), and a run without per-sample
scores is refused with the command that writes them."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest

from nutrireason.display.groups import groups_frame
from nutrireason.errors import DataError
from nutrireason.ngqa.report import TASKS, ngqa_frame, retrieval_by_method
from nutrireason.report import build_report
from nutrireason.report.html import outcome
from nutrireason.schema import SCORES_FILE, SampleScore, read_records, read_scores
from nutrireason.scoring.score import score_run, write_scores
from tests.report import page_samples
from tests.scoring.test_sample_scores import records


def scored_run(path: Path, drop: tuple[str, ...] = ()) -> Path:
    """A run scored by ``score`` (records of every task; ``drop``: item ids of tog left out)."""
    path.mkdir(parents=True)
    kept = [r for r in records() if not (r.method == "tog" and r.item_id in drop)]
    (path / "records.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in kept))
    write_scores(path, score_run(path, bootstrap=0))
    return path


def rows(page: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """(method, item id) -> (outcome, the outcome cell's text) for every sample.

    The samples are JSON that the page's script renders (no server-side rows);
    the cell's text is its label, details and error, as the script shows them."""
    out = {}
    for sample in page_samples(page):
        cell = "  ".join(part for part in (sample["label"], sample["detail"], sample["error"])
                         if part)
        out[(sample["method"], sample["item"])] = (sample["outcome"], cell)
    return out


@pytest.fixture()
def run(tmp_path) -> Path:
    return scored_run(tmp_path / "run")


def test_every_outcome_is_the_scored_one(run, tmp_path):
    shown = rows(build_report([run], tmp_path / "out"))
    scores = read_scores(run)
    assert len(shown) == len(scores)
    for score in scores.values():
        assert shown[(score.method, score.item_id)][0] == outcome(score)


def test_text_generation_shows_rouge_not_a_verdict(run, tmp_path):
    shown = rows(build_report([run], tmp_path / "out"))
    scores = read_scores(run)
    texts = [s for s in scores.values() if s.task == "text_generation" and s.status == "ok"]
    assert texts
    for score in texts:
        result, cell = shown[(score.method, score.item_id)]
        assert result == "scored"
        assert cell.startswith(f"ROUGE-L {score.values['rougeL']:.4f}")
    # The exact-match answer and the wrong one alike: never "incorrect".
    assert not [key for key, (result, _) in shown.items()
                if result == "incorrect" and "text_generation" in key[1]]


def test_tampered_scores_change_the_badges(run, tmp_path):
    before = rows(build_report([run], tmp_path / "before"))
    assert before[("plain", "binary-sparse-0")][0] == "correct"
    assert before[("plain", "binary-sparse-1")][0] == "incorrect"
    path = run / SCORES_FILE
    lines = []
    for line in path.read_text().splitlines():
        data = json.loads(line)
        if data["method"] == "plain" and data["item_id"] in ("binary-sparse-0",
                                                             "binary-sparse-1"):
            data["correct"] = not data["correct"]
        if data["method"] == "plain" and data["item_id"] == "text_generation-sparse-1":
            data["values"]["rougeL"] = 0.123456
        lines.append(json.dumps(data))
    path.write_text("\n".join(lines) + "\n")
    after = rows(build_report([run], tmp_path / "after"))
    assert after[("plain", "binary-sparse-0")][0] == "incorrect"
    assert after[("plain", "binary-sparse-1")][0] == "correct"
    assert after[("plain", "text_generation-sparse-1")][1].startswith("ROUGE-L 0.1235")
    changed = {key for key in before if before[key] != after[key]}
    assert changed == {("plain", "binary-sparse-0"), ("plain", "binary-sparse-1"),
                       ("plain", "text_generation-sparse-1")}


def test_details_beside_the_verdict(run, tmp_path):
    shown = rows(build_report([run], tmp_path / "out"))
    assert shown[("plain", "multi_label-sparse-1")] == ("incorrect", "incorrect  Jaccard 0.5000")
    assert shown[("plain", "multi_label-sparse-3")][1].endswith("unparseable")
    assert shown[("fam-cot", "fam_rank--1")][1] == "incorrect  MRR 0.5000, Kendall tau 0.3333"
    assert shown[("plain", "binary-sparse-9")][0] == "error"
    assert "timed out" in shown[("plain", "binary-sparse-9")][1]


def test_missing_scores_names_the_file_and_the_command(run, tmp_path):
    (run / SCORES_FILE).unlink()
    with pytest.raises(DataError, match=r"run `nutrireason score .*` first") as info:
        build_report([run], tmp_path / "out")
    assert str(run / SCORES_FILE) in str(info.value)


def test_scores_older_than_the_records_are_refused(run, tmp_path):
    lines = (run / SCORES_FILE).read_text().splitlines()
    (run / SCORES_FILE).write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(DataError, match="out of date with records.jsonl") as info:
        build_report([run], tmp_path / "out")
    assert "nutrireason score" in str(info.value)


def test_efficiency_pools_every_record_as_the_scorer_does(run, tmp_path):
    build_report([run], tmp_path / "out")
    table = {r["method"]: r for r in csv.DictReader(
        io.StringIO((tmp_path / "out" / "efficiency.csv").read_text()))}
    for method in ("plain", "tog"):
        chosen = [r for r in read_records(run) if r.method == method and r.task in TASKS]
        assert any(r.status == "error" for r in chosen)
        row = table[method]
        assert int(row["records"]) == len(chosen)
        assert int(row["n"]) == sum(r.status == "ok" for r in chosen)
        assert float(row["prompt_tokens"]) == pytest.approx(
            np.mean([r.usage["prompt_tokens"] for r in chosen]))
        assert float(row["latency_s"]) == pytest.approx(np.mean([r.latency_s for r in chosen]))


def test_pooled_retrieval_is_the_mean_over_the_samples_it_scores(tmp_path):
    run = scored_run(tmp_path / "run", drop=("multi_label-sparse-0", "multi_label-sparse-1"))
    metrics = json.loads((run / "metrics.json").read_text())
    scores = read_scores(run)
    frame = ngqa_frame(groups_frame([metrics], [scores.values()]))
    pooled = retrieval_by_method(frame).set_index("method").loc["tog"]
    for name in ("precision", "recall", "f1"):
        values = [s.values[f"retrieval_{name}"] for s in scores.values()
                  if s.method == "tog" and s.task in TASKS and f"retrieval_{name}" in s.values]
        assert pooled[name] == pytest.approx(np.mean(values))
    # Weighting by the groups' scored samples instead would give another figure here.
    by_n = retrieval_by_method(ngqa_frame(groups_frame([metrics]))).set_index("method")
    assert by_n.loc["tog", "precision"] != pytest.approx(pooled["precision"])


def test_fam_table1_reads_the_pool_score_wrote(run, tmp_path):
    build_report([run], tmp_path / "out")
    row = next(csv.DictReader(io.StringIO((tmp_path / "out" / "fam_table1.csv").read_text())))
    pool = json.loads((run / "metrics.json").read_text())["pools"]
    dish = next(p for p in pool if p["task"] == "fam_dish")
    assert row["method"] == "fam-cot" and row["fam_dish_pooled"] == "True"
    assert int(row["fam_dish_n"]) == dish["n"] == 3  # item 2 has no decision
    assert float(row["fam_dish_accuracy"]) == dish["metrics"]["fam-cot"]["accuracy"]["value"]


def _score(**fields) -> SampleScore:
    base = {"key": "k", "item_id": "i", "method": "m", "model": "x", "task": "binary",
            "level": "", "status": "ok", "parse_ok": True}
    return SampleScore(**(base | fields))


def test_outcome_reads_the_score():
    assert outcome(_score(correct=True)) == "correct"
    assert outcome(_score(correct=False, parse_ok=False)) == "incorrect"
    assert outcome(_score(task="text_generation", correct=None,
                          values={"rougeL": 0.2})) == "scored"
    assert outcome(_score(status="error", parse_ok=False)) == "error"
