"""`ngqa build --reviews`: a corrected binary answer brings the text-generation gold with it
(generated again for the corrected verdict), while every other question keeps its text gold
byte for byte and the multi-label gold (the linked tags) stays as built."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from nutrireason.ngqa.build import build_benchmark
from nutrireason.ngqa.config import load_ngqa_config
from nutrireason.reviewfile import item_key

FLIP = {"Yes": "No", "No": "Yes"}


def _pick(questions: pd.DataFrame) -> dict[str, dict]:
    """A Yes with match links only, a No with contradict links only, and a complex question."""
    rows = questions.to_dict(orient="records")
    return {
        "yes_match_only": next(r for r in rows if r["answer_binary"] == "Yes"
                               and r["links"]["contradict"] == 0),
        "no_contradict_only": next(r for r in rows if r["answer_binary"] == "No"
                                   and r["links"]["match"] == 0),
        "complex": next(r for r in rows if r["level"] == "complex"),
    }


def _phrases(row: dict, relation: str) -> str:
    """The row's linked tags of one relation in words, in the gold answers' nutrient order."""
    order = load_ngqa_config().answer_order
    tags = list(dict.fromkeys(t for _, r, t in row["triples"] if r == relation))
    tags.sort(key=lambda t: order.index(t.partition("_")[2]))
    return ", ".join(f"{t.partition('_')[0]} in {t.partition('_')[2]}" for t in tags)


def _expected_text(row: dict, verdict: str) -> str:
    support, against = ("match", "contradict") if verdict == "Yes" else ("contradict", "match")
    if _phrases(row, support):
        return f"{verdict}, because the food is {_phrases(row, support)}."
    return f"{verdict}, even though the food is {_phrases(row, against)}."


@pytest.fixture(scope="module")
def corrected(ngqa_build, ngqa_inputs, tmp_path_factory):
    """The seed-0 build again, with the picked questions' binary answers corrected."""
    old = pd.read_parquet(ngqa_build / "questions.parquet")
    picked = _pick(old)
    folder = tmp_path_factory.mktemp("reviews")
    lines = [{"benchmark": "ngqa", "item": item_key(r["user_id"], r["food_id"]),
              "reviewer": "dietitian", "role": "reviewer", "at": "2025-01-01T00:00:00+00:00",
              "action": "correct", "label": FLIP[r["answer_binary"]], "ingredients": [],
              "exclusion": None, "note": ""} for r in picked.values()]
    (folder / "reviews.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path_factory.mktemp("reviewed")
    build = build_benchmark(*ngqa_inputs, out, seed=0, reviews=folder)
    return old, build, picked


def test_a_corrected_answer_brings_its_text_gold_along(corrected):
    old, build, picked = corrected
    new = build.questions.set_index("id")
    for name, row in picked.items():
        verdict = FLIP[row["answer_binary"]]
        assert new.at[row["id"], "answer_binary"] == verdict, name
        text = new.at[row["id"], "answer_text_generation"]
        assert text == _expected_text(row, verdict), name
        assert text != row["answer_text_generation"]
        assert list(new.at[row["id"], "answer_multi_label"]) == list(row["answer_multi_label"])
    assert new.at[picked["yes_match_only"]["id"], "answer_text_generation"].startswith(
        "No, even though the food is ")
    assert new.at[picked["no_contradict_only"]["id"], "answer_text_generation"].startswith(
        "Yes, even though the food is ")
    recorded = json.loads((build.out / "manifest.json").read_text())
    assert recorded["reviews"]["answers_changed"] == len(picked)


def test_uncorrected_questions_keep_their_text_gold_byte_for_byte(corrected, ngqa_build):
    old, build, picked = corrected
    changed = {r["id"] for r in picked.values()}
    assert list(build.questions["id"]) == list(old["id"])
    for level in ("sparse", "standard", "complex"):
        before = (ngqa_build / level / "text_generation.jsonl").read_bytes().splitlines()
        after = (build.out / level / "text_generation.jsonl").read_bytes().splitlines()
        assert len(before) == len(after)
        for line_before, line_after in zip(before, after, strict=True):
            question = json.loads(line_before)["question_id"]
            if question in changed:
                verdict = json.loads(line_before)["answer"].split(",")[0]
                assert json.loads(line_after)["answer"].startswith(FLIP[verdict] + ", ")
            else:
                assert line_after == line_before, question


def test_the_text_generator_words_a_verdict_against_every_link():
    from nutrireason.ngqa.questions import gold_answers, text_answer

    config = load_ngqa_config()
    edges = [("diabetes", "match", "low_sugar"), ("diabetes", "match", "low_carb"),
             ("obesity", "need", "low_calorie")]
    assert gold_answers(edges, config)["text_generation"] == \
        text_answer("Yes", edges, config) == "Yes, because the food is low in carb, low in sugar."
    assert text_answer("No", edges, config) == \
        "No, even though the food is low in carb, low in sugar."
    assert text_answer("No", [], config) == gold_answers([], config)["text_generation"]
