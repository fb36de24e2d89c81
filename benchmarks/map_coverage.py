"""How many reviewed name-map entries the reading rules make redundant.

    .venv/bin/python benchmarks/map_coverage.py [--list FILE]

For every entry of ``standards/data/ingredient_map.yaml`` that names an SR28 food, resolves the
line "100 g <name>" with the build's resolver while that one entry is left out of the map, and
counts the entries whose name still resolves to the same SR28 food (the parser, the matcher's
scoring, the back-off names and the other entries reach it without it). ``--list`` writes
those names, one per line. The map itself is not changed.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from nutrireason.recipes.build import Resolver
from nutrireason.sources.bundles import require
from nutrireason.sources.sr28 import read_sr28


def redundant_entries(resolver: Resolver) -> tuple[list[str], int]:
    """(names resolved to their own SR28 food without their entry, entries with a food)."""
    reviewed = resolver.matcher.reviewed
    names = [name for name, (ndb, _) in reviewed.items() if ndb]
    found = []
    for name in names:
        entry = reviewed.pop(name)
        resolver.matcher._memo.clear()
        try:
            ndb = resolver.ingredient(f"100 g {name}").ndb_no
        finally:
            reviewed[name] = entry
            resolver.matcher._memo.clear()
        if ndb == entry[0]:
            found.append(name)
    return found, len(names)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", type=Path, help="write the redundant names here")
    args = parser.parse_args()
    started = time.perf_counter()
    resolver = Resolver.from_sr28(read_sr28(require("usda-sr28") / "sr28"))
    found, total = redundant_entries(resolver)
    print(f"reviewed map entries naming an SR28 food: {total:,}")
    print(f"resolved to the same food without their own entry: {len(found):,} "
          f"({len(found) / total:.1%})  [{time.perf_counter() - started:.0f} s]")
    if args.list:
        args.list.write_text("\n".join(found) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
