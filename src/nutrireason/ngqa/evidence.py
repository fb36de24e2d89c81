"""What an expert checks an NGQA question against, written beside the questions: every food
tag with the nutrient value per 100 g and the threshold that gave it, and the users' measured
values behind a condition with their thresholds. The rows hold the numbers and sources the
build used, so a review shows exactly what made each tag and link.

    food_tags.parquet       food_id, tag, nutrient, value, unit, comparator, threshold, source
    user_measures.parquet   user_id, condition, measure, value, unit, comparator, threshold,
                            source, definition
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nutrireason.standards import Standards

FOOD_TAGS = "food_tags.parquet"
USER_MEASURES = "user_measures.parquet"
FOOD_TAG_COLUMNS = ["food_id", "tag", "nutrient", "value", "unit", "comparator", "threshold",
                    "source"]
USER_MEASURE_COLUMNS = ["user_id", "condition", "measure", "value", "unit", "comparator",
                        "threshold", "source", "definition"]


@dataclass(frozen=True)
class Measure:
    """A measured value the users table keeps for a condition: its column, its Table 5
    indicator and side, and the comparison the condition's rule makes."""

    condition: str  # condition id in conditions.yaml
    column: str  # users table column
    words: str
    indicator: str  # indicator id in health_indicators.yaml
    side: str  # "high" | "low"
    comparator: str


# The values `ngqa users` keeps (hypertension: the mean of up to 4 readings, >= the Table 5
# cut, see ngqa/users.py). BMI, glucose and HbA1c are not kept, so obesity and diabetes links
# show no measured values.
MEASURES = (
    Measure("hypertension", "mean_sbp", "mean systolic blood pressure", "systolic_bp", "high",
            ">="),
    Measure("hypertension", "mean_dbp", "mean diastolic blood pressure", "diastolic_bp", "high",
            ">="),
)


def food_tag_table(foods: pd.DataFrame, qfoods: pd.DataFrame, standards: Standards
                   ) -> pd.DataFrame:
    """One row per tag of every question food (``qfoods``, in its order): the nutrient's value
    per 100 g from ``foods`` and the threshold that gave the tag, with its source."""
    values = foods.drop_duplicates("food_id").set_index("food_id")
    by_tag = {f"{side}_{n.tag}": (n, side) for n in standards.nutrients.nutrients
              for side in ("low", "high")}
    rows = []
    for food_id, tags in zip(qfoods["food_id"], qfoods["tags"], strict=True):
        for tag in tags:
            nutrient, side = by_tag[tag]
            threshold = getattr(nutrient, side)
            rows.append((food_id, tag, nutrient.id, float(values.at[food_id, nutrient.id]),
                         nutrient.unit, standards.nutrients.comparators[side],
                         float(threshold.value), _source(threshold.source, threshold.basis)))
    return pd.DataFrame(rows, columns=FOOD_TAG_COLUMNS)


def user_measure_table(users: pd.DataFrame, standards: Standards) -> pd.DataFrame:
    """One row per measured value of a user with the condition it bears on (users in
    (cycle, seqn) order, then :data:`MEASURES` order); values the table lacks are left out."""
    users = users.sort_values(["cycle", "seqn"]).reset_index(drop=True)
    user_ids = users["cycle"].astype(str) + ":" + users["seqn"].astype(str)
    frames = []
    for position, measure in enumerate(MEASURES):
        if measure.column not in users or measure.condition not in users:
            continue
        has = users[measure.condition].fillna(False).astype(bool) & users[measure.column].notna()
        frames.append(_measure_rows(users[has], user_ids[has], measure, position, standards))
    if not frames:
        return pd.DataFrame(columns=USER_MEASURE_COLUMNS)
    table = pd.concat(frames).sort_values(["order", "position"], kind="stable")
    return table[USER_MEASURE_COLUMNS].reset_index(drop=True)


def _measure_rows(users: pd.DataFrame, user_ids: pd.Series, measure: Measure, position: int,
                  standards: Standards) -> pd.DataFrame:
    condition = standards.condition(measure.condition)
    threshold = getattr(standards.indicator(measure.indicator), measure.side)
    sexes = users["sex"] if "sex" in users else pd.Series(None, index=users.index)
    return pd.DataFrame({
        "user_id": user_ids.to_numpy(), "condition": condition.node_name,
        "measure": measure.words, "value": users[measure.column].astype(float).to_numpy(),
        "unit": standards.indicator(measure.indicator).unit, "comparator": measure.comparator,
        "threshold": [threshold.for_sex(s) for s in sexes],
        "source": _source(threshold.source, threshold.basis),
        "definition": condition.definition or "",
        "order": users.index.to_numpy(), "position": position})


def _source(source: str, basis: str | None) -> str:
    return f"{source}; {basis}" if basis else source
