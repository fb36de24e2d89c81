"""NGQA as one registered benchmark: its file layout, levels, tasks, item model and tag vocabulary.

Every other stage (CLI, run engine, scoring, report) reads these facts from
:func:`nutrireason.schema.get_benchmark` ``("ngqa")``; the levels and tasks come from
``standards/data/ngqa.yaml`` (the construction settings), the tags from its ``answer_order``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.schema import BenchmarkSpec, MetricColumn, TaskSpec, register_benchmark

_CLASSIFICATION = tuple(MetricColumn(metric, label) for metric, label in (
    ("accuracy", "Accuracy"), ("recall", "Recall"), ("precision", "Precision"), ("f1", "F1")))
# Table 3's metric columns per task (BERTScore shows only when some run has it)
COLUMNS = {"binary": _CLASSIFICATION, "multi_label": _CLASSIFICATION,
           "text_generation": tuple(MetricColumn(metric, label) for metric, label in (
               ("rouge1", "ROUGE-1"), ("rouge2", "ROUGE-2"), ("rougeL", "ROUGE-L"),
               ("bleu", "BLEU"), ("bertscore_f1", "BERT")))}
# the per-sample values the HTML report shows beside the outcome (the first stands in for a
# verdict where the task has none)
SHOWN = {"multi_label": (("accuracy", "Jaccard"),),
         "text_generation": (("rougeL", "ROUGE-L"), ("rouge1", "ROUGE-1"),
                             ("bertscore_f1", "BERTScore F1"))}

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
                           aliases=TASK_OPTIONS[name][2], item_model=NgqaItem,
                           columns=COLUMNS[name], shown=SHOWN.get(name, ()),
                           clusters=("user_id", "food_id"))
                  for name in type(config.questions).model_fields)
    tags = tuple(f"{d}_{n}" for n in config.answer_order for d in ("low", "high"))
    return BenchmarkSpec(
        name="ngqa", title="NGQA", build_dir="ngqa/benchmark", tasks=tasks,
        levels=tuple(config.levels),
        meta_keys=("level", "task", "user_id", "food_id", "food", "question", "signal",
                   "conditions", "diets"),
        labels=tags, groups=("conditions", "diets"))
