"""NGQA as one registered benchmark: its file layout, levels, tasks, item model and tag vocabulary.

Every other stage (CLI, run engine, scoring, report) reads these facts from
:func:`nutrireason.schema.get_benchmark` ``("ngqa")``; the levels and tasks come from
``standards/data/ngqa.yaml`` (the construction settings), the tags from its ``answer_order``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.schema import (
    BenchmarkSpec,
    Breakdown,
    MetricColumn,
    TaskSpec,
    register_benchmark,
)

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
ANSWERS = {"binary": "yes_no", "multi_label": "tag_set", "text_generation": "sentence"}
DEFAULT_LEVEL = "standard"
HUMAN = {"binary": "ngqa-binary"}  # the task a person answers in the human baseline

# The notes each prompt ends with (the paper's prompts, Appendix D)
NOTES = {
    "binary": "Important Note: Your output will strictly be Yes or No with no other words.",
    "multi_label": (
        "Important Note: Your output must be strictly, with no extra words, separated by comma, "
        "a list of nutrients with high or low before the nutrients among these options: carb, "
        "protein, sugar, sodium, cholesterol, saturated_fat, calorie. For example, the output "
        "is: high_carb, low_protein, high_sugar. You should only include the nutrient tags that "
        "connect the food with the user."),
    "text_generation": (
        "Important Note: Your output must be a Yes or No followed by strictly a list of "
        "nutrients with high or low as prefix among these options: carb, protein, sugar, "
        "sodium, cholesterol, saturated fat, calorie. For example, the output is: Yes, because "
        "the food is high in carb, low in protein, high in sugar."),
}
# A well-formed answer in words, as the answer extractor asks for it
FORMATS = {
    "binary": 'exactly "Yes" or "No"',
    "multi_label": "the food's nutrient tags as a comma-separated list, each written like "
                   "high_sodium or low_protein (high or low, then carb, protein, sugar, sodium, "
                   "cholesterol, saturated_fat or calorie)",
    "text_generation": 'one sentence: "Yes, because the food is ..." or "No, because the food '
                       'is ..." with the reasons the answer gives (like "high in sodium")',
}


class NgqaNode(BaseModel):
    """One node of a question's subgraph (a field it lacks is null in an export)."""

    id: str | None = None
    type: str | None = None


class NgqaEdge(BaseModel):
    """One edge of a question's subgraph (a field it lacks is null in an export)."""

    relation: str | None = None
    source: str | None = None
    target: str | None = None


class NgqaItem(BaseModel):
    """One NGQA question as written to ``<level>/<task>.jsonl`` (the binary and text-generation
    tasks; their answer is a string). The fields are the exported columns, in order."""

    model_config = ConfigDict(extra="allow")

    id: str
    question_id: str
    level: str
    task: str
    user_id: str
    food_id: str
    food: str
    question: str
    answer: str
    conditions: list[str]
    diets: list[str]
    signal: list[list[str]]
    triples: list[list[str]]
    nodes: list[NgqaNode]
    edges: list[NgqaEdge]


class NgqaTagsItem(NgqaItem):
    """A multi-label question: its answer is the list of tags."""

    answer: list[str]  # type: ignore[assignment]


ITEM_MODELS = {"multi_label": NgqaTagsItem}


# Seconds per question and method of the bundled SmolLM2 on 2 cores (llama.cpp on every core,
# one sample at a time), measured on the demo's own samples
DEMO_SECONDS = 1.4


# scores per condition a user has and per special diet a user follows
BREAKDOWNS = (Breakdown("condition", ("conditions",), "metrics_conditions.csv"),
              Breakdown("diet", ("diets",), "metrics_diets.csv"))


@register_benchmark("ngqa")
def ngqa_spec() -> BenchmarkSpec:
    config = load_ngqa_config()
    tasks = tuple(TaskSpec(name=name, option=TASK_OPTIONS[name][0], label=TASK_OPTIONS[name][1],
                           file=f"{{level}}/{name}.jsonl", answer=ANSWERS[name],
                           aliases=TASK_OPTIONS[name][2],
                           item_model=ITEM_MODELS.get(name, NgqaItem),
                           columns=COLUMNS[name], shown=SHOWN.get(name, ()),
                           clusters=("user_id", "food_id"), answer_format=FORMATS[name],
                           prompt_note=NOTES[name], human=HUMAN.get(name, ""),
                           demo_seconds=DEMO_SECONDS)
                  for name in type(config.questions).model_fields)
    tags = tuple(f"{d}_{n}" for n in config.answer_order for d in ("low", "high"))
    return BenchmarkSpec(
        name="ngqa", title="NGQA", build_dir="ngqa/benchmark", tasks=tasks,
        levels=tuple(config.levels), default_level=DEFAULT_LEVEL,
        meta_keys=("level", "task", "user_id", "food_id", "food", "question", "signal",
                   "conditions", "diets"),
        labels=tags, breakdowns=BREAKDOWNS,
        report="nutrireason.ngqa.report:report_section", cluster_unit="the user",
        demo_max_tokens=64)  # a verdict, tags or two sentences
