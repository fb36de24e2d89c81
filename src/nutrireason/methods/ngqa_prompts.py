"""NGQA prompt assembly (paper Figure 7 paradigm) and answer parsing.

User prompt = question + method prompt + textualised graph + task note. The method prompts and
notes are quoted from the case studies (Tables 12-18); the fixed system prompt is ours (the
paper's Figure 7 is an image that the text does not reproduce).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.ngqa.questions import order_tags

Triple = tuple[str, str, str]

SYSTEM_PROMPT = (
    "You are a nutrition assistant. You judge whether a food suits a user's health, using the "
    "food's nutrient tags and the user's health conditions, diets and habits as given.")

BASE_METHOD_PROMPT = (
    "Below are the extra information you use to answer the question, note that you should not "
    "use your general knowledge and the answer is among this information.")

COT_ZERO_PROMPT = (
    "Let’s think step by step to determine the healthiness of the food, by extracting the "
    "nutritional properties of the food from the given graph, then comparing them to the "
    "nutrition requirements of the health status, dietary need and habits of the user. A food "
    "is unhealthy only if it has certain properties that are unsuitable to the user’s health "
    "and diet. Do not be too strict with your criteria, only focus on a few main nutritional "
    "tags that strongly indicate its healthiness or unhealthiness to the particular diet or "
    "health status the user has. Some nutritional tags might not be as important in "
    "determining healthiness.")

COT_BAG_PROMPT = (
    "You will be given the textual description of a directed graph. Let’s first construct a "
    "graph with the given nodes and edges. Then determine the healthiness of the food by "
    "traversing the graph and determining the nutritional properties of the food, then compare "
    "them to the health status, dietary need and habits of the user. Do not be too strict with "
    "your criteria, only focus on a few main nutritional tags that strongly indicate its "
    "healthiness or unhealthiness to the particular diet or health status the user has. Some "
    "nutritional tags might not be as important in determining healthiness.")

TOG_PROMPT = "You will be given the textual description of a directed graph."

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


def triples_text(triples: list[Triple]) -> str:
    """Plain textualisation: ``(head relation tail), ...``."""
    return ", ".join(f"({h} {r} {t})" for h, r, t in triples)


def edge_list_text(triples: list[Triple]) -> str:
    """CoT-BAG textualisation: the graph as a list of attributed edges."""
    edges = ", ".join(f'an edge between node "{h}" and "{t}" with attribute "{r}"'
                      for h, r, t in triples)
    return f"Here is the description of the graph: This is the list of edges: {edges}."


def user_prompt(question: str, method_prompt: str, graph_text: str, task: str) -> str:
    """Question, method prompt, textualised graph and task note, in the paper's order."""
    return " ".join(part for part in (question, method_prompt, graph_text, NOTES[task]) if part)


# ------------------------------------------------------------------------------- parsing

NUTRIENT_WORDS = {
    "carb": "carb", "carbs": "carb", "carbohydrate": "carb", "carbohydrates": "carb",
    "sugar": "sugar", "sugars": "sugar", "sodium": "sodium", "salt": "sodium",
    "cholesterol": "cholesterol", "saturated fat": "saturated_fat",
    "saturated fats": "saturated_fat",
    "calorie": "calorie", "calories": "calorie", "protein": "protein", "proteins": "protein",
}
_NUTRIENT = "|".join(sorted((re.escape(w).replace("\\ ", "[ _-]") for w in NUTRIENT_WORDS),
                            key=len, reverse=True))
TAG_PATTERN = re.compile(rf"\b(low|high)(?:[\s_-]+in)?[\s_-]+({_NUTRIENT})\b", re.I)
VERDICT_PATTERN = re.compile(r"\b(yes|no)\b", re.I)


@dataclass(frozen=True)
class Parsed:
    """A parsed answer: the value scored, and whether parsing found one."""

    value: object
    ok: bool


def parse_tags(text: str) -> list[str]:
    """Every ``low_x`` / ``high_x`` the text names ("low in carb", "high saturated fat",
    "Low-Sodium"), once each, in the answer order."""
    found = []
    for direction, word in TAG_PATTERN.findall(text):
        nutrient = NUTRIENT_WORDS[re.sub(r"[\s_-]+", " ", word.lower())]
        tag = f"{direction.lower()}_{nutrient}"
        found.append(tag)
    return order_tags(found, load_ngqa_config())


def parse_verdict(text: str) -> str | None:
    """Yes/No: an explicit "answer: yes", else the first word, else the last yes/no said."""
    explicit = re.search(r"(?:final answer|answer)\s*(?:is)?\s*[:\-]?\s*\**\s*(yes|no)\b",
                         text, re.I)
    if explicit:
        return explicit.group(1).capitalize()
    first = VERDICT_PATTERN.match(text.strip().lstrip("*\"' "))
    if first:
        return first.group(1).capitalize()
    words = VERDICT_PATTERN.findall(text)
    return words[-1].capitalize() if words else None


def parse_answer(task: str, text: str) -> Parsed:
    """Parse a model's text for ``task``; unparseable answers come back with ``ok=False``."""
    if task == "binary":
        verdict = parse_verdict(text)
        return Parsed(verdict, verdict is not None)
    if task == "multi_label":
        tags = parse_tags(text)
        return Parsed(tags, bool(tags))
    verdict = parse_verdict(text)
    cleaned = " ".join(text.strip().split())
    return Parsed(cleaned, verdict is not None)
