"""How often the answer readers read a graded corpus as its grader did.

    .venv/bin/python benchmarks/answer_reading.py tests/methods/answer_corpus.yaml [MORE.yaml]

Prints, per file, the agreement overall, per task and per form, the outputs cut off that
nevertheless got an answer (must be 0), and every disagreement with the grader's reason. The
corpus format is in :mod:`nutrireason.methods.graded`; a held-out corpus written the same way
checks that the rules generalise.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from nutrireason.methods.graded import grade, load_graded


def _table(rows: list, key: str) -> list[str]:
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for case, _, same, _ in rows:
        counts[str(case.get(key))][0] += same
        counts[str(case.get(key))][1] += 1
    return [f"  {name:<26} {hit:>4}/{n:<4} {hit / n:6.1%}" for name, (hit, n) in
            sorted(counts.items())]


def report(path: Path) -> float:
    rows = grade(load_graded(path))
    hits = sum(same for _, _, same, _ in rows)
    cut = [case for case, reading, _, _ in rows
           if case["expect"].get("reason") == "truncated" and reading.ok]
    print(f"{path}: {hits}/{len(rows)} read as the grader reads ({hits / len(rows):.1%}); "
          f"cut-off outputs given an answer: {len(cut)}")
    print("by task:", *_table(rows, "task"), sep="\n")
    print("by form:", *_table(rows, "form"), sep="\n")
    for case, _, same, detail in rows:
        if not same:
            print(f"  differs {case['id']} ({case['form']}): {detail}; grader: {case.get('why')}")
    return hits / len(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", nargs="+", type=Path)
    args = parser.parse_args()
    for path in args.corpus:
        report(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
