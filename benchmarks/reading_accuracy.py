"""Recipe nutrition against careful independent (hand) readings of the same lines.

    .venv/bin/python benchmarks/reading_accuracy.py \
        --set wikibooks "$NUTRIREASON_HOME/bundles/recipes/recipes_en-us.json" \
            tests/recipes/fixtures/readings/wikibooks-seed-31203.json \
        --set dev ../shared/validation/published-nutrition-dev.json /tmp/dev-reading.json

Each ``--set NAME CORPUS READING...`` builds the read recipes of CORPUS with the code of
`nutrireason recipes build` (only those recipes, into a temporary folder) and prints, per set:
how many of the read recipes the build keeps, and per nutrient (calories, protein, sodium, over
the whole recipe) the median distance between build and reading, the share within 10 % and the
recipes further apart. Readings follow the protocol in docs/benchmarks/recipes.md
(``reading_sample.py`` draws the recipes); the targets: kept >= 92 %, calories median <= 2 %
and >= 90 % within 10 %.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from nutrireason.recipes.validation import build_records, read_readings, reading_agreement

TARGETS = {"kept": 0.92, "median": 0.02, "within": 0.90}


def build_rows(corpus: Path, ids: set[str]) -> list[dict[str, Any]]:
    """The ``recipes.jsonl`` rows of CORPUS's records in ``ids``, built in a temporary folder."""
    from nutrireason.recipes.build import Resolver
    from nutrireason.recipes.load import WIKIBOOKS_FILE, _wikibooks_row
    from nutrireason.sources.bundles import require
    from nutrireason.sources.sr28 import read_sr28

    data = json.loads(corpus.read_text(encoding="utf-8"))
    if corpus.name == WIKIBOOKS_FILE:  # the offline bundle: its loader's records, keyed as read
        records = [dict(_wikibooks_row(key, row), id=key) for key, row in data.items()]
    else:
        records = [dict(record, id=record.get("id", key)) for key, record in data.items()] \
            if isinstance(data, dict) else data
    chosen = [record for record in records if record["id"] in ids]
    resolver = Resolver.from_sr28(read_sr28(require("usda-sr28") / "sr28"))
    with tempfile.TemporaryDirectory() as tmp:
        return build_records(chosen, resolver, Path(tmp))


def print_set(name: str, figures: dict[str, Any]) -> None:
    kept = figures["kept"] / figures["read"] if figures["read"] else 0.0
    print(f"\n{name}: {figures['read']} recipes read, {figures['found']} in the corpus, "
          f"kept {figures['kept']} ({kept:.1%}; target >= {TARGETS['kept']:.0%})")
    for ident, why in figures["excluded"]:
        print(f"    excluded  {ident}: {why[:110]}")
    for nutrient, row in figures["nutrients"].items():
        if row["median"] is None:
            print(f"  {nutrient:<9} -")
            continue
        print(f"  {nutrient:<9} n {row['n']:>3}  median distance {row['median']:.1%}  "
              f"within 10 % {row['within']:.0%}  further: {len(row['further'])}")
        if nutrient == "calories":
            for ident, built, hand in row["further"]:
                print(f"    {built / hand:5.2f}x  {ident}  build {built:.0f} vs reading "
                      f"{hand:.0f} kcal")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", nargs="+", action="append", required=True,
                        metavar="NAME CORPUS READING", help="a name, a corpus file and one "
                        "or more reading files of its recipes; repeatable")
    args = parser.parse_args(argv)
    for spec in args.set:
        if len(spec) < 3:
            parser.error(f"--set needs NAME CORPUS READING..., got {spec}")
        name, corpus, *paths = spec
        readings: dict = {}
        for path in paths:
            readings.update(read_readings(path))
        rows = build_rows(Path(corpus), set(readings))
        print_set(name, reading_agreement(rows, readings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
