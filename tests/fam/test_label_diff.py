"""The FAM-Bench label diff on small hand-written pools with known transitions and reasons."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.fam.diff import console, label_diff, print_report, reason_class

CVD, GOUT, CKD, HTN, IBS, GERD = ("cardiovascular_disease", "gout", "chronic_kidney_disease",
                                  "hypertension", "ibs", "gerd")
PORTION = "portion size decisive but unavailable"
SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "fam_label_diff.py"


def concept(name: str, ingredient: str, side: str = "limit", **extra: object) -> dict:
    return {"rule": "ingredient_concept", "concept": name, "kb_side": side,
            "ingredient": ingredient, "line": ingredient, "mass_share": 0.2, **extra}


def veto(nutrient: str, *ingredients: str) -> dict:
    return {"rule": "nutrient_veto", "nutrient": nutrient, "ingredients": list(ingredients),
            "max": 5.0, "min": None, "value": 9.0}


def side(condition: str, ingredients: list[str], *provenance: dict) -> dict:
    return {"condition": condition, "ingredients": ingredients, "provenance": list(provenance)}


def recipe(rid: str, rec: list | None = None, not_rec: list | None = None,
           excluded_entries: list | None = None, excluded: str | None = None, **extra) -> dict:
    return {"recipe_id": rid, "title": rid.title(), "excluded": excluded, "rec": rec or [],
            "not_rec": not_rec or [], "excluded_entries": excluded_entries or [], **extra}


OLD = [
    recipe("apple-pie", rec=[side(CVD, ["apple"], concept("fruits", "apple", "beneficial"))],
           not_rec=[side(GOUT, ["sugar"], concept("added_sugars", "sugar"))]),
    recipe("beef-stew",
           not_rec=[side(CKD, ["beef"], concept("high_phosphorus_foods", "beef")),
                    side(GERD, ["beef"], concept("saturated_fat_rich_foods", "beef"))],
           excluded_entries=[{"condition": HTN, "reason": PORTION, "provenance": [
               {"rule": "portion_undecidable", "nutrient": "sodium", "max": 600.0}]}]),
    recipe("garlic-bread",
           rec=[side(CVD, ["garlic"], concept("vegetables", "garlic", "beneficial"))]),
    recipe("salad", rec=[side(CVD, ["lettuce"], concept("vegetables", "lettuce", "beneficial"))]),
    recipe("old-only", excluded="missing ingredients: no quantified ingredients"),
]

NEW = [
    # CVD: Rec -> NotRec (a new fat veto overrules the fruit); gout: same side, one more
    # ingredient behind the same concept; an extra top-level key is ignored
    recipe("apple-pie",
           not_rec=[side(CVD, ["butter"], veto("saturated_fat", "butter"),
                         concept("fruits", "apple", "beneficial", overruled=True)),
                    side(GOUT, ["sugar", "honey"], concept("added_sugars", "sugar"),
                         concept("added_sugars", "honey"))],
           proposal={CVD: "NotRec"}),
    # CKD: NotRec -> neutral; hypertension: portion exclusion -> sodium veto; GERD: same side and
    # ingredients with one more rule (provenance only)
    recipe("beef-stew",
           not_rec=[side(HTN, ["salt"], veto("sodium", "salt")),
                    side(GERD, ["beef"], concept("saturated_fat_rich_foods", "beef"),
                         veto("saturated_fat", "beef"))]),
    # IBS: neutral -> NotRec through a rule the old build did not have
    recipe("garlic-bread",
           rec=[side(CVD, ["garlic"], concept("vegetables", "garlic", "beneficial"))],
           not_rec=[side(IBS, ["garlic"], {"rule": "food_list", "food": "garlic",
                                           "kb_side": "avoid", "ingredient": "garlic"})]),
    recipe("salad", excluded="missing ingredients: too light: total weight 44 g is under 50 g"),
    recipe("new-only", rec=[side(GOUT, ["cherries"], concept("fruits", "cherries", "beneficial"))]),
]

OLD_DISH = [
    {"id": "dish-00001", "condition": GOUT, "recipe_id": "apple-pie",
     "gold": {"condition": GOUT, "decision": "not_recommend", "rationale": ["sugar"]}},
    {"id": "dish-00002", "condition": CVD, "recipe_id": "apple-pie",
     "gold": {"condition": CVD, "decision": "recommend", "rationale": ["apple"]}},
    {"id": "dish-00003", "condition": CVD, "recipe_id": "salad",
     "gold": {"condition": CVD, "decision": "recommend", "rationale": ["lettuce"]}},
]
NEW_DISH = [
    {"id": "dish-00001", "condition": GOUT, "recipe_id": "apple-pie",
     "gold": {"condition": GOUT, "decision": "not_recommend", "rationale": ["sugar", "honey"]}},
    {"id": "dish-00002", "condition": CVD, "recipe_id": "apple-pie",
     "gold": {"condition": CVD, "decision": "not_recommend", "rationale": ["butter"]}},
    {"id": "dish-00003", "condition": IBS, "recipe_id": "garlic-bread",
     "gold": {"condition": IBS, "decision": "not_recommend", "rationale": ["garlic"]}},
]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def build(root: Path, pool: list[dict], dish: list[dict] | None = None) -> Path:
    """An ann/ + fam/ folder (the layout `fam annotate` and `fam build` write)."""
    write_jsonl(root / "ann" / "annotations.jsonl", pool)
    (root / "ann" / "summary.json").write_text("{}", encoding="utf-8")
    if dish is not None:
        write_jsonl(root / "fam" / "dish.jsonl", dish)
    return root


@pytest.fixture
def report(tmp_path: Path) -> dict:
    return label_diff(build(tmp_path / "old", OLD, OLD_DISH),
                      build(tmp_path / "new", NEW, NEW_DISH))


def reasons(figures: dict) -> dict[str, tuple[int, int, int]]:
    return {r["class"]: (r["label"], r["rationale"], r["provenance"]) for r in figures["reasons"]}


def test_recipes_in_one_build_only(report):
    recipes = {k: v for k, v in report["recipes"].items() if k != "excluded"}
    assert recipes == {"old": 5, "new": 5, "both": 4, "only_old": ["old-only"],
                       "only_new": ["new-only"]}
    assert report["conditions"][CVD]["only_old"] == {"recipe-excluded": 1}
    assert report["conditions"][GOUT]["only_new"] == {"Rec": 1}
    assert report["recipes"]["excluded"] == {
        "old": 1, "new": 1, "newly_excluded": 1, "no_longer_excluded": 0, "reason_changed": 0,
        "reasons": {"+recipe-excluded:missing ingredients: too light": 1}}


def test_no_entry_either_way_is_no_change(report):
    ckd = report["conditions"][CKD]  # salad: neutral for CKD, then the recipe is excluded
    assert ckd["matrix"]["neutral -> recipe-excluded"] == 1
    assert ckd["transitions"] == {"NotRec -> neutral": 1}
    assert ckd["labels_changed"] == 1


def test_transitions_and_counts(report):
    cvd = report["conditions"][CVD]
    assert cvd["transitions"] == {"Rec -> NotRec": 1, "Rec -> recipe-excluded": 1}
    assert cvd["matrix"] == {"Rec -> NotRec": 1, "Rec -> Rec": 1, "Rec -> recipe-excluded": 1,
                             "neutral -> neutral": 1}
    assert cvd["counts"] == {"old": {"Rec": 3, "neutral": 1, "recipe-excluded": 1},
                             "new": {"NotRec": 1, "Rec": 1, "neutral": 2,
                                     "recipe-excluded": 1}}
    assert (cvd["labels_changed"], cvd["rationales_changed"], cvd["provenance_changed"]) == (
        2, 0, 0)
    assert cvd["transition_examples"] == {"Rec -> NotRec": ["apple-pie"],
                                          "Rec -> recipe-excluded": ["salad"]}
    conditions = report["conditions"]
    assert conditions[CKD]["transitions"] == {"NotRec -> neutral": 1}
    assert conditions[HTN]["transitions"] == {f"excluded-entry: {PORTION} -> NotRec": 1}
    assert conditions[IBS]["transitions"] == {"neutral -> NotRec": 1}
    assert conditions[GOUT]["transitions"] == {}
    assert conditions[GERD]["transitions"] == {}


def test_rationale_and_provenance_changes(report):
    gout, gerd = report["conditions"][GOUT], report["conditions"][GERD]
    assert (gout["labels_changed"], gout["rationales_changed"], gout["provenance_changed"]) == (
        0, 1, 0)
    assert (gerd["labels_changed"], gerd["rationales_changed"], gerd["provenance_changed"]) == (
        0, 0, 1)


def test_reason_classes(report):
    conditions = report["conditions"]
    assert reasons(conditions[CVD]) == {
        "+recipe-excluded:missing ingredients: too light": (1, 0, 0),
        "+veto:saturated_fat": (1, 0, 0)}
    # the same concept on both sides: the finer keys name the new ingredient
    assert reasons(conditions[GOUT]) == {"+concept:added_sugars[limit]<-honey": (0, 1, 0)}
    assert reasons(conditions[CKD]) == {"-concept:high_phosphorus_foods": (1, 0, 0)}
    assert reasons(conditions[HTN]) == {"-portion:sodium +veto:sodium": (1, 0, 0)}
    assert reasons(conditions[IBS]) == {"+food:garlic": (1, 0, 0)}
    assert reasons(conditions[GERD]) == {"+veto:saturated_fat": (0, 0, 1)}
    assert conditions[IBS]["reasons"][0]["examples"] == ["garlic-bread"]


def test_summary_lines(report):
    assert report["summary_lines"][:2] == [
        "- cardiovascular_disease: Rec 3 -> 1, NotRec 0 -> 1; labels changed 2, "
        "rationales changed 0",
        "- chronic_kidney_disease: Rec 0 -> 0, NotRec 1 -> 0; labels changed 1, "
        "rationales changed 0"]
    assert len(report["summary_lines"]) == 6


def test_dish_level(report):
    dish = report["dish"]
    assert {k: v for k, v in dish.items() if k != "conditions"} == {
        "old": 3, "new": 3, "ids_shared": 3, "ids_same_gold": 1, "pairs_shared": 2,
        "pairs_same_label": 1, "pairs_same_rationale": 0}
    assert dish["conditions"] == {
        CVD: {"old": {"recommend": 2}, "new": {"not_recommend": 1}, "pairs_shared": 1,
              "pairs_same_label": 0, "pairs_same_rationale": 0},
        GOUT: {"old": {"not_recommend": 1}, "new": {"not_recommend": 1}, "pairs_shared": 1,
               "pairs_same_label": 1, "pairs_same_rationale": 0},
        IBS: {"old": {}, "new": {"not_recommend": 1}, "pairs_shared": 0,
              "pairs_same_label": 0, "pairs_same_rationale": 0}}


def test_identical_builds_report_no_change(tmp_path):
    root = build(tmp_path / "b", OLD, OLD_DISH)
    report = label_diff(root, root / "ann")  # the ann/+fam/ folder and the bare pool folder
    for figures in report["conditions"].values():
        assert figures["transitions"] == {} and figures["reasons"] == []
        assert figures["counts"]["old"] == figures["counts"]["new"]
    assert report["recipes"]["only_old"] == report["recipes"]["only_new"] == []
    assert report["dish"] is None  # the bare pool folder has no dish.jsonl
    out = console(file=io.StringIO())
    print_report(report, out)
    text = out.file.getvalue()
    assert "no label, rationale or provenance changes" in text
    assert "dish level: not compared" in text


def test_missing_files_name_the_path(tmp_path):
    with pytest.raises(DataError, match="FAM build not found") as caught:
        label_diff(tmp_path / "nowhere", tmp_path / "nowhere")
    assert str(tmp_path / "nowhere") in str(caught.value)
    (tmp_path / "empty" / "ann").mkdir(parents=True)
    with pytest.raises(DataError, match="FAM annotation pool not found") as caught:
        label_diff(tmp_path / "empty", tmp_path / "empty")
    assert str(tmp_path / "empty" / "ann" / "annotations.jsonl") in str(caught.value)


def test_bad_pools_are_data_errors(tmp_path):
    twice = recipe("x", rec=[side(CVD, ["a"])], not_rec=[side(CVD, ["b"])])
    write_jsonl(tmp_path / "twice" / "annotations.jsonl", [twice])
    with pytest.raises(DataError, match="lists condition 'cardiovascular_disease' twice"):
        label_diff(tmp_path / "twice", tmp_path / "twice")
    write_jsonl(tmp_path / "dup" / "annotations.jsonl", [recipe("x"), recipe("x")])
    with pytest.raises(DataError, match="recipe id 'x' appears twice"):
        label_diff(tmp_path / "dup", tmp_path / "dup")


def test_reason_class_of_free_text():
    assert reason_class(PORTION) == PORTION
    assert reason_class("missing ingredients: unresolved ingredients: 1 of 10 quantified lines"
                        ) == "missing ingredients: unresolved ingredients"
    assert reason_class("missing ingredients: implausible quantity: '2 cups salt'"
                        ) == "missing ingredients: implausible quantity"
    assert reason_class("no usable LLM proposal") == "no usable LLM proposal"


def test_script_prints_tables_and_writes_json(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("fam_label_diff", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    old, new = build(tmp_path / "old", OLD, OLD_DISH), build(tmp_path / "new", NEW, NEW_DISH)
    out_json = tmp_path / "diff.json"
    assert module.main([str(old), str(new), "--out-json", str(out_json)]) == 0
    text = capsys.readouterr().out
    for expected in ("+food:garlic", "+concept:added_sugars[limit]<-honey", "Rec -> NotRec",
                     "- gout: Rec 0 -> 1, NotRec 1 -> 1; labels changed 0, rationales changed 1"):
        assert expected in text
    written = json.loads(out_json.read_text(encoding="utf-8"))
    assert written["conditions"][IBS]["transitions"] == {"neutral -> NotRec": 1}
    assert written["seconds"] >= 0
    assert module.main([str(tmp_path / "missing"), str(new)]) == 1
    assert str(tmp_path / "missing") in capsys.readouterr().err
