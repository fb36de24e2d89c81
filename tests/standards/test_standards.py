"""The packaged standards files load with the paper's values; malformed copies are rejected
with a DataError naming the file, the key path and the problem."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.errors import DataError
from nutrireason.standards import load_standards, standards_dir
from nutrireason.standards.loader import Threshold

STANDARDS_FILES = [
    "nutrients.yaml",
    "health_indicators.yaml",
    "conditions.yaml",
    "tag_sources.yaml",
    "habits.yaml",
]

# NGQA Table 7: condition / special diet -> required nutrient tags (and NHANES diet code).
TABLE_7 = {
    "obesity": (["low_calorie"], None),
    "hypertension": (["low_sodium"], None),
    "opioid_misuse": (["high_protein", "low_sugar", "low_sodium"], None),
    "diabetes": (["low_sugar", "low_carb"], None),
    "weight_loss_diet": (["low_calorie"], 1),
    "low_fat_diet": (["low_cholesterol", "low_saturated_fat"], 2),
    "low_salt_diet": (["low_sodium"], 3),
    "low_sugar_diet": (["low_sugar"], 4),
    "diabetic_diet": (["low_sugar", "low_carb"], 7),
    "weight_gain_diet": (["high_calorie", "high_protein"], 8),
    "low_carb_diet": (["low_carb"], 9),
    "high_protein_diet": (["high_protein"], 10),
    "renal_diet": (["low_protein"], 12),
}


@pytest.fixture(scope="module")
def standards():
    return load_standards()


def nutrient(standards, nutrient_id):
    return next(n for n in standards.nutrients.nutrients if n.id == nutrient_id)


# --------------------------------------------------------------------------- packaged files


def test_packaged_files_are_all_present():
    for name in [*STANDARDS_FILES, "bundles.yaml"]:
        assert (standards_dir() / name).is_file(), name


def test_default_load_is_the_packaged_directory_and_cached(standards):
    assert standards.directory == standards_dir()
    assert load_standards() is standards


def test_sixteen_nutrients_with_table_4_ids_and_tags(standards):
    rows = standards.nutrients.nutrients
    assert [n.id for n in rows] == [
        "calories", "carbohydrates", "protein", "saturated_fat", "cholesterol", "sugar",
        "fiber", "sodium", "potassium", "phosphorus", "iron", "calcium", "folic_acid",
        "vitamin_c", "vitamin_d", "vitamin_b12",
    ]
    assert len({n.tag for n in rows}) == 16
    assert standards.nutrients.comparators == {"low": "<=", "high": ">="}
    tags = standards.nutrient_tags()
    assert len(tags) == 32
    assert {"low_sodium", "high_sodium", "low_calorie", "high_vitamin_b12"} <= set(tags)


@pytest.mark.parametrize(
    ("nutrient_id", "low", "high", "nrv"),
    [
        ("sodium", 120, 200, 2000),
        ("sugar", 5, 22.5, None),
        ("vitamin_b12", 0, 0.36, 2.4),
        ("calories", 40, 225, 2000),
        ("saturated_fat", 1.5, 5, 20),
        ("carbohydrates", 55, 75, None),
    ],
)
def test_table_4_values(standards, nutrient_id, low, high, nrv):
    row = nutrient(standards, nutrient_id)
    assert row.low.value == low
    assert row.high.value == high
    if nrv is None:
        assert row.nrv is None
    else:
        assert row.nrv.value == nrv


def test_micronutrient_high_threshold_is_15_percent_of_nrv(standards):
    micros = ["potassium", "phosphorus", "iron", "calcium", "folic_acid", "vitamin_c",
              "vitamin_d", "vitamin_b12"]
    for nutrient_id in micros:
        row = nutrient(standards, nutrient_id)
        assert row.low.value == 0, nutrient_id
        assert row.high.value == pytest.approx(0.15 * row.nrv.value), nutrient_id


def test_every_nutrient_has_low_not_above_high(standards):
    for row in standards.nutrients.nutrients:
        assert row.low.value <= row.high.value, row.id


def test_thirteen_conditions_with_table_7_tags(standards):
    rows = standards.conditions.conditions
    assert len(rows) == 13
    assert {c.id: (c.tags, c.diet_code) for c in rows} == TABLE_7
    assert standards.condition("opioid_misuse").tags == ["high_protein", "low_sugar", "low_sodium"]
    renal = standards.condition("renal_diet")
    assert renal.tags == ["low_protein"]
    assert renal.diet_code == 12
    assert renal.kind == "special_diet"
    assert standards.condition("obesity").kind == "health_condition"
    assert standards.conditions.diet_codes[12] == "Renal/kidney"


def test_every_condition_and_tag_source_tag_is_a_nutrient_tag(standards):
    known = set(standards.nutrient_tags())
    for condition in standards.conditions.conditions:
        assert set(condition.tags) <= known, condition.id
    for row in standards.tag_sources.tags:
        assert row.tag in known


def test_sex_specific_indicators(standards):
    hemoglobin = standards.indicator("hemoglobin_g_dl").low
    assert hemoglobin.for_sex("male") == 13.2
    assert hemoglobin.for_sex("female") == 11.6
    assert hemoglobin.for_sex(None) is None
    waist = standards.indicator("waist_cm").high
    assert waist.for_sex("male") == 102
    assert waist.for_sex("female") == 88
    # a single value applies to both sexes
    bmi = standards.indicator("bmi").high
    assert bmi.for_sex("male") == bmi.for_sex("female") == bmi.for_sex(None) == 30


def test_unknown_indicator_or_condition_is_a_key_error(standards):
    with pytest.raises(KeyError):
        standards.indicator("no_such_indicator")
    with pytest.raises(KeyError):
        standards.condition("no_such_condition")


def test_twenty_seven_habit_items_with_54_distinct_tags(standards):
    # The first 27 items are the paper-sized set (27 x 2 = 54 tags, NGQA B.2). The other
    # 6 items the paper's case-study graphs show (SMD650 2 tags, SMDANY 1, four diets 1 each):
    # 33 items, 61 tags in all (tests/ngqa/test_habits.py counts them by kind).
    items = standards.habits.items[:27]
    assert all(item.kind == "extremes" for item in items)
    names = [name for item in items for name in (item.high, item.low)]
    assert len(names) == 54
    assert len(set(names)) == 54
    assert len({item.variable for item in items}) == 27
    assert len(standards.habits.items) == 33 and len(standards.habits.tags) == 61
    assert standards.habits.share.value == 0.10


def _walk_sources(node, where, found):
    """Collect (where, source) for every model in ``node`` that has a ``source`` field."""
    if isinstance(node, BaseModel):
        fields = type(node).model_fields
        if "source" in fields:
            found.append((where, node.source, node))
        for name in fields:
            _walk_sources(getattr(node, name), f"{where}.{name}", found)
    elif isinstance(node, (list, tuple)):
        for index, item in enumerate(node):
            _walk_sources(item, f"{where}[{index}]", found)
    elif isinstance(node, dict):
        for key, item in node.items():
            _walk_sources(item, f"{where}[{key!r}]", found)


def test_every_value_has_a_non_empty_source(standards):
    found = []
    for name in ("nutrients", "indicators", "conditions", "tag_sources", "habits"):
        _walk_sources(getattr(standards, name), name, found)
    for where, source, _ in found:
        assert isinstance(source, str) and source.strip(), where
    thresholds = [model for _, _, model in found if isinstance(model, Threshold)]
    # 16 nutrients x (low, high) + 13 NRVs (none for carbs, sugar, fiber) + 11 indicators
    assert len(thresholds) == 16 * 2 + 13 + 11
    for row in standards.tag_sources.tags:
        assert row.sources and all(s.strip() for s in row.sources), row.tag


# --------------------------------------------------------------------------- malformed copies


def copy_standards(tmp_path: Path) -> Path:
    target = tmp_path / "standards"
    shutil.copytree(standards_dir(), target)
    return target


def break_file(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of the packaged files with the single occurrence of ``old`` replaced."""
    directory = copy_standards(tmp_path)
    path = directory / name
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} must occur once in {name}"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return directory


def load_error(directory: Path) -> DataError:
    with pytest.raises(DataError) as caught:
        load_standards(directory)
    return caught.value


def assert_names(error: DataError, file_name: str, key_path: str, *problem: str) -> None:
    message = str(error)
    assert file_name in message
    assert f"field '{key_path}'" in message
    for words in problem:
        assert words in message


NOT_RAISED = pytest.fail.Exception  # what pytest.raises throws when nothing is raised

SODIUM_LOW = 'low: {value: 120, source: "NGQA Table 4"'
SODIUM_HIGH = 'high: {value: 200, source: "NGQA Table 4"}'


def test_the_unbroken_copy_loads(tmp_path):
    standards = load_standards(copy_standards(tmp_path))
    assert len(standards.nutrients.nutrients) == 16
    assert standards.directory == tmp_path / "standards"


def test_non_numeric_threshold(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", SODIUM_LOW,
                           'low: {value: lots, source: "NGQA Table 4"')
    error = load_error(directory)
    assert_names(error, "nutrients.yaml", "nutrients[7](id=sodium).low.value", "valid number")
    assert error.path == str(directory / "nutrients.yaml")


def test_low_above_high(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", SODIUM_LOW,
                           'low: {value: 250, source: "NGQA Table 4"')
    error = load_error(directory)
    assert_names(error, "nutrients.yaml", "nutrients[7](id=sodium)",
                 "low threshold 250.0 exceeds high 200.0")


def test_missing_source_on_a_threshold(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", SODIUM_HIGH, "high: {value: 200}")
    error = load_error(directory)
    assert_names(error, "nutrients.yaml", "nutrients[7](id=sodium).high.source", "Field required")


def test_missing_source_on_a_condition(tmp_path):
    directory = break_file(tmp_path, "conditions.yaml",
                           'tags: [low_protein], source: "NGQA Table 7; NHANES DRQSDT12"}',
                           "tags: [low_protein]}")
    error = load_error(directory)
    assert_names(error, "conditions.yaml", "conditions[12](id=renal_diet).source",
                 "Field required")


def test_unknown_extra_key(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", SODIUM_HIGH,
                           'high: {value: 200, source: "NGQA Table 4", colour: red}')
    error = load_error(directory)
    assert_names(error, "nutrients.yaml", "nutrients[7](id=sodium).high.colour",
                 "Extra inputs are not permitted")


def test_unknown_extra_key_at_top_level(tmp_path):
    directory = copy_standards(tmp_path)
    path = directory / "health_indicators.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "surprise: 1\n", encoding="utf-8")
    error = load_error(directory)
    assert_names(error, "health_indicators.yaml", "surprise", "Extra inputs are not permitted")


def test_condition_tag_that_is_not_a_nutrient_tag(tmp_path):
    directory = break_file(tmp_path, "conditions.yaml", "tags: [low_protein]",
                           "tags: [low_unicorn]")
    error = load_error(directory)
    assert_names(error, "conditions.yaml", "conditions[12](id=renal_diet).tags",
                 "unknown nutrient tag", "low_unicorn")
    assert error.value == "low_unicorn"


def test_tag_source_tag_that_is_not_a_nutrient_tag(tmp_path):
    directory = break_file(tmp_path, "tag_sources.yaml", "tag: high_vitamin_b12",
                           "tag: high_unicorn")
    error = load_error(directory)
    assert_names(error, "tag_sources.yaml", "tags[17].tag", "unknown nutrient tag", "high_unicorn")


def test_duplicate_nutrient_id(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", "id: potassium", "id: sodium")
    error = load_error(directory)
    message = str(error)
    assert "nutrients.yaml" in message
    assert "duplicate nutrient id 'sodium'" in message


def test_duplicate_nutrient_id_names_its_key_path(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", "id: potassium", "id: sodium")
    error = load_error(directory)
    assert error.field is not None and error.field.startswith("nutrients")


def test_half_a_sex_specific_pair(tmp_path):
    directory = break_file(tmp_path, "health_indicators.yaml",
                           'high: {male: 102, female: 88, source: "NGQA Table 5"}',
                           'high: {male: 102, source: "NGQA Table 5"}')
    error = load_error(directory)
    assert_names(error, "health_indicators.yaml", "indicators[1](id=waist_cm).high",
                 "give either 'value' or both 'male' and 'female'")


def test_special_diet_without_diet_code(tmp_path):
    directory = break_file(tmp_path, "conditions.yaml", "diet_code: 12,", "")
    error = load_error(directory)
    assert_names(error, "conditions.yaml", "conditions[12](id=renal_diet)", "diet_code")


def test_rule_key_path_through_an_int_keyed_mapping(tmp_path):
    directory = break_file(tmp_path, "conditions.yaml", "3: {value: 30.4375,", "3: {value: x,")
    error = load_error(directory)
    assert_names(error, "conditions.yaml", "rules.heroin_unit_days[3].value", "valid number")


def test_habit_item_key_path_uses_the_variable(tmp_path):
    directory = break_file(tmp_path, "habits.yaml",
                           'high: "Rates own diet as poor", low: "Rates own diet as excellent", '
                           "missing: [7, 9]}",
                           'high: "Rates own diet as poor", low: "Rates own diet as excellent", '
                           "missing: [seven, 9]}")
    error = load_error(directory)
    assert_names(error, "habits.yaml", "items[0](id=DBQ700).missing[0]", "valid number")


def test_invalid_yaml_syntax(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", "version: 1\n", "version: [1\n")
    error = load_error(directory)
    message = str(error)
    assert "nutrients.yaml" in message
    assert "not valid YAML" in message
    assert "line 5" in message


def test_top_level_list(tmp_path):
    directory = copy_standards(tmp_path)
    (directory / "habits.yaml").write_text("- version: 1\n- items: []\n", encoding="utf-8")
    error = load_error(directory)
    message = str(error)
    assert "habits.yaml" in message
    assert "top level must be a mapping" in message
    assert "list" in message


def test_empty_file_is_not_a_mapping(tmp_path):
    directory = copy_standards(tmp_path)
    (directory / "conditions.yaml").write_text("", encoding="utf-8")
    error = load_error(directory)
    assert "conditions.yaml" in str(error)
    assert "top level must be a mapping" in str(error)


@pytest.mark.parametrize("name", STANDARDS_FILES)
def test_missing_file(tmp_path, name):
    directory = copy_standards(tmp_path)
    (directory / name).unlink()
    error = load_error(directory)
    assert name in str(error)
    assert "standards file not found" in str(error)


def test_missing_directory(tmp_path):
    error = load_error(tmp_path / "nowhere")
    assert "nowhere" in str(error)
    assert "not found" in str(error)


def test_nan_threshold_is_rejected(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", SODIUM_LOW,
                           'low: {value: .nan, source: "NGQA Table 4"')
    load_error(directory)


def test_boolean_threshold_is_rejected(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", SODIUM_LOW,
                           'low: {value: true, source: "NGQA Table 4"')
    load_error(directory)


def test_empty_source_is_rejected(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", SODIUM_HIGH,
                           'high: {value: 200, source: ""}')
    load_error(directory)


# --------------------------------------------------------------------------- CLI


def test_cli_check_packaged_files():
    result = CliRunner().invoke(app, ["standards", "check"])
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())  # whatever the terminal's width
    assert "ok: 16 nutrients" in said
    assert "13 conditions/diets" in said


def test_cli_check_good_directory(tmp_path):
    directory = copy_standards(tmp_path)
    result = CliRunner().invoke(app, ["standards", "check", str(directory)])
    assert result.exit_code == 0, result.output
    assert "ok:" in result.stdout
    assert result.stderr == ""


def test_cli_check_bad_directory(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", SODIUM_LOW,
                           'low: {value: lots, source: "NGQA Table 4"')
    result = CliRunner().invoke(app, ["standards", "check", str(directory)])
    assert result.exit_code == 1
    assert result.stderr.startswith("error:")
    assert "nutrients.yaml" in result.stderr
    assert "nutrients[7](id=sodium).low.value" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "ok:" not in result.stdout


def test_cli_check_invalid_yaml_is_one_line(tmp_path):
    directory = break_file(tmp_path, "nutrients.yaml", "version: 1\n", "version: [1\n")
    result = CliRunner().invoke(app, ["standards", "check", str(directory)])
    assert result.exit_code == 1
    assert result.stderr.startswith("error:")
    assert len(result.stderr.strip().splitlines()) == 1
