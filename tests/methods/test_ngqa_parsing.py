"""NGQA answer parsing: the parsers read the answer part of an output, never a diet, condition
or habit name and never a phrase about what the user needs.

The case-study outputs are the NGQA paper's own (seeds/000, Appendix G Tables 12-18 and
Appendix H Tables 19-20), copied as printed. Expected tags are written in the project's tag
order (ngqa.yaml ``answer_order``: carb, sugar, sodium, cholesterol, saturated_fat, calorie,
protein), which is the order ``parse_tags`` returns; scoring compares tags as sets.
"""

from __future__ import annotations

import pytest

from nutrireason.methods.ngqa_prompts import (
    answer_part,
    answer_sentence,
    parse_answer,
    parse_tags,
    parse_verdict,
)

# ----------------------------------------------------------------- the paper's case studies

T12_ANSWER = "No"
T12_REASONING = (
    "While black beans and brown rice provide some beneficial nutrients, they are low in "
    "protein, which contradicts the user’s high protein diet requirement. Additionally, the "
    "dish is high in sodium, which may not be suitable for someone managing diabetes and "
    "following a low carbohydrate and low sugar diet. Therefore, it does not align well with "
    "the user’s nutritional needs.")

T13_ANSWER = "high_calorie, high_sodium, low_protein"
T13_REASONING = (
    "It is stated that \"Nachos, cheese only belongs to high_calorie\" and \"high_sodium.\" "
    "Additionally, it is mentioned that \"Nachos, cheese only belongs to low_protein.\" Given "
    "the user’s condition of obesity and High protein diet requirements, consuming "
    "high-calorie food would contradict their health goal of obesity. Furthermore, a "
    "high-protein diet requirement contradicts the fact that “Nachos, cheese only belongs to "
    "low_protein”. User’s habit of adding little to no salt at table contradicts the fact "
    "that “Nachos, cheese only belong to high_sodium”.")

T18_ANSWER = "high_sodium, low_sugar, low_cholesterol, low_carb"
T18_REASONING = (
    "- high_sodium: Although the meal is labeled as \"reduced sodium\", it still belongs to "
    "the high_sodium category. This is a concern for the user who has hypertension, as high "
    "sodium intake can exacerbate this condition. - low_sugar: The meal belongs to the "
    "low_sugar category, which is good for the user who has opioid_misuse. - low_cholesterol: "
    "The user has Low fat/Low cholesterol diet, which matches low_cholesterol of the food. - "
    "low_carb: The food is low in carb, which is suitable for the user who has diabetes.")

# Multi-label case studies: (table, LLM Answer, LLM Reasoning, tags of the LLM Answer).
MULTI_LABEL = [
    # Answer high_calorie, high_sodium, low_protein; the reasoning names "High protein diet"
    # and "high-protein diet requirement", which must not add high_protein.
    ("table13", T13_ANSWER, T13_REASONING, ["high_sodium", "high_calorie", "low_protein"]),
    # Answer lists four tags; the reasoning's "high sodium intake" (the user) and "Low fat/Low
    # cholesterol diet" (a diet) add nothing.
    ("table18", T18_ANSWER, T18_REASONING,
     ["low_carb", "low_sugar", "high_sodium", "low_cholesterol"]),
]

# Text-generation case studies: (table, LLM Answer, LLM Reasoning, tags of the LLM Answer).
TEXT_GENERATION = [
    # Reasoning names "low salt/low sodium diet" and "low fat/low cholesterol diet".
    ("table14", "No, because the food is high in sodium, high in cholesterol.",
     "Turkey with gravy is high in sodium, which contradicts the user’s low salt/low sodium "
     "diet. It is also high in cholesterol, which contradicts the user’s low fat/low "
     "cholesterol diet.",
     ["high_sodium", "high_cholesterol"]),
    # Reasoning speaks of "high calories" and conditions only.
    ("table15", "No, because the food is high in sodium, high in calorie, high in cholesterol.",
     "Sesame chicken typically contains a lot of sodium due to the soy-based sauce, high "
     "calories from frying, and cholesterol from the meat and sauce. These nutritional "
     "properties may not align well with the user’s dietary needs, especially if they have "
     "hypertension or obesity.",
     ["high_sodium", "high_cholesterol", "high_calorie"]),
    # Reasoning names "Low fat/Low cholesterol diet" and "Low carbohydrate diet".
    ("table16", "Yes, because the food is low in carb, low in cholesterol, low in saturated fat.",
     "The user has a Low fat/Low cholesterol diet and a Low carbohydrate diet. The given food, "
     "Vegetable rice soup, matches the user’s dietary requirements as it belongs to "
     "low_cholesterol, low_saturated_fat, and low_carb categories. Therefore, the food is "
     "suitable for the user’s needs.",
     ["low_carb", "low_cholesterol", "low_saturated_fat"]),
    # Reasoning names "a low-carb diet" and "Low fat/Low cholesterol diet".
    ("table17", "No, because the food is low in carb, low in protein, high in cholesterol.",
     "The user has diabetes, and a low-carb diet is suitable for diabetes management. "
     "Therefore, the food being low in carb is a positive aspect. However, the user also has "
     "opioid misuse, which contradicts with the food being low in protein. Protein is "
     "essential for overall health and recovery. Additionally, the user follows a Low fat/Low "
     "cholesterol diet. The food being high in cholesterol contradicts this requirement.",
     ["low_carb", "high_cholesterol", "low_protein"]),
]

# Appendix H (Tables 19-20): (table and method, "- Answer:" text, "- Reasoning:" text, tags).
# The reasoning lines keep the paper's bracketed hallucination notes, as printed.
ERROR_ANALYSIS = [
    ("table19-kaping",
     "No, because the food is high in sodium, high in calorie, high in saturated fat, high in "
     "cholesterol.",
     "Although the user often checks nutrition labels and eats little to no fast food or "
     "frozen meals (factual hallucination - irrelevant information), their hypertension "
     "contradicts with the high sodium content found in Cheese pastry puffs. Moreover, being "
     "a light smoker might increase cardiovascular risks; consuming foods high in calorie, "
     "saturated fat, and cholesterol like Cheese pastry puffs will not help. (contextual "
     "hallucination - unaware of user’s needs)",
     ["high_sodium", "high_cholesterol", "high_saturated_fat", "high_calorie"]),
    ("table19-cot-zero",
     "No, because the food is high in sodium, low in protein, high in cholesterol, high in "
     "saturated fat, high in calorie.",
     "The presence of ’high_sodium’ category contradicts with ’hypertension’, as excessive "
     "sodium can worsen hypertension. High saturated fat, calorie and cholesterol from Cheese "
     "and Margarine are also concerns for heart health. Low protein likely won’t support "
     "muscle maintenance or satisfaction between meals. (factual hallucination - irrelevant "
     "information)",
     ["high_sodium", "high_cholesterol", "high_saturated_fat", "high_calorie", "low_protein"]),
    ("table19-tog", "No, because the food is high in sodium.",
     "Cheese pastry puffs is not healthy because it is high in sodium, and the user has "
     "hypertension.",
     ["high_sodium"]),
    ("table20-kaping", "No, because the food is high in sodium, low in protein.",
     "While Shepherd’s pie with lamb contains some nutritious ingredients like vegetables and "
     "lean meat, its high sodium content can be detrimental for someone with obesity and "
     "diabetes, as it may contribute to hypertension and other health issues. Additionally, "
     "the low protein content may not be sufficient for satiety and muscle maintenance. "
     "(contextual & factual hallucinations - using external knowledge to make assumptions "
     "about user’s health & include irrelevant information)",
     ["high_sodium", "low_protein"]),
    # The reasoning's "a diet low in calories" (the user's need) and "low in sugar and carbs"
    # are not in the answer, and must not be read.
    ("table20-cot-zero",
     "No, because the food is high in sodium, low in cholesterol, low in saturated fat.",
     "Given the user’s obesity and diabetes, a diet low in calories, sugar, and carbohydrates "
     "is essential. While Shepherd’s pie with lamb is low in sugar and carbs, its high sodium "
     "content may pose a risk for those with diabetes and obesity, making it less suitable "
     "for the user’s health needs. (contextual hallucination)",
     ["high_sodium", "low_cholesterol", "low_saturated_fat"]),
    ("table20-tog", "Yes, because the food is low in sugar, low in carb.",
     "Given that the user has diabetes, Shepherd’s pie with lamb is healthy because it is "
     "low_sugar and low_carb.",
     ["low_carb", "low_sugar"]),
]


def answer_first(answer: str, reasoning: str) -> str:
    """The case-study layout: the LLM Answer row, a newline, the LLM Reasoning row."""
    return f"{answer}\n{reasoning}"


def reasoning_first(answer: str, reasoning: str) -> str:
    """The reversed layout, as chain-of-thought outputs come: reasoning, then the answer."""
    return f"{reasoning}\nAnswer: {answer}"


def paper_layout(answer: str, reasoning: str) -> str:
    """Appendix H's layout: "- Answer:" line then "- Reasoning:" line."""
    return f"- Answer: {answer}\n- Reasoning: {reasoning}"


def paper_layout_reversed(answer: str, reasoning: str) -> str:
    return f"- Reasoning: {reasoning}\n- Answer: {answer}"


LAYOUTS = [answer_first, reasoning_first]
ALL_LAYOUTS = [answer_first, reasoning_first, paper_layout, paper_layout_reversed]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_binary_case_study_table12(layout):
    # Table 12 (binary): the answer is "No"; the reasoning says "low in protein" and names a
    # "high protein diet", neither of which is a verdict.
    parsed = parse_answer("binary", layout(T12_ANSWER, T12_REASONING))
    assert parsed == parse_answer("binary", "No")
    assert parsed.value == "No" and parsed.ok


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("table", "answer", "reasoning", "tags"), MULTI_LABEL)
def test_multi_label_case_studies(layout, table, answer, reasoning, tags):
    parsed = parse_answer("multi_label", layout(answer, reasoning))
    assert parsed.value == tags, table
    assert parsed.ok


@pytest.mark.parametrize(("table", "answer", "reasoning", "tags"), MULTI_LABEL)
def test_multi_label_reasoning_alone_names_no_diet_tag(table, answer, reasoning, tags):
    # Without the answer row the whole reasoning is read; its diet names and "high sodium
    # intake" are masked, so only the food's tags remain, which here are the answer's.
    assert parse_tags(reasoning) == tags, table


@pytest.mark.parametrize("layout", ALL_LAYOUTS)
@pytest.mark.parametrize(("table", "answer", "reasoning", "tags"),
                         TEXT_GENERATION + ERROR_ANALYSIS)
def test_text_generation_case_studies_score_the_answer_sentence(layout, table, answer,
                                                                 reasoning, tags):
    text = layout(answer, reasoning)
    parsed = parse_answer("text_generation", text)
    assert parsed.value == answer, table
    assert parsed.ok
    assert parse_tags(text) == tags, table


# ----------------------------------------------------------------- adversarial multi-label

ADVERSARIAL = [
    # 1. Diet names only: they are the user's, not the food's tags.
    ("The user follows a Low salt/Low sodium diet and a High protein diet.", []),
    # 2. The example: one food tag, then two diet names on the same line.
    ("high_sodium, because of the user's Low salt/Low sodium diet and High protein diet",
     ["high_sodium"]),
    # 3. Reasoning that names diets, then the answer after a marker: only the answer counts.
    ("The user has diabetes and a Low carbohydrate diet, so a low-carb food helps; the Sugar "
     "free/Low sugar diet also applies.\nAnswer: low_carb, low_sugar", ["low_carb", "low_sugar"]),
    # 4. Markdown bold marker with the colon inside the bold.
    ("**Answer:** high_sodium, high_cholesterol", ["high_sodium", "high_cholesterol"]),
    # 5. Bold heading, the list on the next line.
    ("The food is salty.\n**Answer**\nhigh_calorie, low_protein", ["high_calorie", "low_protein"]),
    # 6. Upper case and a trailing period after "Final answer:".
    ("Final answer: LOW_SUGAR, HIGH_SODIUM.", ["low_sugar", "high_sodium"]),
    # 7. Numbered list after a lead-in line: the run of tag-only lines is the answer.
    ("The relevant tags are:\n1. high_sodium\n2. high_cholesterol\n3. low_protein",
     ["high_sodium", "high_cholesterol", "low_protein"]),
    # 8. Bullets in words: "high in saturated fat" is high_saturated_fat.
    ("- high in saturated fat\n- low in protein", ["high_saturated_fat", "low_protein"]),
    # 9. "high in saturated fat" and "saturated_fat" are one tag, listed once.
    ("high_saturated_fat, high in saturated fat", ["high_saturated_fat"]),
    # 10. "low-carb diet" and "needs low sugar" describe the user; the food is high in sodium.
    ("The user is on a low-carb diet and needs low sugar, but the food is high in sodium.",
     ["high_sodium"]),
    # 11. Negation: "not high in sugar" says the food lacks high_sugar, so it is not a tag.
    ("The food is high in sodium but not high in sugar.", ["high_sodium"]),
    # 12. Duplicates are kept once.
    ("high_sodium, high_sodium, low_carb", ["low_carb", "high_sodium"]),
    # 13. The note's example echoed back, then the real answer on its own line.
    ("For example, the output is: high_carb, low_protein, high_sugar.\nhigh_sodium, low_protein",
     ["high_sodium", "low_protein"]),
    # 14. Only the echoed note: its example is not an answer, so nothing parses.
    ("Important Note: list the tags. For example, the output is: high_carb, low_protein, "
     "high_sugar. You should only include the nutrient tags that connect the food with the "
     "user.", []),
    # 15. JSON-style list.
    ('["high_sodium", "low_carb"]', ["low_carb", "high_sodium"]),
    # 16. Empty output.
    ("", []),
    # 17. "None" is no tag.
    ("None", []),
    # 18. An explicit "Answer: None" is the model's answer even when the reasoning named tags.
    ("The food is high in sodium, but no condition of the user is about salt.\nAnswer: None", []),
    # 19. "Output:" at the start of a line.
    ("Output: high_calorie", ["high_calorie"]),
    # 20. Backticks around the tags.
    ("`high_sodium`, `low_protein`", ["high_sodium", "low_protein"]),
    # 21. Semicolons, and a tag joined by "and".
    ("high_sodium; low_sugar and high_calorie", ["low_sugar", "high_sodium", "high_calorie"]),
    # 22. Tags in plain words, hyphenated and upper case: a tag-only line is the answer.
    ("Low-Sodium, HIGH IN CALORIES.", ["low_sodium", "high_calorie"]),
    # 23. User needs ("high protein requirement", "needs low sugar") are not the food's tags.
    ("The user needs low sugar and has a high protein requirement; the food is high in sugar.",
     ["high_sugar"]),
    # 24. Paper habit phrases ("Eats high protein diet") are not tags.
    ("The user Eats high protein diet and Uses lots of salt in preparation, so high_sodium "
     "matters.", ["high_sodium"]),
    # 25. Condition names are not tags.
    ("hypertension, obesity", []),
    # 26. Answer line first, then bullets whose reasoning says "low sodium intake".
    ("low_sugar, high_sodium\n- high_sodium: with hypertension the user keeps a low sodium "
     "intake.\n- low_sugar: good for opioid_misuse.", ["low_sugar", "high_sodium"]),
    # 27. A Yes/No sentence as the answer; the reasoning after it names two diets.
    ("No, because the food is high in sodium.\nThe user's Low salt/Low sodium diet forbids it; "
     "the Low carbohydrate diet is met.", ["high_sodium"]),
    # 28. Several markers: the last one is the final answer.
    ("Answer: high_sugar\nWait, that is wrong.\nFinal answer: low_sugar, low_carb",
     ["low_carb", "low_sugar"]),
    # 29. Answer and reasoning on one line: the reasoning label ends the answer.
    ("Answer: high_sodium. Reasoning: the food is also high in calorie.", ["high_sodium"]),
    # 30. A marked list whose items carry the condition in brackets.
    ("Tags:\n- high_sodium (hypertension)\n- high_calorie (obesity)\n\nThe user has a Low "
     "carbohydrate diet.", ["high_sodium", "high_calorie"]),
]


@pytest.mark.parametrize(("text", "tags"), ADVERSARIAL)
def test_adversarial_multi_label_outputs(text, tags):
    parsed = parse_answer("multi_label", text)
    assert parsed.value == tags
    assert parsed.ok is bool(tags)


def test_a_diet_name_inside_the_answer_list_is_still_not_a_tag():
    # The rule holds inside the answer part too.
    assert parse_tags("Answer: high_sodium, Low salt/Low sodium diet") == ["high_sodium"]


def test_answer_part_is_the_answer_not_the_reasoning():
    text = "The user has a High protein diet.\nAnswer: high_calorie, low_protein"
    assert answer_part(text).strip() == "high_calorie, low_protein"
    # With no answer part the whole text is read (and masked).
    assert answer_part("healthy overall") == "healthy overall"


# ----------------------------------------------------------------- text generation and binary

TEXT_ANSWERS = [
    # The answer after reasoning, behind a marker.
    ("Let me think. The user has hypertension.\nAnswer: No, because the food is high in sodium.",
     "No, because the food is high in sodium."),
    # Bold verdict: the bold marks are dropped from the scored sentence.
    ("**No**, because the food is high in sodium, high in cholesterol.",
     "No, because the food is high in sodium, high in cholesterol."),
    # A bare "No." keeps the sentence after it, which holds the reasons.
    ("No. The food is high in sodium.\nThe user has hypertension.",
     "No. The food is high in sodium."),
    # Two Yes/No sentences and no marker: the last one is the answer.
    ("Yes, it looked fine at first.\nNo, because the food is high in sodium.",
     "No, because the food is high in sodium."),
    # No sentence opens with Yes or No: the cleaned full text is scored, as before.
    ("The food  is fine\nfor the user.", "The food is fine for the user."),
]


@pytest.mark.parametrize(("text", "scored"), TEXT_ANSWERS)
def test_text_generation_scores_the_answer_sentence(text, scored):
    assert parse_answer("text_generation", text).value == scored


def test_answer_sentence_needs_a_verdict_that_opens_a_sentence():
    # "no" inside a sentence ("little or no fish") opens nothing.
    assert answer_sentence("The user eats little or no fish.") is None


@pytest.mark.parametrize(("text", "verdict"), [
    # A habit name's "no" is not a verdict (it used to read as "No").
    ("The user Eats little or no fish and the food suits the user.", None),
    # The verdict said before a habit name stays the verdict (the last "no" used to win).
    ("I would say yes: the user Eats little or no fish, which does not matter.", "Yes"),
    # Nor is an ingredient's "no added fat" a verdict.
    ("I say yes, as the dish is Rice, brown, cooked, no added fat.", "Yes"),
])
def test_binary_ignores_the_no_in_habit_and_ingredient_names(text, verdict):
    assert parse_verdict(text) == verdict
