"""FNDDS reader on small fixture files written in the real formats (xlsx and legacy text)."""

from __future__ import annotations

import math
from pathlib import Path

import openpyxl
import pandas as pd
import pytest

from nutrireason.errors import DataError
from nutrireason.sources.fndds import normalize_header, read_fndds, split_unit
from nutrireason.sources.nutrients import NUTRIENT_NAMES

BASE = ["Food code", "Main food description", "WWEIA Category number",
        "WWEIA Category description"]

# FNDDS 2017-18 style: line breaks inside headers, a distracting "added" B-12 column first.
HEADERS_2017 = {
    "calories": "Energy (kcal)", "protein": "Protein (g)", "carbohydrates": "Carbohydrate (g)",
    "sugar": "Sugars, total\n(g)", "fiber": "Fiber, total dietary (g)",
    "saturated_fat": "Fatty acids, total saturated (g)", "cholesterol": "Cholesterol (mg)",
    "folic_acid": "Folic acid (mcg)", "vitamin_b12_added": "Vitamin B-12, added\n(mcg)",
    "vitamin_b12": "Vitamin B-12 (mcg)", "vitamin_c": "Vitamin C (mg)",
    "vitamin_d": "Vitamin D (D2 + D3) (mcg)", "calcium": "Calcium (mg)",
    "phosphorus": "Phosphorus (mg)", "iron": "Iron\n(mg)", "potassium": "Potassium (mg)",
    "sodium": "Sodium (mg)",
}
# A later release: other spellings and order, an extra kJ energy column before kcal.
HEADERS_2021 = {
    "sodium": "Sodium\n(mg)", "calories_kj": "Energy (kJ)", "calories": "Energy\n(kcal)",
    "carbohydrates": "Carbohydrate\n(g)", "protein": "Protein\n(g)",
    "saturated_fat": "Fatty acids, total saturated\n(g)", "cholesterol": "Cholesterol\n(mg)",
    "sugar": "Sugars, total (g)", "fiber": "Fiber, total dietary\n(g)",
    "potassium": "Potassium\n(mg)", "phosphorus": "Phosphorus\n(mg)", "iron": "Iron (mg)",
    "calcium": "Calcium\n(mg)", "folic_acid": "Folic acid\n(µg)", "vitamin_c": "Vitamin C\n(mg)",
    "vitamin_d": "Vitamin D (D2+D3)\n(mcg)", "vitamin_b12": "Vitamin B-12\n(mcg)",
}

FOODS = [
    (11111000, "Milk, whole", 1002, "Milk, whole"),
    (58106210, "Pizza, cheese, from restaurant", 3602, "Pizza"),
]


def _value(food_index: int, key: str) -> float:
    """Deterministic distinct value for a food and a nutrient column key."""
    return round(10 * (food_index + 1) + len(key) / 10, 2)


def _write_book(path: Path, sheets: dict[str, list[list[object]]]) -> None:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    book.save(path)


def _nutrient_rows(headers: dict[str, str]) -> list[list[object]]:
    rows: list[list[object]] = [["FNDDS Nutrient Values, per 100 g (title row)"],
                                BASE + list(headers.values())]
    for i, food in enumerate(FOODS):
        rows.append(list(food) + [_value(i, key) for key in headers])
    return rows


def _ingredient_rows(weight_header: str) -> list[list[object]]:
    header = ["Food code", "Main food description", "Seq num", "Ingredient code",
              "Ingredient description", "Amount", "Measure", weight_header]
    return [
        ["FNDDS Ingredients (title row)"],
        header,
        [11111000, "Milk, whole", 1, 1077, "Milk, whole, 3.25% milkfat", 1, "cup", 244.0],
        [58106210, "Pizza, cheese", 1, 11111000, "Milk, whole", 0.5, "cup", 122.0],
        [58106210, "Pizza, cheese", 2, 20081, "Wheat flour, white", 2, "cup", 250.0],
    ]


@pytest.fixture(params=["2017", "2021"])
def release(request, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    headers = HEADERS_2017 if request.param == "2017" else HEADERS_2021
    weight = "Ingredient weight (g)" if request.param == "2017" else "Ingredient weight"
    # Odd file names: workbooks are recognised by their sheets.
    _write_book(tmp_path / "a.xlsx", {"FNDDS Nutrient Values": _nutrient_rows(headers)})
    _write_book(tmp_path / "b.xlsx", {"Notes": [["read me"]],
                                      "FNDDS Ingredients": _ingredient_rows(weight)})
    return tmp_path, headers


def test_xlsx_release(release) -> None:
    path, headers = release
    fndds = read_fndds(path)
    assert fndds.release_format == "xlsx"
    assert fndds.foods.to_dict("list") == {
        "food_code": [f[0] for f in FOODS], "description": [f[1] for f in FOODS],
        "category_code": [f[2] for f in FOODS], "category": [f[3] for f in FOODS]}
    assert str(fndds.foods["food_code"].dtype) == "int64"
    assert list(fndds.nutrients.columns) == ["food_code", *NUTRIENT_NAMES]
    for i in range(len(FOODS)):
        for name in NUTRIENT_NAMES:
            assert fndds.nutrients.loc[i, name] == pytest.approx(_value(i, name)), name
    # the "added" B-12 column and the kJ energy column are not taken
    assert fndds.nutrients.loc[0, "vitamin_b12"] == pytest.approx(_value(0, "vitamin_b12"))


def test_xlsx_ingredients(release) -> None:
    ingredients = read_fndds(release[0]).ingredients
    assert ingredients["ingredient_code"].tolist() == [1077, 11111000, 20081]
    assert ingredients["is_food"].tolist() == [False, True, False]
    assert ingredients["grams"].tolist() == [244.0, 122.0, 250.0]
    assert ingredients["seq"].tolist() == [1, 1, 2]
    assert ingredients["ingredient_description"].iloc[2] == "Wheat flour, white"
    assert str(ingredients["ingredient_code"].dtype) == "int64"


def test_xlsx_without_ingredients_workbook(release) -> None:
    (release[0] / "b.xlsx").unlink()
    fndds = read_fndds(release[0])
    assert fndds.ingredients.empty
    assert list(fndds.ingredients.columns) == ["food_code", "seq", "ingredient_code",
                                               "ingredient_description", "grams", "is_food"]


def test_header_on_first_row_and_blank_cells(tmp_path: Path) -> None:
    rows = _nutrient_rows(HEADERS_2017)[1:]
    rows[2][len(BASE) + 1] = None  # a blank nutrient cell
    rows[2][len(BASE) + 2] = "  "  # a cell holding only spaces
    rows.insert(2, [None] * 3)  # a blank row between foods
    rows.append([" "])  # a trailing row with only a space
    _write_book(tmp_path / "n.xlsx", {"FNDDS Nutrient Values": rows})
    fndds = read_fndds(tmp_path / "n.xlsx")
    assert fndds.foods["food_code"].tolist() == [f[0] for f in FOODS]
    assert math.isnan(fndds.nutrients.loc[1, list(HEADERS_2017)[1]])
    assert math.isnan(fndds.nutrients.loc[1, list(HEADERS_2017)[2]])


def test_missing_nutrient_column(tmp_path: Path) -> None:
    headers = {k: v for k, v in HEADERS_2017.items() if k != "sodium"}
    _write_book(tmp_path / "n.xlsx", {"FNDDS Nutrient Values": _nutrient_rows(headers)})
    with pytest.raises(DataError) as info:
        read_fndds(tmp_path)
    message = str(info.value)
    assert "n.xlsx" in message and "'FNDDS Nutrient Values'" in message
    assert "sodium" in message and "required column missing" in message
    assert "'Potassium (mg)'" in message  # headers seen


def test_missing_base_column(tmp_path: Path) -> None:
    rows = _nutrient_rows(HEADERS_2017)
    rows[1][2] = "Category"
    _write_book(tmp_path / "n.xlsx", {"FNDDS Nutrient Values": rows})
    with pytest.raises(DataError, match="wweia category number"):
        read_fndds(tmp_path)


def test_wrong_unit(tmp_path: Path) -> None:
    headers = dict(HEADERS_2017, vitamin_d="Vitamin D (IU)")
    _write_book(tmp_path / "n.xlsx", {"FNDDS Nutrient Values": _nutrient_rows(headers)})
    with pytest.raises(DataError, match="wrong unit") as info:
        read_fndds(tmp_path)
    assert "vitamin_d in µg" in str(info.value)


def test_non_numeric_value(tmp_path: Path) -> None:
    rows = _nutrient_rows(HEADERS_2017)
    rows[3][len(BASE) + 2] = "n/a"
    _write_book(tmp_path / "n.xlsx", {"FNDDS Nutrient Values": rows})
    with pytest.raises(DataError, match="row 4") as info:
        read_fndds(tmp_path)
    assert info.value.value == "n/a"
    assert info.value.field == HEADERS_2017["carbohydrates"]


def test_no_header_row(tmp_path: Path) -> None:
    rows = [["title"]] * 6 + _nutrient_rows(HEADERS_2017)
    _write_book(tmp_path / "n.xlsx", {"FNDDS Nutrient Values": rows})
    with pytest.raises(DataError, match="no header row"):
        read_fndds(tmp_path)


def test_nothing_recognisable(tmp_path: Path) -> None:
    _write_book(tmp_path / "x.xlsx", {"Sheet1": [["hello"]]})
    with pytest.raises(DataError) as info:
        read_fndds(tmp_path)
    message = str(info.value)
    assert str(tmp_path) in message and "FNDDS Nutrient Values" in message
    assert "MainFoodDesc.txt" in message and "Sheet1" in message


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        read_fndds(tmp_path / "nope")


def test_header_helpers() -> None:
    assert normalize_header("Sugars, total\n(g)") == "sugars, total (g)"
    assert split_unit(normalize_header("Vitamin D (D2+D3)\n(mcg)")) == ("vitamin d (d2 + d3)",
                                                                       "mcg")
    assert split_unit("food code") == ("food code", None)


# --- legacy text (2011-12 and older) ------------------------------------------------------------


def _write_text(path: Path, lines: list[str]) -> None:
    path.write_bytes(("\r\n".join(lines) + "\r\n").encode("latin-1"))


NUTDESC = [
    "208^~Energy~^~ENERC_KCAL~^~kcal~^0^", "205^~Carbohydrate~^~CHOCDF~^~g~^2^",
    "203^~Protein~^~PROCNT~^~g~^2^", "606^~Fatty acids, total saturated~^~FASAT~^~g~^3^",
    "601^~Cholesterol~^~CHOLE~^~mg~^0^", "269^~Sugars, total~^~SUGAR~^~g~^2^",
    "291^~Fiber, total dietary~^~FIBTG~^~g~^1^", "307^~Sodium~^~NA~^~mg~^0^",
    "306^~Potassium~^~K~^~mg~^0^", "305^~Phosphorus~^~P~^~mg~^0^", "303^~Iron~^~FE~^~mg~^2^",
    "301^~Calcium~^~CA~^~mg~^0^", "431^~Folic acid~^~FOLAC~^~mcg~^0^",
    "401^~Vitamin C~^~VITC~^~mg~^1^", "328^~Vitamin D (D2 + D3)~^~VITD~^~mcg~^1^",
    "418^~Vitamin B-12~^~VITB12~^~µg~^2^", "204^~Total Fat~^~FAT~^~g~^2^",
]


@pytest.fixture()
def legacy(tmp_path: Path) -> Path:
    _write_text(tmp_path / "MainFoodDesc.txt", [
        "11111000^01/01/2011^12/31/2012^~Milk, whole~^0^",
        "58106210^01/01/2011^12/31/2012^~Pizza, cheese, from restaurant~^0^",
    ])
    _write_text(tmp_path / "FNDDSNutVal.txt", [
        "11111000^208^01/01/2011^12/31/2012^61^",
        "11111000^307^01/01/2011^12/31/2012^43^",
        "11111000^204^01/01/2011^12/31/2012^3.25^",
        "58106210^307^01/01/2011^12/31/2012^598^",
    ])
    _write_text(tmp_path / "FNDDSSRLinks.txt", [
        "11111000^01/01/2011^12/31/2012^1^1077^~Milk, whole, 3.25% milkfat~^100^~g~^0^0^^100^"
        "~~^~~^~~^",
        "58106210^01/01/2011^12/31/2012^1^11111000^~Milk, whole~^0.5^~cup~^10205^0^^122^~~^~~^~~^",
    ])
    _write_text(tmp_path / "NutDesc.txt", NUTDESC)
    return tmp_path


def test_legacy_release(legacy: Path) -> None:
    fndds = read_fndds(legacy)
    assert fndds.release_format == "text"
    assert fndds.foods["food_code"].tolist() == [11111000, 58106210]
    assert fndds.foods["description"].tolist() == ["Milk, whole", "Pizza, cheese, from restaurant"]
    assert fndds.foods["category_code"].isna().all()
    wide = fndds.nutrients.set_index("food_code")
    assert wide.loc[11111000, "calories"] == 61
    assert wide.loc[11111000, "sodium"] == 43
    assert wide.loc[58106210, "sodium"] == 598
    assert math.isnan(wide.loc[58106210, "calories"])
    assert list(fndds.nutrients.columns) == ["food_code", *NUTRIENT_NAMES]
    ingredients = fndds.ingredients
    assert ingredients["ingredient_code"].tolist() == [1077, 11111000]
    assert ingredients["is_food"].tolist() == [False, True]
    assert ingredients["grams"].tolist() == [100.0, 122.0]


def test_legacy_later_column_order(tmp_path: Path) -> None:
    _write_text(tmp_path / "mainfooddesc.txt", [
        "~11111000~^~Milk, whole~^1002^~Milk, whole~^01/01/2015^12/31/2016^"])
    _write_text(tmp_path / "FNDDSNutVal.txt", ["11111000^307^01/01/2015^12/31/2016^43^"])
    _write_text(tmp_path / "FNDDSIngred.txt", [
        "11111000^1^1077^~Milk, whole~^1^~cup~^10205^0^244^01/01/2015^12/31/2016^"])
    fndds = read_fndds(tmp_path)
    assert fndds.foods.loc[0, "category_code"] == 1002
    assert fndds.foods.loc[0, "category"] == "Milk, whole"
    assert fndds.ingredients.loc[0, "grams"] == 244
    assert fndds.ingredients.loc[0, "seq"] == 1


def test_legacy_missing_nutrient_file(legacy: Path) -> None:
    (legacy / "FNDDSNutVal.txt").unlink()
    with pytest.raises(DataError, match="FNDDSNutVal.txt") as info:
        read_fndds(legacy)
    assert "FNDDS Nutrient Values" in str(info.value)


def test_legacy_bad_unit_in_nutdesc(legacy: Path) -> None:
    _write_text(legacy / "NutDesc.txt", [line.replace("~mcg~", "~IU~") for line in NUTDESC])
    with pytest.raises(DataError, match="NutDesc.txt") as info:
        read_fndds(legacy)
    assert info.value.value == "IU"


def test_legacy_wrong_field_count(legacy: Path) -> None:
    _write_text(legacy / "FNDDSNutVal.txt", [
        "11111000^208^01/01/2011^12/31/2012^61^", "11111000^307^01/01/2011^43^"])
    with pytest.raises(DataError, match=r"FNDDSNutVal\.txt: line 2 has 5 fields"):
        read_fndds(legacy)


def test_legacy_non_numeric_value(legacy: Path) -> None:
    _write_text(legacy / "FNDDSNutVal.txt", ["11111000^208^01/01/2011^12/31/2012^6l^"])
    with pytest.raises(DataError) as info:
        read_fndds(legacy)
    assert info.value.field == "value" and info.value.value == "6l"


def test_dataframes_are_pandas(legacy: Path) -> None:
    fndds = read_fndds(legacy)
    assert all(isinstance(t, pd.DataFrame)
               for t in (fndds.foods, fndds.nutrients, fndds.ingredients))
