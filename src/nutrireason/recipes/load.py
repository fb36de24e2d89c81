"""Load recipe corpora: a user's JSON / JSONL records, or the offline Wikibooks bundle.

Per-record problems (a missing field, a malformed JSONL line) are collected, not raised, so the
rest of a corpus still loads; a file that cannot be read at all is a DataError.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from nutrireason.errors import DataError
from nutrireason.recipes.schema import RecipeRecord
from nutrireason.recipes.servings import parse_yield
from nutrireason.storage import read_text_utf8

WIKIBOOKS_FILE = "recipes_en-us.json"
WIKIBOOKS_URL = "https://en.wikibooks.org/wiki/"


@dataclass
class CorpusLoad:
    """The records that loaded, and a problem line for each one that did not."""

    path: Path
    records: list[RecipeRecord] = field(default_factory=list)
    problems: list[dict[str, str]] = field(default_factory=list)


def load_corpus(path: str | Path) -> CorpusLoad:
    """A user's corpus: ``.jsonl`` (one record per line) or ``.json`` (a list or an id->record
    mapping), each record shaped as :class:`RecipeRecord`."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, "recipe corpus not found", expected="a .json or .jsonl file")
    if path.suffix == ".jsonl":
        return _from_pairs(path, _jsonl_rows(path))
    return _from_pairs(path, _json_rows(path))


def _jsonl_rows(path: Path):
    for number, line in enumerate(read_text_utf8(path, "recipe corpus").splitlines(),
                                  start=1):
        if not line.strip():
            continue
        try:
            yield f"line {number}", json.loads(line)
        except json.JSONDecodeError as exc:
            yield f"line {number}", exc


def _json_rows(path: Path):
    try:
        data = json.loads(read_text_utf8(path, "recipe corpus"))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    if isinstance(data, dict):
        return [(f"key {key!r}", {"id": key} | row if isinstance(row, dict) else row)
                for key, row in data.items()]
    if isinstance(data, list):
        return [(f"item {index}", row) for index, row in enumerate(data)]
    raise DataError(path, "top level must be a list or an object of records")


def _from_pairs(path: Path, pairs) -> CorpusLoad:
    load = _collect(path, pairs)
    if not load.records:
        first = load.problems[0] if load.problems else None
        detail = f"; the first rejected record ({first['where']}): {first['problem']}" \
            if first else ""
        raise DataError(path, f"no usable recipe record ({len(load.problems)} rejected)"
                        f"{detail}" if first else "the recipe corpus is empty",
                        expected="at least one record with id, title and ingredients")
    return load


def _collect(path: Path, pairs) -> CorpusLoad:
    load = CorpusLoad(path)
    seen: set[str] = set()
    for where, row in pairs:
        record, problem = _record(row)
        if record is not None and record.id in seen:
            record, problem = None, f"duplicate id {record.id!r}"
        if record is None:
            ident = row.get("id") if isinstance(row, dict) else None
            load.problems.append({"where": where, "id": str(ident), "problem": problem})
            continue
        seen.add(record.id)
        load.records.append(record)
    return load


def _record(row: Any) -> tuple[RecipeRecord | None, str]:
    if isinstance(row, json.JSONDecodeError):
        return None, f"malformed JSON: {row.msg}"
    if not isinstance(row, dict):
        return None, "not a JSON object"
    try:
        return RecipeRecord.model_validate(row), ""
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(record)"
        return None, f"field {where}: {first['msg']}"


def load_wikibooks(directory: str | Path) -> CorpusLoad:
    """The offline Wikibooks Cookbook bundle (``recipes_en-us.json``) as recipe records."""
    path = Path(directory) / WIKIBOOKS_FILE
    if not path.is_file():
        raise DataError(path, "Wikibooks recipes not found",
                        expected="run `nutrireason data pull --only recipes`")
    try:
        data = json.loads(read_text_utf8(path, "Wikibooks recipes"))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON: {exc.msg}") from exc
    pairs = [(f"key {key!r}", _wikibooks_row(key, row)) for key, row in data.items()]
    return _from_pairs(path, pairs)


def _wikibooks_row(key: str, row: Any) -> Any:
    if not isinstance(row, dict):
        return row
    return {
        "id": slug(key.removeprefix("Cookbook:")),
        "title": row.get("title") or key.removeprefix("Cookbook:"),
        "source": "wikibooks",
        "url": WIKIBOOKS_URL + key.replace(" ", "_"),
        "category": row.get("category"),
        "servings": parse_servings(row.get("servings")),
        "serving_size": None,
        "ingredients": row.get("ingredients") or [],
        "instructions": row.get("steps") or [],
        "difficulty": row.get("difficulty"),
        "time": row.get("time"),
    }


def slug(text: str) -> str:
    """A stable id from a title: lower case, words joined by hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "recipe"


def parse_servings(value: Any) -> float | None:
    """"4" -> 4, "6–8" -> 7, "4 persons" -> 4, "Varies" -> None (see
    :func:`nutrireason.recipes.servings.parse_yield`); a zero or negative count -> None."""
    if value is None:
        return None
    count = parse_yield(str(value))
    return count if count and count > 0 else None
