"""NGQA as one registered benchmark: its file layout, levels, tasks, item model and tag vocabulary.

Every other stage (CLI, run engine, scoring, report) reads these facts from
:func:`nutrireason.schema.get_benchmark` ``("ngqa")``; the levels and tasks come from
``standards/data/ngqa.yaml`` (the construction settings), the tags from its ``answer_order``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.schema import BenchmarkSpec, TaskSpec, register_benchmark

TASK_OPTIONS = {"binary": ("binary", "Binary", ()),
                "multi_label": ("multilabel", "Multi-label", ("multi_label",)),
                "text_generation": ("textgen", "Text generation", ("text_generation",))}


class NgqaItem(BaseModel):
    """One NGQA question as written to ``<level>/<task>.jsonl``."""

    model_config = ConfigDict(extra="allow")

    id: str
    question_id: str
    level: str
    task: str
    user_id: str
    food_id: str
    food: str
    question: str
    answer: Any
    conditions: list[str]
    diets: list[str]
    signal: list[Any]
    triples: list[Any]
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]


@register_benchmark("ngqa")
def ngqa_spec() -> BenchmarkSpec:
    config = load_ngqa_config()
    tasks = tuple(TaskSpec(name=name, option=TASK_OPTIONS[name][0], label=TASK_OPTIONS[name][1],
                           file=f"{{level}}/{name}.jsonl", scorer=name,
                           aliases=TASK_OPTIONS[name][2], item_model=NgqaItem)
                  for name in type(config.questions).model_fields)
    tags = tuple(f"{d}_{n}" for n in config.answer_order for d in ("low", "high"))
    return BenchmarkSpec(
        name="ngqa", title="NGQA", build_dir="ngqa/benchmark", tasks=tasks,
        levels=tuple(config.levels),
        meta_keys=("level", "task", "user_id", "food_id", "food", "question", "signal",
                   "conditions", "diets"),
        labels=tags, groups=("conditions", "diets"))
