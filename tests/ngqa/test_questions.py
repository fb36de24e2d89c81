"""Links, levels and gold answers against the NGQA case studies (Appendix G, DATA.md 6)."""

from __future__ import annotations

import pandas as pd
import pytest

from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.ngqa.questions import gold_answers, level_of, link_edges, user_profiles
from nutrireason.standards import load_standards

CONDITION_IDS = [c.id for c in load_standards().conditions.conditions]


def profile(*conditions: str, habits: tuple[str, ...] = ()):
    row = {"seqn": 1, "cycle": "J", "habits": [list(habits)]}
    row |= {c: [c in conditions] for c in CONDITION_IDS}
    (result,) = user_profiles(pd.DataFrame(row), load_standards())
    return result


def edges_text(edges) -> list[str]:
    return [f"({h} {r} {t})" for h, r, t in edges]


def test_case_study_6_edges_and_answers():  # Table 17
    user = profile("obesity", "opioid_misuse", "hypertension", "diabetes", "low_fat_diet")
    food = {"low_carb", "high_sodium", "low_protein", "high_cholesterol", "low_saturated_fat"}
    edges = link_edges(user.requirements, food)
    assert edges_text(edges) == [
        "(obesity need low_calorie)", "(opioid_misuse contradict low_protein)",
        "(opioid_misuse need low_sugar)", "(opioid_misuse contradict high_sodium)",
        "(hypertension contradict high_sodium)", "(diabetes need low_sugar)",
        "(diabetes match low_carb)", "(Low fat/Low cholesterol diet contradict high_cholesterol)",
        "(Low fat/Low cholesterol diet match low_saturated_fat)"]
    gold = gold_answers(edges, load_ngqa_config())
    assert gold["text_generation"] == \
        "No, because the food is high in sodium, high in cholesterol, low in protein."
    assert level_of(2, 4) == "complex"


def test_case_study_3_text_answer():  # Table 14
    user = profile("opioid_misuse", "diabetes", "low_fat_diet", "low_salt_diet", "diabetic_diet")
    food = {"low_carb", "low_sugar", "high_sodium", "high_protein", "high_cholesterol",
            "low_saturated_fat"}
    gold = gold_answers(link_edges(user.requirements, food), load_ngqa_config())
    assert gold["binary"] == "Yes"
    assert gold["text_generation"] == ("Yes, because the food is low in carb, low in sugar, "
                                       "low in saturated_fat, high in protein.")


def test_case_study_7_multi_label():  # Table 18
    user = profile("obesity", "opioid_misuse", "hypertension", "diabetes", "low_fat_diet")
    food = {"low_carb", "low_sugar", "high_sodium", "low_protein", "low_cholesterol",
            "low_saturated_fat"}
    gold = gold_answers(link_edges(user.requirements, food), load_ngqa_config())
    assert gold["multi_label"] == ["low_carb", "low_sugar", "high_sodium", "low_cholesterol",
                                   "low_saturated_fat", "low_protein"]


@pytest.mark.parametrize(("conditions", "food", "answer"), [
    (("obesity", "hypertension"), {"low_carb", "high_sodium", "high_calorie", "high_cholesterol"},
     "No, because the food is high in sodium, high in calorie."),  # Table 15
    (("low_fat_diet", "low_carb_diet"), {"low_carb", "low_sugar", "high_sodium", "low_protein",
                                         "low_cholesterol", "low_saturated_fat"},
     "Yes, because the food is low in carb, low in cholesterol, low in saturated_fat."),  # T16
])
def test_case_study_text_answers(conditions, food, answer):
    gold = gold_answers(link_edges(profile(*conditions).requirements, food), load_ngqa_config())
    assert gold["text_generation"] == answer


def test_ties_are_no_and_levels_follow_their_definitions():
    user = profile("hypertension", "diabetes")
    edges = link_edges(user.requirements, {"high_sodium", "low_sugar"})
    assert gold_answers(edges, load_ngqa_config())["binary"] == "No"  # 1 match vs 1 contradict
    assert [level_of(*c) for c in [(0, 0), (1, 0), (0, 1), (2, 0), (0, 3), (1, 1)]] == [
        None, "sparse", "sparse", "standard", "standard", "complex"]
