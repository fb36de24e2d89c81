"""The NGQA construction settings (``standards/data/ngqa.yaml``), validated."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field

from nutrireason.standards import standards_dir
from nutrireason.standards.loader import Source, StrictModel, load_model

LEVELS = ("sparse", "standard", "complex")
TASKS = ("binary", "multi_label", "text_generation")


class WweiaRange(StrictModel):
    from_: int = Field(alias="from")
    to: int
    group: str


class FoodUniverse(StrictModel):
    wweia_ranges: list[WweiaRange]
    recipe_groups: list[str]
    source: Source


class Dedup(StrictModel):
    ignore_words: list[str]
    source: Source


class Level(StrictModel):
    max_questions: int = Field(ge=0)
    rule: str


class Questions(StrictModel):
    binary: str
    multi_label: str
    text_generation: str


class NgqaConfig(StrictModel):
    version: int
    source: Source
    food_universe: FoodUniverse
    dedup: Dedup
    question_nutrients: list[str] = Field(min_length=1)
    answer_order: list[str] = Field(min_length=1)
    levels: dict[str, Level]
    standard_rule: Literal["strict", "loose"]
    questions: Questions


@lru_cache(maxsize=4)
def load_ngqa_config(path: Path | None = None) -> NgqaConfig:
    """Load ``ngqa.yaml`` (default: the packaged one)."""
    return load_model(path or standards_dir() / "ngqa.yaml", NgqaConfig)
