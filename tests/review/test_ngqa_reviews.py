"""Reviews of NGQA questions: the app over a real NGQA build, the export, and `ngqa build
--reviews` changing exactly the reviewed pairs (an exclusion drops the pair's questions, a
correction flips its binary answer and its text answer) with the reviews file in the manifest;
what the reviewer reads of each food tag (amount, threshold, source) and condition link (the
user's measured values), checked against the build's own inputs."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
import pytest
import yaml

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from nutrireason.errors import DataError  # noqa: E402
from nutrireason.review.app import ReviewState, create_app  # noqa: E402
from nutrireason.review.export import export_reviews  # noqa: E402
from nutrireason.review.ngqa_items import load_ngqa_items  # noqa: E402
from nutrireason.review.store import ReviewStore  # noqa: E402
from nutrireason.reviewfile import read_reviews  # noqa: E402
from nutrireason.standards import standards_dir  # noqa: E402
from tests.review.test_app import FORM, _signed_in  # noqa: E402


def test_reviewed_questions_change_exactly_those_pairs(ngqa_build, ngqa_inputs, tmp_path):
    from nutrireason.ngqa.build import build_benchmark

    items = load_ngqa_items(ngqa_build / "questions.parquet")
    questions = pd.read_parquet(ngqa_build / "questions.parquet")
    assert len(items) == len(questions) and {i.label for i in items} <= {"Yes", "No"}
    first = items[0]
    assert first.question.startswith("Based on the nutrients")
    assert any(" -- match --> " in s or " -- contradict --> " in s or " -- need --> " in s
               for s in first.evidence[:3])  # the links first

    state = ReviewState(items, ReviewStore(tmp_path / "r.sqlite"), benchmark="ngqa",
                        reviewers={"Ana": "reviewer"})
    client = TestClient(create_app(state))
    csrf = _signed_in(client)
    page = client.get("/item/0").text
    assert "Correct to " + ("No" if first.label == "Yes" else "Yes") in page
    assert 'name="ingredients"' not in page  # no rationale for a yes/no question
    for index, body in ((0, "action=correct"),
                        (1, "action=exclude&exclusion=wrong+nutrient+tag"),
                        (2, "action=confirm")):
        reply = client.post(f"/item/{index}", headers=FORM, follow_redirects=False,
                            content=f"csrf={csrf}&{body}")
        assert reply.status_code == 303, reply.text
    bad = client.post("/item/3", headers=FORM, content=f"csrf={csrf}&action=exclude"
                      "&exclusion=hidden+ingredient")  # a FAM-Bench reason
    assert bad.status_code == 400
    manifest = export_reviews(state.store, tmp_path / "reviews", "ngqa")
    assert manifest["benchmark"] == "ngqa" and manifest["items"] == 3

    out = tmp_path / "reviewed"
    build = build_benchmark(*ngqa_inputs, out, seed=0, reviews=tmp_path / "reviews")
    new = build.questions
    key = ["user_id", "food_id"]
    pairs = [tuple(questions.loc[i, key]) for i in range(3)]
    old_rows = {tuple(r[k] for k in key): r for r in questions.to_dict(orient="records")}
    new_rows = {tuple(r[k] for k in key): r for r in new.to_dict(orient="records")}
    assert set(old_rows) - set(new_rows) == {pairs[1]}  # the excluded pair only
    assert new_rows[pairs[0]]["answer_binary"] != old_rows[pairs[0]]["answer_binary"]
    assert new_rows[pairs[0]]["answer_multi_label"] == old_rows[pairs[0]]["answer_multi_label"]
    assert new_rows[pairs[0]]["answer_text_generation"].startswith(
        new_rows[pairs[0]]["answer_binary"] + ", ")
    assert all(new_rows[p]["answer_text_generation"] == old_rows[p]["answer_text_generation"]
               for p in new_rows if p != pairs[0])
    changed = {p for p in new_rows if new_rows[p]["answer_binary"] != old_rows[p]["answer_binary"]}
    assert changed == {pairs[0]}
    recorded = json.loads((out / "manifest.json").read_text())
    assert recorded["reviews"]["sha256"] == manifest["sha256"]
    assert recorded["reviews"]["questions_dropped"] == 1
    assert recorded["reviews"]["answers_changed"] == 1

    with pytest.raises(DataError, match="another benchmark"):
        read_reviews(tmp_path / "reviews", "fam")


# "<food> has tag low_carb: carbohydrates 4.138 g per 100 g, at most 55 g per 100 g (source: ..)"
TAG_LINE = re.compile(r"^(?P<food>.+) has tag (?P<tag>(low|high)_\w+): (?P<nutrient>[a-z0-9 ]+) "
                      r"(?P<value>[0-9.e+-]+) (?P<unit>kcal|g|mg|ug) per 100 g, "
                      r"(?P<words>at most|at least) (?P<threshold>[0-9.]+) (?P=unit) per 100 g "
                      r"\(source: (?P<source>.+)\)$")


def _tag_steps(item):
    return [(step, sentence) for step, sentence in zip(item.provenance, item.evidence,
                                                        strict=True)
            if step["relation"] == "belongs to" and re.match(r"(low|high)_", step["target"])]


def test_every_tag_line_names_its_amount_unit_threshold_and_source(ngqa_build):
    items = load_ngqa_items(ngqa_build / "questions.parquet")
    checked = 0
    for item in items:
        for step, sentence in _tag_steps(item):
            found = TAG_LINE.match(sentence)
            assert found, sentence
            assert found["tag"] == step["target"] and found["food"] == item.title
            value, threshold = float(found["value"]), float(found["threshold"])
            # the tag holds for the amount shown (both sides rounded to 4 digits at most)
            assert value <= threshold * 1.0005 if found["words"] == "at most" \
                else value >= threshold * 0.9995, sentence
            assert "NGQA Table 4" in found["source"]
            checked += 1
    assert checked >= len(items)  # every question's food carries tags
    first = items[0]
    assert all(" -- " in s for s in first.evidence[:2])  # the links stay first


def test_a_tag_line_matches_the_food_table_and_the_threshold_file(ngqa_build, ngqa_inputs):
    """One item by hand: the amount from the food table the build read, the threshold and
    its side from nutrients.yaml read here."""
    table = yaml.safe_load((standards_dir() / "nutrients.yaml").read_text(encoding="utf-8"))
    foods = ngqa_inputs[1].foods.set_index("food_id")
    item = next(i for i in load_ngqa_items(ngqa_build / "questions.parquet")
                if any(s["target"] == "high_sodium" for s, _ in _tag_steps(i)))
    sentence = next(text for s, text in _tag_steps(item) if s["target"] == "high_sodium")
    sodium = next(n for n in table["nutrients"] if n["id"] == "sodium")
    amount = float(foods.at[item.recipe_id, "sodium"])
    assert amount >= sodium["high"]["value"]
    found = TAG_LINE.match(sentence)
    assert (found["nutrient"], found["unit"], found["words"]) == ("sodium", "mg", "at least")
    assert float(found["value"]) == pytest.approx(amount, rel=5e-4)
    assert float(found["threshold"]) == sodium["high"]["value"]
    assert found["source"] == sodium["high"]["source"]


def test_hypertension_links_show_the_users_measured_blood_pressure(ngqa_build, ngqa_inputs):
    users = ngqa_inputs[0]
    users = users.assign(user_id=users["cycle"].astype(str) + ":" + users["seqn"].astype(str))
    pressure = users.set_index("user_id")[["mean_sbp", "mean_dbp"]]
    items = load_ngqa_items(ngqa_build / "questions.parquet")
    lines = [(i, s) for i in items for s in i.evidence if s.startswith("hypertension -- ")]
    assert lines
    for item, sentence in lines[:50]:
        user = item.key.split("::")[0]
        systolic = re.search(r"mean systolic blood pressure ([0-9.]+) mmHg \(threshold at least "
                             r"140 mmHg, source: NGQA Table 5", sentence)
        assert systolic, sentence
        assert float(systolic[1]) == pytest.approx(pressure.at[user, "mean_sbp"], rel=5e-4)
        assert sentence.endswith("mean diastolic >= 90 mmHg")  # the condition's rule
    obesity = next(s for i in items for s in i.evidence if s.startswith("obesity -- "))
    assert re.fullmatch(r"obesity -- (match|contradict|need) --> \w+", obesity)  # no BMI kept


def test_a_build_without_its_tag_amounts_is_refused_naming_the_file(ngqa_build, tmp_path):
    shutil.copy(ngqa_build / "questions.parquet", tmp_path / "questions.parquet")
    shutil.copy(ngqa_build / "user_measures.parquet", tmp_path / "user_measures.parquet")
    with pytest.raises(DataError, match="food_tags.parquet: file not found"):
        load_ngqa_items(tmp_path / "questions.parquet")
    pd.read_parquet(ngqa_build / "food_tags.parquet").drop(columns="threshold").to_parquet(
        tmp_path / "food_tags.parquet")
    with pytest.raises(DataError, match="field 'threshold'"):
        load_ngqa_items(tmp_path / "questions.parquet")
    tags = pd.read_parquet(ngqa_build / "food_tags.parquet")
    first = load_ngqa_items(ngqa_build / "questions.parquet")[0]
    tags[tags["food_id"] != first.recipe_id].to_parquet(tmp_path / "food_tags.parquet")
    with pytest.raises(DataError, match=f"field 'tag'.*{re.escape(first.recipe_id)}"):
        load_ngqa_items(tmp_path / "questions.parquet")
