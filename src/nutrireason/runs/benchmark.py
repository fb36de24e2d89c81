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
    """The items of one benchmark file, the file's sha256 (its fingerprint) and the line each
    item came from (1-based; so item-level errors can name it)."""

    path: Path
    items: list[dict[str, Any]]
    sha256: str
    lines: tuple[int, ...] = ()

    def select(self, offset: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Items ``offset`` .. ``offset + limit`` in file order."""
        return [item for _, item in self.numbered(offset, limit)]

    def numbered(self, offset: int = 0,
                 limit: int | None = None) -> list[tuple[int | None, dict[str, Any]]]:
        """(line number, item) for items ``offset`` .. ``offset + limit`` in file order."""
        end = None if limit is None else offset + limit
        lines: list[int | None] = list(self.lines) if self.lines else [None] * len(self.items)
        return list(zip(lines[offset:end], self.items[offset:end], strict=True))


def load_benchmark(path: str | Path) -> Benchmark:
    """Read a JSONL benchmark; every line must be a JSON object with a unique string-able id.

    This checks the file's structure only (a bad line here stops the run before anything is
    sent, naming file and line); what a method needs from an item is checked when the item is
    run, and a missing field there is an item-level error (see :mod:`nutrireason.runs.engine`).
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "benchmark file not found", expected="a JSONL file of items")
    data = path.read_bytes()
    items: list[dict[str, Any]] = []
    numbers: list[int] = []
    seen: set[str] = set()
    for number, line in enumerate(_decode(data, path).splitlines(), start=1):
        if not line.strip():
            continue
        item = _parse_line(line, number, path)
        item_id = str(item["id"])
        if item_id in seen:
            raise DataError(path, f"line {number} repeats an id", field="id", value=item_id)
        seen.add(item_id)
        items.append(item)
        numbers.append(number)
    if not items:
        raise DataError(path, "no items", expected="at least one JSON line")
    return Benchmark(path, items, hashlib.sha256(data).hexdigest(), tuple(numbers))


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise DataError(path, f"line {line} is not UTF-8 (byte 0x{data[exc.start]:02x} at "
                        f"offset {exc.start})", expected="a UTF-8 JSONL file") from None


def _parse_line(line: str, number: int, path: Path) -> dict[str, Any]:
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        raise DataError(path, f"line {number} is not JSON: {exc.msg}") from exc
    if not isinstance(item, dict) or "id" not in item:
        raise DataError(path, f"line {number} has no id", field="id",
                        expected="a JSON object with an 'id'")
    return item
