"""Shards of a run by item id, merging run folders, overlapping report groups."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.models.retry import RetryPolicy
from nutrireason.runs import RunConfig, load_benchmark, read_records, run
from nutrireason.runs.lock import RunLock
from nutrireason.runs.manifest import read_manifest, write_manifest
from nutrireason.runs.merge import merge_runs, overlapping_groups, report_lines
from nutrireason.runs.records import RECORDS_FILE
from nutrireason.runs.shard import Shard, in_shard

FAST = RetryPolicy(max_attempts=2, base_delay=0.001, max_delay=0.01)
MODELS = ["scripted/echo", "scripted/yes"]


def write_items(path: Path, n: int = 24) -> Path:
    lines = [json.dumps({"id": f"q{i}", "prompt": f"question {i}"}) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def run_into(bench: Path, out: Path) -> Path:
    run(RunConfig(benchmark=bench, out=out, models=MODELS, cache=False, retry=FAST,
                  progress=False, concurrency=4))
    return out


def shard_run(tmp_path: Path, text: str) -> Path:
    """A run of one shard, as the engine will write it: the items of the shard are run (here
    from a filtered copy of the benchmark), and the manifest names the whole benchmark file
    and the shard."""
    shard = Shard.parse(text)
    bench = tmp_path / "items.jsonl"
    full = load_benchmark(bench)
    part = tmp_path / f"items-{shard.k}of{shard.n}.jsonl"
    part.write_text("".join(json.dumps(item) + "\n" for item in full.items
                            if in_shard(str(item["id"]), shard)))
    out = run_into(part, tmp_path / f"shard-{shard.k}of{shard.n}")
    manifest = read_manifest(out) or {}
    write_manifest(out, manifest | {"benchmark": str(bench), "benchmark_sha256": full.sha256,
                                    "benchmark_items": len(full.items),
                                    "shard": shard.as_dict()})
    return out


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    return write_items(tmp_path / "items.jsonl")


def answers(out: Path) -> dict[str, tuple]:
    return {r.key: (r.status, r.parsed, r.parse_ok, r.responses) for r in read_records(out)}


def manifest_of(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def edit_records(folder: Path, change) -> None:
    rows = [json.loads(line) for line in (folder / RECORDS_FILE).read_text().splitlines()]
    rows = [change(row) for row in rows]
    (folder / RECORDS_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))


def edit_manifest(folder: Path, **fields) -> None:
    write_manifest(folder, (read_manifest(folder) or {}) | fields)


def listing(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


# --------------------------------------------------------------------------- shards


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_shards_partition_any_item_set(n):
    ids = [f"q{i}" for i in range(300)] + ["", "é", "a/b", "12"]
    owners = {item: [k for k in range(1, n + 1) if in_shard(item, Shard(k, n))] for item in ids}
    assert all(len(found) == 1 for found in owners.values())
    assert {found[0] for found in owners.values()} == set(range(1, n + 1))
    subset = ids[100:140][::-1]  # another selection, another order: the same split
    assert {i: owners[i] for i in subset} == {
        i: [k for k in range(1, n + 1) if in_shard(i, Shard(k, n))] for i in subset}


def test_no_shard_holds_every_item():
    assert in_shard("anything", None)


@pytest.mark.parametrize(("text", "k", "n"), [("1/2", 1, 2), (" 3/3 ", 3, 3), ("1/1", 1, 1)])
def test_shard_parses_k_of_n(text, k, n):
    shard = Shard.parse(text)
    assert (shard.k, shard.n) == (k, n) and str(shard) == f"{k}/{n}"
    assert shard.as_dict() == {"k": k, "n": n}


@pytest.mark.parametrize("text", ["0/2", "3/2", "a/b", "1/0", "2", "", "-1/2", "1/2/3"])
def test_a_bad_shard_is_named(text):
    with pytest.raises(DataError) as caught:
        Shard.parse(text)
    assert repr(text) in str(caught.value) and "--shard" in str(caught.value)


def test_a_bad_shard_in_a_manifest_names_the_file(tmp_path):
    with pytest.raises(DataError, match="manifest.json.*'shard'"):
        Shard.from_manifest({"shard": {"k": 3, "n": 2}}, tmp_path / "manifest.json")
    assert Shard.from_manifest({}, tmp_path / "manifest.json") is None


# --------------------------------------------------------------------------- merging


def test_merging_two_shards_reproduces_the_unsharded_run(tmp_path, bench):
    full = run_into(bench, tmp_path / "full")
    pieces = [shard_run(tmp_path, "1/2"), shard_run(tmp_path, "2/2")]
    report = merge_runs(pieces, tmp_path / "merged")
    merged = tmp_path / "merged"
    assert answers(merged) == answers(full) and len(answers(full)) == 48
    keys = [json.loads(line)["key"] for line in (merged / RECORDS_FILE).read_text().splitlines()]
    assert keys == sorted(keys, key=lambda k: tuple(k.split("::")))
    manifest = manifest_of(merged)
    assert manifest["status"] == "complete" == report.status
    assert manifest["counts"] == {"planned": 48, "ok": 48, "error": 0, "missing": 0}
    assert report.coverage == 1.0 and manifest["merge"]["coverage"] == 1.0
    assert report.missing_shards == [] and report.overlaps == 0 and report.conflicts == []
    assert [s["shard"] for s in manifest["merged_from"]] == [{"k": 1, "n": 2}, {"k": 2, "n": 2}]
    assert sum(s["records"] for s in manifest["merged_from"]) == 48
    assert "shard" not in manifest and manifest["model_specs"] == MODELS
    assert manifest["benchmark_sha256"] == load_benchmark(bench).sha256
    assert any("complete" in line for line in report_lines(report))


def test_a_merged_run_can_be_resumed_by_the_engine(tmp_path, bench):
    merge_runs([shard_run(tmp_path, "1/2")], tmp_path / "merged")
    summary = run(RunConfig(benchmark=bench, out=tmp_path / "merged", models=MODELS,
                            cache=False, retry=FAST, progress=False))
    assert summary.skipped == len(read_records(tmp_path / "shard-1of2"))
    assert summary.status == "complete"


def test_a_missing_shard_makes_the_merge_partial_and_is_named(tmp_path, bench):
    report = merge_runs([shard_run(tmp_path, "1/3"), shard_run(tmp_path, "3/3")],
                        tmp_path / "merged")
    manifest = manifest_of(tmp_path / "merged")
    assert report.status == "partial" == manifest["status"]
    assert report.missing_shards == ["2/3"] == manifest["merge"]["missing_shards"]
    assert report.missing == manifest["counts"]["missing"] > 0
    assert report.coverage == pytest.approx(report.ok / 48) and report.coverage < 1
    assert any("missing shards: 2/3" in line for line in report_lines(report))


def test_identical_overlapping_records_are_kept_once(tmp_path, bench):
    full = run_into(bench, tmp_path / "full")
    first = shard_run(tmp_path, "1/2")
    again = shutil.copytree(first, tmp_path / "again")
    report = merge_runs([first, again, shard_run(tmp_path, "2/2")], tmp_path / "merged")
    assert report.overlaps == len(read_records(first))
    assert [source.kept for source in report.inputs][:2] == [len(read_records(first)), 0]
    assert answers(tmp_path / "merged") == answers(full) and report.status == "complete"


def test_an_ok_record_replaces_an_error_record_and_the_report_says_so(tmp_path, bench):
    first = shard_run(tmp_path, "1/2")
    failed = shutil.copytree(first, tmp_path / "failed")
    victim = read_records(first)[0].key

    def fail(row: dict) -> dict:
        if row["key"] != victim:
            return row
        return row | {"status": "error", "parsed": None, "parse_ok": False, "responses": [],
                      "error": {"kind": "server", "message": "down"}}

    edit_records(failed, fail)
    report = merge_runs([failed, first, shard_run(tmp_path, "2/2")], tmp_path / "merged")
    assert report.replaced_errors == [victim] and report.status == "complete"
    record = next(r for r in read_records(tmp_path / "merged") if r.key == victim)
    assert record.status == "ok"
    assert any("gave way to an ok record" in line for line in report_lines(report))


def test_a_conflicting_answer_is_refused_naming_the_key_and_both_folders(tmp_path, bench):
    first = shard_run(tmp_path, "1/2")
    other = shutil.copytree(first, tmp_path / "other")
    victim = read_records(first)[0].key
    edit_records(other, lambda row: row | {"parsed": "something else"}
                 if row["key"] == victim else row)
    before = listing(tmp_path)
    with pytest.raises(DataError) as caught:
        merge_runs([first, other], tmp_path / "merged")
    message = str(caught.value)
    assert repr(victim) in message and str(first) in message and str(other) in message
    assert listing(tmp_path) == before


@pytest.mark.parametrize(("field", "value", "named"), [
    ("model_specs", ["scripted/echo", "scripted/no"], "model_specs"),
    ("methods", [{"name": "oracle", "settings": {}}], "methods"),
    ("benchmark_sha256", "0" * 64, "benchmark_sha256"),
    ("settings", None, "settings.temperature"),
])
def test_a_different_run_is_refused_naming_the_field_and_both_values(tmp_path, bench, field,
                                                                       value, named):
    first, second = shard_run(tmp_path, "1/2"), shard_run(tmp_path, "2/2")
    if field == "settings":
        value = manifest_of(second)["settings"] | {"temperature": 0.7}
    edit_manifest(second, **{field: value})
    before = listing(tmp_path)
    with pytest.raises(DataError) as caught:
        merge_runs([first, second], tmp_path / "merged")
    message = str(caught.value)
    assert f"field {named!r}" in message and str(first) in message and str(second) in message
    mine = manifest_of(first)
    assert repr(mine["settings"]["temperature"] if field == "settings" else
                mine[field][-1] if field != "benchmark_sha256" else mine[field]) in message
    assert listing(tmp_path) == before


def test_the_order_of_models_does_not_make_another_run(tmp_path, bench):
    first, second = shard_run(tmp_path, "1/2"), shard_run(tmp_path, "2/2")
    edit_manifest(second, model_specs=MODELS[::-1])
    assert merge_runs([first, second], tmp_path / "merged").status == "complete"


def test_an_existing_non_empty_out_is_refused_and_left_alone(tmp_path, bench):
    pieces = [shard_run(tmp_path, "1/2"), shard_run(tmp_path, "2/2")]
    out = tmp_path / "merged"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    before = listing(tmp_path)
    with pytest.raises(DataError, match="merged.*already holds files"):
        merge_runs(pieces, out)
    assert listing(tmp_path) == before and (out / "notes.txt").read_text() == "mine"
    with pytest.raises(DataError, match="already holds files"):
        merge_runs(pieces, pieces[0])


def test_an_empty_out_folder_is_used(tmp_path, bench):
    pieces = [shard_run(tmp_path, "1/2"), shard_run(tmp_path, "2/2")]
    (tmp_path / "merged").mkdir()
    assert merge_runs(pieces, tmp_path / "merged").status == "complete"
    assert sorted(os.listdir(tmp_path / "merged")) == ["manifest.json", RECORDS_FILE]


def test_a_running_or_locked_folder_is_refused_naming_it(tmp_path, bench):
    first, second = shard_run(tmp_path, "1/2"), shard_run(tmp_path, "2/2")
    with RunLock(second), pytest.raises(DataError, match=f"{second}.*holds this folder"):
        merge_runs([first, second], tmp_path / "merged")
    alive = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": 0}
    edit_manifest(second, status="running", owner=alive)
    with pytest.raises(DataError, match=f"{second}.*still writing"):
        merge_runs([first, second], tmp_path / "merged")
    edit_manifest(second, owner=alive | {"pid": 999_999_999})
    with pytest.raises(DataError, match="resume the run"):
        merge_runs([first, second], tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_a_folder_that_is_not_a_run_is_named(tmp_path, bench):
    first = shard_run(tmp_path, "1/2")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(DataError, match="empty/manifest.json.*not a run folder"):
        merge_runs([first, empty], tmp_path / "merged")
    with pytest.raises(DataError, match="given twice"):
        merge_runs([first, first], tmp_path / "merged")
    with pytest.raises(DataError, match="no run folders"):
        merge_runs([], tmp_path / "merged")
    assert not (tmp_path / "merged").exists()


def test_offset_and_limit_pieces_merge_into_their_union(tmp_path, bench):
    full = run_into(bench, tmp_path / "full")
    for name, offset, limit in (("head", 0, 10), ("tail", 10, None)):
        run(RunConfig(benchmark=bench, out=tmp_path / name, models=MODELS, cache=False,
                      retry=FAST, progress=False, offset=offset, limit=limit))
    report = merge_runs([tmp_path / "head", tmp_path / "tail"], tmp_path / "merged")
    assert report.status == "complete" and report.planned == 48
    assert answers(tmp_path / "merged") == answers(full)
    assert "offset" not in manifest_of(tmp_path / "merged")


def test_pieces_of_a_run_over_several_files_count_each_files_window(tmp_path):
    files = []
    for name, start in (("a", 0), ("b", 100)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": f"q{start + i}", "prompt": f"p {i}"}) + "\n"
                                for i in range(6)))
        files.append(path)

    def piece(name: str, **window) -> Path:
        run(RunConfig(benchmark=files, out=tmp_path / name, models=MODELS, cache=False,
                      retry=FAST, progress=False, **window))
        return tmp_path / name

    head = piece("head", limit=2)  # offset and limit apply to each file
    report = merge_runs([head], tmp_path / "merged-head")
    assert (report.planned, report.ok, report.status) == (8, 8, "complete")
    report = merge_runs([head, piece("tail", offset=2)], tmp_path / "merged")
    assert (report.planned, report.ok, report.status) == (24, 24, "complete")
    assert manifest_of(tmp_path / "merged")["counts"]["planned"] == 24


# --------------------------------------------------------------------------- report groups


def group(method: str, model: str, task: str = "binary", level: str = "easy") -> dict:
    return {"method": method, "model": model, "task": task, "level": level, "n": 3}


def test_overlapping_groups_name_the_group_and_the_runs():
    metrics = [{"groups": [group("prompt", "a"), group("cot", "a")]},
               {"groups": [group("prompt", "a"), group("prompt", "a", level="hard")]},
               {"groups": [group("prompt", "b")]}]
    found = overlapping_groups(metrics, ["runs/one", "runs/two", "runs/three"])
    assert len(found) == 1
    assert "method prompt, model a, task binary, level easy" in found[0]
    assert "runs/one" in found[0] and "runs/two" in found[0] and "runs/three" not in found[0]
    assert overlapping_groups(metrics[1:], ["two", "three"]) == []


# --------------------------------------------------------------------------- reading records


def test_records_are_copied_byte_for_byte(tmp_path, bench):
    pieces = [shard_run(tmp_path, "1/2"), shard_run(tmp_path, "2/2")]
    merge_runs(pieces, tmp_path / "merged")
    written = {line for piece in pieces
               for line in (piece / RECORDS_FILE).read_bytes().splitlines()}
    merged = (tmp_path / "merged" / RECORDS_FILE).read_bytes().splitlines()
    assert len(merged) == 48 and set(merged) == written


def test_a_bad_record_line_is_named_and_nothing_is_written(tmp_path, bench):
    first = shard_run(tmp_path, "1/2")
    lines = (first / RECORDS_FILE).read_text().splitlines()
    row = json.loads(lines[2])
    row["status"] = "maybe"
    lines[2] = json.dumps(row)
    (first / RECORDS_FILE).write_text("\n".join(lines) + "\n")
    before = listing(tmp_path)
    with pytest.raises(DataError) as caught:
        merge_runs([first, shard_run(tmp_path, "2/2")], tmp_path / "merged")
    message = str(caught.value)
    assert str(first / RECORDS_FILE) in message and "line 3 is not a valid record" in message
    assert "status" in message
    assert not (tmp_path / "merged").exists() and set(before) <= set(listing(tmp_path))


def test_the_parallel_reader_gives_the_same_merge(tmp_path, bench, monkeypatch):
    from nutrireason.runs import merge

    pieces = [shard_run(tmp_path, "1/2"), shard_run(tmp_path, "2/2")]
    merge_runs(pieces, tmp_path / "serial")
    monkeypatch.setattr(merge, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(merge.os, "cpu_count", lambda: 2)
    merge_runs(pieces, tmp_path / "parallel")
    assert (tmp_path / "parallel" / RECORDS_FILE).read_bytes() == \
        (tmp_path / "serial" / RECORDS_FILE).read_bytes()


def test_a_killed_runs_partial_last_line_is_ignored(tmp_path, bench):
    first = shard_run(tmp_path, "1/2")
    with open(first / RECORDS_FILE, "a") as handle:
        handle.write('{"key": "half a rec')
    report = merge_runs([first, shard_run(tmp_path, "2/2")], tmp_path / "merged")
    assert report.status == "complete" and report.ok == 48
