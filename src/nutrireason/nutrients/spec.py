"""Recipe nutrient estimation as one registered benchmark: two tasks that answer a number."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from nutrireason.nutrients.items import TASK_CARBS, TASK_ENERGY
from nutrireason.schema import (
    BenchmarkSpec,
    Breakdown,
    MetricColumn,
    TaskSpec,
    register_benchmark,
)

# NutriBench's Acc@7.5 g for carbohydrates; for energy the same margin in kilocalories
# (7.5 g of carbohydrate is 30 kcal at 4 kcal/g)
CARBS_TOLERANCE, ENERGY_TOLERANCE = 7.5, 30.0
# scores per recipe category (the build's food category of the dish)
BREAKDOWNS = (Breakdown("category", ("category",), "metrics_categories.csv"),)
WHAT = {TASK_CARBS: ("grams of carbohydrate", "g"), TASK_ENERGY: ("kilocalories", "kcal")}


class NutrientItem(BaseModel):
    """One item: a recipe's lines and servings, and the gold amount per serving. The fields
    are the exported columns, in order."""

    model_config = ConfigDict(extra="forbid")

    id: str
    task: str
    recipe_id: str
    title: str
    servings: float
    lines: list[str]
    category: str
    unit: str
    gold: float


def columns(tolerance: float, unit: str) -> tuple[MetricColumn, ...]:
    return (MetricColumn("accuracy", f"Acc@{tolerance:g} {unit}", True),
            MetricColumn("mae", f"MAE ({unit})"),
            MetricColumn("within_20pct", "Within 20 %", True),
            MetricColumn("unparseable_rate", "Unparseable", True))


def question(item: dict[str, Any]) -> str:
    """An item's question in one line."""
    what = WHAT.get(str(item.get("task")), ("grams of carbohydrate", "g"))[0]
    return f"How many {what} are in one serving of {item.get('title')!r}?"


def task(name: str, option: str, label: str, tolerance: float) -> TaskSpec:
    what, unit = WHAT[name]
    return TaskSpec(name=name, option=option, label=label, file=f"{option}.jsonl",
                    answer="quantity", unit=unit, tolerance=tolerance,
                    item_model=NutrientItem, table_title=label,
                    columns=columns(tolerance, unit), headline="accuracy",
                    headline_label=f"{label}: Acc@{tolerance:g} {unit}",
                    clusters=("recipe_id",), question=question,
                    answer_format=f'JSON {{"value": <{what} per serving>}}',
                    demo_seconds=3.0)


@register_benchmark("nutrients")
def nutrients_spec() -> BenchmarkSpec:
    return BenchmarkSpec(
        name="nutrients", title="Recipe nutrients", build_dir="nutrients/benchmark",
        tasks=(task(TASK_CARBS, "carbs", "Carbohydrates per serving", CARBS_TOLERANCE),
               task(TASK_ENERGY, "energy", "Energy per serving", ENERGY_TOLERANCE)),
        meta_keys=("task", "recipe_id", "category"), breakdowns=BREAKDOWNS,
        report="nutrireason.nutrients.report:report_section", cluster_unit="the recipe")


# the package's methods and build stage declare themselves beside the spec
from nutrireason.nutrients import methods, stage  # noqa: E402, F401
