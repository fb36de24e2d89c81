"""Run-engine benchmarks with the scripted backend; prints measured figures and ratios.

(a) harness overhead: zero-latency backend, samples per second end to end (target > 2,000/s);
(b) 200 ms simulated latency at concurrency 64: throughput vs the ideal 320/s (target >= 90 %);
(c) a fully cached re-run (new run directory, same cache) vs the first run (target >= 50x).
    The first run uses 200 ms latency at concurrency 8, FAM-Bench's API setting (Appendix J).

    python benchmarks/run_engine.py [--samples 20000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from nutrireason.models.retry import RetryPolicy
from nutrireason.runs import RunConfig, run


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
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
