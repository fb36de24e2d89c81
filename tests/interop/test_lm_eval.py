"""``export_lm_eval``: the task folder loads in lm-eval, a run sends NutriReason's prompts and
reports what ``nutrireason score`` computes on the same answers."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.interop.conftest import need

need("lm_eval")

from lm_eval import simple_evaluate  # noqa: E402
from lm_eval.api.model import LM  # noqa: E402
from lm_eval.tasks import TaskManager  # noqa: E402
from lm_eval.tasks._yaml_loader import load_yaml  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from nutrireason.cli import app  # noqa: E402
from nutrireason.errors import DataError  # noqa: E402
from nutrireason.interop.lm_eval_export import (  # noqa: E402
    FAM_MODES,
    NGQA_METHODS,
    export_lm_eval,
)
from nutrireason.methods.base import get_method  # noqa: E402
from nutrireason.models.types import ChatRequest, ModelResponse  # noqa: E402
from nutrireason.schema import Record, get_benchmark, record_key  # noqa: E402
from nutrireason.scoring import score_records  # noqa: E402

N = 5
BINARY = ["Yes", "No", "I am not sure", "No", "Yes"]
TEXTGEN = ["Yes, because the food is high in sugar.", "No, it is high in sodium and carb.",
           "Hard to say.", "Yes, because the food is low in calorie, high in protein.",
           "No, because the food is high in saturated fat."]
# RATIONALE: the item's gold rationale ingredients, so that rationale F1 is not trivially 0
DISH = ['{"decision": "recommend", "rationale_ingredients": RATIONALE}',
        '{"decision": "not_recommend", "rationale_ingredients": '
        '[{"condition": "x", "ingredients": ["butter", "sugar"]}]}',
        "I cannot tell.",
        '{"decision": "not_recommend", "rationale_ingredients": ["cheese", "salt"]}',
        '{"decision": "recommend", "rationale_ingredients": '
        '[{"condition": "x", "ingredients": RATIONALE}]}']

# A reasoning model: drafts in the thinking, one answer cut off inside it (unparseable).
BINARY_THINKING = ["<think>I have to answer Yes or No. Yes?</think>\n\nNo",
                   "<think>\nno... wait, low sodium\n</think>\n**Yes**",
                   "<think>The user has diabetes, so it might be no. Let me double-check",
                   "The graph shows high sodium.\n</think>\n\nNo",
                   "<|channel|>analysis<|message|>No?<|end|><|start|>assistant"
                   "<|channel|>final<|message|>Yes<|return|>"]
DISH_THINKING = ['<think>{"decision": "not_recommend"}</think>\n{"decision": "recommend", '
                 '"rationale_ingredients": RATIONALE}',
                 "<think>recommend?</think>\nNot recommended: too much butter and sugar.",
                 '<think>{"decision": "recommend", "rationale_ingredients": ["oats"]}',
                 '```json\n{"decision": "recommend"}\n```\nOn reflection:\n```json\n'
                 '{"decision": "not_recommend", "rationale_ingredients": ["cheese"]}\n```',
                 '<think></think>{"decision": "recommend", "rationale_ingredients": '
                 '[{"condition": "x", "ingredients": RATIONALE}]}']

CASES = [("ngqa", "binary", "complex", "plain", BINARY),
         ("ngqa", "text_generation", "standard", "cot-bag", TEXTGEN),
         ("fam", "fam_dish", "", "fam-cot-ki", DISH),
         ("ngqa", "binary", "standard", "cot-zero", BINARY_THINKING),
         ("fam", "fam_dish", "", "fam-baseline", DISH_THINKING)]


@pytest.fixture(scope="module")
def exported(ngqa_build: Path, fam_build: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lm_eval") / "tasks"
    export_lm_eval(out, {"ngqa": ngqa_build, "fam": fam_build})
    return out


@pytest.fixture(autouse=True)
def datasets_cache(tmp_path_factory, monkeypatch) -> Path:
    """Keep the datasets cache of these runs out of the user's."""
    import datasets.config

    cache = tmp_path_factory.getbasetemp() / "hf_datasets"
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", cache)
    return cache


def task_names() -> list[str]:
    ngqa = get_benchmark("ngqa")
    names = [f"nutrireason_ngqa_{t.name}_{level}_{m}" for t in ngqa.tasks
             for level in ngqa.levels for m in NGQA_METHODS]
    return names + [f"nutrireason_fam_{t.option}_{mode}" for t in get_benchmark("fam").tasks
                    for mode in FAM_MODES]


def test_the_exported_methods_make_one_call(ngqa_build: Path, fam_build: Path) -> None:
    ngqa = first_items(ngqa_build, "ngqa", "binary", "complex")[0]
    dish = first_items(fam_build, "fam", "fam_dish", "")[0]
    for name in [*NGQA_METHODS, *(f"fam-{mode}" for mode in FAM_MODES)]:
        backend = Replier("Yes")
        asyncio.run(get_method(name).answer(dish if name.startswith("fam") else ngqa, backend))
        assert len(backend.requests) == 1, name
    assert not any("tog" in name for name in task_names())


def test_every_task_and_group_loads_in_lm_eval(exported: Path) -> None:
    names = task_names()
    assert len(names) == 3 * 3 * 4 + 2 * 4
    assert "nutrireason_ngqa_binary_complex_plain" in names
    assert "nutrireason_fam_dish_cot-ki" in names
    written = {p.name for p in exported.iterdir()}
    assert written == {f"{n}.yaml" for n in names} | {
        "nutrireason_ngqa.yaml", "nutrireason_fam.yaml", "utils.py", "README.md"}
    for path in exported.glob("*.yaml"):
        config = load_yaml(path)  # lm-eval's loader: resolves every !function in utils.py
        if "task" in config and "group" not in config:
            assert callable(config["process_docs"]) and callable(config["process_results"])
            assert Path(config["dataset_kwargs"]["data_files"]["test"]).is_file()
    manager = TaskManager(include_path=str(exported), include_defaults=False)
    assert set(names) <= set(manager.all_subtasks)
    assert {"nutrireason_ngqa", "nutrireason_fam"} <= set(manager.all_groups)
    utils = (exported / "utils.py").read_text(encoding="utf-8")
    assert "def " not in utils and "nutrireason.interop.lm_eval_export" in utils
    readme = (exported / "README.md").read_text(encoding="utf-8")
    assert "`tog`" in readme


class ScriptedLM(LM):
    """Answers each prompt from a table; an unknown prompt is recorded and answered ""."""

    def __init__(self, table: dict[str, str]) -> None:
        super().__init__()
        self.table = table
        self.seen: list[str] = []

    def generate_until(self, requests: list[Any], disable_tqdm: bool = False) -> list[str]:
        contexts = [request.arguments[0] for request in requests]
        self.seen += contexts
        return [self.table.get(context, "") for context in contexts]

    def loglikelihood(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: list[Any], disable_tqdm: bool = False) -> list[Any]:
        raise NotImplementedError


class Replier:
    """A NutriReason backend: ``reply`` to the first call, "" after; keeps the requests."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=self.reply if len(self.requests) == 1 else "")


def first_items(build: Path, benchmark: str, task: str, level: str) -> list[dict[str, Any]]:
    path = get_benchmark(benchmark).file(build, task, level)
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [json.loads(line) for line in lines[:N]]


def project_side(method_name: str, items: list[dict[str, Any]], replies: list[str]
                 ) -> tuple[dict[str, str], dict[str, float]]:
    """(lm-eval prompt text -> reply, and ``nutrireason score``'s metrics of those replies)."""
    method = get_method(method_name)
    table, records = {}, []
    for item, reply in zip(items, replies, strict=True):
        backend = Replier(reply)
        prediction = asyncio.run(method.answer(item, backend))
        system, user = backend.requests[0].messages
        table[f"{system.text()}\n\n{user.text()}"] = reply
        meta_keys = get_benchmark("fam" if method_name.startswith("fam") else "ngqa").meta_keys
        records.append(Record(
            key=record_key(item["id"], method.name, "m"), item_id=item["id"], method=method.name,
            model="m", status="ok", parsed=prediction.parsed, parse_ok=prediction.parse_ok,
            gold=method.gold(item), retrieved=prediction.retrieved,
            meta={k: item[k] for k in meta_keys if k in item}))
    (group,) = score_records(records, bootstrap=0)["groups"]
    metrics = {k: v["value"] for k, v in group["metrics"].items()}
    metrics |= {f"retrieval_{k}": v["value"] for k, v in (group["retrieval"] or {}).items()}
    return table, metrics


@pytest.mark.parametrize(("benchmark", "task", "level", "method", "replies"), CASES,
                         ids=[f"{c[1]}-{c[3]}" for c in CASES])
def test_a_run_reports_what_nutrireason_scores(exported: Path, ngqa_build: Path,
                                               fam_build: Path, benchmark: str, task: str,
                                               level: str, method: str,
                                               replies: list[str]) -> None:
    build = ngqa_build if benchmark == "ngqa" else fam_build
    items = first_items(build, benchmark, task, level)
    replies = [reply.replace("RATIONALE", json.dumps(item.get("gold", {}).get("rationale", [])))
               for reply, item in zip(replies, items, strict=True)]
    table, expected = project_side(method, items, replies)
    if benchmark == "ngqa":
        name = f"nutrireason_ngqa_{task}_{level}_{method}"
    else:
        name = f"nutrireason_fam_{get_benchmark('fam').task(task).option}_{method[4:]}"
    lm = ScriptedLM(table)
    out = simple_evaluate(model=lm, tasks=[name], limit=N, bootstrap_iters=0,
                          log_samples=False, task_manager=TaskManager(
                              include_path=str(exported), include_defaults=False))
    assert sorted(lm.seen) == sorted(table), "lm-eval sent other prompts than NutriReason's"
    got = {key.split(",")[0]: value for key, value in out["results"][name].items()
           if key.endswith(",none") and "_stderr" not in key}
    assert got.keys() == expected.keys()
    assert got == pytest.approx(expected, nan_ok=True)
    assert expected["unparseable_rate"] == pytest.approx(1 / N)  # one reply of five is not one


def test_the_lm_eval_cli_runs_a_task_with_its_dummy_model(exported: Path, tmp_path: Path,
                                                           datasets_cache: Path) -> None:
    name = "nutrireason_fam_dish_baseline"
    done = subprocess.run(
        [sys.executable, "-m", "lm_eval", "run", "--tasks", name, "--include_path",
         str(exported), "--model", "dummy", "--limit", str(N)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "HF_DATASETS_CACHE": str(datasets_cache)})
    assert done.returncode == 0, done.stderr[-3000:]
    cells = [[c.strip() for c in line.split("|")] for line in done.stdout.splitlines()]
    values = {row[row.index(metric) + 2] for row in cells for metric in ("unparseable_rate",)
              if metric in row}
    assert [float(v) for v in values] == [1.0], done.stdout  # the dummy model says "lol"


def test_a_missing_build_is_named_and_nothing_is_left_behind(ngqa_build: Path,
                                                             tmp_path: Path) -> None:
    missing = tmp_path / "no-fam-build"
    out = tmp_path / "out" / "tasks"
    with pytest.raises(DataError, match="no-fam-build"):
        export_lm_eval(out, {"ngqa": ngqa_build, "fam": missing})
    assert not out.exists()
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_folder_that_is_not_an_export_is_never_replaced(ngqa_build: Path, fam_build: Path,
                                                          tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(DataError, match="already holds files.*an earlier lm-eval export"):
        export_lm_eval(tmp_path, {"ngqa": ngqa_build, "fam": fam_build})
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
    result = CliRunner().invoke(app, ["export", "lm-eval", str(tmp_path), "--ngqa-build",
                                      str(ngqa_build), "--fam-build", str(fam_build),
                                      "--overwrite"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "mine.txt").exists() and (tmp_path / "README.md").is_file()


def test_an_earlier_export_is_replaced_whole(exported: Path, ngqa_build: Path,
                                             fam_build: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks"
    first = export_lm_eval(out, {"ngqa": ngqa_build, "fam": fam_build})
    (out / "stale.yaml").write_text("task: stale\n", encoding="utf-8")
    second = export_lm_eval(out, {"ngqa": ngqa_build, "fam": fam_build})
    assert sorted(first) == sorted(second) == sorted(out.iterdir())
    assert [p.name for p in tmp_path.iterdir()] == ["tasks"]
