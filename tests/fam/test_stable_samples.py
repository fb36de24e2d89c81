"""Stable FAM-Bench samples: a label change for one (recipe, condition) entry moves only the
instances that hold it; an excluded entry is never drawn; a build records its version and what
changed against the build its folder held before.

The small tests use the hand-made pool of ``test_instances`` (4 conditions, 15 dishes each);
the last ones use the real offline pool."""

from __future__ import annotations

import copy
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from nutrireason.fam.build import (
    build_fam,
    change_line,
    first_build,
    instance_changes,
    read_annotations,
    versioned,
)
from nutrireason.fam.instances import (
    Dish,
    annotated_sides,
    dish_instance_id,
    dish_instances,
    dish_order,
    load_bench_config,
    pool_dishes,
    rank_instances,
    stable_key,
)
from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.fam.kb import load_kb
from nutrireason.fam.pool import food_table, read_recipes
from nutrireason.fam.reviews import apply_reviews
from nutrireason.fam.vocabulary import Vocabulary
from nutrireason.reviewfile import Verdict, item_key
from tests.fam.test_instances import CONDITIONS, CONFIG, LABELS, SETS, _pool

DISH_SIZE, RANK_SIZE = 16, 24


def _dish_sample(dishes: dict[str, Dish], seed: int = 0) -> list[dict[str, Any]]:
    return dish_instances(dishes, CONDITIONS, DISH_SIZE, LABELS, seed)


def _rank_sample(dishes: dict[str, Dish], seed: int = 0) -> list[dict[str, Any]]:
    items, missing = rank_instances(dishes, CONDITIONS, CONFIG, RANK_SIZE, LABELS, seed,
                                    target_sets=SETS)
    assert not missing
    return items


def _relabelled(dishes: dict[str, Dish], recipe_id: str, condition: str) -> dict[str, Dish]:
    """The pool with one entry's label flipped (a NotRec entry gets one limit conflict)."""
    out = dict(dishes)
    dish = out[recipe_id] = copy.deepcopy(dishes[recipe_id])
    standing = dish.standing
    if standing.side[condition] == REC:
        standing.side[condition], standing.severity[condition] = NOT_REC, 1
        standing.avoid[condition] = []
    else:
        standing.side[condition] = REC
        standing.severity.pop(condition)
        standing.avoid.pop(condition)
    return out


def _excluded(dishes: dict[str, Dish], recipe_id: str, condition: str) -> dict[str, Dish]:
    """The pool with one entry excluded: no side, listed among the dish's excluded entries."""
    out = dict(dishes)
    dish = out[recipe_id] = copy.deepcopy(dishes[recipe_id])
    for table in (dish.standing.side, dish.standing.severity, dish.standing.evidence,
                  dish.standing.avoid):
        table.pop(condition, None)
    dish.excluded = dish.excluded | {condition}
    return out


def _by_id(items: list[dict[str, Any]]) -> dict[str, str]:
    return {item["id"]: json.dumps(item, sort_keys=True) for item in items}


def _options(item: dict[str, Any]) -> set[str]:
    return set(item["recipe_ids"].values())


def _decided_option(item: dict[str, Any], dishes: dict[str, Dish]) -> tuple[str, str]:
    """(recipe, condition) of the item's first option with a Rec or NotRec entry for one of
    its targets."""
    return next((r, c) for r in item["recipe_ids"].values() for c in item["conditions"]
                if c in dishes[r].standing.side)


# --------------------------------------------------------------------------- dish level


def test_stable_key_is_a_sha256_of_the_parts():
    digest = hashlib.sha256(b"0\x1fdish\x1fh1-rec0\x1fh1").digest()
    assert stable_key(0, "dish", "h1-rec0", "h1") == int.from_bytes(digest[:8], "big")
    assert dish_order(0, "h1-rec0", "h1") == (stable_key(0, "dish", "h1-rec0", "h1"),
                                              "h1-rec0", "h1")


def test_each_condition_and_label_gives_its_first_entries_in_hash_order():
    dishes = _pool(CONDITIONS)
    items = _dish_sample(dishes)
    assert [dish_order(0, i["recipe_id"], i["condition"]) for i in items] == sorted(
        dish_order(0, i["recipe_id"], i["condition"]) for i in items)
    assert all(i["id"] == f"dish-{i['recipe_id']}-{i['condition']}" for i in items)
    for condition in CONDITIONS:
        for side in (REC, NOT_REC):
            drawn = [i["recipe_id"] for i in items
                     if i["condition"] == condition and i["gold"]["decision"] == side]
            pool = sorted((rid for rid, d in dishes.items()
                           if d.standing.side.get(condition) == side),
                          key=lambda rid, c=condition: dish_order(0, rid, c))
            assert len(drawn) == 2 and sorted(drawn) == sorted(pool[:2])


def _first_drawn(dishes: dict[str, Dish]) -> tuple[list[dict[str, Any]], str, str, str]:
    """The dish-level sample and its first instance's recipe, condition and gold side."""
    before = _dish_sample(dishes)
    entry = before[0]
    return before, entry["recipe_id"], entry["condition"], entry["gold"]["decision"]


def test_relabelling_one_entry_changes_only_the_gold_of_its_own_dish_instance():
    dishes = _pool(CONDITIONS)
    before, recipe_id, condition, side = _first_drawn(dishes)
    after = _dish_sample(_relabelled(dishes, recipe_id, condition))
    own = dish_instance_id(recipe_id, condition)
    assert instance_changes(before, after) == {"added": [], "removed": [], "changed": [own]}
    flipped = next(i for i in after if i["id"] == own)
    assert flipped["gold"]["decision"] == (NOT_REC if side == REC else REC)
    # the balance is the annotation's: the reviewed gold is one off it, and says so
    assert Counter(i["gold"]["decision"] for i in after) != \
        Counter(i["gold"]["decision"] for i in before)


def test_relabelling_an_entry_that_is_not_drawn_changes_nothing():
    dishes = _pool(CONDITIONS)
    before = _dish_sample(dishes)
    drawn = {(i["recipe_id"], i["condition"]) for i in before}
    idle = next((rid, c) for rid, d in dishes.items() for c in d.standing.side
                if (rid, c) not in drawn)
    assert _by_id(_dish_sample(_relabelled(dishes, *idle))) == _by_id(before)


def test_an_excluded_entry_gives_its_place_to_the_next_of_its_annotated_pool():
    dishes = _pool(CONDITIONS)
    before, recipe_id, condition, side = _first_drawn(dishes)
    after = _dish_sample(_excluded(dishes, recipe_id, condition))
    pool = sorted((rid for rid, d in dishes.items() if d.standing.side.get(condition) == side),
                  key=lambda rid: dish_order(0, rid, condition))
    assert instance_changes(before, after) == {
        "added": [dish_instance_id(pool[2], condition)],
        "removed": [dish_instance_id(recipe_id, condition)], "changed": []}


# --------------------------------------------------------------------------- ranking


def test_relabelling_one_entry_leaves_ranking_items_without_it_unchanged():
    dishes = _pool(CONDITIONS)
    before = _rank_sample(dishes)
    first = before[0]
    recipe_id, condition = _decided_option(first, dishes)
    after = _rank_sample(_relabelled(dishes, recipe_id, condition))
    old, new = _by_id(before), _by_id(after)
    assert old[first["id"]] != new.get(first["id"])  # the item that held it changed
    holding = {i["id"] for i in before + after if recipe_id in _options(i)}
    assert all(old.get(k) == new.get(k) for k in old.keys() | new.keys() if k not in holding)
    assert len(holding) < len(before)


def test_a_dish_that_is_not_drawn_can_leave_without_changing_anything():
    dishes = _pool(CONDITIONS)
    dish, rank = _dish_sample(dishes), _rank_sample(dishes)
    used = {i["recipe_id"] for i in dish} | {r for i in rank for r in _options(i)}
    idle = next(rid for rid in dishes if rid not in used)
    fewer = {rid: d for rid, d in dishes.items() if rid != idle}
    assert _by_id(_dish_sample(fewer)) == _by_id(dish)
    assert _by_id(_rank_sample(fewer)) == _by_id(rank)


def test_ranking_ids_follow_the_slots_and_the_best_letter_cycles():
    items = _rank_sample(_pool(CONDITIONS))
    assert [i["id"] for i in items] == [f"rank-{n:05d}" for n in range(1, RANK_SIZE + 1)]
    assert [i["gold"]["ranking"][0] for i in items] == ["A", "B", "C", "D"] * (RANK_SIZE // 4)


# --------------------------------------------------------------------------- exclusion


def test_an_excluded_entry_is_never_an_option_or_an_instance():
    dishes = _pool(CONDITIONS)
    recipe_id, condition = _decided_option(_rank_sample(dishes)[0], dishes)
    fewer = _excluded(dishes, recipe_id, condition)
    rank, dish = _rank_sample(fewer), _dish_sample(fewer)
    assert not [i["id"] for i in rank if recipe_id in _options(i) and condition in i["conditions"]]
    assert dish_instance_id(recipe_id, condition) not in {i["id"] for i in dish}
    assert not fewer[recipe_id].option_for([condition])
    # without any entry for a condition (and none excluded) a dish is neutral: still an option
    neutral = _excluded(dishes, recipe_id, condition)[recipe_id]
    neutral.excluded = frozenset()
    assert neutral.option_for([condition]) and neutral.standing.utility([condition]) == 0


# --------------------------------------------------------------------------- seeds


def test_the_same_seed_gives_the_same_sample_and_another_seed_another():
    dishes = _pool(CONDITIONS)
    assert _dish_sample(dishes, 0) == _dish_sample(_pool(CONDITIONS), 0)
    assert _rank_sample(dishes, 0) == _rank_sample(_pool(CONDITIONS), 0)
    assert _dish_sample(dishes, 1) != _dish_sample(dishes, 0)
    assert _rank_sample(dishes, 1) != _rank_sample(dishes, 0)
    other = Counter(i["condition"] for i in _dish_sample(dishes, 1))
    assert other == dict.fromkeys(CONDITIONS, 4)  # the quotas do not depend on the seed


# --------------------------------------------------------------------------- versions


def _previous(version: int, dish: list[dict], rank: list[dict], changes: dict | None = None
              ) -> dict[str, Any]:
    manifest = {"version": version, "changes": changes or first_build()}
    return {"manifest": manifest, "dish": json.loads(json.dumps(dish)),
            "rank": json.loads(json.dumps(rank))}


def test_versions_count_builds_whose_instances_differ():
    dishes = _pool(CONDITIONS)
    dish, rank = _dish_sample(dishes), _rank_sample(dishes)
    assert versioned(None, dish, rank, dishes) == (1, first_build())
    recorded = {"previous_version": 2, "added": ["x"], "removed": [], "changed": []}
    assert versioned(_previous(3, dish, rank, recorded), dish, rank, dishes) == (3, recorded)

    flipped = dish[0]
    changed = _excluded(_relabelled(dishes, flipped["recipe_id"], flipped["condition"]),
                        *_decided_option(rank[0], dishes))
    new_dish, new_rank = _dish_sample(changed), _rank_sample(changed)
    previous = _previous(3, dish, rank)
    version, changes = versioned(previous, new_dish, new_rank, changed)
    diff = {s: instance_changes(o, n) for s, o, n in (("dish", dish, new_dish),
                                                       ("rank", rank, new_rank))}
    assert version == 4 and changes["previous_version"] == 3
    for key in ("added", "removed", "changed"):
        assert changes[key] == diff["dish"][key] + diff["rank"][key]
    assert rank[0]["id"] in changes["changed"] + changes["removed"]
    assert changes["reasons"]["dish"]["relabelled"] == 1
    assert changes["reasons"]["rank"]["option excluded"] >= 1
    assert sum(changes["reasons"]["dish"].values()) == sum(map(len, diff["dish"].values()))
    line = change_line({"version": version, "changes": changes}, previous)
    assert "against the previous build (version 3)" in line and "version 4" in line
    assert sum(map(len, diff["dish"].values())) == 1
    assert "1 dish-level instance changed (1 relabelled)" in line


# --------------------------------------------------------------------------- the real pool


def test_one_correction_and_one_exclusion_move_only_their_instances(fam_pool, recipe_build,
                                                                    sr28):
    """Over the real pool with the real configuration: relabel an entry that a dish-level
    instance holds and exclude one that a ranking item holds (as `fam build --reviews`
    would); only the instances holding them move."""
    kb = load_kb()
    conditions, labels = tuple(kb), {c: kb[c].label for c in kb}
    config = load_bench_config()
    recipes, foods, vocabulary = read_recipes(recipe_build / "recipes.jsonl"), food_table(sr28), \
        Vocabulary.load()
    pool = read_annotations(fam_pool / "annotations.jsonl")

    def draw(annotations):
        dishes = pool_dishes(annotations, recipes, kb, vocabulary, foods)
        dish = dish_instances(dishes, conditions, config.dish_size, labels, config.seed,
                              config.min_minority_share)
        rank, missing = rank_instances(dishes, conditions, config, config.rank_size, labels,
                                       config.seed)
        assert not missing
        return dishes, dish, rank

    dishes, dish, rank = draw(pool)
    flip = dish[0]["recipe_id"], dish[0]["condition"]
    label = "NotRec" if dish[0]["gold"]["decision"] == REC else "Rec"
    drop = _decided_option(rank[0], dishes)
    verdicts = {item_key(*flip): Verdict(label, tuple(dish[0]["gold"]["rationale"]), None),
                item_key(*drop): Verdict(None, (), "hidden ingredient")}
    new_dishes, new_dish, new_rank = draw(apply_reviews(pool, verdicts))

    dish_diff, rank_diff = instance_changes(dish, new_dish), instance_changes(rank, new_rank)
    assert dish_diff["changed"] == [dish_instance_id(*flip)]
    dropped = dish_instance_id(*drop) in {i["id"] for i in dish}
    assert dish_diff["removed"] == ([dish_instance_id(*drop)] if dropped else [])
    assert len(dish_diff["added"]) == len(dish_diff["removed"])  # the next of its pool
    assert all(a.endswith(f"-{drop[1]}") for a in dish_diff["added"])
    _check_prefixes(dish, new_dish, dishes, new_dishes, {flip, drop}, config.seed)
    options: dict[str, set[str]] = {}
    for item in rank + new_rank:
        options.setdefault(item["id"], set()).update(_options(item))
    for item_id in rank_diff["added"] + rank_diff["removed"] + rank_diff["changed"]:
        assert {flip[0], drop[0]} & options[item_id], item_id  # held them before or after
    assert not [i["id"] for i in new_rank if drop[0] in _options(i) and drop[1] in i["conditions"]]
    assert dish_instance_id(*drop) not in {i["id"] for i in new_dish}
    dish_moved, rank_moved = sum(map(len, dish_diff.values())), sum(map(len, rank_diff.values()))
    print(f"\none correction {flip} + one exclusion {drop}: dish-level {dish_diff}, "
          f"{dish_moved} of {len(dish)} ids moved; ranking {rank_moved} of {len(rank)} items "
          f"changed: {rank_diff}")
    assert dish_moved <= 3 and rank_moved <= 0.05 * len(rank)


def _check_prefixes(old: list[dict], new: list[dict], old_pool: dict[str, Dish],
                    new_pool: dict[str, Dish], touched: set[tuple[str, str]], seed: int) -> None:
    """Per (condition, label): the entries drawn that nobody touched are, in hash order, a
    prefix of one another before and after (the draw takes each pool's first entries)."""
    def drawn(items: list[dict]) -> dict[tuple[str, str], list[str]]:
        out: dict[tuple[str, str], list[str]] = {}
        for item in sorted(items, key=lambda i: dish_order(seed, i["recipe_id"], i["condition"])):
            if (item["recipe_id"], item["condition"]) not in touched:
                out.setdefault((item["condition"], item["gold"]["decision"]), []).append(
                    item["recipe_id"])
        return out

    before, after = drawn(old), drawn(new)
    for key in before.keys() | after.keys():
        a, b = before.get(key, []), after.get(key, [])
        shorter = min(len(a), len(b))
        assert a[:shorter] == b[:shorter], key


def test_a_rebuild_records_its_version_and_the_ids_that_changed(fam_pool, recipe_build, sr28,
                                                                tmp_path, capsys):
    pool_file, recipes = fam_pool / "annotations.jsonl", recipe_build / "recipes.jsonl"
    out = tmp_path / "bench"
    sizes = {"dish_size": 20, "rank_size": 8, "log": print}
    first = build_fam(pool_file, recipes, sr28, out, **sizes)
    assert first["version"] == 1 and first["changes"] == first_build()
    assert "version 1 (first build" in capsys.readouterr().out
    again = build_fam(pool_file, recipes, sr28, out, **sizes)
    assert again == first
    assert "no instance changed against the previous build (version 1)" in \
        capsys.readouterr().out

    dish = [json.loads(line) for line in (out / "dish.jsonl").read_text().splitlines()]
    rank = [json.loads(line) for line in (out / "rank.jsonl").read_text().splitlines()]
    flip = dish[0]["recipe_id"], dish[0]["condition"]
    pool = read_annotations(pool_file)
    entries = {(a["recipe_id"], e["condition"]) for a in pool for e in a["rec"] + a["not_rec"]}
    drop = next((r, c) for r in rank[0]["recipe_ids"].values() for c in rank[0]["conditions"]
                if (r, c) in entries and (r, c) != flip)
    label = "NotRec" if dish[0]["gold"]["decision"] == REC else "Rec"
    reviewed = apply_reviews(pool, {item_key(*flip): Verdict(label, (), None),
                                    item_key(*drop): Verdict(None, (), "hidden ingredient")})
    changed_pool = tmp_path / "pool" / "annotations.jsonl"
    changed_pool.parent.mkdir()
    changed_pool.write_text("".join(json.dumps(a) + "\n" for a in reviewed))
    second = build_fam(changed_pool, recipes, sr28, out, **sizes)
    line = capsys.readouterr().out
    changes = second["changes"]
    assert second["version"] == 2 and changes["previous_version"] == 1
    own = dish_instance_id(*flip)
    assert own in changes["changed"] + changes["removed"]
    assert rank[0]["id"] in changes["changed"] + changes["removed"]
    written = json.loads((out / "manifest.json").read_text())
    assert written["version"] == 2 and written["changes"] == changes
    assert changes["reasons"]["dish"]["relabelled"] == 1
    assert "against the previous build (version 1)" in line and "this build is version 2" in line
    assert build_fam(changed_pool, recipes, sr28, out, **sizes)["version"] == 2
    assert build_fam(pool_file, recipes, sr28, out, **sizes)["version"] == 3
    assert Path(out / "manifest.json").is_file()


def test_reviewed_entries_keep_the_side_the_rules_gave_them():
    row = {"recipe_id": "r1", "excluded": False,
           "rec": [{"condition": "h1", "ingredients": ["oats"], "provenance": []}],
           "not_rec": [{"condition": "h2", "ingredients": ["salt"], "provenance": []},
                       {"condition": "h3", "ingredients": ["sugar"], "provenance": []}],
           "excluded_entries": [{"condition": "h4", "provenance": [], "reason": "no data"}]}
    verdicts = {item_key("r1", "h1"): Verdict("NotRec", ("oats",), None),
                item_key("r1", "h2"): Verdict(None, (), "hidden ingredient")}
    once = apply_reviews([row], verdicts)[0]
    assert [e["annotated_side"] for e in once["not_rec"] if e["condition"] == "h1"] == ["rec"]
    assert "annotated_side" not in next(e for e in once["not_rec"] if e["condition"] == "h3")
    assert [e.get("annotated_side") for e in once["excluded_entries"]] == [None, "not_rec"]
    # applied again (a reviewed pool reviewed once more) the rules' side is not forgotten
    twice = apply_reviews([once], {item_key("r1", "h1"): Verdict("Rec", ("oats",), None)})[0]
    assert twice["rec"][0]["annotated_side"] == "rec"
    # the draw reads the rules' side; the annotator's own exclusion has none
    assert annotated_sides(once) == {"h1": REC, "h2": NOT_REC, "h3": NOT_REC}
