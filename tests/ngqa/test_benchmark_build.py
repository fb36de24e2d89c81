"""The NGQA benchmark built from the real offline bundles, checked symbolically in full:
every stored gold answer and level is recomputed from the question's own subgraph edges."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow.json as pajson
import pytest

from nutrireason.ngqa.build import build_benchmark, load_graph
from nutrireason.ngqa.config import LEVELS, TASKS, load_ngqa_config
from nutrireason.ngqa.questions import gold_answers, level_of
from tests.conftest import real_bundle

LINKS = ("match", "contradict", "need")


@pytest.fixture(scope="module")
def inputs(ngqa_inputs):
    """(users, food tables) from the real bundles (the session's, see tests/conftest.py)."""
    return ngqa_inputs


@pytest.fixture(scope="module")
def built(inputs, tmp_path_factory):
    return build_benchmark(*inputs, tmp_path_factory.mktemp("ngqa"), seed=0)


@pytest.mark.parametrize("level", LEVELS)
def test_every_question_of_the_level_recomputes_from_its_own_edges(built, level):
    config = load_ngqa_config()
    questions = built.questions[built.questions["level"] == level]
    assert len(questions) == config.levels[level].max_questions  # the offline set fills caps
    for row in questions.to_dict(orient="records"):
        edges = [(e["source"], e["relation"], e["target"]) for e in row["edges"]
                 if e["relation"] in LINKS]
        counts = {r: sum(rel == r for _, rel, _ in edges) for r in LINKS}
        assert level_of(counts["match"], counts["contradict"]) == level, row["id"]
        gold = gold_answers(edges, config)
        for task in TASKS:
            assert row[f"answer_{task}"] == gold[task], (row["id"], task)
        assert {t for _, r, t in edges if r != "need"} <= {
            e["target"] for e in row["edges"] if e["relation"] == "belongs to"}


@pytest.mark.parametrize("level", LEVELS)
def test_task_files_hold_the_level_with_its_answers(built, level):
    expected = built.questions[built.questions["level"] == level]
    for task in TASKS:
        path = built.out / level / f"{task}.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines()]
        assert [r["question_id"] for r in records] == list(expected["id"])
        assert [r["answer"] for r in records] == list(expected[f"answer_{task}"])
        assert all(r["question"].startswith("Based on the nutrients") for r in records)
        assert pajson.read_json(path).num_rows == len(records)
        assert len(pd.read_parquet(built.out / level / f"{task}.parquet")) == len(records)


def test_the_same_inputs_and_seed_give_byte_identical_files(inputs, built, tmp_path):
    again = build_benchmark(*inputs, tmp_path / "again", seed=0)
    first = {p.relative_to(built.out): p.read_bytes() for p in built.out.rglob("*")
             if p.is_file()}
    second = {p.relative_to(again.out): p.read_bytes() for p in again.out.rglob("*")
              if p.is_file()}
    assert first.keys() == second.keys() and first == second


def test_another_seed_draws_other_questions(inputs, built, tmp_path):
    other = build_benchmark(*inputs, tmp_path / "other", seed=1)
    assert list(other.questions["id"]) == list(built.questions["id"])
    assert list(other.questions["food_id"]) != list(built.questions["food_id"])


def test_the_knowledge_graph_loads_into_networkx(built):
    graph = load_graph(built.out)
    kinds = {data["type"] for _, data in graph.nodes(data=True)}
    assert kinds == {"user", "food", "ingredient", "food_category", "nutrient_tag",
                     "health_condition", "special_diet", "habit"}
    relations = {data["relation"] for _, _, data in graph.edges(data=True)}
    assert relations == {"has", "belongs to", "need"}
    assert graph.has_edge("health_condition:hypertension", "nutrient_tag:low_sodium")


def test_statistics_are_shaped_like_tables_1_and_2(built):
    levels = built.stats["levels"]
    assert [levels[level]["records"] for level in LEVELS] == [8490, 3622, 1690]
    snr = [levels[level]["avg_tag_snr"] for level in LEVELS]
    assert snr == sorted(snr)  # as in the paper: sparse < standard < complex


@pytest.mark.parametrize("level", LEVELS)
def test_the_oracle_scores_every_task_perfectly(built, level):
    import asyncio

    from nutrireason.methods import get_method
    from nutrireason.ngqa.build import task_records

    oracle = get_method("oracle")

    async def answers(records):
        return [await oracle.answer(record, None) for record in records]

    for task in TASKS:
        records = task_records(built.questions, level, task)
        predictions = asyncio.run(answers(records))
        assert all(p.parse_ok for p in predictions)
        assert [p.parsed for p in predictions] == [r["answer"] for r in records], task


def test_demo_evaluation_stage_runs_scores_and_reports(built, tmp_path):
    from nutrireason.pipeline.evaluate import evaluate_ngqa

    result = evaluate_ngqa(built.out, tmp_path, "scripted/no", per_cell=1, log=lambda _: None)
    assert len(result.runs) == 9 and result.report.is_file()
    assert all((run / "metrics.json").is_file() for run in result.runs)
    assert sum(s.ok for s in result.summaries) == 9 * 6  # six methods, one question per cell
    again = evaluate_ngqa(built.out, tmp_path, "scripted/no", per_cell=1, log=lambda _: None)
    assert sum(s.model_calls for s in again.summaries) == 0  # resumed: nothing re-asked
    table = (tmp_path / "report" / "table3.md").read_text()
    methods = {line.split("|")[2].strip() for line in table.splitlines()[2:]}
    assert methods == {"plain", "kaping", "cot-zero", "cot-bag", "tog", "oracle"}


@pytest.mark.slow
def test_demo_evaluation_with_the_real_local_model(built, tmp_path):
    pytest.importorskip("llama_cpp")
    real_bundle("smollm2")
    from nutrireason.pipeline.evaluate import evaluate_ngqa

    # ToG (several calls a question) with the real model on every (level, task); the one-call
    # methods meet the real model in the demo's own test (tests/test_demo.py)
    result = evaluate_ngqa(built.out, tmp_path, "llamacpp/smollm2", per_cell=1,
                           methods=["tog"], max_tokens=24, log=lambda _: None)
    assert sum(s.ok for s in result.summaries) == 9
    assert sum(s.errors for s in result.summaries) == 0
    assert result.report.is_file()


def _linked(row) -> list[tuple[str, str]]:
    return [(e["source"], e["target"]) for e in row["edges"]
            if e["relation"] in ("match", "contradict")]


def test_every_standard_question_links_two_tags_and_two_of_the_users_conditions(built):
    standard = built.questions[built.questions["level"] == "standard"]
    for row in standard.to_dict(orient="records"):
        linked = _linked(row)
        assert len({tag for _, tag in linked}) >= 2, row["id"]
        assert len(row["answer_multi_label"]) >= 2, row["id"]
        if len(row["conditions"]) + len(row["diets"]) >= 2:
            assert len({node for node, _ in linked}) >= 2, row["id"]
    rule = built.stats["level_rule"]
    assert rule["rule"] == "strict" == json.loads(
        (built.out / "manifest.json").read_text())["standard_rule"]
    assert rule["standard"] | {"questions": 0} == {
        "questions": 0, "two_tags": 1.0, "two_conditions": 1.0, "strict": 1.0}
    assert 0 < rule["candidates"]["strict"] < rule["candidates"]["loose"]


def test_the_loose_rule_stays_available_and_reports_its_shares(inputs, tmp_path):
    caps = {"sparse": 0, "standard": 400, "complex": 0}
    loose = build_benchmark(*inputs, tmp_path / "loose", seed=0, caps=caps,
                            standard_rule="loose")
    rows = loose.questions.to_dict(orient="records")
    single_tag = [r for r in rows if len({t for _, t in _linked(r)}) < 2]
    assert single_tag  # the loose rule admits one tag linked twice
    shares = loose.stats["level_rule"]["standard"]
    assert shares["two_tags"] == round(1 - len(single_tag) / len(rows), 4)
    assert shares["strict"] < 1.0 and loose.stats["level_rule"]["rule"] == "loose"
    # the pairs-side shares (from the selection) agree with the built questions'
    by_rule = loose.stats["level_rule"]["by_rule"]
    assert by_rule["loose"] == shares
    assert by_rule["strict"] | {"questions": 0} == {
        "questions": 0, "two_tags": 1.0, "two_conditions": 1.0, "strict": 1.0}
