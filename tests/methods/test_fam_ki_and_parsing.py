"""FAM-Bench answer parsing of echoed and negative phrasings, and knowledge injection as in the
paper's Listing 2 (food lists only) with the separate KI-with-limits modes."""

from __future__ import annotations

import json

import pytest

from nutrireason.errors import DataError
from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.fam.kb import NutrientLimit, Side, load_kb
from nutrireason.fam.report import FAM_MODES, fam_label, fam_sorted
from nutrireason.methods.base import get_method
from nutrireason.methods.fam import MODES, FamMethod
from nutrireason.methods.fam_prompts import (
    condition_reference,
    decision_value,
    parse_dish,
    system_prompt,
    words_decision,
)
from nutrireason.pipeline.run_request import mode_methods
from tests.methods.test_fam_methods import HASH, dish_item, rank_item
from tests.methods.test_fam_prompts import sent_to

KB = load_kb()
FAILED = ({"decision": None, "ingredients": []}, "failed")

# --------------------------------------------------------------------------- parsing

# (decision value or free text, expected decision)
ECHOES = [
    "recommend|not_recommend",
    "recommend | not_recommend",
    "recommend / not_recommend",
    "recommend/not_recommend",
    "recommend or not_recommend",
    "recommend or not recommend",
    "not_recommend or recommend",
    "not_recommend|recommend",
    '"recommend" or "not_recommend"',
    "Recommended or not recommended",
    "recommend (or not recommend)",
]
FREE_ECHOES = [
    "The decision is either recommend or not_recommend.",
    "I can't choose between recommend and not_recommend.",
    "Whether this dish is recommended or not depends on the portion.",
    'Rules: "decision" is exactly "recommend" or "not_recommend".',
]
AGAINST = [
    "I recommend avoiding it",
    "I recommend avoiding this dish.",
    "recommend against",
    "I would recommend against this dish.",
    "I would recommend limiting this dish",
    "would recommend skipping this dish",
    "would recommend avoiding this dish",
    "I recommend you avoid it.",
    "It is recommended to avoid this dish.",
    "I recommend not eating this often.",
    "I do not recommend",
    "I do not recommend this dish.",
    "wouldn't recommend",
    "I wouldn't recommend it.",
    "It should not be recommended.",
    "not be recommended",
    "I would not really recommend it.",
    "I cannot recommend this dish.",
    "I'd recommend alternatives with less sodium.",
]
FOR = ["I recommend this dish", "Recommended.", "recommend", "Recommended", "I recommend it."]


@pytest.mark.parametrize("value", ECHOES)
def test_an_echoed_choice_is_no_decision(value):
    assert decision_value(value) is None
    assert words_decision(value) is None
    answer = json.dumps({"decision": value, "rationale_ingredients": ["salt"]})
    assert parse_dish(answer) == FAILED  # the JSON field and the text fallback alike
    assert parse_dish(value) == FAILED


@pytest.mark.parametrize("text", FREE_ECHOES)
def test_free_text_naming_both_options_is_no_decision(text):
    assert parse_dish(text) == FAILED


@pytest.mark.parametrize("text", [
    # The template echoed verbatim (not JSON, so the decision field is read from the text).
    '{\n  "decision": "recommend" or "not_recommend",\n  "rationale_ingredients": []\n}',
    '{"decision": "recommend|not_recommend", "rationale_ingredients": ["salt"]}',
    '{"decision": "recommend / not_recommend", "rationale_ingredients": [',  # cut off
    '{"decision": ["recommend", "not_recommend"], "rationale_ingredients": ["salt"]}',
])
def test_an_echoed_template_is_unparseable(text):
    assert parse_dish(text) == FAILED


@pytest.mark.parametrize("text", AGAINST)
def test_advice_against_is_not_recommend(text):
    assert decision_value(text) == NOT_REC
    answer = json.dumps({"decision": text, "rationale_ingredients": ["salt"]})
    assert parse_dish(answer) == ({"decision": NOT_REC, "ingredients": ["salt"]}, "json")
    assert parse_dish(text) == ({"decision": NOT_REC, "ingredients": []}, "fallback")


@pytest.mark.parametrize("text", FOR)
def test_plain_recommend_stays_recommend(text):
    assert decision_value(text) == REC
    answer = json.dumps({"decision": text, "rationale_ingredients": []})
    assert parse_dish(answer) == ({"decision": REC, "ingredients": []}, "json")
    assert parse_dish(text) == ({"decision": REC, "ingredients": []}, "fallback")


@pytest.mark.parametrize(("text", "expected"), [
    # Naming the choice and then committing is a decision.
    ("Recommended or not? Not recommended: too salty.", NOT_REC),
    ("Options: recommend / not_recommend. My decision: recommend.", REC),
    ("Options: recommend / not_recommend. My decision: not_recommend.", NOT_REC),
    # The choice echoed in the answer's JSON, the real decision after it.
    ('Shape: "decision": "recommend" or "not_recommend"\n{"decision": "not_recommend"}',
     NOT_REC),
])
def test_a_committed_answer_after_the_echo_is_read(text, expected):
    assert parse_dish(text)[0]["decision"] == expected


def test_a_decision_field_after_an_echo_in_free_text_wins():
    text = 'Answer recommend or not_recommend.\n"decision": "recommend", "rationale_'
    assert parse_dish(text) == ({"decision": REC, "ingredients": []}, "fallback")


# --------------------------------------------------------------------------- KI reference


def small_entry(nutrient_limits: list[NutrientLimit] | None = None):
    """Hypertension with short hand-made lists: a food named twice, a concept named as a food."""
    return KB["hypertension"].model_copy(update={
        "beneficial": Side(foods=["legumes", "oats"], concepts=["legumes", "whole_grains"]),
        "limit": Side(foods=["cheese", "butter"], concepts=["full_fat_dairy"]),
        "avoid": Side(foods=["pizza", "cheese"], concepts=["processed_meats"]),
        "nutrient_limits": nutrient_limits or [
            NutrientLimit(nutrient="sodium", max=600, unit="mg", per="serving", source="t"),
            NutrientLimit(nutrient="saturated_fat", max=5, unit="g", per="serving",
                          source="t")]})


def test_the_ki_reference_is_the_two_food_lists_only():
    assert condition_reference(small_entry()) == {
        "recommend": ["legumes", "oats", "whole grains"],
        "not_recommend": ["cheese", "butter", "pizza", "full fat dairy", "processed meats"]}


def test_the_ki_limits_reference_adds_the_nutrient_limits():
    assert condition_reference(small_entry(), limits=True) == {
        "recommend": ["legumes", "oats", "whole grains"],
        "not_recommend": ["cheese", "butter", "pizza", "full fat dairy", "processed meats"],
        "nutrient_limits": ["sodium above 600 mg per serving",
                            "saturated fat above 5 g per serving"]}


@pytest.mark.parametrize("condition", list(KB))
def test_no_reference_carries_limits_or_per_dish_content(condition):
    reference = condition_reference(KB[condition])
    assert list(reference) == ["recommend", "not_recommend"]
    for side in reference.values():
        assert side and len(side) == len(set(side))
        assert not any("_" in text for text in side)
    with_limits = condition_reference(KB[condition], limits=True)
    assert {k: v for k, v in with_limits.items() if k != "nutrient_limits"} == reference
    assert len(with_limits["nutrient_limits"]) == len(KB[condition].nutrient_limits)


# --------------------------------------------------------------------------- modes

LIMIT_MODES = {"ki-limits": (False, True), "cot-ki-limits": (True, True)}


@pytest.mark.parametrize("task", ["dish", "rank"])
def test_ki_system_prompts(task):
    ki = system_prompt(task, cot=False, ki=True)
    assert '"condition_reference"' in ki and '"recommend"' in ki and '"not_recommend"' in ki
    assert "nutrient" not in ki and ki.endswith("not from the reference.")
    limits = system_prompt(task, cot=False, ki=True, limits=True)
    assert limits.startswith(ki) and '"nutrient_limits"' in limits
    assert system_prompt(task, cot=True, ki=True, limits=True).startswith(
        system_prompt(task, cot=True, ki=True))
    # Limits without KI add nothing: there is no reference to carry them.
    assert system_prompt(task, cot=False, ki=False, limits=True) == \
        system_prompt(task, cot=False, ki=False)


@pytest.mark.parametrize("mode", list(LIMIT_MODES))
@pytest.mark.parametrize("input_mode", ["text", "text+image", "image"])
def test_limit_modes_are_registered_for_every_input(mode, input_mode):
    name = f"fam-{mode}" if input_mode == "text" else f"fam-{mode}[{input_mode}]"
    method = get_method(name)
    assert isinstance(method, FamMethod) and method.name == name
    assert (method.cot, method.ki, method.limits) == (*LIMIT_MODES[mode], True)
    assert method.settings.json_mode is True
    assert mode_methods("fam", [mode], input_mode) == [name]


def test_only_the_limit_modes_inject_limits():
    assert [m for m, spec in MODES.items() if spec.limits] == ["ki-limits", "cot-ki-limits"]
    assert list(MODES)[:4] == ["baseline", "cot", "ki", "cot-ki"]


def test_ki_payload_has_no_limits_and_ki_limits_payload_has_them():
    item = dish_item(1, HASH, "chronic_kidney_disease", NOT_REC, ["pork belly cured"])
    entry = KB["chronic_kidney_disease"]
    (ki,) = sent_to("fam-ki", item)
    (limits,) = sent_to("fam-ki-limits", item)
    ki_reference = json.loads(ki.messages[1].text())["condition_reference"]
    assert ki_reference == {"Chronic Kidney Disease": condition_reference(entry)}
    assert "nutrient_limits" not in ki.messages[1].text()
    payload = json.loads(limits.messages[1].text())
    assert payload["condition_reference"] == {
        "Chronic Kidney Disease": condition_reference(entry, limits=True)}
    assert limits.messages[0].content == system_prompt("dish", cot=False, ki=True, limits=True)
    assert ki.messages[0].content == system_prompt("dish", cot=False, ki=True)


def test_cot_ki_limits_rank_calls_all_carry_the_limits():
    requests = sent_to("fam-cot-ki-limits", rank_item())
    assert len(requests) == 5
    expected = {KB[c].label: condition_reference(KB[c], limits=True)
                for c in ("hypertension", "chronic_kidney_disease")}
    for request, task in zip(requests, ["rank"] + ["dish"] * 4, strict=True):
        assert json.loads(request.messages[1].text())["condition_reference"] == expected
        assert request.messages[0].content == system_prompt(task, cot=True, ki=True,
                                                             limits=True)


def test_cli_accepts_the_limit_modes_and_names_them_when_refusing():
    assert mode_methods("fam", ["ki-limits", "cot-ki-limits", "reference"], "text") == [
        "fam-ki-limits", "fam-cot-ki-limits", "fam-reference"]
    with pytest.raises(DataError) as caught:
        mode_methods("fam", ["ki-nutrients"], "text")
    assert "ki-limits" in str(caught.value) and "cot-ki-limits" in str(caught.value)


def test_report_orders_the_limit_modes_after_cot_ki():
    assert list(FAM_MODES) == ["baseline", "cot", "ki", "cot-ki", "ki-limits", "cot-ki-limits",
                               "reference"]
    methods = ["fam-reference", "fam-cot-ki-limits", "fam-ki-limits", "fam-cot-ki", "fam-ki",
               "fam-baseline"]
    assert [m for _, m in fam_sorted(("x", m) for m in methods)] == methods[::-1]
    assert [fam_label(m) for m in ("fam-ki-limits", "fam-cot-ki-limits[image]")] == [
        "KI+limits", "CoT+KI+limits (image)"]
