"""A small FAM-Bench pool and recipe build written for the review tests (the real pool is used
where a build must run on it)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

XSS = "<script>alert(1)</script>"


def _recipe(rid: str, title: str, lines: list[str], foods: list[str]) -> dict:
    return {"record": {"id": rid, "title": title, "ingredients": lines, "servings": 4},
            "kept": True, "ingredients": [{"line": line, "food": food}
                                          for line, food in zip(lines, foods, strict=True)],
            "nutrition": {"per_serving": {"calories": 250.0, "sodium": 400.0},
                          "per_100g": {"calories": 120.0, "sodium": 190.0}}}


def _entry(condition: str, ingredients: list[str]) -> dict:
    return {"condition": condition, "ingredients": ingredients,
            "provenance": [{"rule": "ingredient_concept", "ingredient": ingredients[0],
                            "line": "1 cup " + ingredients[0], "concept": "refined_grains",
                            "kb_side": "limit", "mass_share": 0.3}]}


RECIPES = [
    _recipe("pasta-bake", f"Pasta bake {XSS}", ["8 oz pasta", "1 cup cheddar", "1 tsp salt"],
            ["pasta", "cheddar", "salt"]),
    _recipe("lentil-soup", "Lentil soup", ["1 cup lentils", "1 onion", "4 cups stock"],
            ["lentils", "onion", "stock"]),
]
POOL = [
    {"recipe_id": "pasta-bake", "title": RECIPES[0]["record"]["title"], "excluded": None,
     "rec": [_entry("osteoporosis", ["cheddar"])],
     "not_rec": [_entry("celiac_disease", ["pasta"]), _entry("hypertension", ["salt"])],
     "excluded_entries": []},
    {"recipe_id": "lentil-soup", "title": "Lentil soup", "excluded": None,
     "rec": [_entry("hypertension", ["lentils"]), _entry("type_2_diabetes", ["lentils"])],
     "not_rec": [_entry("gout", ["lentils"])], "excluded_entries": []},
]


@contextmanager
def served_app(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on 127.0.0.1 (a free port) in a thread; yields its URL and
    stops it after."""
    import uvicorn

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    end = time.monotonic() + 30
    while not server.started and time.monotonic() < end:
        time.sleep(0.1)
    assert server.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def small_pool(tmp_path) -> tuple[Path, Path]:
    """(annotations folder, recipes folder) with 6 entries over 2 recipes."""
    pool, recipes = tmp_path / "annotations", tmp_path / "recipes"
    pool.mkdir()
    recipes.mkdir()
    (pool / "annotations.jsonl").write_text("".join(json.dumps(r) + "\n" for r in POOL))
    (recipes / "recipes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECIPES))
    return pool, recipes
