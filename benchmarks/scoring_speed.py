"""Scoring speed: 100,000 synthetic records (mixed tasks, methods, levels), no BERTScore.

Target: under 10 s. If bert-score is installed, also times BERTScore on 2,000 pairs.
Run: .venv/bin/python benchmarks/scoring_speed.py [n_records]
"""

from __future__ import annotations

import random
import sys
import time

from nutrireason.runs.records import Record
from nutrireason.schema import get_benchmark
from nutrireason.scoring import metrics as M
from nutrireason.scoring.score import score_records

TAGS = list(get_benchmark("ngqa").labels)

TASKS = ("binary", "multi_label", "text_generation")
LEVELS = ("sparse", "standard", "complex")
METHODS = ("plain", "cot-zero", "tog", "oracle")
CONDITIONS = ("diabetes", "hypertension", "obesity", "high_cholesterol", "kidney")
DIETS = ("keto", "vegan", "low_salt")


def sentence(rng: random.Random, tags: list[str]) -> str:
    verdict = rng.choice(["Yes", "No"])
    parts = ", ".join(f"{t.split('_', 1)[0]} in {t.split('_', 1)[1]}" for t in tags)
    return f"{verdict}, because the food is {parts}."


def answer(rng: random.Random, task: str) -> object:
    tags = rng.sample(TAGS, rng.randint(1, 3))
    if task == "binary":
        return rng.choice(["Yes", "No"])
    return tags if task == "multi_label" else sentence(rng, tags)


def synthetic(n: int, seed: int = 0) -> list[Record]:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        task, level = TASKS[i % 3], LEVELS[(i // 3) % 3]
        method = METHODS[(i // 9) % 4]
        signal = [["food", "belongs to", t] for t in rng.sample(TAGS, 2)]
        meta = {"task": task, "level": level, "signal": signal,
                "conditions": rng.sample(CONDITIONS, rng.randint(0, 2)),
                "diets": rng.sample(DIETS, rng.randint(0, 1))}
        error = rng.random() < 0.02
        ok = rng.random() > 0.05
        records.append(Record(
            key=f"{i}::{method}::m", item_id=str(i), method=method, model="scripted/sample",
            status="error" if error else "ok", parsed=None if error else answer(rng, task),
            parse_ok=not error and ok, gold=answer(rng, task), meta=meta,
            retrieved=None if error else signal[: rng.randint(0, 2)] + [["x", "y", "z"]],
            usage={"prompt_tokens": 300, "completion_tokens": 10}, n_calls=1, latency_s=0.5))
    return records


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    records = synthetic(n)
    started = time.perf_counter()
    scores = score_records(records, run="synthetic", bootstrap=1000, seed=0)
    seconds = time.perf_counter() - started
    print(f"scored {n:,} records ({len(scores['groups'])} groups, "
          f"{len(scores['breakdowns']['condition'])} condition and "
          f"{len(scores['breakdowns']['diet'])} diet breakdowns, 1,000 bootstrap resamples) "
          f"in {seconds:.2f} s = {n / seconds:,.0f} records/s")
    try:
        import bert_score  # noqa: F401
    except ImportError:
        print("bert-score not installed: BERTScore not timed")
        return
    rng = random.Random(1)
    pairs = [(answer(rng, "text_generation"), answer(rng, "text_generation"))
             for _ in range(2000)]
    started = time.perf_counter()
    from nutrireason.sources.bundles import require

    model_path = require("minilm") / "model"  # the caller resolves the encoder, not scoring
    M.bertscore_f1([p for p, _ in pairs], [g for _, g in pairs], model_path)
    seconds = time.perf_counter() - started
    print(f"BERTScore on {len(pairs):,} pairs in {seconds:.2f} s = {len(pairs) / seconds:,.0f} "
          "pairs/s")


if __name__ == "__main__":
    main()
