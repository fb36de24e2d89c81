"""Run-engine benchmarks with the scripted backend; prints measured figures and ratios.

(a) harness overhead: zero-latency backend, samples per second end to end (target > 2,000/s);
(b) 200 ms simulated latency at concurrency 64: throughput vs the ideal 320/s (target >= 90 %);
(c) a fully cached re-run (new run directory, same cache) vs the first run (target >= 50x).
    The first run uses 200 ms latency at concurrency 8, FAM-Bench's API setting (Appendix J).
(d) 512 in flight over 4 loopback OpenAI-compatible endpoints (one model, real HTTP) at 200 ms
    latency: throughput vs the ideal 2,560/s (target >= 90 %), and vs the bare openai client's
    own ceiling on the same servers (on 2 cores the client costs about 3.5 ms of CPU a request,
    so no single-process caller reaches the ideal there);
(e) `merge` of 8 shards of 50,000 records each (target < 10 s).

    python benchmarks/run_engine.py [--samples 20000] [--only d,e]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from nutrireason.models.retry import RetryPolicy
from nutrireason.runs import RunConfig, run
from nutrireason.runs.merge import merge_runs
from nutrireason.runs.records import record_key


def items(folder: Path, n: int) -> Path:
    path = folder / f"items_{n}.jsonl"
    with open(path, "w") as handle:
        for i in range(n):
            handle.write(json.dumps({"id": f"q{i}", "prompt": f"Is food {i} right for user {i}?",
                                     "gold": "No"}) + "\n")
    return path


def timed(folder: Path, name: str, bench: Path, model: str, concurrency: int, cache: bool,
          progress: bool = False, cache_name: str = "cache") -> tuple[float, int]:
    config = RunConfig(benchmark=bench, out=folder / name, models=[model],
                       concurrency=concurrency, cache=cache,
                       cache_path=folder / f"{cache_name}.sqlite",
                       progress=progress, retry=RetryPolicy(max_attempts=1))
    started = time.perf_counter()
    summary = run(config)
    elapsed = time.perf_counter() - started
    assert summary.ok == summary.planned, summary
    return elapsed, summary.planned


def endpoints_run(folder: Path, in_flight: int = 512, servers: int = 4,
                  latency: float = 0.2, rounds: int = 8) -> None:
    """(d): one model behind ``servers`` loopback endpoints, ``in_flight`` requests at once.

    The servers run in their own process (benchmarks/loopback_server.py). Beside the ratio to
    the ideal, the same requests sent by the bare ``openai`` client (no engine) give the
    client's own ceiling on this machine, and the engine's share of that ceiling."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from loopback_server import LoopbackServers

    loopback = LoopbackServers(servers, latency=latency).start()
    try:
        n = in_flight * rounds
        bare = bare_client_rate(loopback.urls, in_flight, n)
        before = sum(loopback.requests())
        bench = items(folder, n)
        model = f"openai-compatible/bench@{','.join(loopback.urls)}"
        seconds, n = timed(folder, "d", bench, model, in_flight, cache=False)
        counts = loopback.requests()
    finally:
        loopback.close()
    ideal, rate = in_flight / latency, n / seconds
    print(f"(d) {in_flight} in flight over {servers} loopback endpoints, {latency * 1000:.0f} ms "
          f"latency: {rate:,.0f} samples/s; ratio to ideal {ideal:,.0f}/s: {rate / ideal:.3f} "
          f"(target >= 0.90); requests per endpoint (both parts): {counts}, "
          f"{sum(counts) - before} by the engine")
    print(f"    the bare openai client, same servers and in-flight count: {bare:,.0f} requests/s "
          f"(the client's ceiling on this machine); engine / bare client: {rate / bare:.3f}")


def bare_client_rate(urls: list[str], in_flight: int, n: int) -> float:
    """Requests per second the ``openai`` client alone sustains against ``urls``."""
    import asyncio

    import openai

    async def send() -> float:
        clients = [openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=0)
                   for url in urls]
        gate = asyncio.Semaphore(in_flight)

        async def one(i: int) -> None:
            async with gate:
                await clients[i % len(clients)].chat.completions.create(
                    model="bench", messages=[{"role": "user", "content": f"question {i}"}])

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        rate = n / (time.perf_counter() - started)
        for client in clients:
            await client.close()
        return rate

    return asyncio.run(send())


def shard_folders(folder: Path, shards: int = 8, per_shard: int = 50_000) -> list[Path]:
    """``shards`` finished shard folders of ``per_shard`` realistic records each."""
    template = {"method": "prompt", "model": "scripted/echo", "status": "ok", "parsed": "No",
                "parse_ok": True, "gold": "No", "responses": ["No"], "raw": [None],
                "requests": [{"messages": [{"role": "user", "content": "Is food right?"}],
                              "settings": {"temperature": 0.0, "max_tokens": 512}}],
                "usage": {"prompt_tokens": 40, "completion_tokens": 1}, "latency_s": 0.2,
                "wall_s": 0.2, "n_calls": 1, "cache_hits": 0, "attempts": 1,
                "meta": {"task": "binary", "level": "standard"}, "extra": {},
                "settings": {"temperature": 0.0, "max_tokens": 512}}
    total = shards * per_shard
    manifest = {"benchmark": "items.jsonl", "benchmark_sha256": "0" * 64,
                "benchmark_items": total, "methods": [{"name": "prompt"}],
                "model_specs": ["scripted/echo"], "settings": {"temperature": 0.0},
                "offset": 0, "limit": None, "status": "complete"}
    paths = []
    for k in range(shards):
        path = folder / f"shard{k + 1}"
        path.mkdir()
        with open(path / "records.jsonl", "w") as handle:
            for i in range(k, total, shards):
                item = f"q{i}"
                record = template | {"key": record_key(item, "prompt", "scripted/echo"),
                                     "item_id": item, "finished_at": 1.0 * i}
                handle.write(json.dumps(record) + "\n")
        counts = {"planned": per_shard, "ok": per_shard, "error": 0, "missing": 0}
        (path / "manifest.json").write_text(json.dumps(
            manifest | {"shard": {"k": k + 1, "n": shards}, "counts": counts}))
        paths.append(path)
    return paths


def merge_timing(folder: Path) -> None:
    """(e): merging 8 shards of 50,000 records."""
    paths = shard_folders(folder)
    started = time.perf_counter()
    report = merge_runs(paths, folder / "merged")
    seconds = time.perf_counter() - started
    print(f"(e) merge of {len(paths)} shards, {report.ok:,} records: {seconds:.2f} s "
          f"(target < 10 s; ratio to target {seconds / 10:.2f}); status {report.status}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20000)
    parser.add_argument("--only", default="a,b,c,d,e", help="comma list of parts to run")
    args = parser.parse_args()
    parts = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if "d" in parts:
            endpoints_run(folder)
        if "e" in parts:
            merge_timing(folder)
        if not parts & {"a", "b", "c"}:
            return
        bench = items(folder, args.samples)
        seconds, n = timed(folder, "a", bench, "scripted/echo", 64, cache=False)
        print(f"(a) zero latency, no cache: {n / seconds:,.0f} samples/s "
              f"({n} in {seconds:.2f} s); ratio to 2,000/s target: {n / seconds / 2000:.2f}")
        seconds, n = timed(folder, "a_cache", bench, "scripted/echo", 64, cache=True)
        print(f"    zero latency, cache writes on: {n / seconds:,.0f} samples/s")
        seconds, n = timed(folder, "a_bar", bench, "scripted/echo", 64, cache=False,
                           progress=True)
        print(f"    zero latency, progress bar on: {n / seconds:,.0f} samples/s")

        bench_b = items(folder, 64 * 20)
        seconds, n = timed(folder, "b", bench_b, "scripted/echo?latency=0.2", 64, cache=False)
        rate = n / seconds
        print(f"(b) 200 ms latency, concurrency 64: {rate:,.1f} samples/s; "
              f"ratio to ideal 320/s: {rate / 320:.3f} (target >= 0.90)")

        bench_c = items(folder, 400)
        first, n = timed(folder, "c1", bench_c, "scripted/echo?latency=0.2", 8, cache=True,
                         cache_name="cache_c")
        again, _ = timed(folder, "c2", bench_c, "scripted/echo?latency=0.2", 8, cache=True,
                         cache_name="cache_c")
        print(f"(c) first run {first:.2f} s ({n / first:,.1f}/s), fully cached re-run "
              f"{again:.3f} s ({n / again:,.0f}/s); ratio {first / again:.1f}x (target >= 50x)")


if __name__ == "__main__":
    main()
