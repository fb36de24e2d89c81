"""Reviews of NGQA questions: the app over a real NGQA build, the export, and `ngqa build
--reviews` changing exactly the reviewed pairs (an exclusion drops the pair's questions, a
correction flips its binary answer) with the reviews file in the manifest."""

from __future__ import annotations

import json

import pandas as pd
import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from nutrireason.errors import DataError  # noqa: E402
from nutrireason.review.app import ReviewState, create_app  # noqa: E402
from nutrireason.review.export import export_reviews  # noqa: E402
from nutrireason.review.items import load_ngqa_items  # noqa: E402
from nutrireason.review.store import ReviewStore  # noqa: E402
from nutrireason.reviewfile import read_reviews  # noqa: E402
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

    state = ReviewState(items, ReviewStore(tmp_path / "r.sqlite"), benchmark="ngqa")
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
    changed = {p for p in new_rows if new_rows[p]["answer_binary"] != old_rows[p]["answer_binary"]}
    assert changed == {pairs[0]}
    recorded = json.loads((out / "manifest.json").read_text())
    assert recorded["reviews"]["sha256"] == manifest["sha256"]
    assert recorded["reviews"]["questions_dropped"] == 1
    assert recorded["reviews"]["answers_changed"] == 1

    with pytest.raises(DataError, match="another benchmark"):
        read_reviews(tmp_path / "reviews", "fam")
