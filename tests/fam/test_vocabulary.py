"""The FAM-Bench ingredient vocabulary: real SR28 foods get the expected concepts."""

from __future__ import annotations

from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.fam.kb import CONCEPTS
from nutrireason.fam.vocabulary import Vocabulary, fallback_name
from tests.conftest import real_bundle

# ndb_no -> (canonical, concepts that must be present)
EXPECTED = {
    "02047": ("salt", {"high_sodium_foods"}),
    "01009": ("cheese", {"full_fat_dairy", "saturated_fat_rich_foods", "calcium_rich_foods",
                         "high_sodium_foods", "high_phosphorus_foods"}),
    "10123": ("bacon", {"processed_meats", "high_sodium_foods", "saturated_fat_rich_foods",
                        "high_phosphorus_foods"}),
    "13795": ("beef", {"red_meat", "high_purine_animal_foods"}),
    "14106": ("wine", {"alcohol"}),
    "14214": ("coffee", {"caffeinated_beverages"}),
    "14148": ("cola", {"caffeinated_beverages", "high_phosphorus_foods",
                       "sugar_sweetened_beverages"}),
    "19335": ("sugar", {"added_sugars"}),
    "20081": ("white flour", {"refined_grains", "gluten_containing_grains"}),
    "20080": ("whole wheat flour", {"whole_grains", "gluten_containing_grains"}),
    "09040": ("banana", {"high_potassium_foods", "fruits"}),
    "01077": ("whole milk", {"full_fat_dairy", "calcium_rich_foods", "lactose_containing_dairy"}),
    "01085": ("low fat milk", {"low_fat_dairy", "calcium_rich_foods", "lactose_containing_dairy"}),
    "11457": ("spinach", {"leafy_greens", "high_oxalate_foods", "iron_rich_foods",
                          "high_potassium_foods"}),
    "11090": ("broccoli", {"cruciferous_vegetables", "vegetables"}),
    "11670": ("chili pepper", {"spicy_trigger_foods"}),
    "02031": ("cayenne pepper", {"spicy_trigger_foods"}),
    "15001": ("anchovy", {"fish_seafood", "high_purine_animal_foods"}),
    "15149": ("shrimp", {"fish_seafood", "high_purine_animal_foods"}),
    "11529": ("tomato", {"acidic_trigger_foods", "high_potassium_foods"}),
}
# Concepts a food must not get.
FORBIDDEN = {
    "20081": {"whole_grains"},
    "20080": {"refined_grains"},
    "01085": {"full_fat_dairy", "saturated_fat_rich_foods"},
    "14147": {"caffeinated_beverages"},  # cola without caffeine
    "08120": {"gluten_containing_grains"},  # oats
    "11216": {"vegetables"},  # ginger root is a seasoning here
}


@pytest.fixture(scope="module")
def vocab() -> Vocabulary:
    return Vocabulary.load()


@pytest.fixture(scope="module")
def foods():
    from nutrireason.sources.sr28 import read_sr28

    return read_sr28(real_bundle("usda-sr28") / "sr28").foods.set_index("ndb_no")


def _lookup(vocab: Vocabulary, foods, ndb: str):
    row = foods.loc[ndb]
    return vocab.lookup(ndb, row["description"], row["group_code"])


@pytest.mark.parametrize("ndb", sorted(EXPECTED))
def test_real_foods_get_expected_concepts(vocab, foods, ndb):
    canonical, concepts = EXPECTED[ndb]
    entry = _lookup(vocab, foods, ndb)
    assert entry.canonical == canonical
    assert concepts <= entry.concepts, sorted(concepts - entry.concepts)
    assert entry.rules


@pytest.mark.parametrize("ndb", sorted(FORBIDDEN))
def test_real_foods_avoid_wrong_concepts(vocab, foods, ndb):
    assert not (_lookup(vocab, foods, ndb).concepts & FORBIDDEN[ndb])


def test_concepts_accumulate_but_first_name_wins(vocab):
    # Lean ground beef: named by the lean rule; red-meat concepts plus lean_proteins.
    entry = vocab.lookup(None, "Beef, ground, 90% lean meat / 10% fat, raw", "1300")
    assert entry.canonical == "ground beef"
    assert {"red_meat", "lean_proteins"} <= entry.concepts
    assert "saturated_fat_rich_foods" not in entry.concepts


def test_no_match_falls_back_to_first_segment(vocab):
    entry = vocab.lookup("99999", "Quux fruitlike thing, raw", "9999")
    assert entry == type(entry)("quux fruitlike thing", frozenset(), ())
    assert fallback_name("Tapioca, pearl, dry") == "tapioca"


def test_spices_are_named_from_the_description(vocab):
    assert vocab.lookup(None, "Spices, cumin seed", "0200").canonical == "cumin seed"
    assert vocab.lookup(None, "Leavening agents, yeast, baker's", "1800").canonical == "yeast"


def test_every_concept_is_in_the_kb_vocabulary(vocab):
    used = set().union(*(rule.concepts for rule in vocab.rules))
    assert used <= set(CONCEPTS)
    assert len(used) >= 40


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "vocab.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_unknown_concept_is_rejected(tmp_path):
    path = _write(tmp_path, """
rules:
  - {canonical: salt, concepts: [high_sodium_foods], match: {ndb: ["02047"]}, source: s}
  - {canonical: kale, concepts: [leafy_greens, superfoods], match: {description_any: [kale]},
     source: s}
""")
    with pytest.raises(DataError) as info:
        Vocabulary.load(path)
    message = str(info.value)
    assert str(path) in message and "rules[1]" in message and "superfoods" in message


@pytest.mark.parametrize("rule", [
    '{canonical: x, match: {ndb: ["1"]}}',  # no source
    '{canonical: x, match: {}, source: s}',  # empty match
    '{canonical: x, match: {ndb: [1]}, source: s}',  # unquoted code
    '{canonical: x, match: {ndb: ["1"]}, source: s, colour: red}',  # unknown key
    '{match: {ndb: ["1"]}, source: s}',  # names nothing
])
def test_malformed_rules_are_rejected(tmp_path, rule):
    with pytest.raises(DataError, match=r"rules\[0\]"):
        Vocabulary.load(_write(tmp_path, f"rules:\n  - {rule}\n"))


def test_wildcard_and_whole_word_matching(tmp_path):
    vocab = Vocabulary.load(_write(tmp_path, """
rules:
  - {canonical: tomato, concepts: [acidic_trigger_foods], match: {description_any: ["tomato*"]},
     source: s}
  - {canonical: salt, concepts: [high_sodium_foods], match: {description_any: [salt]}, source: s}
"""))
    assert vocab.lookup(None, "Tomatoes, red, raw", "1100").canonical == "tomato"
    assert vocab.lookup(None, "Butter, salted", "0100").concepts == frozenset()


def test_coverage_on_real_build(vocab, recipe_build, sr28):
    report = vocab.coverage(recipe_build / "recipes.jsonl", sr28.foods)
    # Measured on this build: 99.6 % of lines with an SR28 food named by a rule, 76.5 % with a
    # concept, 300+ distinct canonical names.
    assert report["lines_with_food"] > 20000
    assert report["named_share"] >= 0.98
    assert report["concept_share"] >= 0.74
    assert report["distinct_canonical"] >= 250
    assert len(report["top_unmapped"]) <= 25


@pytest.mark.parametrize(("description", "group", "canonical", "without"), [
    # the tomatoes are packed in tomato juice: a tomato, not a salted tomato juice
    ("Tomatoes, red, ripe, canned, packed in tomato juice", "1100", "tomato",
     "high_sodium_foods"),
    ("Pineapple, canned, juice pack, solids and liquids", "0900", "tropical fruit", None),
    ("Fish, sardine, Atlantic, canned in oil, drained solids with bone", "1500", "sardine",
     None),
])
def test_the_medium_a_food_is_packed_in_is_not_the_food(vocab, description, group, canonical,
                                                         without):
    entry = vocab.lookup(None, description, group)
    assert entry.canonical == canonical
    assert without is None or without not in entry.concepts


def test_a_syrup_pack_keeps_its_added_sugar_reading(vocab):
    entry = vocab.lookup(None, "Peaches, canned, heavy syrup pack, solids and liquids", "0900")
    assert entry.canonical == "peaches" and "added_sugars" in entry.concepts


def test_what_sr28_says_an_entry_also_covers_does_not_name_it() -> None:
    from nutrireason.fam.vocabulary import Vocabulary

    vocabulary = Vocabulary.load()
    # "(includes soft bread crumbs)": the entry is white bread, and a rationale says so
    entry = vocabulary.lookup("18069", "Bread, white, commercially prepared (includes soft "
                              "bread crumbs)", "1800")
    assert entry.canonical == "white bread"
