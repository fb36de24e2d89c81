"""FAM-Bench as one registered benchmark: its two tasks, item models and conditions.

Every other stage reads these facts from :func:`nutrireason.schema.get_benchmark` ``("fam")``;
the condition ids come from the knowledge base (:mod:`nutrireason.fam.kb`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from nutrireason.fam.kb import load_kb
from nutrireason.schema import (
    BenchmarkSpec,
    Breakdown,
    MetricColumn,
    TaskSpec,
    register_benchmark,
)

# Prompting modes and their display names, in table order (the methods are in
# ``methods/fam.py``; ``reference`` is the rule-based reference answer).
MODE_LABELS = {"baseline": "baseline", "cot": "CoT", "ki": "KI", "cot-ki": "CoT+KI",
               "ki-limits": "KI+limits", "cot-ki-limits": "CoT+KI+limits",
               "reference": "reference"}
TASK_DISH, TASK_RANK = "fam_dish", "fam_rank"  # what records of the two tasks carry
INPUTS = ("text", "text+image", "image")
PAPER_MODES = ("baseline", "cot", "ki", "cot-ki")  # FAM-Bench's four prompting modes (Table 1)
_NAME = re.compile(r"^(?:fam-)?(?P<mode>[^\[\]]+?)(?:\[(?P<input>[^\[\]]*)\])?$")


def method_name(mode: str, input_mode: str = "text") -> str:
    """``fam-<mode>`` plus ``[<input>]`` for the image input modes."""
    return f"fam-{mode}" + ("" if input_mode == "text" else f"[{input_mode}]")


def split_method_name(name: str) -> tuple[str, str]:
    """The inverse of :func:`method_name`: ``fam-cot-ki[image]`` -> ("cot-ki", "image"); no
    ``[...]`` suffix means text input."""
    match = _NAME.match(name)
    if match is None:
        return name, "text"
    return match["mode"], match["input"] or "text"


class DishItem(BaseModel):
    """One dish-level item (``dish.jsonl``): a recipe judged for one condition. The fields are
    the exported columns, in order."""

    model_config = ConfigDict(extra="allow")

    id: str
    task: str
    condition: str
    conditions: list[str]
    condition_labels: list[str]
    recipe_id: str
    dish: dict[str, Any]
    gold: dict[str, Any]
    evidence: dict[str, Any] | None = None
    image: str | None = None
    images_root: str | None = None


class OptionImages(BaseModel):
    """A ranking item's image per option letter (None: no image)."""

    A: str | None = None
    B: str | None = None
    C: str | None = None
    D: str | None = None


class RankItem(BaseModel):
    """One comparative item (``rank.jsonl``): four dishes ranked for a set of conditions. The
    fields are the exported columns, in order."""

    model_config = ConfigDict(extra="allow")

    id: str
    task: str
    distractor: str
    conditions: list[str]
    condition_labels: list[str]
    recipe_ids: dict[str, str]
    dishes: dict[str, Any]
    gold: dict[str, Any]
    evidence: dict[str, Any] | None = None
    images: OptionImages | None = None
    images_root: str | None = None


# Table 1's columns per task: (metric, label, shown as a percentage), in the paper's order
DISH_COLUMNS = tuple(MetricColumn(*column) for column in (
    ("accuracy", "Acc.", True), ("rationale_macro_f1", "Macro-F1", False),
    ("rationale_micro_f1", "Micro-F1", False),
    ("rationale_macro_f1_strict", "Macro-F1 strict", False),
    ("rationale_micro_f1_strict", "Micro-F1 strict", False),
    ("unparseable_rate", "Unparseable", True)))
RANK_COLUMNS = tuple(MetricColumn(*column) for column in (
    ("top1_accuracy", "Top-1", True), ("mrr", "MRR", False),
    ("kendall_tau", "Kendall tau", False), ("ctc", "CTC", False),
    ("unparseable_rate", "Unparseable", True)))
# The human baselines are FAM-Bench Figure 4 (non-expert humans, 100 held-out items).

DISH_FORMAT = 'JSON {"decision": "recommend" or "not_recommend"}'
RANK_FORMAT = ('JSON {"ranking": ["<letter>", ...]} with the dish letters from most to least '
               "suitable, as far as the answer places them")


def dish_question(item: dict[str, Any]) -> str:
    """A dish-level item's question in one line: the dish's title and the condition."""
    labels = ", ".join(item.get("condition_labels") or [])
    title = (item.get("dish") or {}).get("title", "")
    return f"Is the dish {title!r} suitable for someone managing {labels}?"


def rank_question(item: dict[str, Any]) -> str:
    """A ranking item's question in one line: the conditions and the four dishes' titles."""
    titles = {k: v.get("title") for k, v in (item.get("dishes") or {}).items()}
    labels = ", ".join(item.get("condition_labels") or [])
    return (f"Rank dishes A, B, C and D from most to least suitable for someone managing "
            f"{labels}. The dishes: {json.dumps(titles, ensure_ascii=False)}")


# scores per condition an item asks about
BREAKDOWNS = (Breakdown("condition", ("conditions", "condition"), "metrics_conditions.csv"),)


@register_benchmark("fam")
def fam_spec() -> BenchmarkSpec:
    return BenchmarkSpec(
        name="fam", title="FAM-Bench", build_dir="fam/benchmark",
        tasks=(TaskSpec(name=TASK_DISH, option="dish", label="FAM Task 1 (dish)",
                        short="Task 1", file="dish.jsonl", answer="decision",
                        item_model=DishItem, table_title="Task 1: dish suitability",
                        columns=DISH_COLUMNS, headline="accuracy",
                        headline_label="Task 1: accuracy", human_paper=0.630,
                        clusters=("recipe_id",), answer_format=DISH_FORMAT,
                        question=dish_question, pooled=True, human="dish",
                        demo_seconds=4.3),
               TaskSpec(name=TASK_RANK, option="rank", label="FAM Task 2 (ranking)",
                        short="Task 2", file="rank.jsonl", answer="ranking",
                        item_model=RankItem, table_title="Task 2: ranking",
                        columns=RANK_COLUMNS, headline="top1_accuracy",
                        headline_label="Task 2: top-1", human_paper=0.370,
                        shown=(("mrr", "MRR"), ("kendall_tau", "Kendall tau")),
                        clusters=("recipe_ids",), answer_format=RANK_FORMAT,
                        question=rank_question, pooled=True, human="rank",
                        # the ranking call comes first, the per-dish calls for cross-task
                        # consistency after it
                        scored_call="first",
                        # five long calls an item: the demo ranks in the first mode only
                        demo_methods=1, demo_seconds=18.0)),
        meta_keys=("task", "conditions", "condition", "options", "distractor", "recipe_id",
                   "recipe_ids"),
        labels=tuple(load_kb()), breakdowns=BREAKDOWNS, modes=dict(MODE_LABELS),
        inputs=INPUTS, split_method=split_method_name, join_method=method_name,
        paper_modes=PAPER_MODES,
        report="nutrireason.fam.report:report_section",
        cluster_unit="the recipe, or a ranking item's dish set")

