"""``--extractor``: a second model reads only the final answers no rule could read; both readings
are recorded and `score` reports both."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.models.errors import ModelError
from nutrireason.models.scripted import register
from nutrireason.runs import RunConfig, run
from nutrireason.schema import read_records
from nutrireason.scoring.score import score_run

TRIPLES = [["user", "has", "hypertension"], ["Soup", "has", "high_sodium"]]
ANSWERS = {
    # the model's final answer, in a form no rule reads: the extractor is asked
    "Is Soup one healthy?": "Given the salt content, I'd lean towards the negative.",
    # read by the rules: the extractor is not asked
    "Is Soup two healthy?": "No",
    # cut off, refused: never sent to the extractor
    "Is Soup three healthy?": "<think>The sodium is high so probably",
    "Is Soup four healthy?": "I can't give medical advice; please ask your doctor.",
    # the extractor's call fails: recorded, the sample keeps the rules' reading
    "Is Soup five healthy?": "Hmm, the soup is what it is, FAIL-EXTRACTOR.",
}


def item(number: int, question: str) -> dict:
    return {"id": f"q{number}", "task": "binary", "level": "sparse", "question": question,
            "food": "Soup", "triples": TRIPLES, "edges": [], "answer": "No"}


def model(request) -> str:
    text = request.messages[-1].text()
    return next(answer for question, answer in ANSWERS.items() if question in text)


def extractor(request) -> str:
    text = request.messages[-1].text()
    assert "<think>" not in text  # only the final answer is shown
    if "FAIL-EXTRACTOR" in text:
        raise ModelError("bad_request", "the extractor cannot answer")
    return "No" if "negative" in text else "NONE"


def run_with_extractor(tmp_path):
    """Every question of ANSWERS run with the scripted model and extractor, into tmp/run."""
    register("extractor-model", model)
    register("extractor-checker", extractor)
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps(item(n, q)) + "\n"
                             for n, q in enumerate(ANSWERS, start=1)))
    return run(RunConfig(benchmark=items, out=tmp_path / "run", methods=["plain"],
                         models=["scripted/extractor-model"], progress=False, cache=False,
                         extractor="scripted/extractor-checker"))


def test_the_extractor_reads_only_unread_answers_and_both_scores_are_reported(tmp_path):
    summary = run_with_extractor(tmp_path)
    assert summary.total_ok == 5
    records = {r.item_id: r for r in read_records(tmp_path / "run" / "records.jsonl")}
    first = records["q1"]
    assert (first.parsed, first.parse_ok) == (None, False)  # the rules' reading stays
    assert first.extra["extractor"]["parsed"] == "No"
    assert first.extra["extractor"]["parse_ok"] is True
    assert first.extra["extractor"]["model"] == "scripted/extractor-checker"
    assert first.extra["extractor"]["responses"] == ["No"]
    for key in ("q2", "q3", "q4"):
        assert "extractor" not in records[key].extra, key
    failed = records["q5"].extra["extractor"]
    assert "the extractor cannot answer" in failed["error"] and "parsed" not in failed
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["extractor"] == "scripted/extractor-checker"

    scores = score_run(tmp_path / "run", bootstrap=0)
    [group] = scores["groups"]
    assert group["metrics"]["accuracy"]["value"] == 0.2  # q2 only
    [extracted] = scores["with_extractor"]
    assert extracted["extracted"] == 1
    assert extracted["metrics"]["accuracy"]["value"] == 0.4  # q1 and q2


def test_the_cli_takes_the_extractor(tmp_path):
    register("extractor-model", model)
    register("extractor-checker", extractor)
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(item(1, "Is Soup one healthy?")) + "\n")
    result = CliRunner().invoke(app, ["run", str(items), "--out", str(tmp_path / "run"),
                                      "--method", "plain", "--model",
                                      "scripted/extractor-model", "--no-progress", "--no-cache",
                                      "--extractor", "scripted/extractor-checker"])
    assert result.exit_code == 0, result.output
    [record] = read_records(tmp_path / "run" / "records.jsonl")
    assert record.extra["extractor"]["parsed"] == "No"


def test_the_report_shows_both_scores(tmp_path):
    run_with_extractor(tmp_path)
    runner = CliRunner()
    assert runner.invoke(app, ["score", str(tmp_path / "run"), "--bootstrap", "0"]).exit_code == 0
    result = runner.invoke(app, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    table = (tmp_path / "r" / "extractor.md").read_text()
    assert "accuracy 0.2000 -> 0.4000" in table
    assert 'id="extractor"' in (tmp_path / "r" / "report.html").read_text()
