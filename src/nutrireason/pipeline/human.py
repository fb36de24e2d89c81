"""``human serve``: a seeded sample of held-out items, the run engine with the ``human`` method
and a ``human/<participant>`` model, and the web page the participant answers in, in one event
loop. The answers are run records in ``--out`` (resumable like any run: start the same command
again), scored by ``score`` and shown by ``report`` beside the models."""

from __future__ import annotations

import asyncio
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.io import write_jsonl_atomic
from nutrireason.options import HOST, PORT, REQUIRED, TOKEN, setting
from nutrireason.paths import builds_dir
from nutrireason.pipeline.review import check_host

TASKS = {"dish": ("fam", "dish.jsonl"), "rank": ("fam", "rank.jsonl"),
         "ngqa-binary": ("ngqa", "binary.jsonl")}
ITEMS = "items.jsonl"


def split_file(task: str, benchmark_dir: Path | None, level: str) -> Path:
    if task not in TASKS:
        raise DataError(None, "unknown task", field="--task", value=task,
                        expected=" | ".join(TASKS))
    benchmark, name = TASKS[task]
    root = benchmark_dir or builds_dir() / benchmark / "benchmark"
    path = root / level / name if benchmark == "ngqa" else root / name
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


def view(item: dict[str, Any]) -> dict[str, Any]:
    """What the page shows: the question a model is asked and the dishes (no gold)."""
    from nutrireason.methods.fam_prompts import condition_question

    task = item.get("task")
    if task == "binary":
        return {"task": task, "question": item["question"], "dishes": []}
    rank = task == "fam_rank"
    dishes = item["dishes"] if rank else {"": item["dish"]}
    return {"task": task, "question": condition_question(item["condition_labels"], rank),
            "dishes": [_dish(letter, dish) for letter, dish in dishes.items()]}


def _dish(letter: str, dish: dict[str, Any]) -> dict[str, Any]:
    nutrition = dish.get("nutrition") or {}
    return {"letter": letter, "title": dish.get("title", ""),
            "servings": dish.get("servings"), "ingredients": dish.get("ingredients") or [],
            "basis": nutrition.get("basis", ""), "nutrition": nutrition.get("values") or {}}


@dataclass
class HumanSession:
    """What ``human serve`` is asked: who answers, which held-out items, where to listen."""

    participant: str = setting("The participant's name (model = human/<name>).", REQUIRED)
    out: Path = setting("Run folder for the answers (re-run to resume).", REQUIRED)
    task: str = setting("dish, rank or ngqa-binary.", "dish")
    n: int = setting("Held-out items to answer.", 100, "--n", min=1)
    seed: int = setting("Sampling seed of the items.", 0)
    level: str = setting("NGQA level for ngqa-binary.", "standard")
    benchmark_dir: Path | None = setting("A built benchmark (default: the last).")
    host: str = setting(HOST, "127.0.0.1")
    port: int = setting(PORT, 8766, min=1, max=65535)
    token: str | None = setting(TOKEN)

    def serve(self, ready: Any = None) -> Any:
        """Check the host and token, then serve the sample until every item is answered (or
        Ctrl-C); returns the run summary. ``ready(server)`` is called once the server listens
        (tests use it)."""
        from nutrireason.methods.human import Desk, register_desk
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
        return asyncio.run(_serve(config, desk, self.participant, self.host, self.port,
                                  self.token, ready))


async def _serve(config: Any, desk: Any, participant: str, host: str, port: int,
                 token: str | None, ready: Any) -> Any:
    import uvicorn

    from nutrireason.review.human_app import create_human_app
    from nutrireason.runs.engine import run_async

    app = create_human_app(desk, participant, view, token)
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
