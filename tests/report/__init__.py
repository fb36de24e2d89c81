"""Report tests: small metrics.json / records.jsonl fixtures in the scorer's schema, with the
scores.jsonl that ``score`` writes for those records (the report reads every outcome there)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nutrireason.schema import SCORES_FILE, Record, record_key
from nutrireason.scoring.score import score_records

LEVELS = ("sparse", "standard", "complex")
METHODS = ("plain", "tog_kg")  # "_" exercises LaTeX escaping
METRIC_NAMES = {
    "binary": ("accuracy", "precision", "recall", "f1", "unparseable_rate"),
    "multi_label": ("accuracy", "precision", "recall", "f1", "subset_accuracy",
                    "unparseable_rate"),
    "text_generation": ("rouge1", "rouge2", "rougeL", "bleu", "unparseable_rate"),
}
XSS = "<script>alert(1)</script>"


def stat(value: float) -> dict[str, float]:
    return {"value": value, "low": max(0.0, value - 0.05), "high": min(1.0, value + 0.05)}


def write_sample_scores(run_dir: Path, records: list[Record]) -> Path:
    """The run's scores.jsonl, as ``nutrireason score`` writes it for ``records``."""
    samples = score_records(records, bootstrap=0).samples
    path = run_dir / SCORES_FILE
    path.write_text("".join(s.model_dump_json() + "\n" for s in samples), encoding="utf-8")
    return path


def metric_value(level: str, method: str, task: str, name: str) -> float:
    """A distinct, predictable value per cell: e.g. 0.6123 for (standard, tog_kg, binary, f1)."""
    base = 0.3 + 0.1 * LEVELS.index(level) + 0.2 * METHODS.index(method)
    return round(base + 0.01 * list(METRIC_NAMES).index(task)
                 + 0.0001 * (METRIC_NAMES[task].index(name) + 1), 4)


def _answer(task: str, correct: bool):
    if task == "binary":
        return ("Yes", "Yes") if correct else ("No", "Yes")
    if task == "multi_label":
        return (["b", "a"], ["a", "b"]) if correct else (["a"], ["a", "b"])
    return ("No, it is high in sodium.",) * 2 if correct else ("Yes.", "No, high in sodium.")


def make_record(level: str, method: str, task: str, index: int, *, correct: bool,
                status: str = "ok", question: str | None = None) -> Record:
    item_id = f"ngqa-{level}-{index:05d}-{task}"
    parsed, gold = _answer(task, correct)
    question = question or f"Is food {index} healthy for the user ({task}, {level})?"
    graph = f"{question} Below are the extra information: (food {index} has sodium)"
    return Record(
        key=record_key(item_id, method, "scripted/test"), item_id=item_id, method=method,
        model="scripted/test", status=status, parsed=None if status == "error" else parsed,
        parse_ok=status == "ok", gold=gold,
        requests=[{"messages": [{"role": "system", "content": "You are a nutrition assistant."},
                                {"role": "user", "content": graph}], "settings": {}}],
        responses=[] if status == "error" else [f"raw answer {index}: {parsed}"],
        retrieved=[["food", "has", "sodium"]] if method == "tog_kg" else None,
        usage={"prompt_tokens": 100, "completion_tokens": 5}, latency_s=0.5, n_calls=1,
        error={"type": "Timeout", "message": "model timed out"} if status == "error" else None,
        meta={"level": level, "task": task, "food": f"food {index}", "question": question,
              "signal": [["food", "has", "sodium"]] if index == 0 else [], "conditions": [],
              "diets": []},
    )


def write_run(run_dir: Path, level: str, *, bertscore: bool = False, xss: bool = False) -> Path:
    """One run per level: both methods x all three tasks, two records each (one correct for
    plain, both for tog_kg; the last plain text-generation record is an error)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    records, groups = [], []
    for method in METHODS:
        for task in METRIC_NAMES:
            for index in range(2):
                correct = method == "tog_kg" or index == 0
                status = "error" if (method, task, index) == ("plain", "text_generation", 1) \
                    else "ok"
                question = XSS if xss and index == 0 and method == "plain" \
                    and task == "binary" else None
                records.append(make_record(level, method, task, index, correct=correct,
                                           status=status, question=question))
            names = METRIC_NAMES[task] + (("bertscore_f1",) if bertscore
                                          and task == "text_generation" else ())
            groups.append({
                "method": method, "model": "scripted/test", "task": task, "level": level,
                "n": 2, "errors": 0, "error_rate": 0.0,
                "metrics": {n: stat(metric_value(level, method, task, n))
                            if n in METRIC_NAMES[task] else stat(0.8)
                            for n in names},
                "efficiency": {"calls_per_sample": 1.0 + 2 * METHODS.index(method),
                               "prompt_tokens": 100.0 * (1 + METHODS.index(method)),
                               "completion_tokens": 5.0, "latency_s": 0.5},
                "retrieval": {"precision": stat(0.5), "recall": stat(0.75), "f1": stat(0.6)}
                if method == "tog_kg" else None,
            })
    (run_dir / "records.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    write_sample_scores(run_dir, records)
    (run_dir / "metrics.json").write_text(json.dumps({
        "run": run_dir.name, "records": len(records),
        "bertscore_model": "sentence-transformers/all-MiniLM-L6-v2" if bertscore else None,
        "groups": groups, "breakdowns": {"condition": [], "diet": []},
    }), encoding="utf-8")
    (run_dir / "manifest.json").write_text("{}", encoding="utf-8")
    return run_dir


def write_runs(root: Path, **kwargs) -> list[Path]:
    return [write_run(root / f"run-{level}", level, **kwargs) for level in LEVELS]


def page_data(page: Path) -> dict[str, Any]:
    """The samples' JSON embedded in a report page, as written."""
    html = page.read_text(encoding="utf-8")
    text = html.split('<script type="application/json" id="sample-data">', 1)[1]
    return json.loads(text.split("</script>", 1)[0])


def page_samples(page: Path) -> list[dict[str, Any]]:
    """Every sample of a report page by field name, with list indexes and prompt indexes
    resolved; ``calls`` as {"system", "request", "response" (the final answer), "reasoning",
    "finish_reason"} per call."""
    data = page_data(page)
    lists, texts = data["lists"], data["texts"]
    out = []
    for row in data["samples"]:
        sample = dict(zip(data["fields"], row, strict=True))
        for name, values in lists.items():
            sample[name] = values[sample[name]]
        sample["calls"] = [{"system": texts[s] if s >= 0 else None,
                            "request": texts[u] if u >= 0 else None, "response": r,
                            "reasoning": texts[t] if t >= 0 else None, "finish_reason": f}
                           for s, u, r, t, f in sample["calls"]]
        out.append(sample)
    return out
