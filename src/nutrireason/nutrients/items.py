"""The items of recipe nutrient estimation, drawn from a recipe build: every recipe the build
kept without a flag, with its servings and a per-serving amount fully covered by SR28, in a
seeded order (a recipe keeps its place when others join or leave)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.storage import input_fingerprints, write_json_atomic, write_jsonl_atomic

GENERATOR = "nutrireason.nutrients/1"
TASK_CARBS, TASK_ENERGY = "nutrients_carbs", "nutrients_energy"  # what its records carry
NUTRIENT = {TASK_CARBS: ("carbohydrates", "carbs", "g"), TASK_ENERGY: ("calories", "energy",
                                                                       "kcal")}


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a recipe build's ``recipes.jsonl``."""
    if not path.is_file():
        raise DataError(path, "not found", expected="a recipe build (`nutrireason recipes "
                                                    "build`)")
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except ValueError as exc:
                raise DataError(path, f"line {number} is not JSON: {exc}") from exc
    return rows


def gold(row: dict[str, Any], nutrient: str) -> float | None:
    """The per-serving amount of a kept, unflagged recipe whose amount SR28 covers whole;
    None otherwise."""
    nutrition = row.get("nutrition") or {}
    servings = (row.get("record") or {}).get("servings")
    if not row.get("kept") or row.get("flags") or not servings or servings <= 0:
        return None
    if (nutrition.get("coverage") or {}).get(nutrient) != 1.0:
        return None
    value = (nutrition.get("per_serving") or {}).get(nutrient)
    return round(float(value), 3) if isinstance(value, int | float) else None


def _order(seed: int, recipe_id: str) -> str:
    return hashlib.sha256(f"{seed}:{recipe_id}".encode()).hexdigest()


def items(rows: list[dict[str, Any]], task: str, seed: int = 0,
          size: int | None = None) -> list[dict[str, Any]]:
    """The items of ``task``: the eligible recipes in seeded order, the first ``size``."""
    nutrient, option, unit = NUTRIENT[task]
    found = []
    for row in rows:
        amount = gold(row, nutrient)
        if amount is None:
            continue
        record = row["record"]
        found.append({"id": f"{option}-{record['id']}", "task": task,
                      "recipe_id": record["id"], "title": record.get("title") or record["id"],
                      "servings": float(record["servings"]),
                      "lines": [str(line) for line in record.get("ingredients") or []],
                      "category": str(row.get("food_category") or ""), "unit": unit,
                      "gold": amount})
    found.sort(key=lambda item: _order(seed, item["recipe_id"]))
    return found[:size] if size is not None else found


def build_items(recipes: Path, out: Path, seed: int = 0, size: int | None = None
                ) -> dict[str, Any]:
    """Write ``carbs.jsonl``, ``energy.jsonl`` and ``manifest.json`` into ``out``; return the
    manifest."""
    rows = read_rows(recipes)
    counts = {}
    for task, (_nutrient, option, _unit) in NUTRIENT.items():
        drawn = items(rows, task, seed, size)
        write_jsonl_atomic(out / f"{option}.jsonl", drawn)
        counts[option] = len(drawn)
    manifest = {"artifact": "nutrients", "generator": GENERATOR, "seed": seed, "size": size,
                "recipes": len(rows), "items": counts,
                "inputs": input_fingerprints([recipes])}
    write_json_atomic(out / "manifest.json", manifest)
    return manifest
