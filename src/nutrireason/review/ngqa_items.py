"""What a reviewer sees of an NGQA question (user x food): its gold answer, the user's
requirements and the graph links it rests on, each food tag with the nutrient amount and the
threshold behind it, and each condition link with the user's measured values where the build
keeps them (``food_tags.parquet`` and ``user_measures.parquet`` beside the questions)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.ngqa.evidence import (
    FOOD_TAG_COLUMNS,
    FOOD_TAGS,
    USER_MEASURE_COLUMNS,
    USER_MEASURES,
)
from nutrireason.review.items import ReviewItem
from nutrireason.reviewfile import item_key

LINKS = ("match", "contradict", "need")
COMPARATORS = {"<=": "at most", ">=": "at least"}
REBUILD = "a folder written by `nutrireason ngqa build` (build it again with this version)"


def load_ngqa_items(questions: Path) -> list[ReviewItem]:
    """Every NGQA question pair of a build (``questions.parquet``), by level then id: the
    binary gold answer, the user's requirements and the graph's triples, links first, with
    the amounts and thresholds behind the food's tags and the user's conditions."""
    import pandas as pd

    if not questions.is_file():
        raise DataError(questions, "file not found", expected="an `ngqa build` folder")
    evidence = Evidence(questions.parent / FOOD_TAGS,
                        _food_tags(questions.parent / FOOD_TAGS),
                        _user_measures(questions.parent / USER_MEASURES))
    return [_item(row, evidence)
            for row in pd.read_parquet(questions).to_dict(orient="records")]


@dataclass(frozen=True)
class Evidence:
    """A build's food tag rows by (food id, tag) and measured values by (user id,
    condition node)."""

    tags_file: Path
    tags: dict[tuple[str, str], dict[str, Any]]
    measures: dict[tuple[str, str], list[dict[str, Any]]]

    def tag(self, food_id: str, tag: str) -> dict[str, Any]:
        if (food_id, tag) not in self.tags:
            raise DataError(self.tags_file, "no amount for a tag of a question's food",
                            field="tag", value=f"{food_id} {tag}",
                            expected=f"a row per food tag in {REBUILD}")
        return self.tags[(food_id, tag)]


def _item(row: dict[str, Any], evidence: Evidence) -> ReviewItem:
    triples = [tuple(t) for t in row["triples"]]
    links = [t for t in triples if t[1] in LINKS]
    ordered = links + [t for t in triples if t not in links]
    user, food = str(row["user_id"]), str(row["food_id"])
    tag_nodes = {n["id"] for n in row["nodes"] if n["type"] == "nutrient_tag"}
    steps = []
    for head, relation, tail in ordered:
        step = {"source": head, "relation": relation, "target": tail}
        if relation in LINKS and evidence.measures.get((user, head)):
            step["text"] = _link_text(head, relation, tail, evidence.measures[(user, head)])
        elif relation == "belongs to" and head == row["food"] and tail in tag_nodes:
            step["text"] = _tag_text(head, evidence.tag(food, tail))
        steps.append(step)
    requirements = [f"condition: {c}" for c in row["conditions"]] + \
        [f"diet: {d}" for d in row["diets"]]
    return ReviewItem(
        item_key(user, food), food, str(row["level"]), str(row["answer_binary"]), (),
        tuple(steps), str(row["food"]), tuple(requirements), None, benchmark="ngqa",
        question=str(row["question_binary"]), lines_heading="The user")


def _tag_text(food: str, tag: dict[str, Any]) -> str:
    """"Cheddar has tag low_carb: carbohydrates 1.3 g per 100 g, at most 55 g per 100 g
    (source: ...)"."""
    unit = f"{tag['unit']} per 100 g"
    return (f"{food} has tag {tag['tag']}: {tag['nutrient'].replace('_', ' ')} "
            f"{_number(tag['value'])} {unit}, {_compared(tag)} {unit} "
            f"(source: {tag['source']})")


def _link_text(condition: str, relation: str, tag: str, measures: list[dict[str, Any]]) -> str:
    """The link triple and the user's measured values for its condition, each against its
    threshold, then the condition's rule."""
    values = "; ".join(f"{m['measure']} {_number(m['value'])} {m['unit']} (threshold "
                       f"{_compared(m)} {m['unit']}, source: {m['source']})" for m in measures)
    text = f"{condition} -- {relation} --> {tag}; user's {values}"
    definition = measures[0]["definition"]
    return f"{text}; {condition} when {definition}" if definition else text


def _compared(row: dict[str, Any]) -> str:
    words = COMPARATORS.get(row["comparator"], row["comparator"])
    return f"{words} {_number(row['threshold'])}"


def _number(value: float) -> str:
    """Four significant digits, never in exponent notation for large values."""
    text = f"{float(value):.4g}"
    return f"{float(value):.0f}" if "e+" in text else text


def _food_tags(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(food id, tag) -> its row of ``food_tags.parquet``."""
    rows = _read(path, FOOD_TAG_COLUMNS)
    return {(r["food_id"], r["tag"]): r for r in rows}


def _user_measures(path: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(user id, condition node) -> its measured values, in the file's order."""
    measures: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in _read(path, USER_MEASURE_COLUMNS):
        measures.setdefault((row["user_id"], row["condition"]), []).append(row)
    return measures


def _read(path: Path, columns: list[str]) -> list[dict[str, Any]]:
    import pandas as pd

    if not path.is_file():
        raise DataError(path, "file not found beside questions.parquet", expected=REBUILD)
    table = pd.read_parquet(path)
    for column in columns:
        if column not in table:
            raise DataError(path, "column missing", field=column, expected=REBUILD)
    return table.to_dict(orient="records")
