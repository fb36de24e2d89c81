"""The run engine with the scripted backend: records, errors, retries, cache, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nutrireason.errors import DataError, NutriReasonError
from nutrireason.models.errors import ModelError
from nutrireason.models.retry import RetryPolicy
from nutrireason.models.scripted import register
from nutrireason.models.types import ChatRequest
from nutrireason.runs import RunConfig, read_records, run
from nutrireason.runs.manifest import write_manifest
from nutrireason.runs.records import RECORDS_FILE

FAST = RetryPolicy(max_attempts=3, base_delay=0.001, max_delay=0.01)


def write_items(path: Path, n: int, **extra) -> Path:
    lines = [json.dumps({"id": f"q{i}", "prompt": f"question {i}", "gold": f"question {i}",
                         **extra}) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


def config(tmp_path: Path, n: int = 20, **overrides) -> RunConfig:
    bench = tmp_path / "items.jsonl"
    if not bench.exists():
        write_items(bench, n)
    options = {"benchmark": bench, "out": tmp_path / "run", "models": ["scripted/echo"],
               "cache_path": tmp_path / "cache.sqlite", "retry": FAST, "progress": False,
               "concurrency": 4}
    return RunConfig(**(options | overrides))


def lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / RECORDS_FILE).read_text().splitlines()]


def test_one_record_per_sample_with_usage_latency_and_prompt(tmp_path):
    summary = run(config(tmp_path, models=["scripted/echo?latency=0.001"]))
    assert (summary.planned, summary.ok, summary.errors, summary.model_calls) == (20, 20, 0, 20)
    records = lines(tmp_path / "run")
    assert len(records) == 20 and len({r["key"] for r in records}) == 20
    first = next(r for r in records if r["item_id"] == "q3")
    assert first["parsed"] == "question 3" == first["gold"] and first["parse_ok"]
    assert first["usage"] == {"prompt_tokens": 2, "completion_tokens": 2, "reasoning_tokens": 0}
    assert first["finish_reasons"] == ["stop"] and first["reasoning"] == [""]
    assert first["latency_s"] >= 0.001 and first["attempts"] == 1 and first["n_calls"] == 1
    assert first["requests"][0]["messages"] == [{"role": "user", "content": "question 3"}]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["summary"]["ok"] == 20
    assert manifest["counts"] == {"planned": 20, "ok": 20, "error": 0, "missing": 0}
    assert len(manifest["benchmark_sha256"]) == 64 and "versions" in manifest


def test_an_error_is_recorded_as_an_error_never_as_an_answer(tmp_path):
    summary = run(config(tmp_path, models=["scripted/echo?error_rate=1"], cache=False))
    assert summary.errors == 20 and summary.ok == 0
    for record in lines(tmp_path / "run"):
        assert record["status"] == "error" and record["parsed"] is None
        assert not record["parse_ok"] and record["responses"] == []
        assert record["error"]["kind"] == "server" and record["attempts"] == 3


def test_retries_then_success_counts_attempts(tmp_path):
    run(config(tmp_path, models=["scripted/echo?fail_first=2"], cache=False))
    assert {r["attempts"] for r in lines(tmp_path / "run")} == {3}
    assert {r["status"] for r in lines(tmp_path / "run")} == {"ok"}


def test_non_retryable_error_is_not_retried(tmp_path):
    register("unauthorised", lambda request: (_ for _ in ()).throw(ModelError("auth", "no")))
    run(config(tmp_path, models=["scripted/unauthorised"], cache=False))
    assert {r["attempts"] for r in lines(tmp_path / "run")} == {1}


def test_second_identical_run_makes_zero_model_calls(tmp_path):
    first = run(config(tmp_path))
    again = run(config(tmp_path, out=tmp_path / "run2"))
    assert first.model_calls == 20 and again.model_calls == 0 and again.cache_hits == 20
    def answers(out):
        return {r["key"]: r["parsed"] for r in lines(out)}

    assert answers(tmp_path / "run2") == answers(tmp_path / "run")
    assert all(r["cache_hits"] == 1 and r["n_calls"] == 0 for r in lines(tmp_path / "run2"))


def test_no_cache_calls_the_model_again(tmp_path):
    run(config(tmp_path))
    again = run(config(tmp_path, out=tmp_path / "run2", cache=False))
    assert again.model_calls == 20


def test_resume_skips_finished_samples(tmp_path):
    run(config(tmp_path, limit=8))
    resumed = run(config(tmp_path, cache=False))
    assert resumed.skipped == 8 and resumed.ok == 12 and resumed.model_calls == 12
    assert len(lines(tmp_path / "run")) == 20


def test_retry_errors_reruns_only_failed_samples_and_keeps_one_line_each(tmp_path):
    broken = {"on": True}

    def flaky(request: ChatRequest) -> str:
        if broken["on"] and request.messages[-1].text().endswith("7"):
            raise ModelError("server", "down")
        return "fine"

    register("flaky", flaky)
    first = run(config(tmp_path, models=["scripted/flaky"], cache=False))
    assert first.errors == 2  # question 7 and question 17
    broken["on"] = False
    plain = run(config(tmp_path, models=["scripted/flaky"], cache=False))
    assert plain.model_calls == 0  # errors are kept unless asked
    retried = run(config(tmp_path, models=["scripted/flaky"], cache=False, retry_errors=True))
    assert retried.model_calls == 2 and retried.ok == 2
    records = lines(tmp_path / "run")
    assert len(records) == 20 and {r["status"] for r in records} == {"ok"}


def test_partial_last_line_from_a_kill_is_repaired(tmp_path):
    run(config(tmp_path, limit=5))
    with open(tmp_path / "run" / RECORDS_FILE, "a") as handle:
        handle.write('{"key": "q9::prompt::scripted/echo", "item_')
    summary = run(config(tmp_path))
    assert summary.skipped == 5 and summary.ok == 15
    assert len(read_records(tmp_path / "run")) == 20 == len(lines(tmp_path / "run"))


def test_a_different_run_in_the_same_directory_is_refused(tmp_path):
    run(config(tmp_path))
    with pytest.raises(NutriReasonError, match="model_specs differs"):
        run(config(tmp_path, models=["scripted/yes"]))


def test_bad_benchmark_file_is_named(tmp_path):
    bench = tmp_path / "items.jsonl"
    bench.write_text('{"id": 1, "prompt": "a"}\n{"prompt": "no id"}\n')
    with pytest.raises(DataError, match=r"items.jsonl.*line 2 has no id"):
        run(config(tmp_path))
    assert not (tmp_path / "run").exists()


def test_image_data_urls_are_stored_as_a_hash(tmp_path):
    bench = tmp_path / "items.jsonl"
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 1000}}
    item = {"id": "img", "messages": [{"role": "user", "content": [
        {"type": "text", "text": "what dish?"}, image]}]}
    bench.write_text(json.dumps(item) + "\n")
    run(config(tmp_path))
    stored = lines(tmp_path / "run")[0]["requests"][0]["messages"][0]["content"][1]
    assert stored["image_url"]["url"].startswith("sha256:")


def test_manifest_never_holds_an_api_key(tmp_path, monkeypatch):
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", "sk-test-SECRET-123")
    path = write_manifest(tmp_path, {"note": "key sk-test-SECRET-123 leaked"})
    assert "SECRET" not in path.read_text()


def test_unknown_model_option_is_a_clear_error(tmp_path):
    with pytest.raises(NutriReasonError, match="unknown option"):
        run(config(tmp_path, models=["scripted/echo?colour=blue"]))
