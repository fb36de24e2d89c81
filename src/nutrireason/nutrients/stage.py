"""The build stage of recipe nutrient estimation (``nutrireason nutrients build``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.options import OUT, RECIPES, setting
from nutrireason.pipeline.stage import Stage, recipe_corpus


@dataclass
class NutrientsStage(Stage):
    """Items from the recipe build: the kept, unflagged recipes with servings."""

    out: Path | None = setting(OUT)
    overwrite: bool = setting("Write into an --out folder that holds other files.", False)
    recipes: Path | None = setting(RECIPES)
    size: int | None = setting("Items per task (default: every eligible recipe).", min=1)
    seed: int = setting("Order seed.", 0)
    label = "recipe nutrients"
    name = "build recipe nutrients"
    generator_of = "nutrireason.nutrients.items"
    key = "nutrients"
    upstream = ("recipes",)
    benchmark = "nutrients"

    @property
    def corpus(self) -> Path:
        return recipe_corpus(self.recipes)

    def inputs(self) -> list[Path]:
        return [self.corpus]

    def settings(self) -> dict[str, Any]:
        return {"size": self.size, "seed": self.seed}

    def outputs(self) -> list[Path]:
        return [self.target / name for name in ("carbs.jsonl", "energy.jsonl", "manifest.json")]

    def summary(self) -> dict[str, Any]:
        from nutrireason.storage import read_json_object

        return read_json_object(self.target / "manifest.json")

    def show(self, value: Any, built: bool) -> None:
        from nutrireason.pipeline.show import console

        items = ", ".join(f"{task} {count:,}" for task, count in value["items"].items())
        console.print(f"recipe nutrients: {items} items from {value['recipes']:,} recipes"
                      + (f"; wrote {self.target}" if built else ""))

    def build(self) -> dict[str, Any]:
        from nutrireason.nutrients.items import build_items

        return build_items(self.corpus, self.target, self.seed, self.size)
