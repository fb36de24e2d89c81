"""The run engine end to end over real HTTP: fake OpenAI-compatible server with faults."""

from __future__ import annotations

import json

import pytest

from nutrireason.errors import NutriReasonError
from nutrireason.models.registry import parse_spec
from nutrireason.models.retry import RetryPolicy
from nutrireason.runs import RunConfig, run
from tests.models.fake_openai import FakeOpenAI
from tests.runs.test_engine import lines, write_items

pytest.importorskip("openai")


def http_config(tmp_path, url, n=12, **overrides) -> RunConfig:
    bench = write_items(tmp_path / "items.jsonl", n)
    options = {"benchmark": bench, "out": tmp_path / "run",
               "models": [f"openai-compatible/fake-model@{url}"], "concurrency": 4,
               "cache_path": tmp_path / "cache.sqlite", "progress": False,
               "retry": RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.2)}
    return RunConfig(**(options | overrides))


def test_faults_are_retried_and_every_sample_finishes(tmp_path):
    with FakeOpenAI() as server:
        server.push(("status", 429, {"Retry-After": "0.05"}), ("status", 500), ("truncated",),
                    ("status", 503), ("no_choices",))
        summary = run(http_config(tmp_path, server.url))
        assert summary.ok == 12 and summary.errors == 0
        assert len(server.requests) == 12 + 5
    records = lines(tmp_path / "run")
    assert sum(r["attempts"] for r in records) == 17
    assert all(r["parsed"] == r["gold"] for r in records)
    assert all(r["usage"]["prompt_tokens"] > 0 and r["latency_s"] > 0 for r in records)
    assert all(r["raw"][0]["object"] == "chat.completion" for r in records)


def test_exhausted_retries_are_errors_not_answers(tmp_path):
    with FakeOpenAI() as server:
        server.push(*[("status", 500)] * 4)
        summary = run(http_config(tmp_path, server.url, n=1, concurrency=1))
    assert summary.errors == 1
    record = lines(tmp_path / "run")[0]
    assert record["status"] == "error" and record["parsed"] is None and record["attempts"] == 4
    assert record["error"]["kind"] == "server" and record["error"]["status"] == 500


def test_temperature_fallback_is_recorded_in_the_manifest(tmp_path):
    with FakeOpenAI() as server:
        server.reject_param("temperature")
        summary = run(http_config(tmp_path, server.url, n=3, concurrency=1))
        assert summary.ok == 3
        assert all("temperature" not in body for body in server.requests[1:])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    (backend,) = manifest["models"].values()
    assert backend["dropped_params"] == ["temperature"]


def test_a_key_in_the_provider_string_is_refused():
    with pytest.raises(NutriReasonError, match="secret"):
        parse_spec("openai/gpt-4o-mini?api_key=sk-abc")
