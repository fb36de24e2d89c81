"""Review decisions: the store, the reviews file, how a build applies it, and agreement
statistics checked against hand-computed values and scikit-learn."""

from __future__ import annotations

import copy
import json

import pytest
from sklearn.metrics import cohen_kappa_score

from nutrireason.errors import DataError
from nutrireason.fam.reviews import NOT_REVIEWED, apply_reviews
from nutrireason.review.export import export_reviews
from nutrireason.review.items import load_items
from nutrireason.review.stats import fleiss, review_stats
from nutrireason.review.store import ReviewStore
from nutrireason.reviewfile import UNSETTLED, Verdict, item_key, read_reviews
from tests.review.conftest import POOL


def _save(store, item, reviewer, action, label=None, ingredients=(), exclusion=None,
          proposed="Rec"):
    after = {"label": label, "ingredients": list(ingredients), "exclusion": exclusion,
             "note": ""}
    return store.save("fam", item, reviewer, action, {"label": proposed,
                                                       "ingredients": list(ingredients)}, after)


def test_items_are_the_pools_entries_with_their_recipe(small_pool):
    pool, recipes = small_pool
    items = load_items(pool / "annotations.jsonl", recipes / "recipes.jsonl")
    assert [i.key for i in items] == [
        "pasta-bake::osteoporosis", "pasta-bake::celiac_disease", "pasta-bake::hypertension",
        "lentil-soup::hypertension", "lentil-soup::type_2_diabetes", "lentil-soup::gout"]
    first = items[0]
    assert (first.label, first.ingredients, first.servings) == ("Rec", ("cheddar",), 4)
    assert first.foods == ("pasta", "cheddar", "salt")
    assert first.per_serving["sodium"] == 400.0 and first.per_100g["calories"] == 120.0


def test_store_keeps_every_decision_and_the_latest_per_reviewer(tmp_path):
    store = ReviewStore(tmp_path / "r.sqlite")
    _save(store, "a::x", "ana", "confirm", "Rec", ["pasta"])
    _save(store, "a::x", "ana", "correct", "NotRec", ["pasta"])
    _save(store, "a::x", "ben", "exclude", exclusion="hidden ingredient")
    assert len(store.decisions("fam")) == 3
    latest = store.latest("fam")
    assert latest[("a::x", "ana")].action == "correct"
    assert latest[("a::x", "ben")].after["exclusion"] == "hidden ingredient"
    mode = store._db.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


@pytest.mark.parametrize(("action", "after", "field"), [
    ("approve", {"label": "Rec"}, "action"),
    ("confirm", {"label": "maybe"}, "label"),
    ("exclude", {"exclusion": "too salty"}, "exclusion"),
    ("confirm", {"label": "Rec", "ingredients": "pasta"}, "ingredients"),
])
def test_a_bad_decision_is_refused_by_field(tmp_path, action, after, field):
    store = ReviewStore(tmp_path / "r.sqlite")
    with pytest.raises(DataError) as caught:
        store.save("fam", "a::x", "ana", action, {}, after)
    assert caught.value.field == field
    assert store.decisions() == []


def test_export_then_apply_changes_exactly_the_reviewed_entries(tmp_path):
    store = ReviewStore(tmp_path / "r.sqlite")
    _save(store, item_key("pasta-bake", "celiac_disease"), "ana", "confirm", "NotRec",
          ["pasta"], proposed="NotRec")
    _save(store, item_key("pasta-bake", "hypertension"), "ana", "correct", "Rec", ["salt"],
          proposed="NotRec")
    _save(store, item_key("lentil-soup", "gout"), "ana", "exclude",
          exclusion="portion decisive", proposed="NotRec")
    _save(store, item_key("lentil-soup", "type_2_diabetes"), "ana", "rationale", "Rec",
          ["lentils", "onion"])
    manifest = export_reviews(store, tmp_path / "reviews")
    assert (manifest["decisions"], manifest["items"], manifest["reviewers"]) == (4, 4, ["ana"])
    assert manifest["format"] == "nutrireason-reviews" and len(manifest["sha256"]) == 64

    pool = copy.deepcopy(POOL)
    applied = apply_reviews(pool, read_reviews(tmp_path / "reviews"))
    assert pool == POOL  # the input is not changed in place
    pasta, lentil = applied
    assert [e["condition"] for e in pasta["rec"]] == ["hypertension", "osteoporosis"]
    assert [e["condition"] for e in pasta["not_rec"]] == ["celiac_disease"]
    assert pasta["rec"][1] == POOL[0]["rec"][0]  # unreviewed: untouched
    assert [e["condition"] for e in lentil["not_rec"]] == []
    assert lentil["excluded_entries"][0]["condition"] == "gout"
    assert lentil["excluded_entries"][0]["reason"] == "expert: portion decisive"
    diabetes = next(e for e in lentil["rec"] if e["condition"] == "type_2_diabetes")
    assert diabetes["ingredients"] == ["lentils", "onion"]

    only = apply_reviews(copy.deepcopy(POOL), read_reviews(tmp_path / "reviews"),
                         reviewed_only=True)
    kept = {(r["recipe_id"], e["condition"]) for r in only for s in ("rec", "not_rec")
            for e in r[s]}
    assert kept == {("pasta-bake", "celiac_disease"), ("pasta-bake", "hypertension"),
                    ("lentil-soup", "type_2_diabetes")}
    # the unreviewed entry is excluded with its reason: no sample may draw it as neutral
    unreviewed = {(r["recipe_id"], e["condition"]) for r in only
                  for e in r["excluded_entries"] if e["reason"] == NOT_REVIEWED}
    assert unreviewed == {("pasta-bake", "osteoporosis"), ("lentil-soup", "hypertension")}


def test_reviewers_who_disagree_leave_the_entry_unsettled_until_adjudicated(tmp_path):
    store = ReviewStore(tmp_path / "r.sqlite")
    key, agreed = item_key("pasta-bake", "osteoporosis"), item_key("lentil-soup", "gout")
    _save(store, key, "ana", "correct", "NotRec", ["cheddar"])
    _save(store, key, "ben", "confirm", "Rec", ["cheddar"])  # the later click does not win
    _save(store, agreed, "ana", "confirm", "NotRec", ["lentils"], proposed="NotRec")
    _save(store, agreed, "ben", "confirm", "NotRec", [], proposed="NotRec")
    export_reviews(store, tmp_path / "reviews")
    verdicts = read_reviews(tmp_path / "reviews")
    assert verdicts[key] == Verdict(None, (), UNSETTLED)
    assert verdicts[agreed] == Verdict("NotRec", (), None)  # agreed: the latest rationale
    # the build excludes the unsettled entry with the reason
    pool = apply_reviews(copy.deepcopy(POOL), verdicts)
    excluded = {(e["condition"], e["reason"]) for row in pool for e in row["excluded_entries"]}
    assert ("osteoporosis", f"expert: {UNSETTLED}") in excluded
    # an adjudicator settles it, whatever the reviewers clicked after
    store.save("fam", key, "cy", "correct", {"label": "Rec", "ingredients": ["cheddar"]},
               {"label": "NotRec", "ingredients": ["cheddar"], "note": "salt"},
               role="adjudicator")
    _save(store, key, "ben", "confirm", "Rec", ["cheddar"])
    export_reviews(store, tmp_path / "reviews")
    assert read_reviews(tmp_path / "reviews")[key] == Verdict("NotRec", ("cheddar",), None)
    pool = apply_reviews(copy.deepcopy(POOL), read_reviews(tmp_path / "reviews"))
    row = next(r for r in pool if r["recipe_id"] == "pasta-bake")
    assert [e["condition"] for e in row["not_rec"]][:1] == ["celiac_disease"]
    assert any(e["condition"] == "osteoporosis" and e["reviewed"] for e in row["not_rec"])


def test_a_version_1_reviews_file_reads_as_reviewers_only(tmp_path):
    rows = [{"item": "a::gout", "reviewer": "ana", "at": "2026-01-01T00:00:00", "action":
             "confirm", "label": "Rec", "ingredients": []},
            {"item": "a::gout", "reviewer": "ben", "at": "2026-01-02T00:00:00", "action":
             "correct", "label": "NotRec", "ingredients": []}]
    path = tmp_path / "reviews.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert read_reviews(path)["a::gout"].exclusion == UNSETTLED


def test_a_malformed_reviews_file_names_the_line(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text(json.dumps({"item": "a::x", "at": "t", "action": "confirm",
                                "label": "Yes"}) + "\n")
    with pytest.raises(DataError) as caught:
        read_reviews(path)
    assert "line 1" in str(caught.value) and caught.value.field == "label"


def test_cohen_kappa_matches_scikit_learn_and_a_hand_count(tmp_path):
    store = ReviewStore(tmp_path / "r.sqlite")
    ana = ["Rec", "Rec", "NotRec", "NotRec", "Rec", "excluded"]
    ben = ["Rec", "NotRec", "NotRec", "NotRec", "Rec", "Rec"]
    for index, (a, b) in enumerate(zip(ana, ben, strict=True)):
        for who, label in (("ana", a), ("ben", b)):
            if label == "excluded":
                _save(store, f"r{index}::gout", who, "exclude", exclusion="hidden ingredient")
            else:
                _save(store, f"r{index}::gout", who, "confirm" if label == "Rec" else "correct",
                      label)
    pair = review_stats(store.latest("fam"))["inter_reviewer"]["pairs"][0]
    assert pair["items"] == 6
    assert pair["cohen_kappa"] == pytest.approx(cohen_kappa_score(ana, ben))
    # by hand: observed 24/36; marginals ana (Rec 3, NotRec 2, excluded 1), ben (3, 3, 0):
    # expected (3*3 + 2*3 + 1*0)/36 = 15/36; kappa = (24 - 15) / (36 - 15) = 9/21
    assert pair["cohen_kappa"] == pytest.approx(9 / 21)
    assert pair["agreement"] == pytest.approx(4 / 6)


def test_fleiss_kappa_by_hand():
    # 4 entries, 3 reviewers: P_i = 1, 1, 1/3, 1/3 (mean 2/3); category shares 5/12, 6/12,
    # 1/12 -> P_e = 62/144; kappa = (2/3 - 62/144) / (1 - 62/144) = 0.41463
    ratings = [["Rec"] * 3, ["NotRec"] * 3, ["Rec", "Rec", "NotRec"],
               ["excluded", "NotRec", "NotRec"]]
    assert fleiss(ratings) == pytest.approx(0.414634, abs=1e-6)


def test_stats_per_condition_and_rules_against_experts(tmp_path):
    store = ReviewStore(tmp_path / "r.sqlite")
    _save(store, "a::gout", "ana", "confirm", "Rec", ["x"])
    _save(store, "b::gout", "ana", "correct", "NotRec", ["x"])
    _save(store, "c::ibs", "ana", "exclude", exclusion="unclear preparation")
    _save(store, "a::gout", "ben", "confirm", "Rec", ["x"])
    _save(store, "b::gout", "ben", "confirm", "Rec", ["x"])
    _save(store, "c::ibs", "cy", "confirm", "Rec", ["x"])
    result = review_stats(store.latest("fam"))
    assert result["conditions"]["gout"]["decisions"] == 4
    assert result["conditions"]["gout"]["label_kept_rate"] == pytest.approx(0.75)
    assert result["conditions"]["gout"]["kinds"] == {"Rec->NotRec": 1, "confirm": 3}
    assert result["kinds"]["exclude: unclear preparation"] == 1
    rules = result["rules_vs_experts"]
    proposed = ["Rec"] * 6
    decided = ["Rec", "NotRec", "excluded", "Rec", "Rec", "Rec"]
    assert rules["agreement"] == pytest.approx(4 / 6)
    assert rules["cohen_kappa"] == pytest.approx(cohen_kappa_score(proposed, decided))
    assert result["inter_reviewer"]["fleiss_items"] == 0  # no entry has all three reviewers


def test_the_report_shows_the_agreement_of_a_reviews_export(tmp_path):
    from nutrireason.report import build_report
    from tests.report import write_runs

    store = ReviewStore(tmp_path / "r.sqlite")
    ana = ["Rec", "NotRec", "Rec", "Rec"]
    ben = ["Rec", "NotRec", "NotRec", "Rec"]
    for index, (a, b) in enumerate(zip(ana, ben, strict=True)):
        for who, label in (("ana", a), ("ben", b)):
            _save(store, f"r{index}::gout", who, "confirm" if label == "Rec" else "correct",
                  label)
    export_reviews(store, tmp_path / "reviews")
    page = build_report(write_runs(tmp_path / "runs"), tmp_path / "out",
                        reviews=tmp_path / "reviews").read_text()
    assert 'id="review-section"' in page
    assert f"{cohen_kappa_score(ana, ben):.3f}" in page
    assert (tmp_path / "out" / "review_agreement.csv").is_file()


def test_label_agreement_kappa_and_rationale_edits_by_hand(tmp_path):
    # five gout entries proposed Rec with ["x"]; Ana keeps the label on 1, 2 and 5 (on 1 with
    # other ticks), Ben on 1 and 5; an adjudicator settles entry 2 and is left out of agreement.
    store = ReviewStore(tmp_path / "r.sqlite")
    ana = ["Rec", "Rec", "NotRec", "NotRec", "Rec"]
    ben = ["Rec", "NotRec", "NotRec", "NotRec", "Rec"]
    for index, (a, b) in enumerate(zip(ana, ben, strict=True), 1):
        ticks = ["y"] if index == 1 else ["x"]
        store.save("fam", f"r{index}::gout", "ana", "confirm" if a == "Rec" else "correct",
                   {"label": "Rec", "ingredients": ["x"]},
                   {"label": a, "ingredients": ticks, "note": ""})
        _save(store, f"r{index}::gout", "ben", "confirm" if b == "Rec" else "correct", b, ["x"])
    store.save("fam", "r2::gout", "cy", "confirm", {"label": "Rec", "ingredients": ["x"]},
               {"label": "Rec", "ingredients": ["x"], "note": ""}, role="adjudicator")
    result = review_stats(store.latest("fam"))
    # agreement 4/5; Ana Rec 3/5, Ben Rec 2/5: p_e = 3/5*2/5 + 2/5*3/5 = 12/25;
    # kappa = (4/5 - 12/25) / (1 - 12/25) = 8/13
    pair = result["inter_reviewer"]["pairs"][0]
    assert pair["reviewers"] == ["ana", "ben"] and pair["items"] == 5
    assert pair["agreement"] == pytest.approx(0.8)
    assert pair["cohen_kappa"] == pytest.approx(8 / 13)
    gout = result["conditions"]["gout"]
    assert gout["decisions"] == 10 and gout["label_kept_rate"] == pytest.approx(5 / 10)
    assert gout["rationale_edits"] == 1 and gout["kinds"] == {"Rec->NotRec": 5, "confirm": 5}
    assert result["adjudicated"] == 1 and result["reviewers"] == ["ana", "ben"]
