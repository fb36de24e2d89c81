"""The reading rules one at a time (methods.reading, the NGQA and FAM-Bench readers), and a cut
off answer in all five task types through the methods themselves."""

from __future__ import annotations

import asyncio

import pytest

from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.methods.base import get_method
from nutrireason.methods.fam_prompts import (
    clause_decision,
    letter_of,
    prose_decision,
    read_dish,
    read_rank,
)
from nutrireason.methods.ngqa_prompts import (
    composed_sentence,
    read_answer,
    read_binary,
    read_sentence,
    read_tags,
)
from nutrireason.methods.reading import (
    boxed,
    clauses,
    committed_clauses,
    declined,
    json_values,
    last_object_with,
    plain,
    read_output,
)
from nutrireason.models.scripted import ScriptedBackend, register
from tests.methods.test_fam_methods import CABBAGE, dish_item, rank_item

TITLES = {"A": "Lentil Soup", "B": "Chocolate Fudge Cake", "C": "Grilled Salmon",
          "D": "Bacon Mac and Cheese"}

# ------------------------------------------------------------------- shared helpers


def test_json_values_are_complete_top_level_values_in_order():
    text = 'draft {"a": 1} then ```json\n{"b": {"c": 2}}\n``` and [1, 2] and {"cut": '
    assert json_values(text) == [{"a": 1}, {"b": {"c": 2}}, [1, 2]]


def test_the_last_object_with_the_key_wins_one_level_down_too():
    text = '{"decision": "recommend"} ... {"answer": {"decision": "not_recommend"}}'
    found = last_object_with(text, ("decision",))
    assert found == ({"decision": "not_recommend"}, "decision")
    assert last_object_with("{}", ("decision",)) is None


def test_plain_drops_markdown_and_boxed():
    assert plain("## **Answer:** `No`") == "Answer: No"
    assert plain("so \\boxed{\\text{Yes}}") == "so Yes"
    assert boxed("a \\boxed{No} b \\boxed{Yes}") == "Yes"


def test_clauses_set_caveats_apart():
    assert clauses("I would recommend it in moderation, although large portions are not "
                   "recommended") == ["I would recommend it in moderation",
                                      "large portions are not recommended"]


@pytest.mark.parametrize(("text", "reason"), [
    ("I can't provide medical advice. Please consult your nephrologist.", "refusal"),
    ("I'm sorry, but I cannot assess this for you.", "refusal"),
    ("It depends on the portion size.", "hedge"),
    ("This could go either way.", "hedge"),
    ("I can't give a definitive answer without the serving size.", "hedge"),
    ("It's hard to rank them without serving sizes.", "hedge"),
    ("The dish is tasty.", None),
])
def test_declines_are_named(text, reason):
    assert declined(text) == reason


def test_committed_clauses_leave_out_disclaimers():
    assert committed_clauses("I'm not a doctor, but no, it is not healthy.") == [
        "no, it is not healthy."]


def test_an_empty_final_answer_is_no_answer_and_a_cut_off_one_truncated():
    assert read_output("<think>x</think>   ", read_binary).reason == "no_answer"
    assert read_output("<think>x", read_binary).reason == "truncated"
    assert read_output("Yes", read_binary, finish_reason="length").reason == "truncated"


# ------------------------------------------------------------------- NGQA binary


@pytest.mark.parametrize(("text", "verdict", "rule"), [
    ('{"answer": "No"}', "No", "json"),
    ('{"healthy": true}', "Yes", "json"),
    ("Thinking aloud... \\boxed{No}", "No", "boxed"),
    ("The food is high in sodium.\n\n**Final Answer:** Yes", "Yes", "marker"),
    ("No. Although fibre is good, yes, sodium matters more.", "No", "verdict_first"),
    ("I'm not a doctor, but No: the sodium is too high.", "No", "verdict_first"),
    ("This food is not healthy for the user.", "No", "healthy_phrase"),
    ("It is a suitable choice for the user.", "Yes", "healthy_phrase"),
    ("Given the low sugar, I'd say yes", "Yes", "last_word"),
])
def test_binary_rules(text, verdict, rule):
    reading = read_binary(text)
    assert (reading.value, reading.rule) == (verdict, rule)


def test_an_echo_of_the_choice_is_no_verdict():
    assert not read_binary("I must answer Yes or No.").ok


def test_both_verdicts_with_a_hedge_is_a_hedge():
    reading = read_binary("Both yes and no: yes, because it is low in sugar; no, because it "
                          "is high in sodium.")
    assert (reading.ok, reading.reason) == (False, "hedge")


# ------------------------------------------------------------------- NGQA multi-label


@pytest.mark.parametrize(("text", "tags", "rule"), [
    ('{"tags": ["high_sodium", "low_protein"]}', ["high_sodium", "low_protein"], "json"),
    ('["low_carb", "low_sugar"]', ["low_carb", "low_sugar"], "json"),
    ("Answer: high sodium, low protein", ["high_sodium", "low_protein"], "marker"),
    ("| Nutrient | Level |\n|---|---|\n| Sodium | High |\n| Protein | low |",
     ["high_sodium", "low_protein"], "table"),
    ("| Nutrient | Level | Connects? |\n|---|---|---|\n| Carb | low | Yes |\n"
     "| Sodium | high | No |", ["low_carb"], "table"),
])
def test_multi_label_rules(text, tags, rule):
    reading = read_tags(text)
    assert (reading.value, reading.rule) == (tags, rule)


def test_tags_about_the_user_are_not_the_foods():
    assert read_tags("The user follows a low-sodium diet; the food is high in sugar.").value \
        == ["high_sugar"]


# ------------------------------------------------------------------- NGQA text generation


def test_the_last_because_sentence_is_scored():
    text = "Yes, the fibre helps. No, because the food is high in sodium."
    reading = read_sentence(text)
    assert (reading.value, reading.rule) == ("No, because the food is high in sodium.",
                                             "because_sentence")


def test_reasons_given_as_a_list_make_the_sentence():
    reading = read_sentence("No, because the food is:\n- high in sodium\n- high in calorie")
    assert reading.value == "No, because the food is high in sodium, high in calorie."
    assert reading.rule == "listed_reasons"
    assert composed_sentence("Yes", ["low in saturated fat"]) == \
        "Yes, because the food is low in saturated fat."


def test_a_draft_sentence_in_the_thinking_is_not_scored():
    reading = read_answer("text_generation", "<think>Yes, because the food is low in carb."
                          "</think>\nNo, because the food is high in sodium.")
    assert reading.value == "No, because the food is high in sodium."
    assert reading.form == "think"


# ------------------------------------------------------------------- FAM-Bench dish level


@pytest.mark.parametrize(("text", "decision"), [
    ("I would recommend it in moderation, although large portions are not recommended", REC),
    ("I recommend avoiding this dish.", NOT_REC),
    ("The recommended daily sodium intake is 2300 mg. This dish is not suitable.", NOT_REC),
    ("Guidelines recommend limiting sodium, and this dish is a good choice.", REC),
    ("Lentils are good. Overall, not recommended.", NOT_REC),
])
def test_prose_decisions(text, decision):
    assert prose_decision(text) == decision


def test_a_clause_without_a_decision_decides_nothing():
    assert clause_decision("The dish has lentils and carrots") is None


@pytest.mark.parametrize(("text", "expected", "rule"), [
    ('{"decision": "recommend"}\nOn reflection:\n{"decision": "not_recommend", '
     '"rationale_ingredients": [{"condition": "CKD", "ingredients": ["spinach"]}]}',
     {"decision": NOT_REC, "ingredients": ["spinach"]}, "json"),
    ("Decision: not_recommend\nKey ingredients:\n- butter\n- bacon",
     {"decision": NOT_REC, "ingredients": ["butter", "bacon"]}, "marker"),
    ("| Field | Value |\n|---|---|\n| Decision | recommend |\n| Supporting ingredients | rice, "
     "carrots |", {"decision": REC, "ingredients": ["rice", "carrots"]}, "marker"),
    ("Recommendation: Avoid. Key ingredients: butter, salt",
     {"decision": NOT_REC, "ingredients": ["butter", "salt"]}, "marker"),
])
def test_dish_rules(text, expected, rule):
    reading = read_dish(text)
    assert (reading.value, reading.rule) == (expected, rule)


def test_an_undecided_json_decision_is_a_hedge():
    reading = read_dish('{"decision": "it depends", "rationale_ingredients": []}')
    assert (reading.ok, reading.reason) == (False, "hedge")


def test_a_refusal_that_names_recommend_is_not_a_decision():
    text = "I can't provide medical advice about whether to recommend this. Please consult " \
           "your nephrologist."
    assert read_output(text, read_dish).reason == "refusal"


def test_whether_to_recommend_depends_is_a_hedge():
    text = "Whether to recommend this dish depends on the portion size."
    assert read_output(text, read_dish).reason == "hedge"


# ------------------------------------------------------------------- FAM-Bench ranking


@pytest.mark.parametrize(("item", "letter"), [
    ("c", "C"), ("Dish B", "B"), ("(D)", "D"), ("**Grilled Salmon** (C)", "C"),
    ("Lentil soup", "A"), ("the bacon mac & cheese", "D"), ("nothing here", None),
])
def test_letter_of(item, letter):
    assert letter_of(item, TITLES) == letter


@pytest.mark.parametrize(("text", "ranking", "rule"), [
    ('["B", "A", "D", "C"]', ["B", "A", "D", "C"], "json"),
    ('{"ranking": ["Grilled Salmon", "Lentil Soup", "Chocolate Fudge Cake", '
     '"Bacon Mac and Cheese"]}', ["C", "A", "B", "D"], "json"),
    ("Final ranking: C > A > B > D", ["C", "A", "B", "D"], "marker"),
    ("1. Grilled Salmon\n2. Lentil Soup\n3. Chocolate Fudge Cake\n4. Bacon Mac and Cheese",
     ["C", "A", "B", "D"], "numbered"),
    ("| Rank | Dish |\n|---|---|\n| 1 | B |\n| 2 | A |\n| 3 | D |\n| 4 | C |",
     ["B", "A", "D", "C"], "numbered"),
    ("| Dish | Rank |\n|---|---|\n| A | 2 |\n| B | 1 |", ["B", "A"], "numbered"),
    ("1st: A; 2nd: C; 3rd: D; 4th: B", ["A", "C", "D", "B"], "ordinals"),
    ("Top pick: B. Runner-up: A.", ["B", "A"], "ordinals"),
    ("c, a, b, d", ["C", "A", "B", "D"], "sequence"),
    ("A = C > B > D", ["A", "C", "B", "D"], "sequence"),
    ("C → A → D → B", ["C", "A", "D", "B"], "sequence"),
    ("Grilled Salmon is the best choice here.", ["C"], "best_only"),
])
def test_ranking_rules(text, ranking, rule):
    reading = read_rank(text, TITLES)
    assert (reading.value, reading.rule) == ({"ranking": ranking}, rule)


def test_a_ranking_that_places_no_dish_is_no_answer():
    assert not read_rank("They all look fine to me.", TITLES).ok


# ------------------------------------------------------------------- through the methods

UNCLOSED = "<think>\nThe food is high in sodium, so it might be no. Let me double-check"


def _answer(method_name: str, item: dict) -> object:
    register("unclosed-think", lambda request: UNCLOSED)
    method = get_method(method_name)
    return asyncio.run(method.answer(item, ScriptedBackend("unclosed-think")))


NGQA_ITEM = {"id": "q1", "question": "Is Soup a healthy food for the user?", "food": "Soup",
             "triples": [["user", "has", "hypertension"], ["Soup", "has", "high_sodium"]],
             "edges": []}


@pytest.mark.parametrize("task", ["binary", "multi_label", "text_generation"])
@pytest.mark.parametrize("method", ["plain", "cot-zero", "tog"])
def test_an_unclosed_think_block_is_truncated_in_ngqa_tasks(task, method):
    prediction = _answer(method, NGQA_ITEM | {"task": task, "answer": "No"})
    assert prediction.parse_ok is False
    assert prediction.extra["reading"] == {"rule": "none", "reason": "truncated",
                                           "form": "think_unclosed"}


def test_an_unclosed_think_block_is_truncated_in_fam_tasks():
    dish = _answer("fam-cot", dish_item(1, CABBAGE, "hypertension", REC, ["cabbage"]))
    assert dish.parse_ok is False and dish.parsed["decision"] is None
    assert dish.extra["reading"]["reason"] == "truncated"
    rank = _answer("fam-baseline", rank_item())
    assert rank.parse_ok is False and rank.parsed["ranking"] == []
    assert rank.extra["reading"]["reason"] == "truncated"
    assert set(rank.parsed["option_decisions"].values()) == {None}
    assert {r["reason"] for r in rank.extra["option_readings"].values()} == {"truncated"}


# ------------------------------------------------------------------- rules from later corpora


@pytest.mark.parametrize(("text", "verdict", "rule"), [
    ("Nope.", "No", "verdict_first"),
    ("Yep, it fits the user's diet.", "Yes", "verdict_first"),
    ("I would not say it is healthy for this user.", "No", "healthy_phrase"),
    ("Steer clear of it.", "No", "advice_words"),
])
def test_spoken_verdicts_negated_phrases_and_advice(text, verdict, rule):
    reading = read_binary(text)
    assert (reading.value, reading.rule) == (verdict, rule)


def test_a_question_is_not_an_answer():
    assert not read_binary("Is Bread, whole wheat a healthy food for the user?").ok


def test_coordinated_needs_of_the_user_are_not_the_foods_tags():
    text = ("Because the user needs low sugar and low carb for their diabetes, the relevant "
            "tags for this food are high_sugar and high_carb.")
    assert set(read_tags(text).value) == {"high_sugar", "high_carb"}


def test_the_inner_answer_object_wins_over_its_wrapper():
    text = ('{"answer": {"decision": "not_recommend", "rationale_ingredients": ["butter"]}, '
            '"alternative": "Could be recommended with yogurt."}')
    assert read_dish(text).value == {"decision": NOT_REC, "ingredients": ["butter"]}


def test_a_table_with_a_header_row_labels_each_cell():
    text = ("| Condition | Decision | Ingredients |\n|---|---|---|\n"
            "| NAFLD | not_recommend | condensed milk, sugar |")
    assert read_dish(text).value == {"decision": NOT_REC,
                                     "ingredients": ["condensed milk", "sugar"]}


@pytest.mark.parametrize(("text", "decision"), [
    ("I wouldn't advise this dish for someone with GERD.", NOT_REC),
    ("Bottom line: fine once in a while, as long as the portion is small.", REC),
])
def test_advice_and_moderation_words(text, decision):
    assert read_dish(text).value["decision"] == decision


def test_recommending_a_talk_with_a_doctor_is_a_refusal():
    text = ("I can't make that call for a specific condition. I'd recommend discussing this "
            "dish with your doctor.")
    assert read_output(text, read_dish).reason == "refusal"


@pytest.mark.parametrize(("text", "ranking", "rule"), [
    ("1. C\n2. A and D (tie)\n3. B", ["C", "A", "D", "B"], "numbered"),
    ("I'd go with Option C first, then Option A, Option B, and Option D last.",
     ["C", "A", "B", "D"], "sequence"),
    ("For anemia I'd go with Option C first, then Option A, Option B, and Option D last.",
     ["C", "A", "B", "D"], "ordered_mentions"),
    ("Best: Grilled Salmon, then Lentil Soup, Chocolate Fudge Cake, worst: Bacon Mac and "
     "Cheese.", ["C", "A", "B", "D"], "ordered_mentions"),
])
def test_ties_and_orders_in_words(text, ranking, rule):
    reading = read_rank(text, TITLES)
    assert (reading.value, reading.rule) == ({"ranking": ranking}, rule)


@pytest.mark.parametrize(("text", "ranking", "rule"), [
    ("From least suitable to most suitable: B, D, A, C.", ["C", "A", "D", "B"],
     "sequence_reversed"),
    ("1) D 2) C 3) B 4) A", ["D", "C", "B", "A"], "ordinals"),
    ("Q: Rank the dishes.\nA: Most suitable: B\nSecond: D\nThird: C\nLeast suitable: A",
     ["B", "D", "C", "A"], "numbered"),
    ("My top pick is C, followed by A. I wouldn't rank B and D.", ["C", "A"], "sequence"),
])
def test_reversed_inline_and_labelled_rankings(text, ranking, rule):
    reading = read_rank(text, TITLES)
    assert (reading.value, reading.rule) == ({"ranking": ranking}, rule)


def test_dishes_described_in_letter_order_are_no_ranking():
    text = ("All four affect blood sugar. Dish A is served with maple syrup, Dish B is built on "
            "lentils, Dish C pairs salmon with broccoli, and Dish D has white rice.")
    assert not read_rank(text, TITLES).ok


def test_a_hedged_sentence_commits_to_nothing():
    text = ("It depends on which condition is prioritised: if diabetes matters most, it is a "
            "good choice, but if hypertension matters most, it is a poor choice.")
    assert read_output(text, read_sentence).reason == "hedge"


def test_a_professional_who_should_decide_is_a_refusal():
    text = ("I'm not able to rank meals for someone with kidney disease; a renal dietitian "
            "should make this call.")
    assert read_output(text, lambda t: read_rank(t, TITLES)).reason == "refusal"


def test_key_value_lines_after_an_output_marker_are_tags():
    assert read_tags("Output:\nsodium: high\ncholesterol: high").value == [
        "high_sodium", "high_cholesterol"]
    assert read_tags("sodium (high), protein (low)").value == ["high_sodium", "low_protein"]


def test_yaml_like_ingredient_lists_lose_their_brackets():
    text = ("decision: recommend\nrationale_ingredients:\n  - condition: heart disease\n"
            "    ingredients: [salmon, olive oil, spinach]")
    assert read_dish(text).value == {"decision": REC,
                                     "ingredients": ["salmon", "olive oil", "spinach"]}


def test_an_echoed_note_and_its_example_are_not_answers():
    text = ("No, because the food is high in sodium.\nFor example, the output is: Yes, because "
            "the food is high in carb, low in protein, high in sugar.")
    assert read_sentence(text).value == "No, because the food is high in sodium."
    only_echo = ('Is "Brownie" a healthy food for the user?\nImportant Note: Your output will '
                 "strictly be Yes or No with no other words.")
    assert not read_binary(only_echo).ok


def test_a_turn_the_model_invents_after_its_answer_is_not_read():
    text = ("Answer: No, because the food is high in sugar.\n\nExercise 2: Is the smoothie "
            "healthy?\nAnswer: Yes, because the food is low in sodium.")
    assert read_answer("text_generation", text).value == "No, because the food is high in sugar."


def test_a_concluding_line_holds_the_tags_after_a_chain_of_thought():
    text = ("1. The user's needs are low_sodium and high_protein.\n2. The food belongs to "
            "low_carb, high_sodium, low_protein.\n\nSo the food is: high_sodium, low_protein")
    assert read_tags(text).value == ["high_sodium", "low_protein"]
    assert read_tags("User needs: low_sodium, high_protein\nFood: high_sodium, high_protein")\
        .value == ["high_sodium", "high_protein"]


@pytest.mark.parametrize("text", [
    '{\n  "decision": "recommend",\n  "rationale_ingredients": [{"ingredients": ["oats",],},],\n}',
    "{decision: 'recommend', rationale_ingredients: [{condition: 'x', ingredients: ['oats']}]}",
])
def test_broken_json_is_read_as_meant(text):
    assert read_dish(text).value == {"decision": REC, "ingredients": ["oats"]}


def test_an_unfilled_template_and_an_echoed_reference_are_no_answer():
    template = '{"decision": "recommend|not_recommend", "rationale_ingredients": []}'
    assert read_output(template, read_dish).reason == "no_answer"
    reference = ('"hypertension": {\n  "recommend": ["fruits", "vegetables"],\n'
                 '  "not_recommend": ["pickles", "olives"]\n}')
    assert read_output(reference, read_dish).reason == "no_answer"


def test_an_answer_that_opens_with_a_hedge_commits_to_nothing():
    text = ("This dish could go either way for someone managing hypertension. The salmon is a "
            "good choice, but the sauce may be salty.")
    assert read_output(text, read_dish).reason == "hedge"


def test_two_dishes_followed_by_and_a_tie_across_sentences():
    assert read_rank("For kidney disease, Dish B is the most suitable, followed by Dish D. I "
                     "would not rank the other two.", TITLES).value == {"ranking": ["B", "D"]}
    text = ("A and C are equally suitable (tie for first): both are baked. B comes next, and D "
            "is the least suitable.")
    assert read_rank(text, TITLES).value == {"ranking": ["A", "C", "B", "D"]}


def test_a_hedge_that_concludes_commits():
    text = ("It depends somewhat on portion size, but overall I would not recommend it: the "
            "fried batter adds a lot of saturated fat.")
    assert read_dish(text).value["decision"] == NOT_REC
    assert read_binary("It depends on the portion, but overall, no.").value == "No"


def test_a_per_condition_table_of_ingredients_is_merged():
    text = ("| Condition | Suitable? | Driving ingredients |\n|---|---|---|\n"
            "| Hypertension | No | soy sauce, miso paste |\n| High cholesterol | No | pork belly |"
            "\n\n**Overall: not recommended**")
    assert read_dish(text).value == {"decision": NOT_REC,
                                     "ingredients": ["soy sauce", "miso paste", "pork belly"]}


def test_food_tags_label_and_a_user_needs_line():
    text = ("Food tags: high_protein, low_carb\nUser needs: low_carb (diabetes), low_sugar "
            "(diabetes), high protein (High protein diet)")
    assert set(read_tags(text).value) == {"high_protein", "low_carb"}


@pytest.mark.parametrize(("text", "reason"), [
    ("Neither a clear Yes nor a clear No: the food is high in protein but also high in "
     "cholesterol.", "hedge"),
    ("All four dishes could work depending on portion size, so I can't really put them in "
     "order.", "hedge"),
    ("I'm not able to assess dishes for specific conditions. Your doctor or a registered "
     "dietitian should review this recipe with you.", "refusal"),
])
def test_more_declines(text, reason):
    assert read_output(text, lambda t: read_rank(t, TITLES)).reason == reason
