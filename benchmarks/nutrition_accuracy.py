"""Recipe nutrition against what real recipe pages publish.

    .venv/bin/python benchmarks/nutrition_accuracy.py \
        ../shared/validation/published-nutrition-dev.json
    .venv/bin/python benchmarks/nutrition_accuracy.py FILE --build DIR   # score an existing build

Builds FILE with the same code as `nutrireason recipes build --recipes FILE` (into a temporary
folder unless --build names a finished build) and prints: the kept share; per nutrient (calories,
protein, sodium, carbohydrates, saturated fat, sugar) the number compared, the median absolute
percentage error and the share within 20 % of the published figure; kept recipes beyond 2x
(or under 0.5x) published calories, flagged or not; then the worst recipes by calories with
the kcal each line contributes. Published figures are sites' own estimates: read the
distribution, not single recipes. A last table splits the kept recipes by how they were weighed:
those whose energy comes at least 70 % from masses the page states (where the weighing is not
in question, the error is the food's identity or the site's own figure) and the others.
With --independent JSON (repeatable), the build is also set beside an independent reading of
some of the same recipes (a person working from the lines with SR28, see
docs/benchmarks/recipes.md): each one's error against the pages, and how far the build sits
from the reading.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from nutrireason.recipes.validation import (
    by_weighing,
    compare_build,
    independent_agreement,
    read_independent,
    read_published,
    summary,
    worst,
)

TARGETS = {"kept_share": 0.90, "calories": (0.10, 0.70), "protein": (0.12, None),
           "sodium": (0.15, None)}


def read_sr28_bundle():
    """The SR28 tables of the offline bundle (read once: the build and the breakdown use them)."""
    from nutrireason.sources.bundles import require
    from nutrireason.sources.sr28 import read_sr28

    return read_sr28(require("usda-sr28") / "sr28")


def build(corpus: Path, out: Path, sr28) -> None:
    """`recipes build --recipes corpus --out out`, in process."""
    from nutrireason.recipes.build import Resolver, build_corpus, build_inputs
    from nutrireason.recipes.load import load_corpus

    build_corpus(load_corpus(corpus), Resolver.from_sr28(sr28), out, build_inputs(corpus),
                 workers=2)


def kcal_per_100g(sr28) -> dict[str, float]:
    table = sr28.nutrients
    return dict(zip(table["ndb_no"], table["calories"], strict=True))


def print_summary(figures: dict) -> None:
    print(f"recipes {figures['recipes']}, kept {figures['kept']} "
          f"({figures['kept_share']:.1%}; target >= {TARGETS['kept_share']:.0%})")
    print(f"{'nutrient':<15}{'n':>5}{'median err':>12}{'within 20%':>12}")
    for nutrient, row in figures["nutrients"].items():
        median = "-" if row["median_error"] is None else f"{row['median_error']:.1%}"
        within = "-" if row["within_20"] is None else f"{row['within_20']:.1%}"
        print(f"{nutrient:<15}{row['n']:>5}{median:>12}{within:>12}")
    print(f"kept recipes beyond 2x or under 0.5x published calories: {figures['over_2x']} "
          f"({figures['over_2x_unflagged']} without a flag)")


def print_worst(comparisons, kcal: dict[str, float], count: int) -> None:
    print(f"\nworst {count} kept recipes by calories (computed / published):")
    for item in worst(comparisons, count):
        print(f"\n{item.ratio():.2f}x  {item.id}  {item.title!r}  "
              f"computed {item.computed['calories']:.0f} vs published "
              f"{item.published['calories']:.0f} kcal/serving  flags={item.flags}")
        for line in item.lines:
            grams = line.get("grams")
            energy = kcal.get(line.get("ndb_no") or "", float("nan"))
            part = "" if grams is None else f"{grams:8.1f} g {grams * energy / 100:7.0f} kcal"
            food = line.get("sr28_description") or line.get("problem") or ""
            print(f"    {part:<24} {line['line'][:60]:<60} -> {food[:60]}")


def _cell(label: str, row: dict) -> str:
    """"label n median within-20" for one nutrient's figures, or "label -" without any."""
    if row["median_error"] is None:
        return f"{label} -"
    return f"{label} {row['n']} {row['median_error']:.1%} {row['within_20']:.0%}"


def print_by_weighing(comparisons, kcal: dict[str, float]) -> None:
    print("\nkept recipes by weighing (calories / protein / sodium: n, median err, within 20%):")
    names = {"stated_masses": ">= 70 % of energy from stated masses",
             "other": "the rest (volumes, counts)"}
    for key, figures in by_weighing(comparisons, kcal).items():
        cells = [_cell(nutrient, figures["nutrients"][nutrient])
                 for nutrient in ("calories", "protein", "sodium")]
        print(f"  {names[key]:<38} {figures['kept']:>4} recipes | " + " | ".join(cells))


def print_independent(comparisons, paths: list[Path]) -> None:
    independent: dict = {}
    for path in paths:
        independent.update(read_independent(path))
    figures = independent_agreement(comparisons, independent)
    print(f"\nagainst an independent reading of the same lines ({figures['recipes']} kept "
          "recipes it covers; n, median err, within 20% vs published):")
    for nutrient, row in figures["nutrients"].items():
        cells = [_cell(key, row[key]) for key in ("independent", "build")]
        gap = row["build_vs_independent"]
        cells.append("build vs independent -" if gap["median"] is None else
                     f"build vs independent median {gap['median']:.1%}, "
                     f"{gap['further']} of {gap['n']} further than 10%")
        print(f"  {nutrient:<9} " + " | ".join(cells))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path, help="published-nutrition JSON file")
    parser.add_argument("--build", type=Path, help="score this finished build instead")
    parser.add_argument("--worst", type=int, default=15)
    parser.add_argument("--independent", type=Path, action="append", default=[],
                        metavar="JSON", help="an independent (hand) reading of some of the "
                        "recipes: [{id, per_serving: {calories, protein, sodium}}]; repeatable")
    args = parser.parse_args(argv)
    published = read_published(args.path)
    sr28 = read_sr28_bundle()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.build
        if folder is None:
            folder = Path(tmp)
            build(args.path, folder, sr28)
        comparisons = compare_build(folder, published)
    print_summary(summary(comparisons))
    kcal = kcal_per_100g(sr28)
    if args.worst:
        print_worst(comparisons, kcal, args.worst)
    print_by_weighing(comparisons, kcal)
    if args.independent:
        print_independent(comparisons, args.independent)
    return 0


if __name__ == "__main__":
    sys.exit(main())
