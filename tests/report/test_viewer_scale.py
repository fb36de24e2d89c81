"""The HTML report's sample browser at scale: every sample embedded once as JSON and rendered a
page at a time, each call of a multi-call sample shown, record text unable to break the page,
and Table 3 with n and intervals; the efficiency plot with long model names."""

from __future__ import annotations

import csv
import io
import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from nutrireason.display.figures import wrap_label
from nutrireason.ngqa.report import efficiency_figure
from nutrireason.report import build_report
from nutrireason.report.html import script_json
from nutrireason.schema import Record, SampleScore, record_key
from tests.report import page_samples, write_runs
from tests.report.test_html import CHROMIUM, _playwright

SCALE = 100_000
MODELS = ("openai-compatible/Qwen2.5-72B-Instruct-GPTQ-Int4", "llamacpp/SmolLM2-360M-Instruct-Q8_0")
METHODS = ("plain", "tog")
LEVELS = ("sparse", "standard", "complex")
TASKS = ("binary", "multi_label", "text_generation")
NEEDLE = "Quokkaberry"  # the one question with this word
NEEDLE_AT = 73_219
SYSTEM = "You are a nutrition assistant. You judge whether a food suits a user's health."
BREAKER = "</script><script>window.broken = 1;</script><!-- </SCRIPT >"
LONG_NAMES = MODELS


# --- generated runs, written as the runner and the scorer write them ---------------------------


def _answer(task: str, right: bool) -> tuple[Any, Any]:
    if task == "binary":
        return ("Yes" if right else "No"), "Yes"
    if task == "multi_label":
        return (["high sodium"] if right else []), ["high sodium"]
    return "It is high in sodium.", "No, it is high in sodium."


def _sample(index: int, model: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One record (as records.jsonl holds it) and its score (as scores.jsonl holds it)."""
    method = METHODS[index % 2]
    level = LEVELS[index // 2 % 3]
    task = TASKS[index // 6 % 3]
    right = index % 7 != 0
    error = index % 997 == 0
    word = NEEDLE if index == NEEDLE_AT else f"food{index}"
    question = f"Is {word} healthy for the user?"
    parsed, gold = _answer(task, right)
    item_id = f"ngqa-{level}-{index:06d}-{task}"
    key = record_key(item_id, method, model)
    record = {
        "key": key, "item_id": item_id, "method": method, "model": model,
        "status": "error" if error else "ok", "parsed": None if error else parsed,
        "parse_ok": not error, "gold": gold,
        "requests": [{"messages": [{"role": "system", "content": SYSTEM},
                                   {"role": "user", "content": f"{question} Graph: ({word}, "
                                                               "has, sodium)"}]}],
        "responses": [] if error else [f"{parsed}"], "usage": {"prompt_tokens": 40},
        "latency_s": 0.1, "n_calls": 1, "cache_hits": 0,
        "error": {"message": "timed out"} if error else None,
        "meta": {"level": level, "task": task, "question": question},
    }
    correct = None if error or task == "text_generation" else right
    score = {"key": key, "item_id": item_id, "method": method, "model": model, "task": task,
             "level": level, "status": record["status"], "parse_ok": not error,
             "correct": correct,
             "values": {"rougeL": 0.5} if task == "text_generation" and not error else {}}
    return record, score


def _groups(scores: list[dict[str, Any]], model: str) -> list[dict[str, Any]]:
    """metrics.json groups for the scores (made-up values with intervals)."""
    counts: dict[tuple[str, str, str], int] = {}
    for score in scores:
        if score["status"] == "ok":
            name = (score["method"], score["task"], score["level"])
            counts[name] = counts.get(name, 0) + 1
    names = {"binary": ("accuracy", "precision", "recall", "f1"),
             "multi_label": ("accuracy", "precision", "recall", "f1"),
             "text_generation": ("rouge1", "rouge2", "rougeL", "bleu")}
    return [{"method": method, "model": model, "task": task, "level": level, "n": n,
             "errors": 0, "error_rate": 0.0,
             "metrics": {m: {"value": 0.8, "low": 0.78, "high": 0.82} for m in names[task]},
             "efficiency": {"calls_per_sample": 1.0, "prompt_tokens": 40.0,
                            "completion_tokens": 2.0, "latency_s": 0.1}, "retrieval": None}
            for (method, task, level), n in counts.items()]


def _write_run(run_dir: Path, indexes: range, model: str) -> Path:
    run_dir.mkdir(parents=True)
    records, scores = zip(*(_sample(i, model) for i in indexes), strict=True)
    Record.model_validate(records[0])  # the real formats
    SampleScore.model_validate(scores[0])
    (run_dir / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run_dir / "scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores))
    (run_dir / "metrics.json").write_text(json.dumps({
        "run": run_dir.name, "records": len(records), "bertscore_model": None,
        "groups": _groups(list(scores), model), "breakdowns": {}}))
    return run_dir


@pytest.fixture(scope="module")
def big_report(tmp_path_factory) -> tuple[Path, float]:
    """A report over 100,000 samples in two runs (one per model); and its build time."""
    root = tmp_path_factory.mktemp("scale")
    half = SCALE // 2
    runs = [_write_run(root / "run-a", range(half), MODELS[0]),
            _write_run(root / "run-b", range(half, SCALE), MODELS[1])]
    started = time.perf_counter()
    page = build_report(runs, root / "out")
    return page, time.perf_counter() - started


def test_every_sample_is_in_the_page_once(big_report):
    page, seconds = big_report
    samples = page_samples(page)
    assert len(samples) == SCALE
    assert len({s["item"] + s["method"] + s["model"] for s in samples}) == SCALE
    (found,) = [s for s in samples if NEEDLE in s["question"]]
    assert found["item"] == (f"ngqa-{LEVELS[NEEDLE_AT // 2 % 3]}-{NEEDLE_AT:06d}-"
                             f"{TASKS[NEEDLE_AT // 6 % 3]}")
    assert page.read_text().count(SYSTEM) == 1  # the system prompt is stored once
    print(f"\n100,000 samples: report.html {page.stat().st_size / 1e6:.1f} MB, "
          f"built in {seconds:.1f} s")


def _expect(locator: Any, text: str) -> None:
    """Wait for ``locator`` to read ``text`` (the page's CSP forbids wait_for_function)."""
    from playwright.sync_api import expect

    expect(locator).to_have_text(text, timeout=10_000)


def test_the_browser_pages_and_searches_100000_samples(big_report):
    sync_playwright = _playwright()
    page, _ = big_report
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": 1400, "height": 900})
            problems: list[str] = []
            tab.on("pageerror", lambda e: problems.append(str(e)))
            started = time.perf_counter()
            tab.goto(page.resolve().as_uri(), timeout=60_000)
            counter = tab.locator("#sample-count")
            assert counter.inner_text() == f"{SCALE} of {SCALE} samples"
            opened = time.perf_counter() - started
            rendered = tab.evaluate(
                "performance.getEntriesByName('samples-rendered')[0].startTime")
            rows = tab.locator("#samples tbody tr")
            assert rows.count() == 50
            assert tab.locator("#page-info").inner_text().startswith("page 1 of 2000")

            tab.click("#page-last")
            assert tab.locator("#page-info").inner_text() == \
                "page 2000 of 2000 (samples 99951-100000)"
            assert tab.locator("#page-next").is_disabled()
            assert rows.last.get_attribute("data-index") == str(SCALE - 1)
            tab.click("#page-prev")
            assert tab.locator("#page-info").inner_text().startswith("page 1999 of 2000")

            tab.fill("#filter-text", NEEDLE.upper())  # case-insensitive
            _expect(counter, f"1 of {SCALE} samples")  # after the typing pause
            assert rows.count() == 1
            assert NEEDLE in rows.first.inner_text()
            tab.fill("#filter-text", "")
            _expect(counter, f"{SCALE} of {SCALE} samples")
            tab.select_option("#filter-model", MODELS[1])
            tab.select_option("#filter-outcome", "error")
            expected = sum(1 for i in range(SCALE // 2, SCALE) if i % 997 == 0)
            assert counter.inner_text() == f"{expected} of {SCALE} samples"
            assert problems == []
        finally:
            browser.close()
    print(f"\n100,000 samples: {page.stat().st_size / 1e6:.1f} MB; first page of rows "
          f"rendered {rendered / 1000:.2f} s after navigation start (goto to count shown: "
          f"{opened:.2f} s)")


# --- a small report: a ToG-like sample with three calls, a response that tries to break out ---


def _tog_record() -> Record:
    item_id = "ngqa-complex-00007-binary"
    prompts = ["Choose the relations to keep: (food, has, sodium) ...",
               "Are these paths enough to answer? ...",
               "Is food 7 healthy for the user? Below are the extra information: ..."]
    return Record(
        key=record_key(item_id, "tog", "scripted/test"), item_id=item_id, method="tog",
        model="scripted/test", status="ok", parsed="No", parse_ok=True, gold="No",
        requests=[{"messages": [{"role": "system", "content": SYSTEM},
                                {"role": "user", "content": text}]} for text in prompts],
        responses=["1. (food, has, sodium) 1.0", "Yes", f"No {BREAKER}"],
        n_calls=2, cache_hits=1,
        meta={"level": "complex", "task": "binary", "question": "Is food 7 healthy?"},
        extra={"tog_calls": 3})


@pytest.fixture(scope="module")
def small_report(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("calls")
    runs = write_runs(root / "runs")
    record = _tog_record()
    score = SampleScore(key=record.key, item_id=record.item_id, method="tog",
                        model="scripted/test", task="binary", level="complex", status="ok",
                        parse_ok=True, correct=True)
    with (runs[2] / "records.jsonl").open("a") as handle:
        handle.write(record.model_dump_json() + "\n")
    with (runs[2] / "scores.jsonl").open("a") as handle:
        handle.write(score.model_dump_json() + "\n")
    return build_report(runs, root / "out")


def test_script_json_cannot_close_the_element():
    text = script_json({"a": BREAKER, "b": "\u2028 & <b>"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"a": BREAKER, "b": "\u2028 & <b>"}


def test_the_page_data_holds_every_call(small_report):
    html = small_report.read_text()
    assert BREAKER not in html and "window.broken" in html  # escaped, still there as text
    assert html.lower().count("</script>") == 2  # the data block's end and the script's
    (tog,) = [s for s in page_samples(small_report) if s["method"] == "tog"]
    assert [call["response"] for call in tog["calls"]][-1] == f"No {BREAKER}"
    assert [call["system"] for call in tog["calls"]] == [SYSTEM] * 3
    assert tog["calls"][1]["request"] == "Are these paths enough to answer? ..."
    assert tog["cache_hits"] == 1


def test_the_browser_shows_each_call_and_survives_script_text(small_report):
    sync_playwright = _playwright()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page()
            problems: list[str] = []
            tab.on("pageerror", lambda e: problems.append(str(e)))
            tab.goto(small_report.resolve().as_uri())
            assert tab.locator("#sample-count").inner_text() == "37 of 37 samples"
            tab.select_option("#filter-method", "tog")
            assert tab.locator("#sample-count").inner_text() == "1 of 37 samples"
            row = tab.locator("#samples tbody tr").first
            assert "cache hit" in row.inner_text() and "3 calls" in row.inner_text()
            row.locator("button.open").click()
            detail = tab.locator("#samples tr.detail")
            headings = detail.locator("h4").all_inner_texts()
            assert headings == ["call 1 of 3", "call 2 of 3", "call 3 of 3"]
            assert "1 of 3 calls were answered from the response cache" in detail.inner_text()
            responses = detail.locator("pre").all_inner_texts()
            assert f"No {BREAKER}" in responses  # shown as text
            assert tab.evaluate("window.broken") is None
            assert tab.locator("script").count() == 2
            row.locator("button.open").click()
            assert detail.count() == 0
            assert problems == []
        finally:
            browser.close()


def test_table3_shows_n_and_intervals(small_report):
    out = small_report.parent
    lines = (out / "table3.md").read_text().splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[2:4] == ["Binary n", "Binary Accuracy"]
    first = [c.strip() for c in lines[2].strip("|").split("|")]
    assert first[2] == "2" and first[3] == "0.3001 [0.250, 0.350]"
    row = next(csv.DictReader(io.StringIO((out / "table3.csv").read_text())))
    assert row["binary_n"] == "2" and float(row["binary_accuracy_low"]) == pytest.approx(0.2501)
    assert float(row["binary_accuracy_high"]) == pytest.approx(0.3501)
    tex = (out / "table3.tex").read_text()
    assert "sparse & plain & 2 & 0.3001 & " in tex and "[" not in tex
    html = small_report.read_text()
    assert '<td class="num">0.3001 <span class="ci">[0.250, 0.350]</span></td>' in html


# --- the efficiency figure with long model names ------------------------------------------------


def _boxes_overlap(a: Any, b: Any) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def test_efficiency_labels_do_not_overlap():
    import pandas as pd

    rows = [{"method": method, "model": model, "calls_per_sample": calls,
             "prompt_tokens": 300.0 * calls, "completion_tokens": 5.0, "latency_s": 0.2 * calls}
            for method, calls in (("plain", 1.0), ("tog", 5.5), ("cot-zero", 1.0))
            for model in LONG_NAMES]
    figure = efficiency_figure(pd.DataFrame(rows))
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    axes = figure.axes
    labels = [t for t in axes[0].get_yticklabels() if t.get_text()]
    assert len(labels) == 6
    assert "Qwen2.5-72B-Instruct-" in labels[0].get_text()  # wrapped, not cut
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i, box in enumerate(boxes):
        for other in boxes[i + 1:]:
            assert not _boxes_overlap(box, other)
        assert box.x0 >= 0 and box.y0 >= 0  # inside the figure
        for ax in axes:
            assert not _boxes_overlap(box, ax.get_window_extent(renderer))
    titles = [ax.title.get_window_extent(renderer) for ax in axes]
    assert not any(_boxes_overlap(a, b) for i, a in enumerate(titles) for b in titles[i + 1:])
    for ax in axes[1:]:  # the labels are shown once, on the left
        assert not any(t.get_visible() and t.get_text() for t in ax.get_yticklabels())


def test_wrap_label_breaks_long_names_at_separators():
    assert wrap_label(MODELS[0]) == "openai-compatible/\nQwen2.5-72B-Instruct-\nGPTQ-Int4"
    assert wrap_label("plain") == "plain"
    assert all(len(line) <= 22 for line in wrap_label("x" * 50).splitlines())


def test_random_text_round_trips_through_the_page_json():
    rng = random.Random(0)
    alphabet = "<>/&'\"\\ \n\t\u2028\u2029scriptSCRIPT!-é€😀"
    texts = ["".join(rng.choice(alphabet) for _ in range(40)) for _ in range(200)]
    encoded = script_json(texts)
    assert "</" not in encoded and "<!--" not in encoded
    assert json.loads(encoded) == texts
