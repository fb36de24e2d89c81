"""Clustered scoring, `compare` and `power` on two 100,000-record runs (binary answers, users
asked 1-19 questions as in the NGQA sparse level).

Prints the seconds of each step and, measured in the same run, the ratio of clustered to
independent-sample scoring (the price of the second bootstrap). Target: every step in seconds
(compare and power under 15 s each on 2 cores), scoring with clusters at most 2.5x without.
Run: .venv/bin/python benchmarks/compare_speed.py [n_records]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nutrireason.runs.records import Record
from nutrireason.scoring.compare import compare_runs, power_rows
from nutrireason.scoring.score import score_records, write_scores

LEVELS = ("sparse", "standard", "complex")


def synthetic(n: int, model: str, shift: float, seed: int) -> list[Record]:
    """``n`` binary records over users with a shared per-user effect; ``shift`` on the
    log-odds of being right at the complex level."""
    rng = np.random.default_rng(seed)
    base = np.random.default_rng(0)  # same users, questions and gold for both models
    sizes = base.integers(1, 20, size=n)
    users = np.repeat(np.arange(sizes.size), sizes)[:n]
    effect = base.normal(0, 1, sizes.size)[users]
    levels = base.integers(0, 3, size=n)
    gold = base.random(n) < 0.5
    logit = 0.8 + effect + np.where(levels == 2, shift, 0.0)
    right = rng.random(n) < 1 / (1 + np.exp(-logit))
    answers = np.where(right, gold, ~gold)
    return [Record.model_construct(
        key=f"q{i}::plain::{model}", item_id=f"q{i}", method="plain", model=model,
        status="ok", parsed="Yes" if answers[i] else "No", parse_ok=True,
        gold="Yes" if gold[i] else "No", extra={}, retrieved=None, usage={}, n_calls=1,
        latency_s=0.1, meta={"task": "binary", "level": LEVELS[levels[i]],
                             "user_id": f"u{users[i]}", "conditions": [], "diets": []})
        for i in range(n)]


def timed(label: str, work):  # noqa: ANN001, ANN201 - a tiny local helper
    started = time.perf_counter()
    result = work()
    seconds = time.perf_counter() - started
    print(f"{label}: {seconds:.2f} s")
    return result, seconds


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for name, shift, seed in (("a", 0.0, 1), ("b", 0.15, 2)):
            records = synthetic(n, name, shift, seed)
            _, naive = timed(f"score {n:,} records, independent-sample intervals",
                             lambda r=records: score_records(r, bootstrap=1000, cluster="item"))
            scores, clustered = timed(f"score {n:,} records, clustered by user",
                                      lambda r=records: score_records(r, bootstrap=1000))
            print(f"  clustered / independent scoring time: {clustered / naive:.2f}")
            folder = Path(tmp) / name
            folder.mkdir()
            (folder / "records.jsonl").write_text(
                "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
            write_scores(folder, scores)
            runs.append(folder)
        comparison, _ = timed("compare (read both runs, pair, 2,000 resamples per group)",
                              lambda: compare_runs(runs[0], runs[1]))
        for row in comparison["groups"]:
            print(f"  {row['level']}: A - B {row['difference']:+.4f} "
                  f"[{row['low']:+.4f}, {row['high']:+.4f}], {row['clusters']:,} clusters, "
                  f"p Holm {row['p_holm']:.3g}, {row['verdict']}")
        timed("power from one run", lambda: power_rows([runs[0]], 0.02))


if __name__ == "__main__":
    main()
