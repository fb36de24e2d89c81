"""Recipe nutrient estimation, the third benchmark, end to end on its own package: items drawn
from a recipe build, its build stage and command, its methods through the run engine with a
scripted model, scores against hand-computed values, its report section and the exports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.models import scripted
from nutrireason.nutrients.items import TASK_CARBS, TASK_ENERGY, build_items, items
from nutrireason.nutrients.methods import prompt
from nutrireason.runs import RunConfig, run
from nutrireason.schema import get_benchmark, read_records
from nutrireason.scoring.compare import compare_runs
from nutrireason.scoring.score import score_run, write_scores


def row(recipe_id: str, carbs: float | None, calories: float = 400.0, servings: float = 4,
        kept: bool = True, flags: list | None = None, coverage: float = 1.0,
        category: str = "mixed dishes") -> dict:
    """A recipes.jsonl row in the recipe build's format (the fields the items read)."""
    return {"kept": kept, "flags": flags or [], "exclusion": None if kept else "unresolved",
            "food_category": category,
            "record": {"id": recipe_id, "title": recipe_id.replace("-", " ").title(),
                       "servings": servings, "ingredients": ["1 cup rice", "2 cups water"]},
            "nutrition": {"coverage": {"carbohydrates": coverage, "calories": 1.0},
                          "per_serving": {"carbohydrates": carbs, "calories": calories}}}


ROWS = [row("rice-bowl", 45.0), row("bean-soup", 30.0, 250.0, category="soups"),
        row("flagged", 20.0, flags=["sugar above carbohydrate"]),
        row("excluded", 20.0, kept=False), row("no-servings", 20.0, servings=0),
        row("part-covered", 20.0, coverage=0.8), row("no-carbs", None)]


@pytest.fixture
def recipes(tmp_path) -> Path:
    path = tmp_path / "recipes" / "recipes.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    return path


def test_only_kept_unflagged_fully_covered_recipes_with_servings_are_items():
    drawn = items(ROWS, TASK_CARBS)
    assert sorted(i["recipe_id"] for i in drawn) == ["bean-soup", "rice-bowl"]
    # energy: whole calories for "part-covered" (only its carbohydrate is part-covered) and
    # for "no-carbs"
    energy = items(ROWS, TASK_ENERGY)
    assert sorted(i["recipe_id"] for i in energy) == ["bean-soup", "no-carbs", "part-covered",
                                                      "rice-bowl"]
    item = next(i for i in drawn if i["recipe_id"] == "rice-bowl")
    assert (item["gold"], item["unit"], item["servings"]) == (45.0, "g", 4.0)
    get_benchmark("nutrients").task("carbs").item_model.model_validate(item)


def test_the_order_is_seeded_and_a_recipe_keeps_its_place():
    first = [i["recipe_id"] for i in items(ROWS, TASK_CARBS, seed=1)]
    fewer = [i["recipe_id"] for i in items(ROWS[1:], TASK_CARBS, seed=1)]
    assert [r for r in first if r != "rice-bowl"] == fewer


def test_the_stage_builds_once_through_its_command(recipes, tmp_path):
    from typer.testing import CliRunner

    from nutrireason.cli import app

    out = tmp_path / "build"
    args = ["nutrients", "build", "--recipes", str(recipes.parent), "--out", str(out)]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "carbs 2, energy 4 items from 7 recipes" in " ".join(first.output.split())
    again = CliRunner().invoke(app, args)
    assert "is up to date" in " ".join(again.output.split())
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["artifact"] == "nutrients" and manifest["items"] == {"carbs": 2,
                                                                         "energy": 4}


def test_the_prompt_gives_the_recipe_and_asks_for_a_number():
    item = items(ROWS, TASK_CARBS)[0]
    text = prompt(item, steps=True)
    assert "Servings: 4" in text and "- 1 cup rice" in text
    assert "grams of carbohydrate" in text and "step by step" in text
    assert text.rstrip().endswith('JSON {"value": <grams of carbohydrate per serving>}.')


def test_methods_run_score_and_report(recipes, tmp_path):
    from nutrireason.report import build_report

    build = tmp_path / "build"
    build_items(recipes, build)
    answers = {"Rice Bowl": '{"value": 40}', "Bean Soup": "About 20-24 g."}
    scripted.register("nutrient-answers", lambda request: next(
        answer for title, answer in answers.items() if title in request.messages[-1].text()))
    spec = get_benchmark("nutrients")
    config = RunConfig(benchmark=spec.file(build, TASK_CARBS), out=tmp_path / "run",
                       methods=["nutrients-plain", "nutrients-cot"],
                       models=["scripted/nutrient-answers"], cache=False, progress=False)
    assert run(config).ok == 4
    parsed = {(r.method, r.item_id): r.parsed for r in read_records(tmp_path / "run")}
    assert parsed[("nutrients-plain", "carbs-rice-bowl")] == 40.0
    assert parsed[("nutrients-cot", "carbs-bean-soup")] == 22.0  # a range's middle
    write_scores(tmp_path / "run", score_run(tmp_path / "run", bootstrap=0))
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text(encoding="utf-8"))
    group = next(g for g in metrics["groups"] if g["method"] == "nutrients-plain")
    values = {name: stat["value"] for name, stat in group["metrics"].items()}
    # rice 40 vs 45 (5 g off, within 7.5 and 20 %), soup 22 vs 30 (8 g off, 27 %): by hand
    assert values == pytest.approx({"accuracy": 0.5, "within_20pct": 0.5, "mae": 6.5,
                                    "unparseable_rate": 0.0})
    page = build_report([tmp_path / "run"], tmp_path / "report")
    table = (tmp_path / "report" / "nutrients.md").read_text(encoding="utf-8")
    assert "| nutrients-plain | scripted/nutrient-answers | 2 | 50.00 | 6.50 | 50.00 | 0.00 |" \
        in table
    assert 'id="nutrients-section"' in page.read_text(encoding="utf-8")
    # per category, by hand: the rice bowl (a mixed dish) 5 g off, the bean soup 8 g off
    categories = {(b["method"], b["category"]): b for b in metrics["breakdowns"]["category"]}
    soup = categories[("nutrients-plain", "soups")]
    assert soup["n"] == 1 and soup["metrics"]["accuracy"]["value"] == 0.0
    assert soup["metrics"]["mae"]["value"] == pytest.approx(8.0)
    mixed = categories[("nutrients-plain", "mixed dishes")]["metrics"]
    assert (mixed["accuracy"]["value"], mixed["mae"]["value"]) == pytest.approx((1.0, 5.0))
    assert set(metrics["breakdowns"]) == {"category"}  # not NGQA's or FAM-Bench's
    assert not (tmp_path / "run" / "metrics_diets.csv").exists()
    csv_rows = (tmp_path / "run" / "metrics_categories.csv").read_text(encoding="utf-8")
    assert "nutrients-plain,scripted/nutrient-answers,nutrients_carbs,soups,1,mae,8.0" in csv_rows
    by_category = (tmp_path / "report" / "nutrients_categories.md").read_text(encoding="utf-8")
    assert "| nutrients-plain | scripted/nutrient-answers | soups | 1 | 0.00 | 8.00 |" \
        in by_category
    # compare groups by the declared breakdown; one NGQA-only breakdown groups under ""
    compared = compare_runs(tmp_path / "run", tmp_path / "run", by=("category", "diet"),
                            resamples=50, a_method="nutrients-plain",
                            b_method="nutrients-cot")
    assert [(g["category"], g["diet"], g["n"]) for g in compared["groups"]] == \
        [("mixed dishes", "", 1), ("soups", "", 1)]
    with pytest.raises(DataError, match="cannot group by 'cuisine'"):
        compare_runs(tmp_path / "run", tmp_path / "run", by=("cuisine",))


def test_the_exports_and_inspect_take_it_as_any_benchmark(recipes, tmp_path):
    from nutrireason.interop.hf import build_kind
    from nutrireason.interop.inspect_tasks import inspect_task
    from nutrireason.interop.lm_eval_export import benchmark_entries

    build = tmp_path / "build"
    build_items(recipes, build)
    assert build_kind(build) == "nutrients"
    names = [e.name for e in benchmark_entries(get_benchmark("nutrients"), build)]
    assert names == ["nutrireason_nutrients_carbs_nutrients-plain",
                     "nutrireason_nutrients_carbs_nutrients-cot",
                     "nutrireason_nutrients_energy_nutrients-plain",
                     "nutrireason_nutrients_energy_nutrients-cot"]
    task = inspect_task("nutrients")(task="energy", build=str(build))
    assert len(task.dataset) == 4
    assert task.metadata["method"] == "nutrients-plain"  # the declared default
