"""Benchmark items for a run: a JSONL file, one item per line, each with a unique ``id``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError


@dataclass(frozen=True)
class Benchmark:
    """The items of one benchmark file and the file's sha256 (its fingerprint)."""

    path: Path
    items: list[dict[str, Any]]
    sha256: str

    def select(self, offset: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Items ``offset`` .. ``offset + limit`` in file order."""
        end = None if limit is None else offset + limit
        return self.items[offset:end]


def load_benchmark(path: str | Path) -> Benchmark:
    """Read a JSONL benchmark; every line must be a JSON object with a unique string-able id."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "benchmark file not found", expected="a JSONL file of items")
    data = path.read_bytes()
    items: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, line in enumerate(data.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(path, f"line {number} is not JSON: {exc.msg}") from exc
        if not isinstance(item, dict) or "id" not in item:
            raise DataError(path, f"line {number} has no id", field="id",
                            expected="a JSON object with an 'id'")
        item_id = str(item["id"])
        if item_id in seen:
            raise DataError(path, f"line {number} repeats an id", field="id", value=item_id)
        seen.add(item_id)
        items.append(item)
    if not items:
        raise DataError(path, "no items", expected="at least one JSON line")
    return Benchmark(path, items, hashlib.sha256(data).hexdigest())
