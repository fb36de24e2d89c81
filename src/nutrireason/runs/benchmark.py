"""Benchmark items for a run: one or more JSONL files, one item per line, each with an ``id``
unique across the files. Several files (``run ngqa --task all --level all``) form one run:
``offset`` and ``limit`` then apply to each file, and the fingerprint covers every file."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError


@dataclass(frozen=True)
class Benchmark:
    """The items of one benchmark file (or several, concatenated in order), the fingerprint
    (a single file's sha256; for several, the sha256 of their names and sha256s), the line
    each item came from (1-based; so item-level errors can name it) and, for several files,
    where each file's items start."""

    path: Path
    items: list[dict[str, Any]]
    sha256: str
    lines: tuple[int, ...] = ()
    files: tuple[BenchmarkFile, ...] = ()

    def select(self, offset: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
        """Items ``offset`` .. ``offset + limit`` of each file, in file order."""
        return [item for _, item, _ in self.located(offset, limit)]

    def numbered(self, offset: int = 0,
                 limit: int | None = None) -> list[tuple[int | None, dict[str, Any]]]:
        """(line number, item) for items ``offset`` .. ``offset + limit`` of each file."""
        return [(line, item) for line, item, _ in self.located(offset, limit)]

    def located(self, offset: int = 0, limit: int | None = None
                ) -> list[tuple[int | None, dict[str, Any], Path]]:
        """(line number, item, its file) for items ``offset`` .. ``offset + limit`` of each
        file, in file order."""
        lines: list[int | None] = list(self.lines) if self.lines else [None] * len(self.items)
        parts = self.files or (BenchmarkFile(self.path, self.sha256, 0, len(self.items)),)
        chosen = []
        for part in parts:
            start = part.start + offset
            end = part.start + part.count if limit is None else min(
                start + limit, part.start + part.count)
            chosen += [(lines[i], self.items[i], part.path) for i in range(start, end)]
        return chosen


@dataclass(frozen=True)
class BenchmarkFile:
    """One file of a benchmark: its path, sha256 and where its items sit in ``items``."""

    path: Path
    sha256: str
    start: int
    count: int


def load_benchmarks(paths: list[Path]) -> Benchmark:
    """Several JSONL benchmark files as one benchmark: items concatenated in the given order,
    ids unique across the files (a repeat names both files)."""
    if len(paths) == 1:
        return load_benchmark(paths[0])
    parts = [load_benchmark(path) for path in paths]
    owner: dict[str, Path] = {}
    items: list[dict[str, Any]] = []
    lines: list[int] = []
    files = []
    for part in parts:
        for item, line in zip(part.items, part.lines, strict=True):
            item_id = str(item["id"])
            if item_id in owner:
                raise DataError(part.path, f"line {line} repeats an id of {owner[item_id]}",
                                field="id", value=item_id)
            owner[item_id] = part.path
        files.append(BenchmarkFile(part.path, part.sha256, len(items), len(part.items)))
        items += part.items
        lines += part.lines
    joined = "".join(f"{f.path.parent.name}/{f.path.name} {f.sha256}\n" for f in files)
    return Benchmark(parts[0].path, items, hashlib.sha256(joined.encode()).hexdigest(),
                     tuple(lines), tuple(files))


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
