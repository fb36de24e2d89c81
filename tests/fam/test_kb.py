"""The FAM-Bench condition knowledge base loads, uses only the closed concept vocabulary and
encodes the paper's failure modes; malformed copies are rejected naming file and key."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from nutrireason.errors import DataError
from nutrireason.fam.kb import CONCEPTS, CONDITION_IDS, SIDES, kb_dir, load_kb


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def test_all_conditions_load(kb) -> None:
    assert sorted(kb) == sorted(CONDITION_IDS)
    assert len(kb) == 13


def test_concepts_closed_and_one_side_only(kb) -> None:
    for entry in kb.values():
        concepts = entry.concepts()
        assert set(concepts) <= set(CONCEPTS), entry.id
        assert len(concepts) == len(set(concepts)), entry.id
        bad = set(entry.beneficial.concepts) & set(entry.concepts("limit", "avoid"))
        assert not bad, (entry.id, bad)


def test_references_and_nutrient_limits(kb) -> None:
    for entry in kb.values():
        assert entry.references, entry.id
        for limit in entry.nutrient_limits:
            assert (limit.max is None) != (limit.min is None)
            assert limit.source


def _penalised(entry, *concepts: str) -> bool:
    return all(entry.side_of(c) in ("limit", "avoid") for c in concepts)


def _listed(entry, side: str, *foods: str) -> bool:
    return all(food in entry.side(side).foods for food in foods)


def test_failure_mode_anchors(kb) -> None:
    ckd = kb["chronic_kidney_disease"]
    assert _penalised(ckd, "high_potassium_foods", "high_phosphorus_foods", "high_sodium_foods",
                      "processed_meats")
    assert {"sodium", "potassium", "phosphorus", "protein"} <= {
        n.nutrient for n in ckd.nutrient_limits
    }
    # FAM-Bench failure mode 2: animal ingredients for stroke (the release's lists).
    stroke = kb["stroke"]
    assert _penalised(stroke, "processed_meats", "red_meat")
    assert _listed(stroke, "limit", "butter", "cheese", "red meat")
    assert {"sodium", "saturated_fat"} <= {n.nutrient for n in stroke.nutrient_limits}
    osteo = kb["osteoporosis"]
    assert _penalised(osteo, "alcohol")
    assert all(osteo.side_of(c) == "beneficial"
               for c in ("calcium_rich_foods", "vegetables", "low_fat_dairy"))


def test_other_anchors(kb) -> None:
    assert _penalised(kb["gout"], "high_purine_animal_foods", "alcohol",
                      "sugar_sweetened_beverages")
    assert kb["gout"].side_of("added_sugars") is None  # high-fructose foods, not every sugar
    celiac = kb["celiac_disease"]
    assert celiac.side_of("gluten_containing_grains") == "avoid"
    assert [c for side in ("limit", "avoid") for c in celiac.side(side).concepts] == [
        "gluten_containing_grains"]  # a gluten condition: sugar and fat are not reasons
    assert celiac.avoid_any_amount
    gerd = kb["gerd"]
    assert _penalised(gerd, "acidic_trigger_foods", "spicy_trigger_foods", "fried_foods",
                      "alcohol", "caffeinated_beverages")
    assert _listed(gerd, "limit", "chocolate", "peppermint")
    assert "total_fat" in {n.nutrient for n in gerd.nutrient_limits}
    assert _listed(kb["ibs"], "avoid", "onions", "garlic")
    assert _penalised(kb["nafld"], "sugar_sweetened_beverages", "alcohol", "refined_grains")
    assert _penalised(kb["type_2_diabetes"], "sugar_sweetened_beverages",
                      "refined_grains", "high_sugar_desserts")
    assert _penalised(kb["hypertension"], "processed_meats")
    assert "sodium" in {n.nutrient for n in kb["hypertension"].nutrient_limits}
    assert _penalised(kb["obesity"], "high_sugar_desserts", "sugar_sweetened_beverages")
    anaemia = kb["iron_deficiency_anemia"]
    assert anaemia.side_of("iron_rich_foods") == "beneficial"
    assert anaemia.side_of("vitamin_c_rich_produce") == "beneficial"
    assert anaemia.side_of("caffeinated_beverages") == "limit"
    assert _penalised(kb["cardiovascular_disease"], "processed_meats", "red_meat")
    nutrients = {c: {n.nutrient for n in kb[c].nutrient_limits} for c in kb}
    assert "free_sugars" in nutrients["type_2_diabetes"]  # WHO free sugars, not milk's
    assert "sodium" in nutrients["hypertension"]
    assert "calories" in nutrients["obesity"]
    assert kb["hypertension"].side_of("not_a_concept") is None
    assert SIDES == ("beneficial", "limit", "avoid")


def _broken_copy(tmp_path: Path, condition: str, edit) -> Path:
    root = tmp_path / "fam_kb"
    shutil.copytree(kb_dir(), root)
    path = root / f"{condition}.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return root


def _unknown_concept(data) -> None:
    data["limit"]["concepts"].append("fodmaps")


def _both_sides(data) -> None:
    data["avoid"]["concepts"].append(data["beneficial"]["concepts"][0])


def _max_and_min(data) -> None:
    data["nutrient_limits"][0]["min"] = 1


def _wrong_unit(data) -> None:
    data["nutrient_limits"][0]["unit"] = "g"


def _unknown_nutrient(data) -> None:
    data["nutrient_limits"][0]["nutrient"] = "salt"


def _no_references(data) -> None:
    data["references"] = []


def _unlisted_addition(data) -> None:
    data["limit"]["foods"].append("tomatoes")  # a departure with no deviation entry


def _unlisted_removal(data) -> None:
    data["deviations"] = [d for d in data["deviations"] if d.get("change") != "removed"]


def _stale_deviation(data) -> None:
    data["deviations"].append({"change": "added", "side": "avoid", "food": "kale",
                               "reason": "r", "source": "s"})


def _deviation_without_source(data) -> None:
    del data["deviations"][0]["source"]


@pytest.mark.parametrize(
    ("edit", "field", "words"),
    [
        (_unknown_concept, "limit.concepts[", "unknown concept"),
        (_both_sides, "avoid", "also on the beneficial side"),
        (_max_and_min, "nutrient_limits[0]", "exactly one of"),
        (_wrong_unit, "nutrient_limits[0].unit", "unit does not match"),
        (_unknown_nutrient, "nutrient_limits[0].nutrient", "unknown nutrient"),
        (_no_references, "references", "at least 1"),
        (_unlisted_addition, "deviations", "limit.food 'tomatoes' added"),
        (_unlisted_removal, "deviations", "beneficial.food 'including colorful' removed"),
        (_stale_deviation, "deviations", "avoid.food 'kale' lists no change"),
        (_deviation_without_source, "deviations", "source"),
    ],
)
def test_malformed_copy_rejected(tmp_path: Path, edit, field: str, words: str) -> None:
    root = _broken_copy(tmp_path, "hypertension", edit)
    with pytest.raises(DataError) as caught:
        load_kb(root)
    message = str(caught.value)
    assert "hypertension.yaml" in message
    assert field in (caught.value.field or "")
    assert words in message


def test_id_must_match_file_and_files_must_be_known(tmp_path: Path) -> None:
    root = _broken_copy(tmp_path, "gout", lambda data: data.update(id="gouty"))
    with pytest.raises(DataError, match="gout.yaml.*does not match"):
        load_kb(root)
    root = tmp_path / "extra"
    shutil.copytree(kb_dir(), root)
    (root / "asthma.yaml").write_text("id: asthma\n", encoding="utf-8")
    with pytest.raises(DataError, match="asthma.yaml"):  # an added condition is checked too
        load_kb(root)
    root = _broken_copy(tmp_path / "norelease", "gout", lambda data: data.pop("release"))
    with pytest.raises(DataError, match="gout.yaml.*needs the release"):
        load_kb(root)


RELEASE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "fam-bench-kb" / \
    "condition_rules.json"


@pytest.mark.skipif(not RELEASE.is_file(), reason="the FAM-Bench release (../shared) is absent")
def test_release_blocks_are_the_release_as_released(kb) -> None:
    """Each file's ``release`` block is the FAM-Bench release's own lists for that condition."""
    import json

    released = {c["value"]: c for c in json.loads(RELEASE.read_text())["conditions"]}
    for entry in kb.values():
        original = released[entry.release.value]
        for side in SIDES:
            block = entry.release.side(side)
            assert block.foods == original[f"{side}_foods"], (entry.id, side)
            assert block.concepts == list(dict.fromkeys(original[f"{side}_concepts"])), \
                (entry.id, side)
        assert entry.release.dietary_tag_hints == original["dietary_tag_hints"]


def test_every_departure_names_a_reason_and_a_citable_source(kb) -> None:
    for entry in kb.values():
        for deviation in entry.deviations:
            assert len(deviation.reason) > 20, (entry.id, deviation.item)
            assert "http" in deviation.source or "release" in deviation.source or \
                "guideline" in deviation.source.lower() or "FDA" in deviation.source, \
                (entry.id, deviation.item, deviation.source)
    assert sum(len(e.deviations) for e in kb.values()) >= 40


def test_food_lists_read_every_knowledge_base_food(kb) -> None:
    from nutrireason.fam.foodlists import FoodLists

    FoodLists.load().check_covers(kb)


def test_foods_that_are_no_evidence_are_vocabulary_names_under_a_side_concept(kb) -> None:
    from nutrireason.fam.vocabulary import Vocabulary

    vocabulary = Vocabulary.load()
    names = {rule.canonical for rule in vocabulary.rules if rule.canonical}
    found = [(entry.id, item.food) for entry in kb.values() for item in entry.not_evidence]
    assert ("gerd", "onion") in found and ("gerd", "garlic") in found
    for condition, food in found:
        assert food in names, f"{condition}: {food!r} is no canonical vocabulary name"
