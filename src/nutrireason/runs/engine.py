"""The run engine: items x methods x models, bounded concurrency, one record per finished sample.

A run directory holds ``manifest.json`` and ``records.jsonl``. Running the same command on the
same directory resumes: finished samples are skipped, errored ones are retried when asked.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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

from nutrireason.methods.base import Method, get_method
from nutrireason.models.base import Backend
from nutrireason.models.cache import ResponseCache
from nutrireason.models.errors import ModelError
from nutrireason.models.registry import get_backend
from nutrireason.models.retry import RetriesExhausted, RetryPolicy, call_with_retry
from nutrireason.models.types import ChatRequest, GenerationSettings, ModelResponse, cache_key
from nutrireason.runs.benchmark import Benchmark, load_benchmark
from nutrireason.runs.manifest import (
    check_resumable,
    git_commit,
    package_versions,
    read_manifest,
    write_manifest,
)
from nutrireason.runs.records import RECORDS_FILE, Record, RecordLog, record_key

IMAGE_URL_KEEP = 256  # longer image URLs (data: URLs) are stored as a hash in records
# Item fields copied into every record (``meta``) so scoring and reports need records alone.
META_KEYS = ("level", "task", "user_id", "food_id", "food", "question", "signal",
             "conditions", "diets", "condition", "options", "distractor", "recipe_id")


@dataclass
class RunConfig:
    """Everything a run needs; ``models`` are provider strings, ``methods`` registered names."""

    benchmark: Path
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


@dataclass
class RunSummary:
    """What a run did: samples planned, skipped as done, finished ok, failed; calls made."""

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


@dataclass
class Task:
    item: dict[str, Any]
    method: Method
    backend: Backend
    model: str
    key: str


class CallProxy:
    """What a method sees as its backend: adds the cache, retries and per-sample accounting."""

    def __init__(self, backend: Backend, cache: ResponseCache | None, policy: RetryPolicy):
        self.backend = backend
        self.cache = cache
        self.policy = policy
        self.requests: list[ChatRequest] = []
        self.responses: list[ModelResponse] = []
        self.calls = 0
        self.attempts = 0
        self.cache_hits = 0

    async def generate(self, request: ChatRequest) -> ModelResponse:
        self.requests.append(request)
        use_cache = self.cache is not None
        key = cache_key(self.backend.identity(), request) if use_cache else ""
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


def run(config: RunConfig) -> RunSummary:
    """Execute (or resume) a run; blocks until done or interrupted."""
    return asyncio.run(run_async(config))


async def run_async(config: RunConfig) -> RunSummary:
    """The async form of :func:`run`."""
    started = time.perf_counter()
    benchmark = load_benchmark(config.benchmark)
    methods = [get_method(name, config.settings) for name in config.methods]
    backends = {spec: get_backend(spec) for spec in config.models}
    manifest = _manifest(config, benchmark, methods, backends)
    log = RecordLog(config.out / RECORDS_FILE)
    previous = read_manifest(config.out)
    if previous is not None:
        check_resumable(previous, manifest, config.out)
    done = log.open()
    cache = ResponseCache(config.cache_path) if config.cache else None
    try:
        tasks = _plan(benchmark, config, methods, backends)
        pending = _pending(tasks, done, config.retry_errors, log)
        write_manifest(config.out, manifest | {"status": "running"})
        summary = RunSummary(config.out, len(tasks), len(tasks) - len(pending))
        try:
            await _execute(pending, log, cache, config, summary)
        except (asyncio.CancelledError, KeyboardInterrupt):
            summary.interrupted = True
        summary.wall_s = time.perf_counter() - started
        status = "interrupted" if summary.interrupted else "finished"
        models = {spec: backend.describe() for spec, backend in backends.items()}  # fallbacks
        write_manifest(config.out, manifest | {"status": status, "models": models,
                                               "summary": _as_dict(summary)})
        return summary
    finally:
        log.close()
        if cache is not None:
            cache.close()
        for backend in backends.values():
            await backend.aclose()


def _manifest(config: RunConfig, benchmark: Benchmark, methods: list[Method],
              backends: dict[str, Backend]) -> dict[str, Any]:
    return {
        "benchmark": str(benchmark.path),
        "benchmark_sha256": benchmark.sha256,
        "benchmark_items": len(benchmark.items),
        "methods": [m.describe() for m in methods],
        "model_specs": list(backends),
        "models": {spec: backend.describe() for spec, backend in backends.items()},
        "settings": config.settings.model_dump(mode="json"),
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
          backends: dict[str, Backend]) -> list[Task]:
    tasks = []
    for item in benchmark.select(config.offset, config.limit):
        for method in methods:
            for spec, backend in backends.items():
                key = record_key(str(item["id"]), method.name, spec)
                tasks.append(Task(item, method, backend, spec, key))
    return tasks


def _pending(tasks: list[Task], done: dict[str, Record], retry_errors: bool,
             log: RecordLog) -> list[Task]:
    if retry_errors and any(r.status == "error" for r in done.values()):
        kept = [r for r in done.values() if r.status == "ok"]
        log.rewrite(kept)
        done = {r.key: r for r in kept}
    return [t for t in tasks if t.key not in done]


async def _execute(pending: list[Task], log: RecordLog, cache: ResponseCache | None,
                   config: RunConfig, summary: RunSummary) -> None:
    if not pending:
        return
    queue: Iterator[Task] = iter(pending)
    with _progress(config.progress) as progress:
        bar = progress.add_task("samples", total=len(pending))

        async def worker() -> None:
            for task in queue:
                record = await _sample(task, cache, config.retry)
                log.append(record)
                _count(summary, record)
                progress.advance(bar)

        workers = [asyncio.create_task(worker())
                   for _ in range(min(config.concurrency, len(pending)))]
        try:
            await asyncio.gather(*workers)
        finally:
            for w in workers:
                w.cancel()


class RateColumn(ProgressColumn):
    """Samples per second."""

    def render(self, task: ProgressTask) -> Text:
        return Text(f"{task.speed or 0:,.1f}/s")


def _progress(enabled: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
        TaskProgressColumn(), RateColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
        disable=not enabled,
    )


async def _sample(task: Task, cache: ResponseCache | None, policy: RetryPolicy) -> Record:
    proxy = CallProxy(task.backend, cache, policy)
    started = time.perf_counter()
    base = {"key": task.key, "item_id": str(task.item["id"]), "method": task.method.name,
            "model": task.model, "gold": task.method.gold(task.item),
            "meta": {k: task.item[k] for k in META_KEYS if k in task.item}}
    try:
        prediction = await task.method.answer(task.item, proxy)
    except ModelError as exc:
        fields = {"status": "error", "error": exc.to_record()}
    else:
        fields = {"status": "ok", "parsed": prediction.parsed, "parse_ok": prediction.parse_ok,
                  "retrieved": prediction.retrieved, **prediction.extra}
    return Record(**base, **fields, **_accounting(proxy), wall_s=time.perf_counter() - started,
                  finished_at=time.time())


def _accounting(proxy: CallProxy) -> dict[str, Any]:
    responses = proxy.responses
    return {
        "requests": [_storable(r) for r in proxy.requests],
        "responses": [r.text for r in responses],
        "raw": [r.raw for r in responses],
        "usage": {"prompt_tokens": sum(r.usage.prompt_tokens for r in responses),
                  "completion_tokens": sum(r.usage.completion_tokens for r in responses)},
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


def _count(summary: RunSummary, record: Record) -> None:
    if record.status == "ok":
        summary.ok += 1
        summary.unparsed += not record.parse_ok
    else:
        summary.errors += 1
    summary.model_calls += record.n_calls
    summary.cache_hits += record.cache_hits


def _as_dict(summary: RunSummary) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(summary).items()}
