"""The run engine: items x methods x models, bounded concurrency, one record per finished sample.

A run directory holds ``manifest.json``, ``records.jsonl`` and, while a run is in progress,
``run.lock``. Running the same command on the same directory resumes: finished samples are
skipped, errored ones are retried when asked.

Rules:

- **One run per folder.** The whole run (resume and ``--retry-errors`` included) holds an
  exclusive lock on the folder (:mod:`nutrireason.runs.lock`); a second process is refused with
  a :class:`~nutrireason.runs.lock.RunLocked` naming the folder and the holder's pid before it
  reads or writes anything there. A lock left by a dead process is taken over.
- **Malformed items never abort a run.** The benchmark file's structure (JSON lines, ids) is
  checked up front, naming file and line, before anything is sent. An item a method cannot
  use (a missing ``prompt``, a field of the wrong type) becomes an item-level error record
  (``status: error``, ``error.kind: bad_item``, the file and line in ``error.message``,
  ``error.line``) and the run goes on; any other unexpected exception while answering one
  item is recorded the same way with ``kind: method_error``. Model-call failures are recorded
  with their own kind.
- **The manifest always ends with a final status**: ``complete`` (every planned sample ok),
  ``partial`` (some errors or missing samples), ``failed`` (every sample errored, or the run
  stopped on an exception: ``error`` says which) or ``interrupted`` (Ctrl-C / SIGTERM); each
  with ``counts`` of planned, ok, error and missing samples over the whole folder. A manifest
  still saying ``running`` when a run starts was left by a process killed outright (SIGKILL);
  it is reported (``RunSummary.recovered``) and the run resumes.
"""

from __future__ import annotations

import asyncio
import hashlib
import signal
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.progress import Task as ProgressTask
from rich.text import Text

from nutrireason.errors import DataError, NutriReasonError
from nutrireason.methods.base import Method, get_method
from nutrireason.methods.extractor import extract, extractable
from nutrireason.methods.reading import final_text
from nutrireason.models.base import Backend
from nutrireason.models.cache import ResponseCache
from nutrireason.models.errors import ModelError
from nutrireason.models.registry import get_backend, model_label
from nutrireason.models.retry import RetriesExhausted, RetryPolicy, call_with_retry
from nutrireason.models.settings import check_settings, effective_settings
from nutrireason.models.types import ChatRequest, GenerationSettings, ModelResponse, cache_key
from nutrireason.reasoning import Split, split_reasoning
from nutrireason.runs.benchmark import Benchmark, load_benchmarks
from nutrireason.runs.lock import LOCK_FILE, RunLock, owner
from nutrireason.runs.manifest import (
    MANIFEST_FILE,
    check_resumable,
    git_commit,
    package_versions,
    read_manifest,
    write_manifest,
)
from nutrireason.runs.records import RECORDS_FILE, Record, RecordLog, record_key
from nutrireason.runs.shard import Shard, in_shard
from nutrireason.schema import MethodSpec, all_meta_keys, check_item, spec_for_task, task_spec
from nutrireason.storage import check_target_folder

IMAGE_URL_KEEP = 256  # longer image URLs (data: URLs) are stored as a hash in records
# Exceptions from a method that mean the item does not have what the method needs.
BAD_ITEM_ERRORS = (NutriReasonError, LookupError, TypeError, ValueError)


def meta_keys(item: dict[str, Any]) -> tuple[str, ...]:
    """The item fields copied into its record (``meta``) so scoring and reports need records
    alone: those the item's benchmark declares (:mod:`nutrireason.schema`), or every registered
    benchmark's for an item of no known task."""
    found = spec_for_task(str(item.get("task", "")))
    return found[0].meta_keys if found else all_meta_keys()


@dataclass
class RunConfig:
    """Everything a run needs; ``models`` are provider strings, ``methods`` registered names;
    ``benchmark`` one item file or several run together (offset and limit apply to each)."""

    benchmark: Path | list[Path]
    out: Path
    methods: list[str] = field(default_factory=lambda: ["prompt"])
    models: list[str] = field(default_factory=lambda: ["scripted/echo"])
    settings: GenerationSettings = field(default_factory=GenerationSettings)
    concurrency: int = 8
    limit: int | None = None
    offset: int = 0
    cache: bool = True
    cache_path: Path | None = None
    retry_errors: bool = False
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    progress: bool = True
    shard: Shard | None = None  # run only the items of shard K of N (after offset/limit)
    # hold each item to its task's item model (schema.check_item): an item that does not fit
    # is an item-level error; `nutrireason run` sets it for a registered benchmark's build
    check_items: bool = False
    # a provider string: a second model reads the answers the rules could not read
    # (methods.extractor); its reading is kept beside the rules', never instead of it
    extractor: str | None = None
    # the folder images may be read from (`run --images`, or the build's manifest); every
    # item's `images_root` is replaced by it (None: no item may show an image): a benchmark
    # file never chooses which files are sent to a model
    images: Path | None = None
    # answers per (item, method, model): K > 1 samples each K times (temperature > 0);
    # the repeats after the first are keyed ``<key>::r2`` ... and carry ``extra.repeat``
    repeats: int = 1


def repeat_key(key: str, repeat: int) -> str:
    """The record key of the ``repeat``-th answer (0-based; the first keeps the plain key)."""
    return key if repeat == 0 else f"{key}::r{repeat + 1}"


@dataclass
class RunSummary:
    """What a run did: samples planned, skipped as done, finished ok, failed; calls made.

    ``ok``/``errors`` count this invocation; ``total_ok``/``total_errors``/``missing`` count the
    folder's planned samples after it (earlier invocations included); ``status`` is the
    manifest's final status; ``recovered`` says when a previous run was found killed.
    """

    out: Path
    planned: int
    skipped: int
    ok: int = 0
    errors: int = 0
    unparsed: int = 0
    model_calls: int = 0
    cache_hits: int = 0
    wall_s: float = 0.0
    interrupted: bool = False
    total_ok: int = 0
    total_errors: int = 0
    missing: int = 0
    status: str = "running"
    recovered: str | None = None
    truncated: int = 0  # answers cut off at the token limit (unparseable, reason "truncated")
    refusals: int = 0  # answers that declined (unparseable, reason "refusal")
    # per "method | model | task": [answers cut off, answers], for the >5 % warning
    truncated_by_group: dict[str, list[int]] = field(default_factory=dict)
    cache_note: str | None = None  # why the response cache could not be used or written
    # samples records.jsonl answered twice with different answers on resume (last one kept)
    conflicts: list[str] = field(default_factory=list)


@dataclass
class Task:
    item: dict[str, Any]
    method: Method
    backend: Backend
    model: str
    key: str
    where: str = ""  # "<benchmark file> line <n>", for item-level errors
    line: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)  # what the backend is sent
    problem: DataError | None = None  # why the item does not fit its task's item model
    extractor: tuple[str, Backend] | None = None  # (spec, backend) of --extractor
    repeat: int = 0  # which of the run's repeats (0-based)


class CallProxy:
    """What a method sees as its backend: adds the cache, retries and per-sample accounting."""

    def __init__(self, backend: Backend, cache: ResponseCache | None, policy: RetryPolicy,
                 repeat: int = 0):
        self.backend = backend
        self.cache = cache
        self.policy = policy
        self.repeat = repeat
        self.requests: list[ChatRequest] = []
        self.responses: list[ModelResponse] = []
        self.calls = 0
        self.attempts = 0
        self.cache_hits = 0

    async def generate(self, request: ChatRequest) -> ModelResponse:
        request = self._for_repeat(request)
        self.requests.append(request)
        use_cache = self.cache is not None
        key = cache_key(self.backend.identity(), request) if use_cache else ""
        if use_cache and self.repeat:
            key = f"{key}::r{self.repeat + 1}"  # a repeat is a new draw, never the cached one
        cached = self.cache.get(key) if use_cache else None
        if cached is not None:
            self.cache_hits += 1
            self.responses.append(cached)
            return cached
        self.calls += 1
        try:
            response, attempts = await call_with_retry(
                lambda: self.backend.generate(request), self.policy)
        except RetriesExhausted as exc:
            self.attempts += exc.attempts
            raise
        self.attempts += attempts
        if use_cache:
            self.cache.put(key, self.backend.provider, self.backend.model, response)
        self.responses.append(response)
        return response

    def _for_repeat(self, request: ChatRequest) -> ChatRequest:
        """A repeat after the first sends seed + repeat when the settings fix a seed."""
        seed = request.settings.seed
        if not self.repeat or seed is None:
            return request
        settings = request.settings.model_copy(update={"seed": seed + self.repeat})
        return request.model_copy(update={"settings": settings})


def run(config: RunConfig) -> RunSummary:
    """Execute (or resume) a run; blocks until done or interrupted."""
    return asyncio.run(run_async(config))


async def run_async(config: RunConfig) -> RunSummary:
    """The async form of :func:`run`."""
    started = time.perf_counter()
    benchmark = load_benchmarks(benchmark_paths(config))
    trust_images(benchmark.items, config.images)
    methods = [get_method(name, config.settings) for name in config.methods]
    backends = _backends(config.models)
    extractor = (config.extractor, get_backend(config.extractor)) if config.extractor else None
    opened = [*backends.values(), *([extractor[1]] if extractor else [])]
    try:
        _check_repeats(config)
        for backend in backends.values():
            check_settings(backend, config.settings)
        check_target_folder(config.out, earlier=lambda folder: _own_folder(folder, config),
                            expected="a new or empty folder, or the folder of the same run "
                                     "to resume it")
        with RunLock(config.out) as lock, _sigterm_cancels(asyncio.current_task()):
            return await _locked_run(config, benchmark, methods, backends, lock, started,
                                     extractor)
    finally:
        for backend in opened:
            await backend.aclose()


def _check_repeats(config: RunConfig) -> None:
    if config.repeats < 1:
        raise DataError(None, "repeats must be at least 1", field="--repeats",
                        value=config.repeats)
    if config.repeats > 1 and config.settings.temperature == 0:
        raise DataError(None, "repeated answers need sampling: at temperature 0 every repeat "
                              "is the same answer", field="--temperature", value=0.0,
                        expected="a temperature above 0 with --repeats")


def trust_images(items: list[dict[str, Any]], images: Path | None) -> None:
    """Give every item the run's images folder as ``images_root``, replacing the file's."""
    root = str(Path(images).resolve()) if images is not None else None
    for item in items:
        if root is None:
            item.pop("images_root", None)
        else:
            item["images_root"] = root


def _backends(specs: list[str]) -> dict[str, Backend]:
    """One backend per model, keyed by its label (provider and model, no endpoint URL); two
    specs for the same model are refused (list its endpoints in one spec instead)."""
    backends: dict[str, Backend] = {}
    for spec in specs:
        label = model_label(spec)
        if label in backends:
            raise NutriReasonError(
                f"--model {spec!r} names the model {label!r} again; give one model's several "
                "servers as one spec: openai-compatible/<model>@<url>,<url>")
        backends[label] = get_backend(spec)
    return backends


async def _locked_run(config: RunConfig, benchmark: Benchmark, methods: list[Method],
                      backends: dict[str, Backend], lock: RunLock, started: float,
                      extractor: tuple[str, Backend] | None = None) -> RunSummary:
    """Everything that reads or writes the run folder; the caller holds its lock."""
    manifest = _manifest(config, benchmark, methods, backends)
    previous = read_manifest(config.out)
    if previous is not None:
        check_resumable(previous, manifest, config.out)
    tasks = _plan(benchmark, config, methods, backends, extractor)
    summary = RunSummary(config.out, len(tasks), 0,
                         recovered=_recovered(previous, lock, config.out))
    manifest |= {"owner": owner()} | ({"recovered": summary.recovered} if summary.recovered
                                      else {})
    log = RecordLog(config.out / RECORDS_FILE)
    done = log.open()
    summary.conflicts = log.conflicts
    if log.conflicts:
        manifest["conflicting_records"] = {"count": len(log.conflicts),
                                           "first": log.conflicts[:20]}
    cache = _open_cache(config, summary)
    states: dict[str, str] = {}
    try:
        pending, done = _pending(tasks, done, config.retry_errors, log)
        summary.skipped = len(tasks) - len(pending)
        states.update({t.key: done[t.key].status for t in tasks if t.key in done})
        write_manifest(config.out, manifest | {"status": "running"})
        await _execute(pending, log, cache, config, summary, states)
    except OSError as exc:  # the run folder cannot be written (a full disk): stop, resumable
        summary.interrupted = True
        _settle(summary, states)
        _try_manifest(config.out, manifest | {"counts": _counts(summary),
                                              "status": "interrupted",
                                              "error": f"OSError: {exc}"[:2000]})
        raise RunFolderError(
            f"cannot write the run folder {config.out}: {exc.strerror or exc}; every answer "
            "recorded before this is kept: free space and run the same command again to "
            "resume") from exc
    except BaseException as exc:
        _settle(summary, states)
        write_manifest(config.out, manifest | {"counts": _counts(summary)} | _stopped_by(exc))
        raise
    finally:
        log.close()
        if cache is not None:
            _cache_note(cache, summary)
            cache.close()
    _settle(summary, states)
    summary.wall_s = time.perf_counter() - started
    models = {spec: backend.describe() for spec, backend in backends.items()}  # fallbacks
    write_manifest(config.out, manifest | {"status": summary.status, "counts": _counts(summary),
                                           "models": models, "summary": _as_dict(summary)})
    return summary


def is_run_folder(folder: Path) -> bool:
    """``folder`` holds what a run writes (its manifest, records or lock)."""
    return any((folder / name).exists() for name in (MANIFEST_FILE, RECORDS_FILE, LOCK_FILE))


def _own_folder(folder: Path, config: RunConfig) -> bool:
    """``folder`` is a run folder, or the folder of the run's own benchmark file (the human
    baseline keeps its sample there)."""
    return is_run_folder(folder) or any(path.resolve().parent == folder.resolve()
                                        for path in benchmark_paths(config))


class RunFolderError(NutriReasonError):
    """The run folder could not be written (a full disk, a read-only folder)."""


def _try_manifest(out: Path, manifest: dict[str, Any]) -> None:
    """Write the manifest if the folder allows it; a run that cannot is found on resume."""
    with suppress(OSError):
        write_manifest(out, manifest)


def _open_cache(config: RunConfig, summary: RunSummary) -> ResponseCache | None:
    """The response cache, or None (with a note) when it cannot be opened."""
    if not config.cache:
        return None
    try:
        return ResponseCache(config.cache_path)
    except (sqlite3.Error, OSError) as exc:
        summary.cache_note = (f"the response cache could not be opened ({exc}); this run "
                              "goes on without it")
        return None


def _cache_note(cache: ResponseCache, summary: RunSummary) -> None:
    if cache.write_errors:
        summary.cache_note = (f"the response cache could not store {cache.write_errors} "
                              f"responses ({cache.last_error}); they are kept in the records, "
                              "and a later run asks the model again for them only if their "
                              "records are removed")


def _recovered(previous: dict[str, Any] | None, lock: RunLock, out: Path) -> str | None:
    """A note when the last run here was killed outright (its manifest still says running)."""
    if previous is None or previous.get("status") != "running":
        return None
    holder = previous.get("owner") or lock.previous or {}
    return (f"the previous run in {out} (pid {holder.get('pid', 'unknown')}) stopped without "
            "finishing (killed?); it counts as interrupted and this run resumes it")


def _stopped_by(exc: BaseException) -> dict[str, Any]:
    """The final manifest fields for a run that ended by an exception."""
    if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError, SystemExit)):
        return {"status": "interrupted"}
    return {"status": "failed", "error": f"{type(exc).__name__}: {exc}"[:2000]}


def _settle(summary: RunSummary, states: dict[str, str]) -> None:
    """Folder-wide counts and the final status, from the last record of each planned sample."""
    counts = Counter(states.values())
    summary.total_ok, summary.total_errors = counts["ok"], counts["error"]
    summary.missing = summary.planned - summary.total_ok - summary.total_errors
    if summary.interrupted:
        summary.status = "interrupted"
    elif summary.total_errors == 0 and summary.missing == 0:
        summary.status = "complete"
    elif summary.total_ok == 0:
        summary.status = "failed"
    else:
        summary.status = "partial"


def _counts(summary: RunSummary) -> dict[str, int]:
    return {"planned": summary.planned, "ok": summary.total_ok, "error": summary.total_errors,
            "missing": summary.missing}


@contextmanager
def _sigterm_cancels(task: asyncio.Task[Any] | None) -> Iterator[None]:
    """While the run holds its folder, SIGTERM stops it like Ctrl-C (records kept, manifest
    marked interrupted) instead of killing it mid-write; the previous handler comes back after."""
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGTERM)
    installed = False
    if task is not None:
        try:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
            installed = True
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
            pass
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGTERM)
            signal.signal(signal.SIGTERM, previous)


def benchmark_paths(config: RunConfig) -> list[Path]:
    """The run's item files, in order."""
    paths = config.benchmark if isinstance(config.benchmark, list) else [config.benchmark]
    return [Path(p) for p in paths]


def _manifest(config: RunConfig, benchmark: Benchmark, methods: list[Method],
              backends: dict[str, Backend]) -> dict[str, Any]:
    files = {"benchmark_files": [{"path": str(f.path), "sha256": f.sha256, "items": f.count}
                                 for f in benchmark.files]} if benchmark.files else {}
    shard = {"shard": config.shard.as_dict()} if config.shard else {}
    return {
        "benchmark": str(benchmark.path),
        **files,
        **shard,
        "benchmark_sha256": benchmark.sha256,
        "benchmark_items": len(benchmark.items),
        "methods": [m.describe() for m in methods],
        "model_specs": list(backends),
        "model_endpoints": list(config.models),
        "models": {spec: backend.describe() for spec, backend in backends.items()},
        "settings": config.settings.model_dump(mode="json"),
        "effective_settings": {spec: effective_settings(backend, config.settings)
                               for spec, backend in backends.items()},
        "server_defaults": {spec: backend.server_defaults()
                            for spec, backend in backends.items()},
        **({"extractor": config.extractor} if config.extractor else {}),
        **({"images": str(Path(config.images).resolve())} if config.images else {}),
        **({"repeats": config.repeats} if config.repeats > 1 else {}),
        "concurrency": config.concurrency,
        "limit": config.limit,
        "offset": config.offset,
        "cache": config.cache,
        "retry": {"max_attempts": config.retry.max_attempts,
                  "base_delay": config.retry.base_delay, "max_delay": config.retry.max_delay},
        "versions": package_versions(),
        "git": git_commit(),
    }


def _plan(benchmark: Benchmark, config: RunConfig, methods: list[Method],
          backends: dict[str, Backend],
          extractor: tuple[str, Backend] | None = None) -> list[Task]:
    tasks = []
    for line, item, path in benchmark.located(config.offset, config.limit):
        if not in_shard(str(item["id"]), config.shard):
            continue
        where = f"{path} line {line}" if line else str(path)
        problem = _misfit(item) if config.check_items else None  # once per item
        for method in methods:
            for spec, backend in backends.items():
                key = record_key(str(item["id"]), method.name, spec)
                for repeat in range(config.repeats):
                    tasks.append(Task(item, method, backend, spec, repeat_key(key, repeat),
                                      where, line, effective_settings(backend, config.settings),
                                      problem, extractor, repeat))
    return tasks


def _misfit(item: dict[str, Any]) -> DataError | None:
    """Why ``item`` does not fit its task's item model (:func:`schema.check_item`), or None."""
    try:
        check_item(item)
    except DataError as exc:
        return exc
    return None


def _pending(tasks: list[Task], done: dict[str, Record], retry_errors: bool,
             log: RecordLog) -> tuple[list[Task], dict[str, Record]]:
    """The tasks still to run and the records kept (errors dropped when retrying them)."""
    if retry_errors and any(r.status == "error" for r in done.values()):
        kept = [r for r in done.values() if r.status == "ok"]
        log.rewrite(kept)
        done = {r.key: r for r in kept}
    return [t for t in tasks if t.key not in done], done


async def _execute(pending: list[Task], log: RecordLog, cache: ResponseCache | None,
                   config: RunConfig, summary: RunSummary, states: dict[str, str]) -> None:
    if not pending:
        return
    queue: Iterator[Task] = iter(pending)
    with _progress(config.progress) as progress:
        bar = progress.add_task("samples", total=len(pending))

        async def worker() -> None:
            for task in queue:
                record = await _sample(task, cache, config.retry)
                log.append(record)
                states[record.key] = record.status
                _count(summary, record)
                progress.advance(bar)

        workers = [asyncio.create_task(worker())
                   for _ in range(min(config.concurrency, len(pending)))]
        try:
            await asyncio.gather(*workers)
        except (asyncio.CancelledError, KeyboardInterrupt):
            summary.interrupted = True
        finally:
            for w in workers:
                w.cancel()


class RateColumn(ProgressColumn):
    """Samples per second."""

    def render(self, task: ProgressTask) -> Text:
        return Text(f"{task.speed or 0:,.1f}/s")


def _progress(enabled: bool) -> Progress:
    """The samples bar, on stderr (stdout stays for results)."""
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TaskProgressColumn(), RateColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
        console=Console(stderr=True), disable=not enabled,
    )


async def _sample(task: Task, cache: ResponseCache | None, policy: RetryPolicy) -> Record:
    proxy = CallProxy(task.backend, cache, policy, task.repeat)
    started = time.perf_counter()
    base = {"key": task.key, "item_id": str(task.item["id"]), "method": task.method.name,
            "model": task.model, "gold": None, "settings": task.settings,
            "meta": {k: task.item[k] for k in meta_keys(task.item) if k in task.item},
            "method_spec": {"name": MethodSpec.parse(task.method.name).name,
                            "params": dict(task.method.params)}}
    try:
        if task.problem is not None:
            raise task.problem
        base["gold"] = task.method.gold(task.item)
        prediction = await task.method.answer(task.item, proxy)
    except ModelError as exc:
        fields = {"status": "error", "error": exc.to_record()}
    except Exception as exc:  # noqa: BLE001 - one item's problem must not stop the run
        fields = {"status": "error", "error": _item_error(task, exc)}
    else:
        fields = {"status": "ok", "parsed": prediction.parsed, "parse_ok": prediction.parse_ok,
                  "retrieved": prediction.retrieved, "extra": prediction.extra,
                  "method_stats": prediction.stats}
        if task.extractor is not None and _needs_extractor(task.item, prediction):
            prediction.extra["extractor"] = await _extract(task, proxy, cache, policy)
    if task.repeat:
        fields["extra"] = {**(fields.get("extra") or {}), "repeat": task.repeat}
    return Record(**base, **fields, **_accounting(proxy), wall_s=time.perf_counter() - started,
                  finished_at=time.time())


def _needs_extractor(item: dict[str, Any], prediction: Any) -> bool:
    """An answer no rule could read (not one cut off, declined or hedged)."""
    reading = prediction.extra.get("reading") or {}
    return (not prediction.parse_ok and reading.get("reason") == "no_answer"
            and extractable(str(item.get("task", ""))))


async def _extract(task: Task, proxy: CallProxy, cache: ResponseCache | None,
                   policy: RetryPolicy) -> dict[str, Any]:
    """The extractor's reading of the scored call's final answer (the call the task's spec
    names: the first, or the last): what it read, its reply and its calls; a failed call
    is recorded as the extractor's error, the sample keeps the rules' reading."""
    assert task.extractor is not None
    spec, backend = task.extractor
    responses = proxy.responses
    declared = task_spec(str(task.item.get("task", "")))
    first = declared is not None and declared.scored_call == "first"
    scored = responses[0] if first else responses[-1]
    helper = CallProxy(backend, cache, policy)
    found: dict[str, Any] = {"model": spec}
    try:
        reading = await extract(str(task.item["task"]), task.item, final_text(scored), helper)
    except Exception as exc:  # noqa: BLE001 - the extractor never costs the sample its record
        found["error"] = f"{type(exc).__name__}: {exc}"[:500]
    else:
        found |= {"parsed": reading.value, "parse_ok": reading.ok, "reading": reading.audit()}
    return found | {"responses": [r.text for r in helper.responses], "n_calls": helper.calls,
                    "cache_hits": helper.cache_hits}


def _item_error(task: Task, exc: Exception) -> dict[str, Any]:
    """An item-level error: what the method could not use, and where the item is."""
    kind = "bad_item" if isinstance(exc, BAD_ITEM_ERRORS) else "method_error"
    problem = str(exc) if isinstance(exc, NutriReasonError) else f"{type(exc).__name__}: {exc}"
    message = f"{task.where} (item {task.item['id']!r}, method {task.method.name}): {problem}"
    return {"kind": kind, "status": None, "message": message[:2000], "line": task.line,
            "exception": type(exc).__name__}


def _accounting(proxy: CallProxy) -> dict[str, Any]:
    responses = proxy.responses
    splits = [split_reasoning(r.text, r.reasoning, r.finish_reason) for r in responses]
    return {
        "requests": [_storable(r) for r in proxy.requests],
        "responses": [r.text for r in responses],
        "raw": [r.raw for r in responses],
        "finish_reasons": [r.finish_reason for r in responses],
        "reasoning": [split.reasoning for split in splits],
        "usage": {"prompt_tokens": sum(r.usage.prompt_tokens for r in responses),
                  "completion_tokens": sum(r.usage.completion_tokens for r in responses),
                  "reasoning_tokens": sum(reasoning_tokens(r, split)
                                          for r, split in zip(responses, splits, strict=True))},
        "latency_s": sum(r.latency_s for r in responses),
        "n_calls": proxy.calls,
        "cache_hits": proxy.cache_hits,
        "attempts": proxy.attempts,
    }


def _storable(request: ChatRequest) -> dict[str, Any]:
    """The request as stored in a record; long image URLs become a sha256 pointer."""
    data = request.model_dump(mode="json", exclude_none=True)
    for message in data["messages"]:
        if isinstance(message["content"], list):
            for part in message["content"]:
                url = part.get("image_url", {}).get("url", "")
                if len(url) > IMAGE_URL_KEEP:
                    digest = hashlib.sha256(url.encode()).hexdigest()
                    part["image_url"]["url"] = f"sha256:{digest}"
    return data


def reasoning_tokens(response: ModelResponse, split: Split) -> int:
    """The call's reasoning tokens: as the server reports them; else, when the reasoning came
    in the text or its own field, the completion tokens' share by characters (an estimate)."""
    if response.usage.reasoning_tokens is not None:
        return response.usage.reasoning_tokens
    if not split.reasoning:
        return 0
    total = len(split.reasoning) + len(split.final)
    return round(response.usage.completion_tokens * len(split.reasoning) / total) if total else 0


def _count(summary: RunSummary, record: Record) -> None:
    if record.status == "ok":
        summary.ok += 1
        summary.unparsed += not record.parse_ok
        reason = record.reading.get("reason")
        summary.truncated += reason == "truncated"
        summary.refusals += reason == "refusal"
        group = summary.truncated_by_group.setdefault(
            f"{record.method} | {record.model} | {record.task}", [0, 0])
        group[0] += reason == "truncated"
        group[1] += 1
    else:
        summary.errors += 1
    summary.model_calls += record.n_calls
    summary.cache_hits += record.cache_hits


def _as_dict(summary: RunSummary) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(summary).items()}
