"""`compare` and `power`: two scripted runs through the engine and the CLI, and a seeded
simulation of a known injected difference (found in its group only, after Holm)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.errors import DataError
from nutrireason.models.scripted import register
from nutrireason.runs import RunConfig, run
from nutrireason.scoring import score_run, write_scores
from nutrireason.scoring import stats as S
from nutrireason.scoring.compare import Arm, Pairs, RunSamples, compare_groups, pair_arms
from tests.scoring.scripted_pair import LEVELS, QUESTIONS, USERS, make_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> tuple[Path, Path]:
    return make_runs(tmp_path_factory.mktemp("compare"))


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner(env={"COLUMNS": "200"})


def test_compare_finds_the_injected_level_only(runs, runner, tmp_path):
    a, b = runs
    result = runner.invoke(app, ["compare", str(a), str(b), "--json", "--resamples", "300"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["paired"] == len(LEVELS) * USERS * QUESTIONS
    assert found["only_a"] == found["only_b"] == 0
    rows = {row["level"]: row for row in found["groups"]}
    assert set(rows) == set(LEVELS)
    # complex: B is wrong on 60 more questions of 300 -> A - B = +0.2, one per user (60
    # clusters), every discordant pair in A's favour
    complex_ = rows["complex"]
    assert complex_["difference"] == pytest.approx(60 / 300)
    assert (complex_["a_only_right"], complex_["b_only_right"]) == (60, 0)
    assert complex_["test"] == "mcnemar_clustered" and complex_["clusters"] == USERS
    assert complex_["verdict"] == "A better" and complex_["p_holm"] < 0.05
    assert complex_["low"] > 0 and complex_["corrected_low"] <= complex_["low"]
    for level in ("sparse", "standard"):
        assert rows[level]["difference"] == 0 and rows[level]["verdict"] == \
            "no difference found"
        assert rows[level]["p_value"] == 1.0


def test_compare_writes_json_and_csv_and_prints_a_table(runs, runner, tmp_path):
    a, b = runs
    result = runner.invoke(app, ["compare", str(a), str(b), "--by", "level,condition",
                                 "--out", str(tmp_path / "cmp"), "--resamples", "100"])
    assert result.exit_code == 0, result.output
    # the table's cells wrap with the terminal; the summary line is printed whole
    assert "900 items paired" in result.output and "Holm over 6 groups" in result.output
    data = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert len(data["groups"]) == 6 and data["by"] == ["level", "condition"]
    csv_lines = (tmp_path / "cmp" / "comparison.csv").read_text().splitlines()
    assert csv_lines[0].startswith("task,level,condition") and len(csv_lines) == 7


def test_compare_refuses_runs_without_shared_items(runs, runner, tmp_path):
    a, _ = runs
    other = tmp_path / "other"
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "elsewhere", "task": "binary", "level": "sparse",
                                 "food": "X", "question": "Is Food-x-0-0 ok?", "triples": [],
                                 "answer": "Yes", "user_id": "u", "signal": [],
                                 "conditions": [], "diets": []}) + "\n")
    register("compare_yes", lambda request: "Yes")
    run(RunConfig(benchmark=items, out=other, methods=["plain"],
                  models=["scripted/compare_yes"], cache=False, progress=False))
    write_scores(other, score_run(other, bootstrap=0))
    result = runner.invoke(app, ["compare", str(a), str(other)])
    assert result.exit_code == 1
    assert "shares no answered item" in result.output and "900 items only in A" in \
        result.output and "1 only in B" in result.output


def test_compare_asks_to_score_first(runs, runner, tmp_path):
    a, _ = runs
    unscored = tmp_path / "unscored"
    unscored.mkdir()
    (unscored / "records.jsonl").write_text((a / "records.jsonl").read_text())
    result = runner.invoke(app, ["compare", str(a), str(unscored)])
    assert result.exit_code == 1 and "nutrireason score" in result.output


def test_power_from_a_run_and_from_a_baseline(runs, runner):
    a, b = runs
    result = runner.invoke(app, ["power", "--runs", str(a), "--difference", "0.05", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["rows"]
    assert [row["level"] for row in rows] == ["complex", "sparse", "standard"]
    row = rows[0]
    values = np.array([0.0] * 30 + [1.0] * 270)  # A on one level: 30 of 300 wrong
    variance = 2 * values.var(ddof=1)
    assert row["variance"] == pytest.approx(variance)
    assert row["clusters"] == USERS and row["mean_cluster_size"] == QUESTIONS
    # by hand: the 30 wrong answers sit in 15 users (2 of their 5); mean 0.9; per-user
    # residual sums -1.5 (15 users) and +0.5 (45); clustered variance 60/59 * (15 * 2.25 +
    # 45 * 0.25) / 300^2; naive variance (30 * 0.81 + 270 * 0.01) / 299 / 300
    clustered = 60 / 59 * (15 * 2.25 + 45 * 0.25) / 300 ** 2
    naive = (30 * 0.81 + 270 * 0.01) / 299 / 300
    assert row["design_effect"] == pytest.approx(clustered / naive)
    assert row["required_items"] == S.required_items(variance, 0.05, row["design_effect"])
    assert row["required_clusters"] == int(np.ceil(row["required_items"] / QUESTIONS))
    paired = runner.invoke(app, ["power", "--runs", str(a), "--runs", str(b), "--difference",
                                 "0.05", "--json"])
    assert paired.exit_code == 0, paired.output
    assert json.loads(paired.output)["rows"][1]["variance"] == 0  # sparse: same answers
    base = runner.invoke(app, ["power", "--baseline", "0.7", "--difference", "0.03",
                               "--json"])
    found = json.loads(base.output)["rows"][0]
    # (1.96 + 0.8416)^2 * (0.21 + 0.73 * 0.27) / 0.03^2, rounded up
    assert found["required_items"] == int(np.ceil(2.8016 ** 2 * (0.21 + 0.1971) / 0.0009))
    both = runner.invoke(app, ["power", "--difference", "0.03"])
    assert both.exit_code == 1 and "--runs RUN" in both.output


def _simulated_groups(rng: np.random.Generator, injected: str, difference: float
                      ) -> dict[tuple[str, ...], Pairs]:
    """Four groups of 625 users x 4 questions; per user a shared logit effect; arm B gets
    ``difference`` more accuracy on group ``injected`` only."""
    groups = {}
    for name in ("binary", "multi_label", "text", "ranking"):
        users = np.repeat(np.arange(625), 4)
        effect = rng.normal(0, 1, 625)[users]
        p_a = 1 / (1 + np.exp(-(0.85 + effect)))
        p_b = np.clip(p_a + (difference if name == injected else 0.0), 0, 1)
        a = (rng.random(users.size) < p_a).astype(float)
        b = (rng.random(users.size) < p_b).astype(float)
        groups[(name,)] = Pairs("accuracy", "user_id", list(a), list(b), list(users))
    return groups


def test_simulation_finds_the_injected_group_only():
    """200 seeded repetitions: B is 5 points better on one group; Holm at 0.05 flags it (and
    says B) in most repetitions, and the family-wise false-positive rate on the three null
    groups stays within its nominal level."""
    rng = np.random.default_rng(2026)
    found = false_positive = 0
    repetitions = 200
    for _ in range(repetitions):
        rows = compare_groups(_simulated_groups(rng, "text", 0.05), ["task"], 0, 0, 0.05)
        flagged = {row["task"] for row in rows if row["verdict"] != "no difference found"}
        verdicts = {row["task"]: row["verdict"] for row in rows}
        found += verdicts["text"] == "B better"
        false_positive += bool(flagged - {"text"})
    assert found / repetitions >= 0.85
    # nominal 0.05; three binomial standard errors of 200 repetitions above it
    assert false_positive / repetitions <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / repetitions)


def test_simulation_without_a_difference_keeps_the_family_wise_rate():
    rng = np.random.default_rng(7)
    repetitions = 200
    flagged = sum(any(row["verdict"] != "no difference found" for row in
                      compare_groups(_simulated_groups(rng, "", 0.0), ["task"], 0, 0, 0.05))
                  for _ in range(repetitions))
    assert flagged / repetitions <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / repetitions)


def _answers(path: Path, task_level: tuple[str, str], arms: dict[str, list[float]]) -> object:
    """A run's samples: each arm (method) answers items 0..n-1 of one (task, level), right
    where its list says 1."""
    from nutrireason.schema import Record, SampleScore
    from nutrireason.scoring.compare import samples_of

    records, scores = [], {}
    for method, right in arms.items():
        for i, value in enumerate(right):
            key = f"{task_level[1]}-{i}::{method}::m"
            records.append(Record.model_construct(
                key=key, item_id=f"{task_level[1]}-{i}", method=method, model="m", status="ok",
                meta={"task": task_level[0], "level": task_level[1], "user_id": f"u{i}"}))
            scores[key] = SampleScore(key=key, item_id=f"{task_level[1]}-{i}", method=method,
                                      model="m", task=task_level[0], level=task_level[1],
                                      status="ok", parse_ok=True, values={"accuracy": value})
    return samples_of(path, records, scores)


def test_report_comparisons_join_an_arm_across_runs(tmp_path):
    """One run per (task, level), as the demo writes them: each arm is compared on every
    run's items against the arm answered first."""
    from nutrireason.scoring.compare import arm_comparisons

    first = _answers(tmp_path, ("binary", "sparse"), {"plain": [1, 1, 0, 0], "tog": [1, 1, 1, 1]})
    second = _answers(tmp_path, ("binary", "complex"), {"plain": [0, 0, 0], "tog": [1, 0, 0]})
    found = arm_comparisons([first, second], resamples=0)
    assert found["references"] == {"binary": "plain / m"}
    rows = {(row["arm"], row["level"]): row for row in found["groups"]}
    assert {row["reference"] for row in found["groups"]} == {"plain / m"}
    assert set(rows) == {("tog / m", "sparse"), ("tog / m", "complex")}
    assert rows[("tog / m", "sparse")]["difference"] == pytest.approx(0.5)
    assert rows[("tog / m", "complex")]["difference"] == pytest.approx(1 / 3)


def _arms(*labels: str) -> RunSamples:
    samples = RunSamples(Path("run"))
    for label in labels:
        method, model = label.split(" / ")
        samples.values[Arm(method, model)][("binary", "standard", "q1")].append({"x": 1.0})
    return samples


@pytest.mark.parametrize(("a", "b", "expected"), [
    # one arm each: they face each other whatever their names
    (["plain / m1"], ["kaping / m2"], [("plain / m1", "kaping / m2")]),
    # two models, the same methods: per method
    (["plain / m1", "tog / m1"], ["plain / m2", "tog / m2"],
     [("plain / m1", "plain / m2"), ("tog / m1", "tog / m2")]),
    # one arm against several: the only one of the same method, on either side
    (["plain / m1"], ["kaping / m2", "plain / m2"], [("plain / m1", "plain / m2")]),
    (["kaping / m2", "plain / m2"], ["plain / m1"], [("plain / m2", "plain / m1")]),
    # ... else the only one of the same model
    (["plain / m1"], ["kaping / m1", "tog / m2"], [("plain / m1", "kaping / m1")]),
])
def test_arms_are_paired_by_the_stated_rules(a, b, expected):
    pairs = pair_arms(_arms(*a), _arms(*b))
    assert [(x.label, y.label) for x, y in pairs] == expected


def test_arms_that_cannot_be_paired_are_refused_naming_them():
    with pytest.raises(DataError, match="cannot tell which arm") as info:
        pair_arms(_arms("plain / m1"), _arms("kaping / m2", "tog / m3"))
    assert "plain / m1" in str(info.value) and "--b-method" in str(info.value)
