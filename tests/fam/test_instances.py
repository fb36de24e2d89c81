"""FAM-Bench instances: balancing arithmetic, the four distractor types on a hand-made pool, and
the whole split built from the real offline corpus (balance statistics and the rule-based
reference scoring 100 %)."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.fam.build import read_stats
from nutrireason.fam.instances import (
    DISTRACTORS,
    LETTERS,
    BenchConfig,
    Dish,
    dish_instances,
    distractor_plan,
    load_target_sets,
    rank_instances,
    rec_counts,
    water_fill,
)
from nutrireason.fam.judgement import NOT_REC, REC, Standing, severity
from nutrireason.fam.kb import CONDITION_IDS
from nutrireason.runs import RunConfig, run
from nutrireason.scoring.score import score_run

CONFIG = BenchConfig(dish_size=12, rank_size=8, seed=0,
                     shares=dict.fromkeys(DISTRACTORS, 0.25), min_shared=2, common=0)


def test_water_fill_is_even_under_caps():
    assert water_fill(10, {"a": 5, "b": 5}) == {"a": 5, "b": 5}
    assert water_fill(10, {"a": 1, "b": 9, "c": 9}) == {"a": 1, "b": 5, "c": 4}
    assert water_fill(7, {"a": 3, "b": 3, "c": 3}) == {"a": 3, "b": 2, "c": 2}
    assert water_fill(50, {"a": 2, "b": 3}) == {"a": 2, "b": 3}  # short pool: all of it


def test_rec_counts_balance_labels_across_conditions():
    quotas = {"x": 10, "y": 10, "z": 10}
    # x has only 1 Rec; its shortfall moves to y and z so the split stays 15 / 15.
    counts = rec_counts(quotas, rec={"x": 1, "y": 10, "z": 10}, not_rec={"x": 10, "y": 10,
                                                                           "z": 10})
    assert counts == {"x": 1, "y": 7, "z": 7}
    # a condition with no NotRec must take all its quota as Rec
    counts = rec_counts({"x": 4, "y": 4}, rec={"x": 4, "y": 4}, not_rec={"x": 0, "y": 9})
    assert counts == {"x": 4, "y": 0}


def test_severity_counts_distinct_conflicts_and_avoid_twice():
    provenance = [
        {"rule": "ingredient_concept", "kb_side": "limit", "concept": "red_meat"},
        {"rule": "ingredient_concept", "kb_side": "limit", "concept": "red_meat"},  # again
        {"rule": "ingredient_concept", "kb_side": "avoid", "concept": "processed_meats"},
        {"rule": "nutrient_veto", "nutrient": "sodium"},
        {"rule": "ingredient_concept", "kb_side": "beneficial", "concept": "fruits",
         "overruled": True},
        {"rule": "ingredient_fallback", "ingredients": ["x"]},
    ]
    assert severity(provenance) == 1 + 2 + 1


def _dish(rid, rec=(), not_rec=None, canonicals=("a", "b", "c")):
    """A pool dish: Rec for ``rec``; NotRec for each condition in ``not_rec`` with one conflict
    per listed KB side ("limit" or "avoid")."""
    good = [{"condition": c, "ingredients": [f"{rid}-good"],
             "provenance": [{"rule": "ingredient_concept", "kb_side": "beneficial",
                             "concept": "fruits", "ingredient": f"{rid}-good"}]} for c in rec]
    bad = [{"condition": c, "ingredients": [f"{rid}-bad{j}" for j in range(len(sides))],
            "provenance": [{"rule": "ingredient_concept", "kb_side": side, "concept": f"k{j}",
                            "ingredient": f"{rid}-bad{j}"} for j, side in enumerate(sides)]}
           for c, sides in (not_rec or {}).items()]
    view = {"title": rid, "ingredients": list(canonicals), "dietary_tags": []}
    return Dish(rid, Standing(good, bad), frozenset(canonicals), view,
                {"ingredients": [], "nutrition": {}},
                [{"line": c, "food": c, "canonical": c} for c in canonicals])


def _pool(conditions):
    """Per condition c: Rec dishes, neutral ones, and NotRec ones of severity 1, 2 and 4 that
    are Rec for the next condition (partial for the pair)."""
    dishes = {}
    for i, c in enumerate(conditions):
        other = conditions[(i + 1) % len(conditions)]
        third = conditions[(i + 2) % len(conditions)]
        for k in range(3):
            made = {"rec": _dish(f"{c}-rec{k}", rec=[c, other]),
                    "neutral": _dish(f"{c}-neutral{k}", rec=[third]),
                    "bad": _dish(f"{c}-bad{k}", rec=[other], not_rec={c: ["limit"]}),
                    "worse": _dish(f"{c}-worse{k}", rec=[other], not_rec={c: ["avoid"]}),
                    "awful": _dish(f"{c}-awful{k}", rec=[other],
                                   not_rec={c: ["limit", "limit", "avoid"]})}
            dishes.update({d.recipe_id: d for d in made.values()})
    return dict(sorted(dishes.items()))


CONDITIONS = ["h1", "h2", "h3", "h4"]
LABELS = {c: c.upper() for c in CONDITIONS}
# Every pair and triple of the made-up conditions co-occurs here.
SETS = [*itertools.combinations(CONDITIONS, 2), *itertools.combinations(CONDITIONS, 3)]


def test_dish_instances_are_balanced_and_carry_hidden_gold():
    items = dish_instances(_pool(CONDITIONS), CONDITIONS, 16, LABELS, 0)
    assert len(items) == 16
    assert Counter(i["condition"] for i in items) == dict.fromkeys(CONDITIONS, 4)
    assert Counter(i["gold"]["decision"] for i in items) == {REC: 8, NOT_REC: 8}
    assert len({(i["recipe_id"], i["condition"]) for i in items}) == 16
    for item in items:
        side = _pool(CONDITIONS)[item["recipe_id"]].standing.side[item["condition"]]
        assert item["gold"]["decision"] == side
        assert item["gold"]["rationale"] and "gold" not in item["dish"]


@pytest.mark.parametrize("kind", DISTRACTORS)
def test_each_distractor_type_draws_strictly_ordered_options(kind):
    dishes = _pool(CONDITIONS)
    config = BenchConfig(**{**vars(CONFIG), "shares": {k: float(k == kind)
                                                         for k in DISTRACTORS}})
    items, missing = rank_instances(dishes, CONDITIONS, config, 8, LABELS, 1,
                                    target_sets=SETS)
    assert not missing and len(items) == 8
    for item in items:
        targets = item["conditions"]
        utility = item["gold"]["utility"]
        ranking = item["gold"]["ranking"]
        assert sorted(ranking) == list(LETTERS)
        assert [utility[k] for k in ranking] == sorted(utility.values(), reverse=True)
        assert len(set(utility.values())) == 4  # strict: the gold order is unambiguous
        standings = {k: dishes[item["recipe_ids"][k]].standing for k in LETTERS}
        for k in LETTERS:
            assert utility[k] == standings[k].utility(targets)
        best, rest = ranking[0], ranking[1:]
        if kind == "condition_discrimination":
            assert len(targets) == 1 and standings[best].side[targets[0]] == REC
            assert all(any(c not in targets and s == REC
                           for c, s in standings[k].side.items()) for k in rest)
        elif kind == "eligible_dish_ranking":
            assert len(targets) == 2 and standings[ranking[1]].eligible(targets)
        elif kind == "combined_constraint_discrimination":
            assert len(targets) in (2, 3) and standings[best].eligible(targets)
            assert all(not standings[k].eligible(targets) for k in rest)
        assert item["gold"]["labels"][best] == REC


def test_answer_positions_and_condition_mentions_balance():
    items, _ = rank_instances(_pool(CONDITIONS), CONDITIONS, CONFIG, 40, LABELS,
                              2, target_sets=SETS)
    assert Counter(i["gold"]["ranking"][0] for i in items) == dict.fromkeys(LETTERS, 10)
    mentions = Counter(c for i in items for c in i["conditions"])
    assert max(mentions.values()) - min(mentions.values()) <= 2
    assert Counter(i["distractor"] for i in items) == dict.fromkeys(DISTRACTORS, 10)


def test_distractor_plan_follows_shares():
    plan = distractor_plan(10, {"condition_discrimination": 0.5, "eligible_dish_ranking": 0.5,
                                "ingredient_coverage_discrimination": 0.0,
                                "combined_constraint_discrimination": 0.0}, 0)
    assert Counter(plan) == {"condition_discrimination": 5, "eligible_dish_ranking": 5}


def test_avoid_violations_are_flagged_per_option():
    items, _ = rank_instances(_pool(CONDITIONS), CONDITIONS, CONFIG, 16, LABELS,
                              3, target_sets=SETS)
    flagged = [(i, k) for i in items for k, v in i["gold"]["avoid_violations"].items() if v]
    assert flagged
    for item, letter in flagged:
        assert item["gold"]["labels"][letter] == NOT_REC
        assert all(v["condition"] in item["conditions"]
                   for v in item["gold"]["avoid_violations"][letter])


# --------------------------------------------------------------------------- the real corpus


def _items(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_real_build_is_balanced_over_the_whole_set(real_build):
    stats = read_stats(real_build)
    dish, rank = stats["dish"], stats["rank"]
    assert dish["instances"] == 1500 and rank["instances"] == 1000
    assert dish["labels"] == {REC: 750, NOT_REC: 750}
    manifest = json.loads((real_build / "manifest.json").read_text())
    balance = {row["condition"]: row for row in manifest["balance"]}
    assert set(balance) == set(CONDITION_IDS)
    for labels in dish["conditions"].values():
        # every condition holds at least 40 % of its minority label ...
        assert min(labels.get(REC, 0), labels.get(NOT_REC, 0)) >= 0.4 * sum(labels.values())
    # ... and only conditions short of one label, with the reason stated, fall below an
    # equal share; the others differ by at most one instance.
    short = {c for c, row in balance.items() if row["short_of_equal_share"]}
    for condition in short:
        row = balance[condition]
        minority = min(row["pool_recommend"], row["pool_not_recommend"])
        assert f"only {minority} pool recipes" in row["short_of_equal_share"]
    sizes = [sum(v.values()) for c, v in dish["conditions"].items() if c not in short]
    assert len(sizes) >= 10 and max(sizes) - min(sizes) <= 1
    assert rank["distractors"] == dict.fromkeys(sorted(DISTRACTORS), 250)
    assert rank["answer_positions"] == dict.fromkeys(LETTERS, 250)
    mentions = rank["condition_mentions"]
    # least-mentioned first; two- and three-condition targets come only from co-occurring
    # sets, so the greedy choice can leave a spread of a few mentions (3 %: 124-127 of 1,000)
    spread = max(mentions.values()) - min(mentions.values())
    assert len(mentions) == 13 and spread <= max(2, 0.03 * sum(mentions.values()) / 13)
    assert set(rank["targets_per_instance"]) == {"1", "2", "3"}
    assert manifest["stats"] == stats and manifest["rank_not_drawn"] == {}


def test_real_build_draws_multi_condition_targets_from_co_occurring_sets(real_build):
    allowed = {frozenset(s) for s in load_target_sets()}
    multi = [item["conditions"] for item in _items(real_build / "rank.jsonl")
             if len(item["conditions"]) > 1]
    assert multi and all(frozenset(c) in allowed for c in multi)
    assert {len(c) for c in multi} == {2, 3}


def test_real_build_hides_gold_from_what_the_model_sees(real_build):
    shown = {"title", "ingredients", "dietary_tags", "servings", "nutrition"}
    for item in _items(real_build / "dish.jsonl")[:200]:
        assert set(item["dish"]) <= shown
        assert all(isinstance(line, str) for line in item["dish"]["ingredients"])
    for item in _items(real_build / "rank.jsonl")[:100]:
        assert all(set(view) <= shown for view in item["dishes"].values())


@pytest.mark.parametrize("task", ["dish", "rank"])
def test_reference_method_matches_the_gold_on_every_instance(real_build, tmp_path, task):
    out = tmp_path / task
    summary = run(RunConfig(benchmark=real_build / f"{task}.jsonl", out=out,
                            methods=["fam-reference"], models=["scripted/echo"],
                            progress=False))
    assert summary.ok == (1500 if task == "dish" else 1000) and summary.errors == 0
    groups = score_run(out, bootstrap=0)["groups"]
    metrics = {k: v["value"] for k, v in groups[0]["metrics"].items()}
    if task == "dish":
        assert metrics["accuracy"] == 1.0
        assert metrics["rationale_macro_f1"] == metrics["rationale_micro_f1"] == 1.0
    else:
        assert metrics["top1_accuracy"] == metrics["mrr"] == metrics["kendall_tau"] == 1.0
        assert metrics["ctc"] == 1.0 and metrics["ctc_pairs"] > 0


def test_fam_stats_cli_prints_the_balance(real_build):
    result = CliRunner().invoke(app, ["fam", "stats", str(real_build)])
    assert result.exit_code == 0, result.output
    assert "dish-level: 1,500 instances" in result.output
    assert "'A': 250" in result.output


def test_fam_stats_cli_names_a_missing_build(tmp_path):
    result = CliRunner().invoke(app, ["fam", "stats", str(tmp_path)])
    assert result.exit_code == 1
    assert "dish.jsonl" in result.output and "fam build" in result.output


def test_find_image_prefers_the_image_folder_and_never_uses_urls(tmp_path):
    from nutrireason.errors import DataError
    from nutrireason.fam.instances import find_image

    folder = tmp_path / "images"
    folder.mkdir()
    (folder / "soup.png").write_bytes(b"\x89PNG")
    local = tmp_path / "cake.jpg"
    local.write_bytes(b"\xff\xd8")
    assert find_image("soup", {"image": "https://example.org/soup.png"}, folder) == str(
        (folder / "soup.png").resolve())
    with pytest.raises(DataError, match="'cake'"):  # outside the folder: refused
        find_image("cake", {"image": str(local)}, folder)
    assert find_image("pie", {"image": "https://example.org/pie.png"}, folder) is None
    assert find_image("pie", {"image": None}, None) is None


def test_image_input_without_images_is_refused_before_any_call(tmp_path):
    item = {"id": "dish-00001", "task": "fam_dish", "image": None, "condition": "gout",
            "conditions": ["gout"], "condition_labels": ["Gout"],
            "dish": {"title": "x", "ingredients": ["1 apple"], "dietary_tags": []},
            "gold": {"decision": REC, "condition": "gout", "rationale": [], "ingredients": []}}
    (tmp_path / "dish.jsonl").write_text(json.dumps(item) + "\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["run", "fam", "--task", "dish", "--input", "text+image",
                                      "--benchmark-dir", str(tmp_path), "--out", str(out),
                                      "--model", "scripted/no"])
    assert result.exit_code == 1
    assert "1 of 1 items have no local image file (first: dish-00001)" in result.output
    assert not out.exists()
