"""Compare a recipe build with the nutrition real recipe pages publish.

The validation file (``published-nutrition-*.json``) holds recipes with ``id``, ``title``,
``servings``, ``ingredients`` and ``published`` per-serving figures (``calories``,
``protein_g``, ``sodium_mg``, ``carbohydrates_g``, ``saturated_fat_g``, ``sugar_g``). Published
figures are each site's own estimate, not truth: judge by distribution (median absolute
percentage error, share within 20 %), never by single recipes.
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError

# published key -> the build's nutrient id
PUBLISHED_KEYS = {"calories": "calories", "protein_g": "protein", "sodium_mg": "sodium",
                  "carbohydrates_g": "carbohydrates", "saturated_fat_g": "saturated_fat",
                  "sugar_g": "sugar"}
# Below these per-serving amounts a percentage error says little (0.2 g vs 0.4 g sugar).
MIN_PUBLISHED = {"calories": 20.0, "protein": 1.0, "sodium": 20.0, "carbohydrates": 1.0,
                 "saturated_fat": 0.5, "sugar": 1.0}


@dataclass
class RecipeComparison:
    """One validation recipe against its build result."""

    id: str
    title: str
    kept: bool
    exclusion: str | None
    flags: list[str]
    published: dict[str, float | None]
    computed: dict[str, float | None]
    lines: list[dict[str, Any]] = field(default_factory=list)

    def error(self, nutrient: str) -> float | None:
        """|computed - published| / published, or None where either is missing or tiny."""
        published, computed = self.published.get(nutrient), self.computed.get(nutrient)
        if published is None or computed is None or published < MIN_PUBLISHED[nutrient]:
            return None
        return abs(computed - published) / published

    def ratio(self) -> float | None:
        """computed / published calories."""
        published, computed = self.published.get("calories"), self.computed.get("calories")
        if not published or computed is None:
            return None
        return computed / published


def read_published(path: str | Path) -> dict[str, dict[str, float | None]]:
    """Recipe id -> published per-serving figures under the build's nutrient ids."""
    path = Path(path)
    rows = _read_list(path, "validation file")
    out = {}
    for index, row in enumerate(rows):
        published = row.get("published") if isinstance(row, dict) else None
        if not isinstance(published, dict) or "id" not in row:
            raise DataError(path, "each recipe needs id and published", field=f"[{index}]")
        out[str(row["id"])] = {ours: _number(published.get(key))
                               for key, ours in PUBLISHED_KEYS.items()}
    return out


def _read_list(path: Path, what: str) -> list[Any]:
    """A JSON file whose top level is a list of recipes."""
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(path, f"cannot read {what}: {exc}") from exc
    if not isinstance(rows, list):
        raise DataError(path, "top level must be a list of recipes")
    return rows


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def compare_build(build_dir: str | Path, published: dict[str, dict[str, float | None]]
                  ) -> list[RecipeComparison]:
    """Every validation recipe found in ``build_dir/recipes.jsonl`` against its figures."""
    path = Path(build_dir) / "recipes.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    out = []
    for row in rows:
        ident = row["record"]["id"]
        if ident not in published:
            continue
        per_serving = (row.get("nutrition") or {}).get("per_serving") or {}
        out.append(RecipeComparison(
            id=ident, title=row["record"]["title"], kept=row["kept"],
            exclusion=row.get("exclusion"), flags=list(row.get("flags") or []),
            published=published[ident],
            computed={n: per_serving.get(n) for n in PUBLISHED_KEYS.values()},
            lines=row["ingredients"]))
    return out


def summary(comparisons: list[RecipeComparison]) -> dict[str, Any]:
    """Kept share, and per nutrient: n, median absolute error, share within 20 %."""
    kept = [c for c in comparisons if c.kept]
    out: dict[str, Any] = {"recipes": len(comparisons), "kept": len(kept),
                           "kept_share": len(kept) / max(len(comparisons), 1), "nutrients": {}}
    for nutrient in PUBLISHED_KEYS.values():
        out["nutrients"][nutrient] = _errors(kept, nutrient)
    ratios = [r for c in kept if (r := c.ratio()) is not None]
    out["over_2x_unflagged"] = sum(1 for c in kept if (r := c.ratio()) is not None and
                                   (r > 2 or r < 0.5) and not c.flags)
    out["over_2x"] = sum(1 for r in ratios if r > 2 or r < 0.5)
    return out


def stated_mass_share(item: RecipeComparison, kcal: dict[str, float]) -> float | None:
    """The share of a recipe's computed energy from lines weighed by a mass the page states
    ("450 g", "1 lb"), not by a volume or a count: where it is high, a disagreement with the
    published figure is not the weighing's."""
    energies = [(line["grams"] * kcal.get(line.get("ndb_no") or "", 0.0) / 100,
                 str(line.get("grams_method") or "")) for line in item.lines
                if line.get("grams") and line.get("ndb_no")]
    total = sum(energy for energy, _ in energies)
    if not total:
        return None
    return sum(energy for energy, method in energies if method.startswith("mass:")) / total


def by_weighing(comparisons: list[RecipeComparison], kcal: dict[str, float],
                threshold: float = 0.7) -> dict[str, dict[str, Any]]:
    """:func:`summary` of the kept recipes whose energy comes at least ``threshold`` from
    stated masses, and of the other kept recipes."""
    stated: list[RecipeComparison] = []
    other: list[RecipeComparison] = []
    for item in (c for c in comparisons if c.kept):
        share = stated_mass_share(item, kcal) or 0.0
        (stated if share >= threshold else other).append(item)
    return {"stated_masses": summary(stated), "other": summary(other)}


def worst(comparisons: list[RecipeComparison], count: int = 15) -> list[RecipeComparison]:
    """The kept recipes furthest from their published calories (by log ratio)."""
    scored = [(abs(math.log(r)), c) for c in comparisons if c.kept and (r := c.ratio())]
    return [c for _, c in sorted(scored, key=lambda pair: (-pair[0], pair[1].id))[:count]]


# Nutrients an independent hand reading is compared on (the targets).
INDEPENDENT_NUTRIENTS = ("calories", "protein", "sodium")


def read_independent(path: str | Path) -> dict[str, dict[str, float | None]]:
    """Recipe id -> per-serving figures of an independent reading of the same recipes (a
    person, or any other calculator, working from the ingredient lines alone): a JSON list of
    ``{"id", "per_serving": {"calories", "protein", "sodium", ...}}``; other keys (the lines
    and their notes) are kept for people and ignored here."""
    path = Path(path)
    rows = _read_list(path, "independent reading")
    out: dict[str, dict[str, float | None]] = {}
    for index, row in enumerate(rows):
        figures = row.get("per_serving") if isinstance(row, dict) else None
        if not isinstance(figures, dict) or not isinstance(row.get("id"), str):
            raise DataError(path, "each recipe needs an id (text) and per_serving (object)",
                            field=f"[{index}]")
        out[row["id"]] = {name: _figure(path, index, name, figures.get(name))
                          for name in INDEPENDENT_NUTRIENTS}
    return out


def _figure(path: Path, index: int, name: str, value: Any, key: str = "per_serving"
            ) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or \
            not math.isfinite(value) or value < 0:
        raise DataError(path, f"a {key.replace('_', '-')} figure must be a number >= 0 or null",
                        field=f"[{index}].{key}.{name}", value=value)
    return float(value)


def independent_agreement(comparisons: list[RecipeComparison],
                          independent: dict[str, dict[str, float | None]],
                          close: float = 0.10) -> dict[str, Any]:
    """The build against an independent reading of the same recipes, on the kept recipes the
    reading covers: per nutrient, each one's error against the published figures (n, median,
    share within 20 %), and how far the build sits from the reading (median relative
    difference, recipes further than ``close``). Where the reading scores no better than the
    build against the pages, what is left is the pages' own figures, not the build's reading
    of the lines."""
    shared = [c for c in comparisons if c.kept and c.id in independent]
    readings = [replace(c, computed=dict(independent[c.id])) for c in shared]
    out: dict[str, Any] = {"recipes": len(shared), "nutrients": {}}
    for nutrient in INDEPENDENT_NUTRIENTS:
        gaps = [abs(b - i) / i for c in shared
                if (b := c.computed.get(nutrient)) is not None
                and (i := independent[c.id].get(nutrient))]
        out["nutrients"][nutrient] = {
            "independent": _errors(readings, nutrient),
            "build": _errors(shared, nutrient),
            "build_vs_independent": {
                "n": len(gaps), "median": statistics.median(gaps) if gaps else None,
                "further": sum(gap > close for gap in gaps)},
        }
    return out


def _errors(items: list[RecipeComparison], nutrient: str) -> dict[str, Any]:
    errors = [e for c in items if (e := c.error(nutrient)) is not None]
    return {"n": len(errors), "median_error": statistics.median(errors) if errors else None,
            "within_20": sum(e <= 0.2 for e in errors) / len(errors) if errors else None}


# ----------------------------------------------------------------- whole-recipe hand readings


@dataclass(frozen=True)
class Reading:
    """An independent hand reading of one recipe: its servings (None where the recipe gives
    none) and the whole recipe's calories, protein and sodium."""

    servings: float | None
    total: dict[str, float | None]


def read_readings(path: str | Path) -> dict[str, Reading]:
    """Recipe id -> :class:`Reading` from a JSON list of ``{"id", "servings", "total":
    {"calories", "protein", "sodium", ...}}`` (the protocol's reading files; the lines and their
    notes are for people and ignored here)."""
    path = Path(path)
    out: dict[str, Reading] = {}
    for index, row in enumerate(_read_list(path, "independent reading")):
        total = row.get("total") if isinstance(row, dict) else None
        if not isinstance(total, dict) or not isinstance(row.get("id"), str):
            raise DataError(path, "each recipe needs an id (text) and total (object)",
                            field=f"[{index}]")
        servings = row.get("servings")
        if servings is not None and (isinstance(servings, bool) or
                                     not isinstance(servings, int | float) or servings <= 0):
            raise DataError(path, "servings must be a number > 0 or null",
                            field=f"[{index}].servings", value=servings)
        out[row["id"]] = Reading(
            None if servings is None else float(servings),
            {name: _figure(path, index, name, total.get(name), "total")
             for name in INDEPENDENT_NUTRIENTS})
    return out


def build_totals(row: dict[str, Any]) -> dict[str, float | None]:
    """A built recipe's whole-recipe calories, protein and sodium: its per-100 g values over
    the mass of its weighed lines (what the per-100 g values were computed on)."""
    mass = sum(float(line["grams"]) for line in row.get("ingredients") or []
               if line.get("ndb_no") and line.get("grams"))
    per_100g = (row.get("nutrition") or {}).get("per_100g") or {}
    return {name: None if per_100g.get(name) is None else float(per_100g[name]) * mass / 100
            for name in INDEPENDENT_NUTRIENTS}


def reading_agreement(rows: list[dict[str, Any]], readings: dict[str, Reading],
                      close: float = 0.10) -> dict[str, Any]:
    """A build (``recipes.jsonl`` rows) against hand readings of some of its recipes: how many
    of the read recipes it kept, and per nutrient over the kept ones how far the build sits
    from the reading (n, median relative distance, share within ``close``, and the recipes
    further apart, worst first, as (id, build, reading))."""
    found = {row["record"]["id"]: row for row in rows if row["record"]["id"] in readings}
    kept = {ident: row for ident, row in found.items() if row.get("kept")}
    out: dict[str, Any] = {"read": len(readings), "found": len(found), "kept": len(kept),
                           "excluded": sorted((ident, str(row.get("exclusion")))
                                              for ident, row in found.items()
                                              if not row.get("kept")),
                           "nutrients": {}}
    for nutrient in INDEPENDENT_NUTRIENTS:
        pairs = [(ident, built, hand) for ident, row in sorted(kept.items())
                 if (built := build_totals(row)[nutrient]) is not None
                 and (hand := readings[ident].total.get(nutrient))]
        gaps = [(abs(built - hand) / hand, ident, built, hand) for ident, built, hand in pairs]
        far = sorted((gap for gap in gaps if gap[0] > close), reverse=True)
        out["nutrients"][nutrient] = {
            "n": len(gaps),
            "median": statistics.median(g[0] for g in gaps) if gaps else None,
            "within": sum(g[0] <= close for g in gaps) / len(gaps) if gaps else None,
            "further": [(ident, built, hand) for _, ident, built, hand in far]}
    return out


def build_records(records: list[dict[str, Any]], resolver: Any, folder: Path) -> list[dict]:
    """``recipes.jsonl`` rows of ``records`` built by the code of `recipes build --recipes`
    into ``folder`` (a corpus file and an ``out`` folder are written there)."""
    from nutrireason.recipes.build import build_corpus, build_inputs
    from nutrireason.recipes.load import load_corpus

    corpus = folder / "corpus.json"
    corpus.write_text(json.dumps(records, ensure_ascii=False), encoding="utf-8")
    build_corpus(load_corpus(corpus), resolver, folder / "out", build_inputs(corpus), workers=2)
    text = (folder / "out" / "recipes.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line]
