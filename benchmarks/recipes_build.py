"""Time the recipe build on the whole Wikibooks bundle (3,129 recipes); print recipes per
second and peak memory. Runs in a fresh subprocess so the parse cache starts empty.

    python benchmarks/recipes_build.py [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, sys, time, resource
from pathlib import Path
from nutrireason.recipes.build import Resolver, build_corpus
from nutrireason.recipes.load import WIKIBOOKS_FILE, load_wikibooks
from nutrireason.sources.bundles import require
from nutrireason.sources.sr28 import read_sr28
started = time.perf_counter()
resolver = Resolver.from_sr28(read_sr28(require("usda-sr28") / "sr28"))
corpus = load_wikibooks(require("recipes"))
loaded = time.perf_counter()
quality = build_corpus(corpus, resolver, Path(sys.argv[1]),
                       [require("recipes") / WIKIBOOKS_FILE], workers=int(sys.argv[2]))
done = time.perf_counter()
peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"load_s": loaded - started, "build_s": done - loaded,
                  "recipes": quality["recipes"], "kept": quality["recipes_kept"],
                  "peak_gb": peak_kb / 1024 / 1024}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", CHILD, out, str(args.workers)],
                              capture_output=True, text=True, check=True)
        wall = time.perf_counter() - started
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    children_peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 / 1024
    print(f"recipes {figures['recipes']} (kept {figures['kept']}), workers {args.workers}")
    print(f"load SR28 + bundle {figures['load_s']:.1f} s, build {figures['build_s']:.1f} s, "
          f"wall {wall:.1f} s")
    print(f"recipes per second (build): {figures['recipes'] / figures['build_s']:.1f}; "
          f"end to end: {figures['recipes'] / wall:.1f}")
    print(f"peak memory: main build process {figures['peak_gb']:.2f} GB; largest child "
          f"process (build or parse worker) {children_peak:.2f} GB")


if __name__ == "__main__":
    main()
