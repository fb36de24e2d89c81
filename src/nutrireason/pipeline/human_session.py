"""``human serve``: a seeded sample of held-out items, the run engine with the ``human`` method
and a ``human/<participant>`` model, and the web page the participant answers in, in one event
loop. The answers are run records in ``--out`` (resumable like any run: start the same command
again), scored by ``score`` and shown by ``report`` beside the models."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.options import HOST, PORT, REQUIRED, TOKEN, setting
from nutrireason.paths import builds_dir
from nutrireason.pipeline.review_commands import check_host
from nutrireason.schema import answer_kind, benchmark_names, get_benchmark
from nutrireason.storage import write_jsonl_atomic

ITEMS = "items.jsonl"


def human_tasks() -> dict[str, tuple[str, str]]:
    """The tasks a person can answer: ``--task`` value -> (benchmark, the task's name), from
    the registered specs (``TaskSpec.human``)."""
    return {task.human: (name, task.name) for name in benchmark_names()
            for task in get_benchmark(name).tasks if task.human}


def split_file(task: str, benchmark_dir: Path | None, level: str = "") -> Path:
    """The item file of a human-baseline ``task`` (``level``: the benchmark's default level
    when empty)."""
    tasks = human_tasks()
    if task not in tasks:
        raise DataError(None, "unknown task", field="--task", value=task,
                        expected=" | ".join(tasks))
    benchmark, name = tasks[task]
    spec = get_benchmark(benchmark)
    root = benchmark_dir or builds_dir() / spec.build_dir
    path = spec.file(root, name, level or spec.default_level)
    if not path.is_file():
        raise DataError(path, "benchmark split not found", expected=f"a `{benchmark} build`")
    return path


def sample_items(path: Path, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` items drawn with ``seed`` (all when fewer), in the split's own order."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if n < 1:
        raise DataError(None, "at least one item", field="--n", value=n)
    chosen = sorted(random.Random(seed).sample(range(len(rows)), min(n, len(rows))))
    return [rows[i] for i in chosen]


def prepare_items(out: Path, items: list[dict[str, Any]]) -> Path:
    """``out/items.jsonl`` (the run's benchmark file); an existing one must hold the same
    items (a resumed session answers the same sample)."""
    path = out / ITEMS
    if path.is_file():
        existing = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                    if line]
        if [r.get("id") for r in existing] != [r.get("id") for r in items]:
            raise DataError(path, "this folder holds another sample", field="--n/--seed",
                            expected="the same --task, --n and --seed, or a new --out")
        return path
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl_atomic(path, items)
    return path


PER_SERVING, PER_100G = "per_serving", "per_100g"
BASIS_TEXT = {PER_SERVING: "per serving", PER_100G: "per 100 g"}
UNIT_TEXT = {"ug": "µg"}
NUTRIENT_LABELS = {"vitamin_b12": "Vitamin B12", "vitamin_c": "Vitamin C",
                   "vitamin_d": "Vitamin D"}


def make_view(items: list[dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """The ``view`` of every item of a session, all on one nutrition basis (:func:`basis_of`
    over every dish the session shows), so no page switches basis."""
    basis = basis_of(items)
    return lambda item: view(item, basis)


def basis_of(items: list[dict[str, Any]]) -> str:
    """Per serving when every dish shown has servings and per-serving values, else per 100 g
    (for all)."""
    shown = [(dish, numbers) for item in items for dish, numbers in _dishes(item).values()]
    if shown and all(dish.get("servings") and numbers.get(PER_SERVING)
                     for dish, numbers in shown):
        return PER_SERVING
    return PER_100G


def view(item: dict[str, Any], basis: str | None = None) -> dict[str, Any]:
    """What the page shows: the question a model is asked and the dishes (no gold), with
    nutrition on ``basis`` (default: :func:`basis_of` this item alone)."""
    from nutrireason.methods.fam_prompts import condition_question

    task = item.get("task")
    kind = answer_kind(str(task))
    if kind == "yes_no":
        return {"task": task, "question": item["question"], "dishes": [], "basis": ""}
    basis = basis or basis_of([item])
    dishes = [_dish(letter, dish, numbers.get(basis) or {})
              for letter, (dish, numbers) in _dishes(item).items()]
    return {"task": task, "question": condition_question(item["condition_labels"],
                                                         kind == "ranking"),
            "dishes": dishes, "basis": BASIS_TEXT[basis],
            "source": "estimated from USDA SR28"}


def _dishes(item: dict[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """Per dish letter ("" for a dish-level item): the dish as the model sees it and its
    nutrition numbers per basis (the item's ``evidence``)."""
    kind = answer_kind(str(item.get("task")))
    if kind == "ranking":
        evidence = item.get("evidence") or {}
        return {letter: (dish, _numbers(evidence.get(letter)))
                for letter, dish in item["dishes"].items()}
    if kind == "decision":
        return {"": (item["dish"], _numbers(item.get("evidence")))}
    return {}


def _numbers(evidence: Any) -> dict[str, Any]:
    nutrition = evidence.get("nutrition") if isinstance(evidence, dict) else None
    return nutrition if isinstance(nutrition, dict) else {}


def _dish(letter: str, dish: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    return {"letter": letter, "title": dish.get("title", ""),
            "servings": dish.get("servings"), "ingredients": dish.get("ingredients") or [],
            "nutrition": nutrition_rows(values)}


def nutrition_rows(values: dict[str, Any]) -> list[tuple[str, str]]:
    """(nutrient, amount with its unit) for every value with a known unit, in the standards'
    order of nutrients."""
    from nutrireason.standards import load_standards

    rows = []
    for nutrient in load_standards().nutrients.nutrients:
        value = values.get(nutrient.id)
        if isinstance(value, int | float) and nutrient.unit:
            unit = UNIT_TEXT.get(nutrient.unit, nutrient.unit)
            rows.append((_label(nutrient.id), f"{_amount(float(value))} {unit}"))
    return rows


def _label(nutrient: str) -> str:
    return NUTRIENT_LABELS.get(nutrient, nutrient.replace("_", " ").capitalize())


def _amount(value: float) -> str:
    """Rounded for reading: whole numbers from 100, one decimal from 10, else two."""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return "0" if value == 0 else f"{value:.2f}"


@dataclass
class HumanSession:
    """What ``human serve`` is asked: who answers, which held-out items, where to listen."""

    participant: str = setting("The participant's name (model = human/<name>).", REQUIRED)
    out: Path = setting("Run folder for the answers (re-run to resume).", REQUIRED)
    task: str = setting("dish, rank or ngqa-binary.", "dish")
    n: int = setting("Held-out items to answer.", 100, "--n", min=1)
    seed: int = setting("Sampling seed of the items.", 0)
    level: str = setting("NGQA level for ngqa-binary (default: the benchmark's default).", "")
    benchmark_dir: Path | None = setting("A built benchmark (default: the last).")
    host: str = setting(HOST, "127.0.0.1")
    port: int = setting(PORT, 8766, min=1, max=65535)
    token: str | None = setting(TOKEN)

    def serve(self, ready: Any = None) -> Any:
        """Check the host and token, then serve the sample until every item is answered (or
        Ctrl-C); returns the run summary. ``ready(server)`` is called once the server listens
        (tests use it)."""
        from nutrireason.methods.human_desk import Desk, register_desk
        from nutrireason.review.human_app import create_human_app
        from nutrireason.runs.engine import RunConfig

        check_host(self.host, self.token)
        items = sample_items(split_file(self.task, self.benchmark_dir, self.level), self.n,
                             self.seed)
        path = prepare_items(self.out, items)
        desk = Desk(total=len(items))
        register_desk(desk)
        config = RunConfig(benchmark=path, out=self.out, methods=["human"],
                           models=[f"human/{self.participant}"], concurrency=1, cache=False,
                           progress=False)
        app = create_human_app(desk, self.participant, make_view(items), self.token)
        return asyncio.run(_serve(config, desk, app, self.host, self.port, ready))


async def _serve(config: Any, desk: Any, app: Any, host: str, port: int, ready: Any) -> Any:
    import uvicorn

    from nutrireason.runs.engine import run_async

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            await serving  # the port was taken: raise its error
            raise DataError(None, f"could not listen on {host}:{port}", field="--port")
        await asyncio.sleep(0.05)
    if ready is not None:
        ready(server)
    try:
        return await run_async(config)
    finally:
        desk.finish()
        await asyncio.sleep(1.5)  # the last page shows that all is answered
        server.should_exit = True
        await serving
