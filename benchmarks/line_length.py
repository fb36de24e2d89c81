"""Time the ingredient matcher and the recipe build against the length of one ingredient line;
print seconds and the growth per tenfold length (1.0 per tenfold is linear; the sub-phrase
search was cubic before it was bounded by the longest reviewed name).

    python benchmarks/line_length.py [--words 40,400,4000,40000]

The matcher is timed on names of N words (the slicer's cap on line length is bypassed, to
measure the search itself); the build is timed on a two-recipe corpus whose first recipe has a
line of N words (a line over the cap is a named problem and costs nothing).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import tempfile
import time
from pathlib import Path

WORDS = ["fresh", "chopped", "green", "onion", "and", "grated", "cheese", "with", "more",
         "flour", "sugar"]


def long_name(words: int) -> str:
    chooser = random.Random(words)
    return " ".join(chooser.choice(WORDS) for _ in range(words))


def time_match(resolver, words: int) -> float:
    resolver.matcher._memo.clear()
    started = time.perf_counter()
    resolver.matcher.match(long_name(words))
    return time.perf_counter() - started


def time_build(resolver, words: int) -> float:
    from nutrireason.recipes.build import build_corpus
    from nutrireason.recipes.load import load_corpus

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.jsonl"
        records = [{"id": "long", "title": "long", "instructions": ["Mix."], "servings": 4,
                    "ingredients": [f"1 cup {long_name(words)}", "2 eggs"]},
                   {"id": "fine", "title": "fine", "instructions": ["Mix."], "servings": 4,
                    "ingredients": ["2 cups flour", "1 cup sugar", "2 eggs"]}]
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        started = time.perf_counter()
        build_corpus(load_corpus(path), resolver, Path(folder) / "out", [path], workers=1)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", default="40,400,4000,40000")
    args = parser.parse_args()
    from nutrireason.recipes.build import Resolver
    from nutrireason.sources.bundles import require
    from nutrireason.sources.sr28 import read_sr28

    resolver = Resolver.from_sr28(read_sr28(require("usda-sr28") / "sr28"))
    sizes = [int(w) for w in args.words.split(",")]
    previous = None
    for words in sizes:
        match, build = time_match(resolver, words), time_build(resolver, words)
        growth = ""
        if previous is not None:
            tenfolds = math.log10(words / previous[0])
            power = math.log10(max(match, 1e-6) / max(previous[1], 1e-6)) / tenfolds
            growth = f"; growth per tenfold: match {power:.2f} (1 = linear, 3 = cubic)"
        print(f"{words:>6} words: match {match:.3f} s, build {build:.2f} s{growth}")
        previous = (words, match)


if __name__ == "__main__":
    main()
