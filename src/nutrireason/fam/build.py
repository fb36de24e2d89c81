"""``nutrireason fam build``: the FAM-Bench instance files from the annotation pool.

Writes into the output directory (each file atomically, the manifest last):

* ``dish.jsonl``: dish-level suitability instances (task ``fam_dish``);
* ``rank.jsonl``: comparative 4-dish ranking instances (task ``fam_rank``);
* ``stats.json``: balance statistics (also printed by ``nutrireason fam stats``);
* ``manifest.json``: inputs with sha256, the configuration, sizes and shortfalls, the
  benchmark ``version`` and its ``changes`` against the build the folder held before.

Versions: a first build is version 1; a build whose instances differ from the folder's earlier
build is that build's version + 1, and its ``changes`` list the instance ids ``added``,
``removed`` and ``changed`` (same id, other content) with counts of why; a build with the same
instances keeps the earlier version and its ``changes``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.fam.instances import (
    BenchConfig,
    Dish,
    balance_report,
    dish_instances,
    instance_stats,
    load_bench_config,
    pool_dishes,
    rank_instances,
)
from nutrireason.fam.kb import load_kb
from nutrireason.fam.pool import food_table, read_recipes, rule_files
from nutrireason.fam.reviews import apply_reviews
from nutrireason.fam.vocabulary import Vocabulary
from nutrireason.reviewfile import load_reviews, reviews_file
from nutrireason.sources.sr28 import Sr28
from nutrireason.standards import standards_dir
from nutrireason.storage import (
    finite,
    input_fingerprints,
    read_json_object,
    read_jsonl,
    write_json_atomic,
    write_jsonl_atomic,
)

GENERATOR = "nutrireason.fam.build/2"
FILES = ("dish.jsonl", "rank.jsonl", "stats.json", "manifest.json")


def read_annotations(path: Path) -> list[dict[str, Any]]:
    """The pool of a ``fam annotate`` run (``annotations.jsonl``)."""
    return read_jsonl(path, "annotation pool", "run `nutrireason fam annotate` first")


def build_inputs(annotations: Path, recipes: Path) -> list[Path]:
    """The files a build reads: the pool, the recipes, the KB and the split configuration."""
    return [annotations, recipes, *rule_files(), standards_dir() / "fam_bench.yaml",
            standards_dir() / "fam_comorbidities.yaml"]


def settings_of(dish_size: int | None, rank_size: int | None, seed: int | None,
                images: Path | None, config: BenchConfig | None = None,
                reviewed_only: bool = False) -> dict[str, Any]:
    """The settings a build records (defaults filled in from ``fam_bench.yaml``)."""
    config = config or load_bench_config()
    settings = {"dish_size": config.dish_size if dish_size is None else dish_size,
                "rank_size": config.rank_size if rank_size is None else rank_size,
                "seed": config.seed if seed is None else seed,
                "images": str(images.resolve()) if images else None,
                "config": {k: v for k, v in vars(config).items()
                           if k not in ("dish_size", "rank_size", "seed")}}
    if reviewed_only:  # recorded only when set: builds without reviews keep their settings
        settings["reviewed_only"] = True
    return settings


def reviewed_pool(annotations: Path, reviews: Path | None, reviewed_only: bool
                  ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The pool with the reviews applied, and what the manifest records of the reviews."""
    pool = read_annotations(annotations)
    verdicts, record = load_reviews(reviews, "fam", reviewed_only)
    return (pool if verdicts is None else apply_reviews(pool, verdicts, reviewed_only)), record


def build_fam(annotations: Path, recipes: Path, sr28: Sr28, out: Path, *,
              dish_size: int | None = None, rank_size: int | None = None,
              seed: int | None = None, images: Path | None = None,
              config: BenchConfig | None = None, reviews: Path | None = None,
              reviewed_only: bool = False,
              log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Build and write both splits; returns the manifest. ``reviews``: a ``review export``
    folder whose decisions are applied to the pool first. ``log`` gets one line saying what
    changed against the build ``out`` held before."""
    config = config or load_bench_config()
    settings = settings_of(dish_size, rank_size, seed, images, config, reviewed_only)
    pool, reviewed = reviewed_pool(annotations, reviews, reviewed_only)
    dish_size, rank_size, seed = settings["dish_size"], settings["rank_size"], settings["seed"]
    if images is not None and not images.is_dir():
        raise DataError(images, "image directory not found",
                        expected="a folder of <recipe id>.jpg/.png/.webp files")
    kb = load_kb()
    conditions = tuple(kb)  # the paper's 13, then any added condition
    labels = {c: kb[c].label for c in conditions}
    dishes = pool_dishes(pool, read_recipes(recipes), kb,
                         Vocabulary.load(), food_table(sr28), images)
    if not dishes:
        raise DataError(annotations, "no annotated recipe with an entry",
                        expected="an annotation pool with Rec/NotRec entries")
    dish = dish_instances(dishes, conditions, dish_size, labels, seed,
                          config.min_minority_share)
    balance = balance_report(dishes, dish, conditions, dish_size, config.min_minority_share)
    rank, missing = rank_instances(dishes, conditions, config, rank_size, labels, seed)
    stats = instance_stats(dish, rank)
    inputs = build_inputs(annotations, recipes)
    manifest = {"generator": GENERATOR,
                "inputs": input_fingerprints(inputs + ([reviews_file(reviews)] if reviews
                                                        else [])),
                "settings": settings,
                "pool_dishes": len(dishes),
                "dish_instances": len(dish), "rank_instances": len(rank),
                "rank_not_drawn": missing, "balance": balance, "stats": stats}
    if reviewed is not None:
        manifest["reviews"] = reviewed
    previous = previous_build(out)
    manifest["version"], manifest["changes"] = versioned(previous, dish, rank, dishes)
    _write(out, dish, rank, stats, manifest)
    if log is not None:
        log(change_line(manifest, previous))
    return manifest


def _write(out: Path, dish: list[dict], rank: list[dict], stats: dict, manifest: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)  # a half-written build has no manifest
    write_jsonl_atomic(out / "dish.jsonl", dish)
    write_jsonl_atomic(out / "rank.jsonl", rank)
    write_json_atomic(out / "stats.json", stats)
    write_json_atomic(out / "manifest.json", manifest)


# --------------------------------------------------------------------------- versions


DISH_REASONS = ("relabelled", "excluded", "changed", "displaced", "drawn in")
RANK_REASONS = ("option relabelled", "option excluded", "redrawn", "drawn in")


def first_build() -> dict[str, Any]:
    """The ``changes`` of a build with no earlier one in its folder."""
    return {"previous_version": None, "added": [], "removed": [], "changed": []}


def previous_build(out: Path) -> dict[str, Any] | None:
    """The build ``out`` holds (its manifest and instances), read before it is replaced; None
    when it holds none, or only a half-written one (no manifest)."""
    if not all((out / name).is_file() for name in ("manifest.json", "dish.jsonl", "rank.jsonl")):
        return None
    return {"manifest": read_json_object(out / "manifest.json"),
            **{split: read_jsonl(out / f"{split}.jsonl", "FAM-Bench instance file", "")
               for split in ("dish", "rank")}}


def previous_version(manifest: dict[str, Any]) -> int:
    """The version a manifest records (a build made before versions counts as version 1)."""
    version = manifest.get("version")
    return version if isinstance(version, int) and version >= 1 else 1


def instance_changes(old: list[dict[str, Any]], new: list[dict[str, Any]]
                     ) -> dict[str, list[str]]:
    """Instance ids ``added``, ``removed`` and ``changed`` (same id, other content)."""
    before = {item["id"]: _as_written(item) for item in old}
    after = {item["id"]: _as_written(item) for item in new}
    return {"added": sorted(after.keys() - before.keys()),
            "removed": sorted(before.keys() - after.keys()),
            "changed": sorted(k for k in after.keys() & before.keys() if after[k] != before[k])}


def _as_written(item: dict[str, Any]) -> str:
    return json.dumps(finite(item), ensure_ascii=False, sort_keys=True)


def versioned(previous: dict[str, Any] | None, dish: list[dict[str, Any]],
              rank: list[dict[str, Any]], dishes: dict[str, Dish]
              ) -> tuple[int, dict[str, Any]]:
    """(version, changes) of a build against the ``previous`` one (:func:`previous_build`)."""
    if previous is None:
        return 1, first_build()
    version = previous_version(previous["manifest"])
    diff = {"dish": instance_changes(previous["dish"], dish),
            "rank": instance_changes(previous["rank"], rank)}
    if not any(ids for split in diff.values() for ids in split.values()):
        return version, previous["manifest"].get("changes") or first_build()
    reasons = {"dish": dish_reasons(previous["dish"], diff["dish"], dishes),
               "rank": rank_reasons(previous["rank"], diff["rank"], dishes)}
    return version + 1, {"previous_version": version,
                         **{k: diff["dish"][k] + diff["rank"][k]
                            for k in ("added", "removed", "changed")},
                         "reasons": reasons}


def dish_reasons(old: list[dict[str, Any]], ids: dict[str, list[str]],
                 dishes: dict[str, Dish]) -> dict[str, int]:
    """Why dish-level instances changed: the entry of each one removed or changed is now
    ``excluded`` (no side), ``relabelled`` or has the same label (``changed``: its rationale or
    recipe; ``displaced``: another entry took its place); each one added is ``drawn in``."""
    items = {item["id"]: item for item in old}
    reasons: Counter = Counter()
    for item_id in ids["removed"] + ids["changed"]:
        item = items[item_id]
        dish = dishes.get(item["recipe_id"])
        side = dish.standing.side.get(item["condition"]) if dish else None
        if side is None:
            reasons["excluded"] += 1
        elif side != item["gold"]["decision"]:
            reasons["relabelled"] += 1
        else:
            reasons["changed" if item_id in ids["changed"] else "displaced"] += 1
    reasons["drawn in"] += len(ids["added"])
    return {k: reasons[k] for k in DISH_REASONS if reasons[k]}


def rank_reasons(old: list[dict[str, Any]], ids: dict[str, list[str]],
                 dishes: dict[str, Dish]) -> dict[str, int]:
    """Why ranking items changed: each one removed or changed had an option that is now
    excluded for its targets (``option excluded``), one whose utility for them changed
    (``option relabelled``), or neither (``redrawn``); each one added is ``drawn in``."""
    items = {item["id"]: item for item in old}
    reasons: Counter = Counter()
    for item_id in ids["removed"] + ids["changed"]:
        item = items[item_id]
        states = {_option_state(dishes.get(rid), item["conditions"], item["gold"]["utility"][k])
                  for k, rid in item["recipe_ids"].items()}
        reasons[next((s for s in ("option excluded", "option relabelled") if s in states),
                     "redrawn")] += 1
    reasons["drawn in"] += len(ids["added"])
    return {k: reasons[k] for k in RANK_REASONS if reasons[k]}


def _option_state(dish: Dish | None, targets: list[str], utility: int) -> str:
    if dish is None or not dish.option_for(targets):
        return "option excluded"
    return "option relabelled" if dish.standing.utility(targets) != utility else "same"


def change_line(manifest: dict[str, Any], previous: dict[str, Any] | None) -> str:
    """One line: how many instances changed against the previous build, and why."""
    version = manifest["version"]
    if previous is None:
        return (f"FAM-Bench version 1 (first build in this folder): "
                f"{manifest['dish_instances']:,} dish-level instances, "
                f"{manifest['rank_instances']:,} ranking items")
    before = previous_version(previous["manifest"])
    if version == before:
        return f"no instance changed against the previous build (version {before})"
    reasons = manifest["changes"]["reasons"]
    parts = [_counted(reasons["dish"], "dish-level instance"),
             _counted(reasons["rank"], "ranking item")]
    return (f"{parts[0]} against the previous build (version {before}); {parts[1]}; "
            f"this build is version {version}")


def _counted(reasons: dict[str, int], what: str) -> str:
    total = sum(reasons.values())
    why = ", ".join(f"{n:,} {reason}" for reason, n in reasons.items())
    return f"{total:,} {what}{'' if total == 1 else 's'} changed" + (f" ({why})" if why else "")


def read_stats(directory: Path) -> dict[str, Any]:
    """Recompute the balance statistics from the instance files of a build."""
    return instance_stats(*(read_jsonl(directory / name, "FAM-Bench instance file",
                                       "run `nutrireason fam build` first")
                            for name in ("dish.jsonl", "rank.jsonl")))
