"""`nutrireason run` at scale through the CLI: --gen settings on the wire and on record, model
identity without the URL, several endpoints for one model, shards merged back exactly, and the
CLI conventions (--json, --quiet, --version, progress on stderr)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.schema import read_records
from tests.models.fake_openai import FakeOpenAI


@pytest.fixture
def items(tmp_path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps({"id": f"q{n:03d}", "prompt": f"Say yes {n}",
                                        "answer": "yes"}) + "\n" for n in range(24)))
    return path


def invoke(*args: str):
    return CliRunner().invoke(app, [str(a) for a in args])


def run_args(items: Path, out: Path, *more: str) -> list[str]:
    return ["run", str(items), "--out", str(out), "--no-cache", "--no-progress", *more]


def test_gen_settings_reach_the_wire_and_are_recorded(items, tmp_path):
    with FakeOpenAI() as server:
        result = invoke(*run_args(items, tmp_path / "run", "--limit", "2", "--model",
                                  f"openai-compatible/m@{server.url}", "--gen", "top_p=0.5",
                                  "--gen", "top_k=7", "--gen", "stop=END", "--gen", "seed=3"))
        assert result.exit_code == 0, result.output
        sent = server.requests[-1]
    assert sent["top_p"] == 0.5 and sent["top_k"] == 7 and sent["stop"] == ["END"]
    assert sent["seed"] == 3
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    recorded = manifest["effective_settings"]["openai-compatible/m"]
    assert recorded | {"temperature": 0} == {"temperature": 0, "max_tokens": 512, "top_p": 0.5,
                                             "top_k": 7, "stop": ["END"], "seed": 3}
    for record in read_records(tmp_path / "run" / "records.jsonl"):
        assert record.settings == recorded


def test_a_setting_the_backend_cannot_honour_is_refused_by_name(items, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    result = invoke(*run_args(items, tmp_path / "run", "--model", "openai/gpt-4o-mini",
                              "--gen", "top_k=40"))
    assert result.exit_code == 1
    assert "top_k" in result.output and not (tmp_path / "run").exists()
    unknown = invoke(*run_args(items, tmp_path / "run", "--model", "scripted/yes",
                               "--gen", "bogus=1"))
    assert unknown.exit_code == 1 and "bogus" in unknown.output


def test_the_model_is_its_name_not_its_url_and_resumes_on_another_host(items, tmp_path):
    out = tmp_path / "run"
    with FakeOpenAI() as first:
        assert invoke(*run_args(items, out, "--limit", "3", "--model",
                                f"openai-compatible/m@{first.url}")).exit_code == 0
    with FakeOpenAI() as moved:  # another port: as if the server moved
        result = invoke(*run_args(items, out, "--limit", "5", "--model",
                                  f"openai-compatible/m@{moved.url}"))
        assert result.exit_code == 0, result.output
        assert len(moved.requests) == 2  # only the two new samples
    records = read_records(out / "records.jsonl")
    assert len(records) == 5 and {r.model for r in records} == {"openai-compatible/m"}


def test_one_model_spreads_its_requests_over_its_endpoints(items, tmp_path):
    with FakeOpenAI() as a, FakeOpenAI() as b:
        for server in (a, b):
            server.push(*[("delay", 0.05)] * 24)
        result = invoke(*run_args(items, tmp_path / "run", "--concurrency", "8", "--model",
                                  f"openai-compatible/m@{a.url},{b.url}"))
        assert result.exit_code == 0, result.output
        assert len(a.requests) >= 6 and len(b.requests) >= 6
        assert len(a.requests) + len(b.requests) == 24
    records = read_records(tmp_path / "run" / "records.jsonl")
    assert len(records) == 24 and {r.model for r in records} == {"openai-compatible/m"}


def test_two_specs_for_one_model_are_refused(items, tmp_path):
    result = invoke(*run_args(items, tmp_path / "run", "--model",
                              "openai-compatible/m@http://127.0.0.1:9/v1", "--model",
                              "openai-compatible/m@http://127.0.0.1:8/v1"))
    assert result.exit_code == 1 and "again" in result.output


def test_shards_merged_reproduce_the_unsharded_run(items, tmp_path):
    common = ["--model", "scripted/yes", "--model", "scripted/echo"]
    assert invoke(*run_args(items, tmp_path / "all", *common)).exit_code == 0
    for k in (1, 2, 3):
        result = invoke(*run_args(items, tmp_path / f"s{k}", *common, "--shard", f"{k}/3"))
        assert result.exit_code == 0, result.output
    merged = invoke("merge", tmp_path / "s1", tmp_path / "s2", tmp_path / "s3",
                    "--out", tmp_path / "merged")
    assert merged.exit_code == 0, merged.output
    assert "coverage 100.0%" in merged.output

    def answers(folder):
        return {r.key: (r.parsed, r.responses, r.status)
                for r in read_records(tmp_path / folder / "records.jsonl")}

    assert answers("merged") == answers("all") and len(answers("all")) == 48
    shard_sizes = [len(answers(f"s{k}")) for k in (1, 2, 3)]
    assert sum(shard_sizes) == 48 and all(shard_sizes)
    # a shard folder resumed as another shard is refused
    other = invoke(*run_args(items, tmp_path / "s1", *common, "--shard", "2/3"))
    assert other.exit_code == 1 and "shard" in other.output
    bad = invoke(*run_args(items, tmp_path / "s9", *common, "--shard", "4/3"))
    assert bad.exit_code == 1 and "4/3" in bad.output


def test_json_summary_alone_on_stdout_and_progress_on_stderr(items, tmp_path):
    result = CliRunner().invoke(app, run_args(items, tmp_path / "run", "--limit", "3",
                                              "--model", "scripted/yes", "--json"))
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert summary["ok"] == 3 and summary["status"] == "complete" and summary["exit_code"] == 0
    progress = CliRunner().invoke(app, ["run", str(items), "--out", str(tmp_path / "p"),
                                        "--limit", "2", "--model", "scripted/yes"])
    assert "samples" not in progress.stdout  # the bar went to stderr


def test_quiet_prints_nothing_on_stdout_and_version_prints_the_version(items, tmp_path):
    quiet = CliRunner().invoke(app, ["--quiet", *run_args(items, tmp_path / "run", "--limit",
                                                          "2", "--model", "scripted/yes")])
    assert quiet.exit_code == 0 and quiet.stdout == ""
    version = CliRunner().invoke(app, ["--version"])
    assert version.exit_code == 0 and version.stdout.startswith("nutrireason ")
