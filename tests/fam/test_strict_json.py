"""FAM-Bench files are strict JSON: SR28's "not measured" (NaN) is written as null."""

from __future__ import annotations

import json
import math

import pytest

from nutrireason.storage import write_jsonl_atomic


def strict(constant: str) -> None:
    raise AssertionError(f"{constant} is not JSON")


def test_the_build_files_hold_no_nan(real_build):
    nulls = 0
    for name in ("dish.jsonl", "rank.jsonl"):
        for line in (real_build / name).read_text(encoding="utf-8").splitlines():
            json.loads(line, parse_constant=strict)
            nulls += line.count('"sugar": null')
    assert nulls > 0  # SR28 lacks sugar for some foods: those are null now, not NaN


def test_strict_lines_write_null_and_loose_lines_keep_nan(tmp_path):
    rows = [{"a": math.nan, "b": [1.5, math.inf, {"c": -math.inf}], "d": "x"}]
    write_jsonl_atomic(tmp_path / "strict.jsonl", rows)
    assert json.loads((tmp_path / "strict.jsonl").read_text(), parse_constant=strict) == \
        {"a": None, "b": [1.5, None, {"c": None}], "d": "x"}
    write_jsonl_atomic(tmp_path / "loose.jsonl", rows, strict=False)
    assert math.isnan(json.loads((tmp_path / "loose.jsonl").read_text())["a"])
    with pytest.raises(AssertionError):
        json.loads((tmp_path / "loose.jsonl").read_text(), parse_constant=strict)


def test_json_files_are_strict_unless_asked(tmp_path):
    from nutrireason.storage import write_json_atomic

    data = {"code": math.nan, "high_from": [math.inf, 2.0]}
    write_json_atomic(tmp_path / "manifest.json", data)
    assert json.loads((tmp_path / "manifest.json").read_text(), parse_constant=strict) == \
        {"code": None, "high_from": [None, 2.0]}
    write_json_atomic(tmp_path / "metrics.json", data, strict=False)
    assert math.isnan(json.loads((tmp_path / "metrics.json").read_text())["code"])
