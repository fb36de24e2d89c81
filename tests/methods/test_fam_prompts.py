"""FAM-Bench prompts and answer parsing: the system prompt per task and mode, the knowledge
injected in KI modes (and nothing per-dish), and the forgiving-but-strict parsers."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.fam.kb import NutrientLimit, load_kb
from nutrireason.methods.base import get_method
from nutrireason.methods.fam import FamMethod, FamReference
from nutrireason.methods.fam_prompts import (
    cited_ingredients,
    condition_question,
    condition_reference,
    decision_value,
    first_json_object,
    parse_dish,
    parse_rank,
    ranking_letters,
    system_prompt,
)
from nutrireason.models.types import ChatRequest, GenerationSettings, ModelResponse
from tests.methods.test_fam_methods import CABBAGE, HASH, RANK_DISHES, dish_item, rank_item

KB = load_kb()
KI_ADDENDUM = 'The user message may carry "condition_reference"'
MODES = {"baseline": (False, False), "cot": (True, False), "ki": (False, True),
         "cot-ki": (True, True)}

# --------------------------------------------------------------------------- dish parsing


def test_json_in_a_code_fence_with_chatter_is_read():
    text = ('Sure! Here is my answer:\n```json\n{"decision": "not_recommend", '
            '"rationale_ingredients": [{"condition": "Hypertension", "ingredients": '
            '["soy sauce", "bacon"]}]}\n```\nHope this helps {not json}.')
    assert parse_dish(text) == ({"decision": NOT_REC, "ingredients": ["soy sauce", "bacon"]},
                                "json")


@pytest.mark.parametrize(("spelling", "expected"), [
    ("notrecommend", NOT_REC),
    ("not_recommend", NOT_REC),
    ("Not recommended", NOT_REC),
    ("NOT-RECOMMEND", NOT_REC),
    ("should not be recommended", NOT_REC),
    ("no", NOT_REC),
    ("unsuitable", NOT_REC),
    ("recommend", REC),
    ("Recommended", REC),
    (" RECOMMEND ", REC),
    ("Yes", REC),
    ("suitable", REC),
])
def test_decision_spellings(spelling, expected):
    assert decision_value(spelling) == expected
    answer = json.dumps({"decision": spelling, "rationale_ingredients": ["salt"]})
    assert parse_dish(answer) == ({"decision": expected, "ingredients": ["salt"]}, "json")


@pytest.mark.parametrize("value", ["maybe", "", "neutral", None, 1, ["recommend"]])
def test_invalid_decision_values(value):
    assert decision_value(value) is None


def test_an_invalid_json_decision_fails_without_decision_words():
    answer = '```json\n{"decision": "maybe", "rationale_ingredients": ["salt"]}\n```'
    assert parse_dish(answer) == ({"decision": None, "ingredients": []}, "failed")


def test_an_invalid_json_decision_falls_back_to_the_text_and_drops_the_citations():
    answer = '{"decision": null, "rationale_ingredients": ["salt"]}\nOverall: not recommended.'
    assert parse_dish(answer) == ({"decision": NOT_REC, "ingredients": []}, "fallback")


def test_a_named_but_invalid_decision_is_not_overridden_by_other_words():
    answer = '{"decision": "unsure", "rationale_ingredients": ["salt"]}\nOverall: not recommended.'
    assert parse_dish(answer) == ({"decision": None, "ingredients": []}, "failed")


def test_a_cut_off_json_answer_still_gives_its_decision():
    answer = ('{"reasoning_steps": ["I would recommend less salt"], "decision": "Not recommended", '
              '"rationale_ingredients": [{"condition": "Hyp')
    assert parse_dish(answer) == ({"decision": NOT_REC, "ingredients": []}, "fallback")


@pytest.mark.parametrize(("text", "expected"), [
    ("On balance I would recommend this dish.", ({"decision": REC, "ingredients": []},
                                                  "fallback")),
    ("This dish is not recommended: too much salt.",
     ({"decision": NOT_REC, "ingredients": []}, "fallback")),
    # Broken JSON (a trailing comma) is read as the object it means.
    ('{"decision": "not_recommend", "rationale_ingredients": [],}',
     ({"decision": NOT_REC, "ingredients": []}, "json")),
    ("The dish looks tasty.", ({"decision": None, "ingredients": []}, "failed")),
    ("", ({"decision": None, "ingredients": []}, "failed")),
])
def test_text_fallback_and_failure(text, expected):
    assert parse_dish(text) == expected


def test_first_json_object_prefers_the_object_with_the_key():
    text = 'Notes {"note": 1} then {"x": {"decision": "recommend"}} and {"decision": "no"}'
    assert first_json_object(text, "decision") == {"decision": "recommend"}
    assert first_json_object('{"a": 1} {"b": 2}', "decision") == {"a": 1}
    assert first_json_object("{broken} [1, 2] no object", "decision") is None
    assert first_json_object("", "decision") is None


def test_rationale_entries_as_dicts_are_merged_in_order_without_duplicates():
    value = [{"condition": "Hypertension", "ingredients": ["salt", "butter"]},
             {"condition": "Chronic Kidney Disease", "ingredients": ["salt", " bacon ", "", 3]},
             {"condition": "Gout"}, {"ingredients": "not a list"}, 7, None]
    assert cited_ingredients(value) == ["salt", "butter", "bacon"]


def test_rationale_as_flat_strings_is_deduplicated():
    assert cited_ingredients(["salt", "butter", "salt", "  "]) == ["salt", "butter"]
    answer = '{"decision": "recommend", "rationale_ingredients": ["cabbage", "cabbage"]}'
    assert parse_dish(answer) == ({"decision": REC, "ingredients": ["cabbage"]}, "json")


@pytest.mark.parametrize("value", [None, "salt", {"ingredients": ["salt"]}, 3])
def test_rationale_that_is_not_a_list_cites_nothing(value):
    assert cited_ingredients(value) == []


def test_rationale_dedup_after_stripping():
    assert cited_ingredients(["olive oil", "olive oil "]) == ["olive oil"]


def test_negated_contractions_are_not_recommend():
    assert decision_value("don't recommend") == NOT_REC
    assert parse_dish("I wouldn't recommend it.")[0]["decision"] == NOT_REC


# --------------------------------------------------------------------------- rank parsing


@pytest.mark.parametrize(("value", "expected"), [
    (["B", "A", "D", "C"], ["B", "A", "D", "C"]),
    (["Dish B", "option a", "D.", "(c)"], ["B", "A", "D", "C"]),
    ("B > A > D > C", ["B", "A", "D", "C"]),
    ("B, A, D, C", ["B", "A", "D", "C"]),
    (["B", "b", "Dish B", "A", "D", "C", "A"], ["B", "A", "D", "C"]),
    (["E", "B", "X", "A", "Apple", "Banana", "D", "dish F", "C"], ["B", "A", "D", "C"]),
    (["B", "A"], ["B", "A"]),
    ([], []),
    (None, []),
    (3, []),
])
def test_ranking_letters(value, expected):
    assert ranking_letters(value) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ('Here you go:\n```json\n{"ranking": ["B", "A", "D", "C"]}\n```\nThanks.',
     ({"ranking": ["B", "A", "D", "C"]}, "json")),
    ('{"reasoning_steps": ["A is salty"], "ranking": ["Dish B", "option a", "D", "C"]}',
     ({"ranking": ["B", "A", "D", "C"]}, "json")),
    ('{"ranking": "B > A > D > C"}', ({"ranking": ["B", "A", "D", "C"]}, "json")),
    ('{"ranking": ["B", "B", "E", "A"]}', ({"ranking": ["B", "A"]}, "json")),
    ("My ranking: C, A, B, D", ({"ranking": ["C", "A", "B", "D"]}, "fallback")),
    ("Best to worst: D > C > B > A.", ({"ranking": ["D", "C", "B", "A"]}, "fallback")),
    ("B -> A -> D -> C", ({"ranking": ["B", "A", "D", "C"]}, "fallback")),
    ('{"ranking": []}\nFinal: D > C > B > A', ({"ranking": ["D", "C", "B", "A"]}, "fallback")),
    # A cut-off JSON answer: the letters already written, before any letters in prose.
    ('Dishes A, B, C and D compared. {"ranking": ["C", "A", "B"',
     ({"ranking": ["C", "A", "B"]}, "fallback")),
    ("I cannot decide.", ({"ranking": []}, "failed")),
    ("", ({"ranking": []}, "failed")),
])
def test_parse_rank(text, expected):
    assert parse_rank(text) == expected


# --------------------------------------------------------------------------- prompts


@pytest.mark.parametrize("task", ["dish", "rank"])
@pytest.mark.parametrize("mode", list(MODES))
def test_system_prompt_parts_per_mode(task, mode):
    cot, ki = MODES[mode]
    prompt = system_prompt(task, cot, ki)
    assert ('"reasoning_steps": ["<step 1>", "<step 2>", "..."]' in prompt) is cot
    assert ("Think step by step" in prompt) is cot
    assert (KI_ADDENDUM in prompt) is ki
    assert ("condition_reference" in prompt) is ki
    if task == "dish":
        assert prompt.startswith("You judge whether a dish suits")
        assert '"decision": "recommend" or "not_recommend"' in prompt
        assert '"rationale_ingredients": [' in prompt and '"ranking"' not in prompt
        answer_key = '"decision":'
        assert ('4. Decide "recommend" only when' in prompt) is cot
    else:
        assert prompt.startswith("You compare four dishes, labelled A, B, C and D")
        assert '"ranking": ["<letter>", "<letter>", "<letter>", "<letter>"]' in prompt
        assert '"decision"' not in prompt and "rationale_ingredients" not in prompt
        answer_key = '"ranking":'
        assert ("4. Order the dishes by how well each fits" in prompt) is cot
    if cot:
        assert prompt.index('"reasoning_steps":') < prompt.index(answer_key)
    if ki:
        assert prompt.endswith("not from the reference.")
    assert "%s" not in prompt


def test_condition_question():
    assert condition_question(["Gout"], rank=False) == \
        "Is this dish suitable for someone managing Gout?"
    assert condition_question(["Gout", "Stroke", "Obesity"], rank=False) == \
        "Is this dish suitable for someone managing Gout, Stroke and Obesity?"
    assert condition_question(["Gout", "Stroke"], rank=True) == (
        "Rank dishes A, B, C and D from most to least suitable for someone managing Gout and "
        "Stroke.")


def test_condition_reference_for_hypertension():
    # The KI reference is paper Listing 2's shape: "recommend" and "not_recommend" food lists
    # and nothing else (it used to carry "limit", "avoid" and "nutrient_limits"; the limits now
    # go only to the ki-limits modes, see test_fam_ki_and_parsing.py).
    entry = KB["hypertension"]
    reference = condition_reference(entry)
    assert list(reference) == ["recommend", "not_recommend"]
    assert reference["recommend"][:len(entry.beneficial.foods)] == entry.beneficial.foods
    for concept in entry.beneficial.concepts:
        assert concept.replace("_", " ") in reference["recommend"]
    for name in ("limit", "avoid"):
        side = entry.side(name)
        for text in [*side.foods, *(c.replace("_", " ") for c in side.concepts)]:
            assert text in reference["not_recommend"]
    assert "fruits" in reference["recommend"] and "pizza" in reference["not_recommend"]
    assert "sodium" not in json.dumps(reference)
    assert not any("_" in text for side in reference.values() for text in side)


def test_condition_reference_states_a_floor_as_below():
    entry = KB["iron_deficiency_anemia"].model_copy(update={"nutrient_limits": [
        NutrientLimit(nutrient="iron", min=1.5, unit="mg", per="100g", source="test")]})
    assert condition_reference(entry, limits=True)["nutrient_limits"] == \
        ["iron below 1.5 mg per 100 g"]
    assert "nutrient_limits" not in condition_reference(entry)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("input_mode", ["text", "text+image", "image"])
def test_every_mode_and_input_is_registered_with_json_mode(mode, input_mode):
    name = f"fam-{mode}" if input_mode == "text" else f"fam-{mode}[{input_mode}]"
    base = GenerationSettings(temperature=0.7, max_tokens=900)
    method = get_method(name, base)
    assert isinstance(method, FamMethod) and method.name == name
    assert (method.mode, method.input_mode) == (mode, input_mode)
    assert (method.cot, method.ki) == MODES[mode]
    assert method.settings.json_mode is True and base.json_mode is False
    assert (method.settings.temperature, method.settings.max_tokens) == (0.7, 900)
    assert method.describe()["mode"] == mode and method.describe()["input"] == input_mode
    assert isinstance(get_method("fam-reference"), FamReference)


# --------------------------------------------------------------------------- KI payload


class Recorder:
    """A backend that keeps every request and answers with ``answer(request)``."""

    def __init__(self, answer: str = '{"decision": "recommend", "ranking": ["A"]}') -> None:
        self.answer = answer
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=self.answer)


def sent_to(method_name: str, item: dict[str, Any]) -> list[ChatRequest]:
    recorder = Recorder()
    asyncio.run(get_method(method_name).answer(item, recorder))
    return recorder.requests


# What an item knows that a model must never see.
LEAKS = ("gold", "evidence", '"rationale"', "rationale\"", "utility", "labels",
         "avoid_violations", "recipe_ids", "combined_constraint_discrimination", "canonical",
         "grams", "pork belly cured", "dish-00001", "rank-00001")


def test_ki_dish_payload_carries_the_reference_and_nothing_per_dish():
    item = dish_item(1, HASH, "chronic_kidney_disease", NOT_REC, ["pork belly cured"])
    (request,) = sent_to("fam-ki", item)
    system, user = request.messages
    assert system.content == system_prompt("dish", cot=False, ki=True)
    assert isinstance(user.content, str)
    assert json.loads(user.content) == {
        "question": "Is this dish suitable for someone managing Chronic Kidney Disease?",
        "conditions": ["Chronic Kidney Disease"],
        "condition_reference": {
            "Chronic Kidney Disease": condition_reference(KB["chronic_kidney_disease"])},
        "recipe": HASH["view"]}
    for leak in LEAKS:
        assert leak not in user.content
    assert request.settings.json_mode is True


def test_baseline_payload_has_no_reference():
    item = dish_item(1, CABBAGE, "hypertension", REC, ["cabbage"])
    (request,) = sent_to("fam-baseline", item)
    assert request.messages[0].content == system_prompt("dish", cot=False, ki=False)
    assert json.loads(request.messages[1].text()) == {
        "question": "Is this dish suitable for someone managing Hypertension?",
        "conditions": ["Hypertension"], "recipe": CABBAGE["view"]}


def test_cot_ki_rank_payloads_carry_the_reference_in_all_five_calls():
    requests = sent_to("fam-cot-ki", rank_item())
    assert len(requests) == 5
    expected_reference = {KB[c].label: condition_reference(KB[c])
                          for c in ("hypertension", "chronic_kidney_disease")}
    assert list(expected_reference) == ["Hypertension", "Chronic Kidney Disease"]
    ranking = json.loads(requests[0].messages[1].text())
    assert requests[0].messages[0].content == system_prompt("rank", cot=True, ki=True)
    assert ranking["condition_reference"] == expected_reference
    assert ranking["dishes"] == {k: {"recipe": d["view"]} for k, d in RANK_DISHES.items()}
    assert set(ranking) == {"question", "conditions", "condition_reference", "dishes"}
    for request, letter in zip(requests[1:], "ABCD", strict=True):
        assert request.messages[0].content == system_prompt("dish", cot=True, ki=True)
        payload = json.loads(request.messages[1].text())
        assert payload["condition_reference"] == expected_reference
        assert payload["recipe"] == RANK_DISHES[letter]["view"]
    for request in requests:
        text = request.messages[1].text()
        for leak in LEAKS:
            assert leak not in text


def test_recommendation_is_not_a_decision_and_the_last_full_ranking_wins():
    assert parse_dish("I cannot make a recommendation.") == (
        {"decision": None, "ingredients": []}, "failed")
    assert parse_rank("Dishes A, B, C and D compared. My ranking: C, A, B, D") == (
        {"ranking": ["C", "A", "B", "D"]}, "fallback")


def test_condition_reference_lists_each_entry_once():
    from nutrireason.fam.kb import load_kb

    reference = condition_reference(load_kb()["hypertension"])
    for side in ("recommend", "not_recommend"):
        assert len(reference[side]) == len(set(reference[side]))
    assert "fruits" in reference["recommend"]
