"""``nutrireason fam build``: the FAM-Bench instance files from the annotation pool.

Writes into the output directory (each file atomically, the manifest last):

* ``dish.jsonl``: dish-level suitability instances (task ``fam_dish``);
* ``rank.jsonl``: comparative 4-dish ranking instances (task ``fam_rank``);
* ``stats.json``: balance statistics (also printed by ``nutrireason fam stats``);
* ``manifest.json``: inputs with sha256, the configuration, sizes and shortfalls.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.fam.instances import (
    BenchConfig,
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
from nutrireason.io import (
    input_fingerprints,
    read_jsonl,
    write_json_atomic,
    write_jsonl_atomic,
)
from nutrireason.reviewfile import load_reviews, reviews_file
from nutrireason.sources.sr28 import Sr28
from nutrireason.standards import standards_dir

GENERATOR = "nutrireason.fam.build/1"
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
              reviewed_only: bool = False) -> dict[str, Any]:
    """Build and write both splits; returns the manifest. ``reviews``: a ``review export``
    folder whose decisions are applied to the pool first."""
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
    dish = dish_instances(dishes, conditions, dish_size, labels, random.Random(seed),
                          config.min_minority_share)
    balance = balance_report(dishes, dish, conditions, dish_size, config.min_minority_share)
    rank, missing = rank_instances(dishes, conditions, config, rank_size, labels,
                                   random.Random(seed + 1))
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
    _write(out, dish, rank, stats, manifest)
    return manifest


def _write(out: Path, dish: list[dict], rank: list[dict], stats: dict, manifest: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").unlink(missing_ok=True)  # a half-written build has no manifest
    write_jsonl_atomic(out / "dish.jsonl", dish)
    write_jsonl_atomic(out / "rank.jsonl", rank)
    write_json_atomic(out / "stats.json", stats)
    write_json_atomic(out / "manifest.json", manifest)


def read_stats(directory: Path) -> dict[str, Any]:
    """Recompute the balance statistics from the instance files of a build."""
    return instance_stats(*(read_jsonl(directory / name, "FAM-Bench instance file",
                                       "run `nutrireason fam build` first")
                            for name in ("dish.jsonl", "rank.jsonl")))
