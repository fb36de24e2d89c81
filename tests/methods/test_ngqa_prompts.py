"""Prompt snapshots against the paper's own case-study prompts (NGQA Tables 12-15), and the
answer parsers. ``paper_prompts.json`` holds the four prompts as printed in the paper."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from nutrireason.methods import get_method
from nutrireason.methods.ngqa_prompts import parse_answer, parse_tags, parse_verdict
from nutrireason.ngqa.config import load_ngqa_config

PAPER = json.loads((Path(__file__).with_name("paper_prompts.json")).read_text())
LABELS = re.compile(r"\s*\[(Question|Method prompt|Textualized graph|Note prompt)\]\s*")
RELATIONS = ("belongs to", "has", "match", "contradict", "need")


def paper_text(key: str) -> str:
    return LABELS.sub(" ", PAPER[key]).strip()


def graph_part(key: str) -> str:
    return PAPER[key].split("[Textualized graph]")[1].split("[Note prompt]")[0].strip()


def triples_from_plain(text: str) -> list[list[str]]:
    triples = []
    for body in re.findall(r"\(([^()]+)\)", text):
        for relation in RELATIONS:
            head, sep, tail = body.partition(f" {relation} ")
            if sep:
                triples.append([head, relation, tail])
                break
    return triples


def triples_from_edges(text: str) -> list[list[str]]:
    return [[h, r, t] for h, t, r in re.findall(
        r'an edge between node "([^"]+)" and "([^"]+)" with attribute "([^"]+)"', text)]


def item(key: str, task: str, triples: list[list[str]]) -> dict:
    food = triples[0][0]
    question = getattr(load_ngqa_config().questions, task).format(food=food)
    return {"id": key, "task": task, "food": food, "question": question, "triples": triples}


CASES = [("plain", "plain_binary_table12", "binary", triples_from_plain),
         ("kaping", "kaping_multilabel_table13", "multi_label", triples_from_plain),
         ("cot-zero", "cotzero_textgen_table14", "text_generation", triples_from_plain),
         ("cot-bag", "cotbag_textgen_table15", "text_generation", triples_from_edges)]


@pytest.mark.parametrize(("method", "key", "task", "reader"), CASES)
def test_prompt_equals_the_papers_case_study_prompt(method, key, task, reader):
    case = item(key, task, reader(graph_part(key)))
    messages, retrieved = get_method(method).messages(case)
    assert messages[0].role == "system"
    assert messages[1].content == paper_text(key)
    assert retrieved == [tuple(t) for t in case["triples"]]


def test_kaping_keeps_only_the_question_entities_neighbourhood():
    case = item("k", "binary", [["Soup", "belongs to", "Soups"], ["user", "has", "obesity"],
                                ["obesity", "contradict", "high_calorie"],
                                ["Soup", "belongs to", "high_calorie"],
                                ["Soups", "has", "Far away node"]])
    _, retrieved = get_method("kaping").messages(case)
    assert ("Soups", "has", "Far away node") not in retrieved
    assert ("obesity", "contradict", "high_calorie") in retrieved


@pytest.mark.parametrize(("text", "verdict"), [
    ("Yes", "Yes"), ("no.", "No"), ("**No**, because", "No"),
    ("Let me think. The food is high in sodium. Final answer: Yes", "Yes"),
    ("I cannot tell.", None)])
def test_verdicts(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(("text", "tags"), [
    ("high_calorie, low_protein", ["high_calorie", "low_protein"]),
    ("High in Saturated Fat; low-sodium; LOW_CARBS", ["low_carb", "low_sodium",
                                                      "high_saturated_fat"]),
    ("No, because the food is high in sodium, high in calorie.", ["high_sodium",
                                                                 "high_calorie"]),
])
def test_tags(text, tags):
    assert parse_tags(text) == tags


def test_unparseable_answers_are_flagged_not_guessed():
    assert parse_answer("binary", "It depends on many things.").ok is False
    assert parse_answer("multi_label", "healthy overall").ok is False
    assert parse_answer("text_generation", "It is fine").ok is False
    assert parse_answer("text_generation", "Yes, because the food is low in carb.").ok


def test_kaping_top_k_keeps_the_triples_closest_to_the_question():
    from nutrireason.methods.ngqa import KapingMethod

    case = item("k", "binary", [["Soup", "belongs to", "Soups"], ["user", "has", "obesity"],
                                ["obesity", "contradict", "high_calorie"],
                                ["Soup", "belongs to", "high_calorie"]])

    def embed(texts):  # 1-d "embeddings": high for triples that mention calorie or obesity
        return [[1.0]] + [[1.0 if ("calorie" in t or "obesity" in t) else 0.0]
                          for t in texts[1:]]

    _, retrieved = KapingMethod(top_k=2, embedder=embed).messages(case)
    assert retrieved == [("user", "has", "obesity"), ("obesity", "contradict", "high_calorie")]


SNAPSHOTS = Path(__file__).with_name("snapshots")


def test_tog_prompts_match_their_snapshot():
    import asyncio

    from nutrireason.models.scripted import ScriptedBackend, register

    seen = []

    def responder(request):
        seen.append(request.messages[-1].text())
        return "2, 4" if "Choose at most" in request.messages[-1].text() else "No"

    register("tog-snapshot", responder)
    case = item("t", "binary", triples_from_plain(graph_part("plain_binary_table12")))
    asyncio.run(get_method("tog").answer(case, ScriptedBackend("tog-snapshot")))
    text = "\n\n=====\n\n".join(seen) + "\n"
    snapshot = SNAPSHOTS / "tog_table12_binary.txt"
    if os.environ.get("NUTRIREASON_UPDATE_SNAPSHOTS") == "1":  # review the diff, then commit
        snapshot.write_text(text)
    assert snapshot.is_file(), f"missing snapshot {snapshot}"
    assert text == snapshot.read_text()
