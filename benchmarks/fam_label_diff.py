"""Which FAM-Bench labels moved between two builds, and why.

    .venv/bin/python benchmarks/fam_label_diff.py OLD NEW
    .venv/bin/python benchmarks/fam_label_diff.py OLD NEW --out-json /tmp/fam_diff.json

OLD and NEW are each an annotation pool from `nutrireason fam annotate --out DIR`
(annotations.jsonl), or a folder holding `ann/` (that pool) and `fam/` (`nutrireason fam
build`); when both builds have `dish.jsonl` the dish-level instances are compared too.

Per condition, for recipes in both builds: each (recipe, condition)'s state (Rec, NotRec,
neutral, excluded-entry with its reason, recipe-excluded) in OLD and NEW; the transitions
between states; entries that kept their side but changed their rationale ingredients; the
recipes in one build only. For every changed entry the reason class: the rule keys (e.g.
`concept:added_sugars`, `veto:saturated_fat`, `food:garlic`) that fired only in OLD (-) or only
in NEW (+); the most frequent classes are listed per condition. Then one summary line per
condition for a README. See `nutrireason.fam.diff` for the exact definitions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from nutrireason.errors import NutriReasonError
from nutrireason.fam.diff import console, label_diff, print_report
from nutrireason.storage import write_text_atomic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path, help="OLD pool folder (or folder with ann/ and fam/)")
    parser.add_argument("new", type=Path, help="NEW pool folder (or folder with ann/ and fam/)")
    parser.add_argument("--out-json", type=Path, help="also write the whole report here")
    parser.add_argument("--top", type=int, default=5, help="reason classes per condition")
    parser.add_argument("--width", type=int, default=150, help="output width (default 150)")
    args = parser.parse_args(argv)
    out = console(args.width)
    began = time.perf_counter()
    try:
        report = label_diff(args.old, args.new)
    except NutriReasonError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    report["seconds"] = round(time.perf_counter() - began, 2)
    print_report(report, out, args.top)
    out.print(f"diffed in {report['seconds']} s")
    if args.out_json:
        write_text_atomic(args.out_json, json.dumps(report, indent=1, sort_keys=True) + "\n")
        out.print(f"wrote {args.out_json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
