"""Bad recipe inputs never pass silently: absurd quantities and servings are
excluded or rejected with their reason in quality.json; a non-UTF-8 or empty corpus is an error
naming the file, with nothing written; artifacts get the umask's permissions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.errors import DataError
from nutrireason.recipes.load import load_corpus
from nutrireason.storage import file_mode, read_text_utf8, write_text_atomic

runner = CliRunner()


def words(text: str) -> str:
    return " ".join(text.split())


def corpus(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def record(rid: str, lines: list[str], servings: float | None = 4) -> dict:
    return {"id": rid, "title": rid, "ingredients": lines, "instructions": ["Mix."],
            "servings": servings}


def build(path: Path, out: Path):
    return runner.invoke(app, ["recipes", "build", "--recipes", str(path), "--out", str(out),
                               "--workers", "1"])


@pytest.mark.usefixtures("sr28")
def test_absurd_quantities_and_servings_are_excluded_with_their_reason(tmp_path):
    path = corpus(tmp_path,
                  record("exp", ["1e12 cups flour", "2 eggs"]),
                  record("huge-int", ["1000000000000 cups sugar", "2 eggs"]),
                  record("negative", ["2 cups flour", "1 cup sugar"], servings=-3),
                  record("zero", ["2 cups flour", "1 cup sugar"], servings=0),
                  record("long", ["1 cup flour"] * 2000),
                  record("fine", ["2 cups flour", "1 cup sugar", "2 eggs"]))
    result = build(path, tmp_path / "out")
    assert result.exit_code == 0, result.output
    quality = json.loads((tmp_path / "out" / "quality.json").read_text())
    excluded = {e["id"]: e["reason"] for e in quality["recipes_excluded"]}
    rejected = {e["id"]: e["problem"] for e in quality["records_rejected_at_load"]}
    assert "implausible quantity" in excluded["exp"] and "1e12" in excluded["exp"]
    assert "implausible quantity" in excluded["huge-int"]
    assert "implausible total" in excluded["long"]
    assert "servings -3 is not a plausible count" in rejected["negative"]
    assert "servings 0" in rejected["zero"]
    kept = [json.loads(line)["record"]["id"] for line in
            (tmp_path / "out" / "recipes.jsonl").read_text().splitlines()
            if json.loads(line)["kept"]]
    assert kept == ["fine"]


def test_a_non_utf8_corpus_names_the_file_the_offset_and_an_encoding(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b'{"id": "x", "title": "caf\xe9", "ingredients": ["1 cup flour"]}\n')
    with pytest.raises(DataError) as caught:
        load_corpus(path)
    message = str(caught.value)
    assert str(path) in message and "offset 25" in message and "cp1252" in message
    result = build(path, tmp_path / "out")
    assert result.exit_code == 1
    assert "not UTF-8" in words(result.output) and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_a_byte_order_mark_is_not_an_error(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(record("x", ["1 cup flour"])).encode())
    assert read_text_utf8(path).startswith("{")
    assert [r.id for r in load_corpus(path).records] == ["x"]


@pytest.mark.parametrize("text", ["", "\n\n", '{"title": "no id"}\n'])
def test_an_empty_or_wholly_rejected_corpus_is_an_error_and_writes_nothing(tmp_path, text):
    path = tmp_path / "empty.jsonl"
    path.write_text(text, encoding="utf-8")
    result = build(path, tmp_path / "out")
    assert result.exit_code == 1
    said = words(result.output)
    assert str(path) in said and ("corpus is empty" in said or "no usable recipe" in said)
    assert not (tmp_path / "out").exists()


def test_artifacts_get_the_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        assert file_mode() == 0o644
        target = write_text_atomic(tmp_path / "a.json", "{}")
        assert target.stat().st_mode & 0o777 == 0o644
        os.umask(0o077)
        assert write_text_atomic(tmp_path / "b.json", "{}").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)


@pytest.mark.usefixtures("sr28")
def test_a_line_the_parser_cannot_read_is_a_named_problem_and_the_build_goes_on(tmp_path):
    lines = {"over-zero": "1/0 cup oil", "zero-over-zero": "0/0 cup oil",
             "two-over-zero": "2/0 tbsp sugar", "mixed-over-zero": "1-1/0 cup milk",
             "one-mb": "1 cup flour " + "and more flour " * 70000}
    path = corpus(tmp_path, *(record(rid, [line, "2 eggs"]) for rid, line in lines.items()),
                  record("fine", ["2 cups flour", "1 cup sugar", "2 eggs"]))
    result = build(path, tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    quality = json.loads((tmp_path / "out" / "quality.json").read_text())
    excluded = {e["id"]: e["reason"] for e in quality["recipes_excluded"]}
    for rid in ("over-zero", "zero-over-zero", "two-over-zero", "mixed-over-zero"):
        assert "divides by zero" in excluded[rid], excluded.get(rid)
    assert "not an ingredient line" in excluded["one-mb"]
    assert "fine" not in excluded


@pytest.mark.usefixtures("sr28")
def test_quantities_the_slicer_would_misread_are_named_problems(tmp_path):
    lines = {"negative": "-5 cups flour", "exponent": "10^6 g sugar",
             "doubled": "½½ cup milk"}
    path = corpus(tmp_path, *(record(rid, [line, "2 eggs"]) for rid, line in lines.items()),
                  record("huge-servings", ["2 cups flour", "2 eggs"], servings=None) |
                  {"servings": "1e308"},
                  record("fine", ["2 cups flour", "1 cup sugar", "2 eggs"]))
    result = build(path, tmp_path / "out")
    assert result.exit_code == 0, result.output
    quality = json.loads((tmp_path / "out" / "quality.json").read_text())
    excluded = {e["id"]: e["reason"] for e in quality["recipes_excluded"]}
    rejected = {e["id"]: e["problem"] for e in quality["records_rejected_at_load"]}
    assert "negative quantity '-5'" in excluded["negative"]
    assert "quantity with an exponent '10^6'" in excluded["exponent"]
    assert "doubled fraction '½½'" in excluded["doubled"]
    assert "1e308" in rejected["huge-servings"]
    assert "fine" not in excluded
