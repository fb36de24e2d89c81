"""Draw a fresh random sample of FAM-Bench dish instances for a blind clinical read.

Writes ``OUT/sample.jsonl`` (what the reader sees: condition, title, the recipe's lines, its
nutrition table, its instructions; no label) and ``OUT.key.jsonl`` beside the folder, not in
it (the gold decision and rationale, to compare with the reader's labels afterwards: hand the
reader the folder alone). At least ``--per-condition``
instances per condition, the rest drawn at random from the whole split.

    python benchmarks/clinical_sample.py --out /tmp/clinical --seed 20261203
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from nutrireason.paths import builds_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=builds_dir() / "fam" / "benchmark")
    parser.add_argument("--recipes", type=Path, default=builds_dir() / "recipes")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--size", type=int, default=45)
    parser.add_argument("--per-condition", type=int, default=3)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--show-labels", action="store_true",
                        help="put the gold decision and rationale in sample.jsonl")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    dish = [json.loads(line) for line in (args.build / "dish.jsonl").open(encoding="utf-8")]
    recipes = {}
    for line in (args.recipes / "recipes.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        recipes[row["record"]["id"]] = row["record"]
    chosen: list[dict] = []
    for condition in sorted({item["condition"] for item in dish}):
        pool = [item for item in dish if item["condition"] == condition]
        chosen += rng.sample(pool, min(args.per_condition, len(pool)))
    taken = {item["id"] for item in chosen}
    rest = [item for item in dish if item["id"] not in taken]
    chosen += rng.sample(rest, max(args.size - len(chosen), 0))
    rng.shuffle(chosen)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "sample.jsonl").open("w", encoding="utf-8") as sample, \
            key_path(args.out).open("w", encoding="utf-8") as key:
        for number, item in enumerate(chosen, 1):
            record = recipes[item["recipe_id"]]
            row = {"n": number, "condition": item["condition"], "title": item["dish"]["title"],
                   "servings": record.get("servings"), "lines": item["dish"]["ingredients"],
                   "nutrition": item["dish"]["nutrition"],
                   "instructions": record.get("instructions")}
            if args.show_labels:
                row |= {"gold": item["gold"]["decision"], "rationale": item["gold"]["rationale"]}
            sample.write(json.dumps(row, ensure_ascii=False) + "\n")
            key.write(json.dumps({"n": number, "id": item["id"], "condition": item["condition"],
                                  "decision": item["gold"]["decision"],
                                  "rationale": item["gold"]["rationale"]}) + "\n")
    print(f"wrote {len(chosen)} instances to {args.out}; the key is {key_path(args.out)}")


def key_path(out: Path) -> Path:
    """The gold key, outside the folder a reader is given."""
    return out.parent / f"{out.name}.key.jsonl"


if __name__ == "__main__":
    main()
