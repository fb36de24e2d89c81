"""Merging the folders of one run (its shards, or pieces run with --offset/--limit) into one.

Every input must be a finished run folder (``manifest.json`` and ``records.jsonl``, no run
writing it) and all must be the same run: the same benchmark file (its sha256), methods,
models and generation settings, the fields a resumed run must also agree on
(:func:`nutrireason.runs.manifest.check_resumable`). Where the pieces may differ (shard, offset,
limit, concurrency, cache, retries, versions) each input's value is kept in ``merged_from``.

Records are merged by record key. A sample in several folders with the same answer (status,
parsed answer, parse_ok and raw responses) is kept once; an ok record replaces an error record;
two error records count as the same; two different answers stop the merge, naming the key and
both folders. Each record's line is copied byte for byte; the merge reads only the fields it
compares (``nutrireason score`` validates whole records). The merged folder is written whole or
not at all: the files are written into a
temporary folder beside ``out`` that is renamed to ``out`` at the end.

:func:`overlapping_groups` is the report's check that no (method, model, task, level) group is
scored by more than one of the runs it is given.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nutrireason.errors import DataError, NutriReasonError
from nutrireason.runs.lock import holder_alive, read_holder
from nutrireason.runs.manifest import IDENTITY_FIELDS, MANIFEST_FILE, write_manifest
from nutrireason.runs.shard import Shard
from nutrireason.schema import GROUP_KEYS, RECORDS_FILE
from nutrireason.storage import check_target_folder, read_json_object, write_folder
from nutrireason.workers import end_with_parent

# What makes two folders pieces of one run: the fields a resumed run must agree on.
RUN_FIELDS = (*IDENTITY_FIELDS, "settings")
# Fields about one invocation in one folder; never copied to the merged manifest's top level.
PER_FOLDER_FIELDS = ("status", "counts", "summary", "owner", "recovered", "updated_at", "error",
                     "shard", "merged_from", "merge")
SAME_RUN = "pieces of one run: the same benchmark file, methods, models and settings"
# Above this many bytes of records in all, the folders' records are read in parallel processes.
PARALLEL_BYTES = 64 * 1024 * 1024


class _Identity(BaseModel):
    """The fields of a record every merge reads; the rest of each line is copied byte for byte
    (``nutrireason score`` validates whole records when it reads the merged run)."""

    model_config = ConfigDict(extra="ignore")

    key: str
    item_id: str
    method: str
    model: str
    status: Literal["ok", "error"]


class _Answer(BaseModel):
    """The fields compared when two folders hold the same sample."""

    model_config = ConfigDict(extra="ignore")

    status: Literal["ok", "error"]
    parsed: Any = None
    parse_ok: bool = False
    responses: list[str] = Field(default_factory=list)


class _Line(NamedTuple):
    """One record as the merge sees it: its identity and where its line lies in its folder's
    records.jsonl (lines are not carried between processes)."""

    key: str
    order: tuple[str, str, str]  # (item id, method, model): the merged file's order
    status: str
    folder: int  # index of the folder whose file holds the line
    start: int
    end: int


class _Columns(NamedTuple):
    """One file's records as columns (cheap to send from a worker process), or its problem."""

    keys: list[str]
    items: list[str]
    methods: list[str]
    models: list[str]
    statuses: list[str]
    starts: list[int]
    ends: list[int]
    problem: str | None = None

    def lines(self, folder: int) -> list[_Line]:
        """Every record line in file order (a key may repeat: see :func:`_last_per_key`)."""
        rows = zip(self.keys, self.items, self.methods, self.models, self.statuses,
                   self.starts, self.ends, strict=True)
        return [_Line(key, (item, method, model), status, folder, start, end)
                for key, item, method, model, status, start, end in rows]


@dataclass
class MergeInput:
    """One input folder: its shard, final status, records read and records kept."""

    path: Path
    shard: Shard | None
    status: str
    records: int
    kept: int = 0


@dataclass
class MergeReport:
    """What a merge did. ``conflicts`` is always empty after a merge that succeeded (a
    conflict stops the merge); ``coverage`` is ok samples over planned samples."""

    out: Path
    inputs: list[MergeInput]
    planned: int
    ok: int
    errors: int
    missing: int
    status: str
    overlaps: int = 0
    replaced_errors: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    missing_shards: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        return self.ok / self.planned if self.planned else 0.0


@dataclass
class _Folder:
    path: Path
    manifest: dict[str, Any]
    shard: Shard | None
    records: list[_Line]
    data: bytes = b""  # records.jsonl up to its last full line

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST_FILE


@dataclass
class _Merged:
    records: dict[str, _Line] = field(default_factory=dict)
    source: dict[str, int] = field(default_factory=dict)  # key -> index of the input kept
    overlaps: int = 0
    replaced: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- merging


def merge_runs(run_dirs: list[Path], out: Path, overwrite: bool = False) -> MergeReport:
    """Merge the run folders ``run_dirs`` (pieces of one run) into the new folder ``out``.

    Raises :class:`~nutrireason.errors.DataError` naming the folder, field and values when an
    input is not a finished run folder, when the inputs are not the same run, when two folders
    answer one sample differently (two records of one folder included), or when ``out`` is a
    file or a folder that holds anything (unless ``overwrite``); nothing is written then."""
    if not run_dirs:
        raise DataError(None, "no run folders to merge", expected="one or more run folders")
    out = Path(out)
    check_target_folder(out, overwrite)
    _check_distinct([Path(p) for p in run_dirs])
    folders = [_load_folder(Path(p)) for p in run_dirs]
    _check_same_run(folders)
    _read_lines(folders)
    merged = _merge_records(folders)
    report = _report(out, folders, merged)
    records = sorted(merged.records.values(), key=lambda r: r.order)
    _write_run(out, [_line(r, folders) for r in records], _merged_manifest(folders, report),
               overwrite)
    return report


def _check_distinct(paths: list[Path]) -> None:
    seen: set[Path] = set()
    for path in paths:
        resolved = path.resolve()
        if resolved in seen:
            raise DataError(path, "is given twice", expected="each run folder once")
        seen.add(resolved)


def _load_folder(path: Path) -> _Folder:
    """A finished run folder's manifest (checked); its records are read by :func:`_read_lines`
    once every manifest has been checked."""
    if not path.is_dir():
        raise DataError(path, "no such run folder", expected="a run folder from `nutrireason run`")
    for name in (MANIFEST_FILE, RECORDS_FILE):
        if not (path / name).is_file():
            raise DataError(path / name, "not found: not a run folder",
                            expected="a run folder from `nutrireason run`")
    manifest = _read_manifest(path / MANIFEST_FILE)
    _check_finished(path, manifest)
    return _Folder(path, manifest, Shard.from_manifest(manifest, path / MANIFEST_FILE), [])


def _read_lines(folders: list[_Folder]) -> None:
    """Read every folder's records, in parallel processes when there are many."""
    paths = [folder.path / RECORDS_FILE for folder in folders]
    size = sum(path.stat().st_size for path in paths)
    workers = min(len(paths), os.cpu_count() or 1)
    if size > PARALLEL_BYTES and workers > 1:
        with ProcessPoolExecutor(workers, initializer=end_with_parent,
                                 initargs=(os.getpid(),)) as pool:
            results = list(pool.map(_columns, paths))
    else:
        results = [_columns(path) for path in paths]
    for index, (folder, path, columns) in enumerate(zip(folders, paths, results, strict=True)):
        if columns.problem is not None:
            raise DataError(path, columns.problem,
                            expected="records written by `nutrireason run`")
        folder.data = _full_lines(path)
        folder.records = _last_per_key(columns.lines(index), folders)


def _last_per_key(lines: list[_Line], folders: list[_Folder]) -> list[_Line]:
    """The last record of each key in one folder; a key the folder answers twice with
    different answers is refused, naming both (the engine keeps the last, and says so)."""
    last: dict[str, _Line] = {}
    conflicts = []
    for line in lines:
        earlier = last.get(line.key)
        if earlier is not None and earlier.status == line.status == "ok" and \
                not _same_answer(earlier, line, folders):
            conflicts.append(f"record {line.key!r} twice in {folders[line.folder].path} "
                             f"({_show(earlier, folders)}; then {_show(line, folders)})")
        last[line.key] = line
    if conflicts:
        more = f" ({len(conflicts) - 1} more samples too)" if len(conflicts) > 1 else ""
        raise DataError(folders[lines[0].folder].path / RECORDS_FILE,
                        f"answers the same sample differently: {conflicts[0]}{more}; nothing "
                        "was merged", expected="one answer per sample (run the sample again "
                                               "in a new folder, or remove the wrong line)")
    return list(last.values())


def _full_lines(path: Path) -> bytes:
    """A records.jsonl up to its last full line (a killed run may leave a partial last line,
    which the engine ignores too)."""
    data = path.read_bytes()
    return data[:data.rfind(b"\n") + 1]


def _columns(path: Path) -> _Columns:
    """The records of one records.jsonl in file order, or the problem with its first bad
    line."""
    data = _full_lines(path)
    columns = _Columns([], [], [], [], [], [], [])
    start = number = 0
    while start < len(data):
        end = data.index(b"\n", start)
        number += 1
        line = data[start:end]
        if line.strip():
            try:
                record = _Identity.model_validate_json(line)
            except ValidationError as exc:
                return columns._replace(problem=f"line {number} is not a valid record: {exc}")
            values = (record.key, record.item_id, record.method, record.model, record.status,
                      start, end)
            for column, value in zip(columns[:7], values, strict=True):
                column.append(value)
        start = end + 1
    return columns


def _answer(record: _Line, folders: list[_Folder]) -> _Answer:
    return _Answer.model_validate_json(folders[record.folder].data[record.start:record.end])


def _same_answer(one: _Line, other: _Line, folders: list[_Folder]) -> bool:
    """What must agree for two records of one sample to be the same; errors all agree."""
    if one.status == "error" and other.status == "error":
        return True
    return _answer(one, folders) == _answer(other, folders)


def _read_manifest(path: Path) -> dict[str, Any]:
    manifest = read_json_object(path)
    _check_field(path, manifest, "benchmark_sha256", str, "the benchmark file's sha256")
    _check_field(path, manifest, "benchmark_items", int, "the number of benchmark items")
    _check_field(path, manifest, "methods", list, "the run's methods")
    _check_field(path, manifest, "model_specs", list, "the run's models")
    offset, limit = manifest.get("offset", 0), manifest.get("limit")
    if not _is_int(offset) or offset < 0:
        raise DataError(path, "not a valid offset", field="offset", value=offset,
                        expected="a whole number >= 0")
    if limit is not None and (not _is_int(limit) or limit < 0):
        raise DataError(path, "not a valid limit", field="limit", value=limit,
                        expected="a whole number >= 0 or null")
    return manifest


def _check_field(path: Path, manifest: dict[str, Any], name: str, kind: type,
                 what: str) -> None:
    value = manifest.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise DataError(path, "missing or of the wrong type", field=name, value=value,
                        expected=what)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_finished(path: Path, manifest: dict[str, Any]) -> None:
    """Refuse a folder a run is writing, or one whose run was killed before it finished."""
    holder = read_holder(path)
    if holder is not None and holder_alive(holder):
        raise DataError(path, f"a run (pid {holder.get('pid', 'unknown')}) holds this folder",
                        expected="a finished run folder: wait for the run to end")
    if manifest.get("status") == "running":
        owner = manifest.get("owner") or {}
        problem = (f"the manifest says a run (pid {owner.get('pid', 'unknown')} on "
                   f"{owner.get('host', 'an unknown host')}) is still writing this folder")
        if not holder_alive(owner):
            problem += ("; that process is gone (killed?): resume the run with the same "
                        "`nutrireason run` command first")
        raise DataError(path / MANIFEST_FILE, problem, field="status", value="running",
                        expected="a finished run folder")


def _check_same_run(folders: list[_Folder]) -> None:
    first = folders[0]
    for other in folders[1:]:
        for name in RUN_FIELDS:
            where, mine, theirs = _difference(name, _normal(first.manifest.get(name)),
                                              _normal(other.manifest.get(name)))
            if where:
                raise DataError(other.manifest_path,
                                f"not the same run as {first.path}: {where} is {mine!r} in "
                                f"{first.path} but {theirs!r} in {other.path}",
                                field=where, expected=SAME_RUN)


def _normal(value: Any) -> Any:
    """A list compared as a set (the order of --method and --model options does not matter)."""
    if isinstance(value, list):
        return sorted(value, key=lambda v: json.dumps(v, sort_keys=True, default=str))
    return value


def _difference(name: str, mine: Any, theirs: Any) -> tuple[str, Any, Any]:
    """Where two values differ, as (field name, value, value), going into dicts (a setting is
    named as ``settings.temperature``) but not into lists; ("", ...) when equal."""
    if mine == theirs:
        return "", mine, theirs
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs), key=str):
            found = _difference(f"{name}.{key}", mine.get(key), theirs.get(key))
            if found[0]:
                return found
    return name, mine, theirs


def _merge_records(folders: list[_Folder]) -> _Merged:
    merged = _Merged()
    for index, folder in enumerate(folders):
        for record in folder.records:
            _add(merged, record, index, folders)
    if merged.conflicts:
        more = len(merged.conflicts) - 1
        extra = f" ({more} more samples differ too)" if more else ""
        raise DataError(None, f"two folders answer the same sample differently: "
                              f"{merged.conflicts[0]}{extra}; nothing was merged",
                        expected="pieces of one run that agree on every sample they share "
                                 "(leave one folder out, or run the sample again in one)")
    return merged


def _add(merged: _Merged, record: _Line, index: int, folders: list[_Folder]) -> None:
    """Merge one record into ``merged``: new, repeated, replacing an error, or a conflict."""
    key = record.key
    kept = merged.records.get(key)
    if kept is None or (kept.status == "error" and record.status == "ok"):
        if kept is not None:
            merged.replaced.append(key)
        merged.records[key] = record
        merged.source[key] = index
    elif kept.status == "ok" and record.status == "error":
        merged.replaced.append(key)
    elif _same_answer(kept, record, folders):
        merged.overlaps += 1
    else:
        first = folders[merged.source[key]].path
        merged.conflicts.append(f"record {key!r} in {first} ({_show(kept, folders)}) and in "
                                f"{folders[index].path} ({_show(record, folders)})")


def _show(record: _Line, folders: list[_Folder]) -> str:
    fields = _answer(record, folders)
    text = f"parsed {fields.parsed!r}, parse_ok {fields.parse_ok}"
    return text if len(text) <= 200 else text[:197] + "..."


# --------------------------------------------------------------------------- the result


def _report(out: Path, folders: list[_Folder], merged: _Merged) -> MergeReport:
    kept = Counter(merged.source.values())
    inputs = [MergeInput(f.path, f.shard, str(f.manifest.get("status", "unknown")),
                         len(f.records), kept[i]) for i, f in enumerate(folders)]
    states = Counter(r.status for r in merged.records.values())
    planned = _planned(folders)
    ok, errors = states["ok"], states["error"]
    missing = max(planned - ok - errors, 0)
    return MergeReport(out, inputs, planned, ok, errors, missing, _status(ok, errors, missing),
                       overlaps=merged.overlaps, replaced_errors=merged.replaced,
                       missing_shards=_missing_shards(folders) if missing else [])


def _planned(folders: list[_Folder]) -> int:
    """Samples the merged run plans: in each benchmark file, the items inside any input's
    offset/limit window (all shards of them: a shard never shrinks what the whole run plans),
    times the methods and the models."""
    manifest = folders[0].manifest
    sizes = _file_sizes(manifest, folders[0].manifest_path)
    covered = sum(_union_size([_window(f.manifest, size) for f in folders]) for size in sizes)
    return covered * len(manifest["methods"]) * len(manifest["model_specs"])


def _file_sizes(manifest: dict[str, Any], path: Path) -> list[int]:
    """Items per benchmark file (a run of several files applies offset and limit to each)."""
    files = manifest.get("benchmark_files")
    if files is None:
        return [manifest["benchmark_items"]]
    sizes = [f.get("items") if isinstance(f, dict) else None for f in files] \
        if isinstance(files, list) else [None]
    if not all(_is_int(size) and size >= 0 for size in sizes):
        raise DataError(path, "not a list of files with their item counts",
                        field="benchmark_files", value=files,
                        expected='[{"path", "sha256", "items"}, ...]')
    return sizes


def _window(manifest: dict[str, Any], items: int) -> tuple[int, int]:
    """The item indices of one file that a folder's run covered (offset .. offset + limit)."""
    offset, limit = manifest.get("offset", 0), manifest.get("limit")
    stop = items if limit is None else min(offset + limit, items)
    return min(offset, items), stop


def _union_size(windows: list[tuple[int, int]]) -> int:
    covered, end = 0, 0
    for start, stop in sorted(windows):
        start = max(start, end)
        if stop > start:
            covered += stop - start
            end = stop
    return covered


def _status(ok: int, errors: int, missing: int) -> str:
    """The engine's rule: complete, failed (nothing ok) or partial."""
    if errors == 0 and missing == 0:
        return "complete"
    return "failed" if ok == 0 else "partial"


def _missing_shards(folders: list[_Folder]) -> list[str]:
    """The shards "K/N" absent when every input is a shard of the same N, else none."""
    shards = [f.shard for f in folders]
    counts = {s.n for s in shards if s is not None}
    if None in shards or len(counts) != 1:
        return []
    n = counts.pop()
    have = {s.k for s in shards if s is not None}
    return [f"{k}/{n}" for k in range(1, n + 1) if k not in have]


def _merged_manifest(folders: list[_Folder], report: MergeReport) -> dict[str, Any]:
    """The fields all inputs share, each input's own in ``merged_from``, and the union's
    status and counts."""
    first = folders[0].manifest
    common = {key: value for key, value in first.items() if key not in PER_FOLDER_FIELDS
              and (key in RUN_FIELDS or all(f.manifest.get(key) == value for f in folders))}
    counts = {"planned": report.planned, "ok": report.ok, "error": report.errors,
              "missing": report.missing}
    merge = {"overlaps": report.overlaps, "errors_replaced": len(report.replaced_errors),
             "missing_shards": report.missing_shards, "coverage": report.coverage}
    return common | {"status": report.status, "counts": counts, "merge": merge,
                     "merged_from": [_source(f, i) for f, i in zip(folders, report.inputs,
                                                                    strict=True)]}


def _source(folder: _Folder, summary: MergeInput) -> dict[str, Any]:
    manifest = folder.manifest
    return {"path": str(folder.path), "shard": folder.shard.as_dict() if folder.shard else None,
            "offset": manifest.get("offset", 0), "limit": manifest.get("limit"),
            "status": summary.status, "counts": manifest.get("counts"),
            "records": summary.records, "kept": summary.kept,
            "git": manifest.get("git"), "versions": manifest.get("versions")}


def _line(record: _Line, folders: list[_Folder]) -> bytes:
    return folders[record.folder].data[record.start:record.end + 1]


def _write_run(out: Path, lines: list[bytes], manifest: dict[str, Any],
               overwrite: bool = False) -> None:
    """Write the merged folder beside ``out`` and put it in place only when it is whole."""
    try:
        with write_folder(out, overwrite) as folder:
            with open(folder / RECORDS_FILE, "wb") as handle:
                handle.writelines(lines)
            write_manifest(folder, manifest)
    except OSError as exc:
        raise DataError(out, f"could not be written ({exc.strerror or exc}); nothing was "
                             "merged", field="--out", expected="a new (or empty) folder") from exc


# --------------------------------------------------------------------------- printing


def report_lines(report: MergeReport) -> list[str]:
    """What ``nutrireason merge`` prints."""
    lines = [f"merged {len(report.inputs)} run folders into {report.out}: {report.status}"]
    for source in report.inputs:
        shard = f"shard {source.shard}" if source.shard else "unsharded"
        lines.append(f"  {source.path} ({shard}, {source.status}): {source.records} records, "
                     f"{source.kept} kept")
    lines.append(f"samples: {report.planned} planned, {report.ok} ok, {report.errors} errors, "
                 f"{report.missing} missing; coverage {report.coverage:.1%}")
    if report.overlaps:
        lines.append(f"{report.overlaps} records in more than one folder with the same answer "
                     "were kept once")
    if report.replaced_errors:
        lines.append(f"{len(report.replaced_errors)} error records gave way to an ok record of "
                     f"the same sample from another folder (e.g. {report.replaced_errors[0]})")
    lines.append("conflicts: none")
    if report.missing_shards:
        lines.append(f"missing shards: {', '.join(report.missing_shards)}; run them and merge "
                     "again (the merged run is partial without them)")
    return lines


# --------------------------------------------------------------------------- reports


def overlapping_groups(metrics: list[dict[str, Any]], names: list[str]) -> list[str]:
    """One message per (method, model, task, level) group that two or more of the runs'
    metrics.json hold, naming those runs (``names`` in the order of ``metrics``)."""
    if len(metrics) != len(names):
        raise NutriReasonError(f"{len(metrics)} metrics for {len(names)} run names")
    holders: dict[tuple[str, ...], list[int]] = {}
    for index, data in enumerate(metrics):
        for group in data.get("groups") or []:
            key = tuple(str(group.get(k) or "") for k in GROUP_KEYS)
            runs = holders.setdefault(key, [])
            if index not in runs:
                runs.append(index)
    return [_overlap_message(key, [names[i] for i in runs])
            for key, runs in holders.items() if len(runs) > 1]


def _overlap_message(key: tuple[str, ...], runs: list[str]) -> str:
    method, model, task, level = key
    return (f"method {method}, model {model}, task {task}, level {level or '(none)'} is scored "
            f"in {len(runs)} runs: {', '.join(runs)}; merge them into one run (`nutrireason "
            "merge`) or report them separately")
