"""Draw recipes at random for an independent (hand) reading of their nutrition.

    .venv/bin/python benchmarks/reading_sample.py CORPUS --seed 31203 --size 40 --parts 4 \
        --out /tmp/reading

CORPUS is a recipe corpus (`.json` or `.jsonl`, the shape `recipes build --recipes` reads) or
the published-nutrition validation file. Writes ``part-<i>.jsonl`` files, each recipe as
``{id, title, servings, serving_size, ingredients}``: the lines a reader works from and nothing
the build made (no matches, grams or nutrition), so the reading stays blind to the build. The
same corpus and seed draw the same recipes; a fresh seed draws recipes nobody has tuned on.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any


def records(path: Path) -> list[dict[str, Any]]:
    """The corpus's records in file order (a list, an id -> record mapping, or JSON lines)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    if isinstance(data, dict):
        return [dict(record, id=record.get("id", key)) for key, record in data.items()]
    return list(data)


def for_reader(record: dict[str, Any]) -> dict[str, Any]:
    """What a reader sees of a record: its lines and yield, nothing computed."""
    return {"id": record["id"], "title": record.get("title"),
            "servings": record.get("servings"), "serving_size": record.get("serving_size"),
            "ingredients": list(record.get("ingredients") or [])}


def draw(rows: list[dict[str, Any]], size: int, seed: int) -> list[dict[str, Any]]:
    """``size`` records drawn without replacement, in the order drawn."""
    if size > len(rows):
        raise SystemExit(f"--size {size} is more than the corpus's {len(rows)} records")
    return random.Random(seed).sample(rows, size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--size", type=int, default=40)
    parser.add_argument("--parts", type=int, default=1, help="split among this many readers")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    chosen = [for_reader(record) for record in draw(records(args.corpus), args.size, args.seed)]
    args.out.mkdir(parents=True, exist_ok=True)
    for part in range(args.parts):
        rows = chosen[part::args.parts]
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        (args.out / f"part-{part + 1}.jsonl").write_text(text, encoding="utf-8")
    print(f"wrote {len(chosen)} recipes in {args.parts} parts to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
