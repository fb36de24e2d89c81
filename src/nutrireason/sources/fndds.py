"""USDA FNDDS: foods with their WWEIA category, 16 nutrients per 100 g, and recipe ingredients.

Two release formats are read, recognised by content rather than file names:

* 2017-18 and later: Excel workbooks. The one with a ``FNDDS Nutrient Values`` sheet gives foods
  and nutrients; the one with a sheet whose name contains ``Ingredients`` gives ingredients.
  Headers sit on the first row holding ``Food code`` among the first five (the second row in
  real releases, under a title); nutrient headers differ between releases (``'Sugars, total\\n
  (g)'`` vs ``'Sugars, total (g)'``), so they are matched after normalising whitespace and case,
  by name aliases plus a unit check.
* 2011-12 and older: ``^``-separated latin-1 text with ``~`` quotes and a trailing ``^``. Layouts
  follow the FNDDS 2011-2012 documentation as public loaders reproduce it:
  ``MainFoodDesc`` = food code, start date, end date, main food description, then optional
  extras (abbreviated description in 1.0-3.0, fortification identifier in 2011-12), no WWEIA
  category; ``FNDDSNutVal`` = food code, nutrient code, start date, end date, value;
  ``FNDDSSRLinks`` (named ``FNDDSIngred`` in later text exports) = food code, start date, end
  date, seq num, SR/ingredient code, description, amount, measure, portion code, retention code,
  flag, weight, ...; ``NutDesc`` = nutrient code, description, tagname, unit, decimals.
  When the second field of the first line is not a date, the later column order is assumed
  instead: ``MainFoodDesc`` = food code, description, WWEIA number, WWEIA description, dates;
  ingredients = food code, seq num, ingredient code, description, amount, measure, portion code,
  retention code, weight, dates.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd

from nutrireason.errors import DataError
from nutrireason.sources.nutrients import BY_NUMBER, NUTRIENT_NAMES, NUTRIENTS, normalize_unit
from nutrireason.sources.sr28 import ENCODING, QUOTE, SEPARATOR, read_caret_file

NUTRIENT_SHEET = "fndds nutrient values"
INGREDIENT_SHEET_WORD = "ingredients"
NESTED_FOOD_MIN = 10_000_000
HEADER_SCAN_ROWS = 5
EXPECTED = (
    "a workbook with a 'FNDDS Nutrient Values' sheet (FNDDS 2017-18 and later) or the text "
    "files MainFoodDesc.txt and FNDDSNutVal.txt (FNDDS 2011-12 and older)"
)

FOOD_COLUMNS = ("food_code", "description", "category_code", "category")
INGREDIENT_COLUMNS = (
    "food_code", "seq", "ingredient_code", "ingredient_description", "grams", "is_food",
)

# Normalised header names (unit stripped) accepted for each tidy nutrient.
NUTRIENT_ALIASES: dict[str, tuple[str, ...]] = {
    "calories": ("energy", "energy, kcal", "calories", "food energy"),
    "carbohydrates": ("carbohydrate", "carbohydrates", "carbohydrate, by difference",
                      "total carbohydrate"),
    "protein": ("protein", "total protein"),
    "saturated_fat": ("fatty acids, total saturated", "total saturated fatty acids",
                      "saturated fatty acids", "saturated fat", "total saturated fat"),
    "cholesterol": ("cholesterol",),
    "sugar": ("sugars, total", "total sugars", "sugars", "sugars, total including nlea"),
    "fiber": ("fiber, total dietary", "total dietary fiber", "dietary fiber", "fiber"),
    "sodium": ("sodium", "sodium, na"),
    "potassium": ("potassium", "potassium, k"),
    "phosphorus": ("phosphorus", "phosphorus, p"),
    "iron": ("iron", "iron, fe"),
    "calcium": ("calcium", "calcium, ca"),
    "folic_acid": ("folic acid",),
    "vitamin_c": ("vitamin c", "vitamin c, total ascorbic acid"),
    "vitamin_d": ("vitamin d (d2 + d3)", "vitamin d", "vitamin d2 + d3"),
    "vitamin_b12": ("vitamin b-12", "vitamin b12"),
}

FOOD_HEADERS = {
    "food_code": ("food code",),
    "description": ("main food description",),
    "category_code": ("wweia category number", "wweia category code"),
    "category": ("wweia category description",),
}
INGREDIENT_HEADERS = {
    "food_code": ("food code",),
    "seq": ("seq num", "seq number", "sequence number"),
    "ingredient_code": ("ingredient code",),
    "ingredient_description": ("ingredient description",),
    "grams": ("ingredient weight",),
}

_UNIT = re.compile(r"^(.*?)\s*\(([^()]*)\)$")
_DATE = re.compile(r"^\d{1,4}[/-]\d{1,2}[/-]\d{1,4}")


@dataclass(frozen=True)
class Fndds:
    """FNDDS in tidy form; ``nutrients`` is wide, one row per food, per 100 g."""

    path: Path
    release_format: str  # "xlsx" (2017-18 and later) or "text" (2011-12 and older)
    foods: pd.DataFrame
    nutrients: pd.DataFrame
    ingredients: pd.DataFrame
    files: dict[str, Path] = field(default_factory=dict)


# --- header matching ----------------------------------------------------------------------------


def normalize_header(text: object) -> str:
    """Lower case, whitespace (line breaks included) collapsed, spaces around ``+`` unified."""
    joined = " ".join(str(text).split()).lower()
    return re.sub(r"\s*\+\s*", " + ", joined)


def split_unit(header: str) -> tuple[str, str | None]:
    """``'sodium (mg)'`` -> ``('sodium', 'mg')``; no trailing parenthesis -> unit None."""
    match = _UNIT.match(header)
    if match and match.group(1):
        return match.group(1), match.group(2).strip()
    return header, None


def _seen(headers: Sequence[str]) -> str:
    return "; ".join(repr(h) for h in headers)


def _where(path: Path, sheet: str | None) -> str:
    return "" if sheet is None else f"sheet {sheet!r}: "


def _find_column(headers: Sequence[str], aliases: Sequence[str], unit: str | None = None
                 ) -> tuple[int | None, list[int]]:
    """Index of the header matching ``aliases`` (and ``unit`` when given), plus name-only hits."""
    by_name = []
    for i, header in enumerate(headers):
        norm = normalize_header(header)
        name, found_unit = split_unit(norm)
        if norm in aliases and unit is None:
            return i, [i]
        if name in aliases:
            by_name.append(i)
            if unit is None or (found_unit and normalize_unit(found_unit) == normalize_unit(unit)):
                return i, by_name
    return None, by_name


def locate_columns(headers: Sequence[str], wanted: dict[str, tuple[str, ...]], path: Path,
                   sheet: str | None) -> dict[str, int]:
    """Map tidy names to column indices; DataError naming the missing column and headers seen."""
    found = {}
    for tidy, aliases in wanted.items():
        index, _ = _find_column(headers, aliases)
        if index is None:
            raise DataError(path, f"{_where(path, sheet)}required column missing",
                            field=aliases[0], expected=f"a column {aliases[0]!r}; headers seen: "
                            f"{_seen(headers)}")
        found[tidy] = index
    return found


def locate_nutrients(headers: Sequence[str], path: Path, sheet: str | None) -> dict[str, int]:
    """Map each of the 16 nutrients to its column, checking the unit in the header."""
    found = {}
    for nutrient in NUTRIENTS:
        aliases = NUTRIENT_ALIASES[nutrient.name]
        index, by_name = _find_column(headers, aliases, nutrient.unit)
        if index is None and by_name:
            raise DataError(path, f"{_where(path, sheet)}nutrient column has the wrong unit",
                            field=headers[by_name[0]].strip(), value=headers[by_name[0]],
                            expected=f"{nutrient.name} in {nutrient.unit}")
        if index is None:
            raise DataError(path, f"{_where(path, sheet)}required column missing",
                            field=f"{aliases[0]} ({nutrient.unit})",
                            expected=f"a column for {nutrient.name}; headers seen: "
                            f"{_seen(headers)}")
        found[nutrient.name] = index
    return found


# --- value conversion ---------------------------------------------------------------------------


def _numbers(values: pd.Series, path: Path, sheet: str | None, column: str,
             rows: Sequence[int], integer: bool = False) -> pd.Series:
    """Convert a column to numbers; DataError naming the first bad value and its row."""
    text = values.astype(object).where(values.notna(), None)
    text = text.map(lambda v: v.strip() if isinstance(v, str) else v)
    text = text.where(text != "", None)
    parsed = pd.to_numeric(text, errors="coerce")
    bad = parsed.isna().to_numpy() & text.notna().to_numpy()
    if integer:
        bad |= parsed.notna().to_numpy() & (parsed.fillna(0) % 1 != 0).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(path, f"{_where(path, sheet)}{'non-integer' if integer else 'non-numeric'}"
                        f" value in row {rows[i]}", field=column, value=values.iloc[i],
                        expected="an integer code" if integer else "a number or an empty cell")
    return parsed.astype("Int64") if integer else parsed.astype("float64")


def _required_ints(values: pd.Series, path: Path, sheet: str | None, column: str,
                   rows: Sequence[int]) -> pd.Series:
    """Integer column that may not be empty (codes); returned as int64."""
    parsed = _numbers(values, path, sheet, column, rows, integer=True)
    if parsed.isna().any():
        i = int(np.flatnonzero(parsed.isna().to_numpy())[0])
        raise DataError(path, f"{_where(path, sheet)}empty value in row {rows[i]}",
                        field=column, expected="an integer code")
    return parsed.astype("int64")


def _text(values: pd.Series) -> pd.Series:
    """Strings with missing cells as ``""``."""
    return values.map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v))
                      else str(v).strip()).astype(str)


def _ingredient_frame(food: pd.Series, seq: pd.Series, code: pd.Series, desc: pd.Series,
                      grams: pd.Series) -> pd.DataFrame:
    """Assemble the tidy ingredients table (``is_food``: the code is a nested FNDDS food)."""
    return pd.DataFrame({
        "food_code": food.to_numpy(), "seq": seq.to_numpy(), "ingredient_code": code.to_numpy(),
        "ingredient_description": desc.to_numpy(), "grams": grams.to_numpy(),
        "is_food": (code > NESTED_FOOD_MIN).to_numpy(),
    }).astype({"food_code": "int64", "seq": "int64", "ingredient_code": "int64",
               "ingredient_description": str, "grams": "float64", "is_food": bool})


def empty_ingredients() -> pd.DataFrame:
    """An ingredients table with no rows and the usual columns and dtypes."""
    return pd.DataFrame({"food_code": pd.Series(dtype="int64"), "seq": pd.Series(dtype="int64"),
                         "ingredient_code": pd.Series(dtype="int64"),
                         "ingredient_description": pd.Series(dtype=str),
                         "grams": pd.Series(dtype="float64"), "is_food": pd.Series(dtype=bool)})


# --- xlsx (2017-18 and later) -------------------------------------------------------------------


def _sheet_names(book: Path) -> list[str]:
    """Sheet names of a workbook; DataError when it is not a readable xlsx file."""
    try:
        workbook = openpyxl.load_workbook(book, read_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a bad file
        raise DataError(book, f"cannot open workbook ({exc})", expected="an .xlsx file") from exc
    try:
        return list(workbook.sheetnames)
    finally:
        workbook.close()


def _find_sheets(books: Sequence[Path]) -> dict[str, tuple[Path, str]]:
    """Locate the nutrient and ingredient sheets among ``books`` by sheet name."""
    found: dict[str, tuple[Path, str]] = {}
    for book in books:
        for sheet in _sheet_names(book):
            name = normalize_header(sheet)
            kind = ("nutrients" if name == NUTRIENT_SHEET
                    else "ingredients" if INGREDIENT_SHEET_WORD in name
                    and "nutrient" not in name else None)
            if kind and kind in found:
                raise DataError(book, f"second {kind} sheet {sheet!r} found",
                                expected=f"one only; the first is in {found[kind][0]}")
            if kind:
                found[kind] = (book, sheet)
    return found


def read_sheet(book: Path, sheet: str) -> tuple[list[str], pd.DataFrame, list[int]]:
    """Headers, data rows and their 1-based sheet row numbers; header row found by 'Food code'."""
    raw = pd.read_excel(book, sheet_name=sheet, header=None, dtype=object, engine="openpyxl",
                        keep_default_na=False, na_values=[])
    raw = raw.map(lambda v: None if isinstance(v, str) and not v.strip() else v)
    for r in range(min(HEADER_SCAN_ROWS, len(raw))):
        cells = [normalize_header(v) for v in raw.iloc[r] if isinstance(v, str)]
        if "food code" in cells:
            break
    else:
        raise DataError(book, f"sheet {sheet!r}: no header row", field="Food code",
                        expected=f"a 'Food code' header within the first {HEADER_SCAN_ROWS} rows")
    headers = ["" if not isinstance(v, str) and pd.isna(v) else str(v) for v in raw.iloc[r]]
    data = raw.iloc[r + 1:].dropna(how="all")
    return headers, data.reset_index(drop=True), [int(i) + 1 for i in data.index]


def _xlsx_foods(book: Path, sheet: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Foods and wide nutrients from the ``FNDDS Nutrient Values`` sheet."""
    headers, data, rows = read_sheet(book, sheet)
    base = locate_columns(headers, FOOD_HEADERS, book, sheet)
    cols = locate_nutrients(headers, book, sheet)
    codes = _required_ints(data.iloc[:, base["food_code"]], book, sheet, "Food code", rows)
    foods = pd.DataFrame({
        "food_code": codes.to_numpy(),
        "description": _text(data.iloc[:, base["description"]]).to_numpy(),
        "category_code": _numbers(data.iloc[:, base["category_code"]], book, sheet,
                                  headers[base["category_code"]], rows, integer=True).to_numpy(),
        "category": _text(data.iloc[:, base["category"]]).to_numpy(),
    }).astype({"food_code": "int64", "description": str, "category_code": "Int64",
               "category": str})
    nutrients = pd.DataFrame({"food_code": codes.to_numpy()})
    for name in NUTRIENT_NAMES:
        column = data.iloc[:, cols[name]]
        nutrients[name] = _numbers(column, book, sheet, headers[cols[name]], rows).to_numpy()
    return foods, nutrients


def _xlsx_ingredients(book: Path, sheet: str) -> pd.DataFrame:
    """Ingredients from a sheet whose name contains ``Ingredients``."""
    headers, data, rows = read_sheet(book, sheet)
    idx = locate_columns(headers, INGREDIENT_HEADERS, book, sheet)
    unit = split_unit(normalize_header(headers[idx["grams"]]))[1]
    if unit is not None and normalize_unit(unit) != "g":
        raise DataError(book, f"sheet {sheet!r}: ingredient weight not in grams",
                        field=headers[idx["grams"]], value=unit, expected="g")

    def ints(key: str) -> pd.Series:
        return _required_ints(data.iloc[:, idx[key]], book, sheet, headers[idx[key]], rows)

    grams = _numbers(data.iloc[:, idx["grams"]], book, sheet, headers[idx["grams"]], rows)
    return _ingredient_frame(ints("food_code"), ints("seq"), ints("ingredient_code"),
                             _text(data.iloc[:, idx["ingredient_description"]]), grams)


def _read_xlsx(path: Path, books: Sequence[Path]) -> Fndds | None:
    """Read the workbooks, or None when none holds a nutrient sheet."""
    found = _find_sheets(books)
    if "nutrients" not in found:
        return None
    foods, nutrients = _xlsx_foods(*found["nutrients"])
    ingredients = (_xlsx_ingredients(*found["ingredients"]) if "ingredients" in found
                   else empty_ingredients())
    files = {kind: book for kind, (book, _) in found.items()}
    return Fndds(path, "xlsx", foods, nutrients, ingredients, files)


# --- legacy text (2011-12 and older) ------------------------------------------------------------


def _first_row(path: Path) -> list[str]:
    """Fields of the first non-blank line of a ``^``/``~`` file."""
    with open(path, encoding=ENCODING, newline="") as handle:
        for line in handle:
            if line.strip("\r\n"):
                return next(csv.reader([line.rstrip("\r\n")], delimiter=SEPARATOR,
                                       quotechar=QUOTE))
    raise DataError(path, "file is empty", expected="one record per line")


def _read_text(path: Path, positions: dict[str, int], numeric: Sequence[str] = ()
               ) -> pd.DataFrame:
    """Read the fields at ``positions`` (tidy name -> 0-based index) of a legacy text file."""
    width = len(_first_row(path))
    if width <= max(positions.values()):
        raise DataError(path, f"first line has {width} fields", expected=f"at least "
                        f"{max(positions.values()) + 1} fields for {', '.join(positions)}")
    names = [f"field_{i + 1}" for i in range(width)]
    for tidy, i in positions.items():
        names[i] = tidy
    return read_caret_file(path, names, usecols=list(positions), numeric=numeric)


def _has_date_second(path: Path) -> bool:
    """True when the second field of the first line is a date (the 2011-12 column order)."""
    row = _first_row(path)
    return len(row) > 1 and bool(_DATE.match(row[1].strip()))


def _text_codes(values: pd.Series, path: Path, column: str) -> pd.Series:
    """Integer codes from a text column; DataError naming the first bad value."""
    return _required_ints(values, path, None, column, list(range(1, len(values) + 1)))


def _legacy_foods(path: Path) -> pd.DataFrame:
    """MainFoodDesc in either known column order."""
    if _has_date_second(path):
        raw = _read_text(path, {"food_code": 0, "description": 3})
        raw["category_code"], raw["category"] = pd.NA, ""
    else:
        raw = _read_text(path, {"food_code": 0, "description": 1, "category_code": 2,
                                "category": 3})
    return pd.DataFrame({
        "food_code": _text_codes(raw["food_code"], path, "food code").to_numpy(),
        "description": raw["description"].to_numpy(),
        "category_code": _numbers(raw["category_code"], path, None, "WWEIA category number",
                                  list(range(1, len(raw) + 1)), integer=True).to_numpy(),
        "category": raw["category"].to_numpy(),
    }).astype({"food_code": "int64", "description": str, "category_code": "Int64",
               "category": str})


def _legacy_nutrients(path: Path, food_codes: pd.Series) -> pd.DataFrame:
    """FNDDSNutVal (long) to wide; a repeated food/nutrient pair keeps its last row."""
    raw = _read_text(path, {"food_code": 0, "nutrient_code": 1, "value": 4}, numeric=["value"])
    raw["food_code"] = _text_codes(raw["food_code"], path, "food code")
    raw["nutrient_code"] = _text_codes(raw["nutrient_code"], path, "nutrient code")
    raw = raw[raw["nutrient_code"].isin(list(BY_NUMBER))]
    raw = raw.drop_duplicates(["food_code", "nutrient_code"], keep="last")
    wide = raw.pivot(index="food_code", columns="nutrient_code", values="value")
    wide = wide.reindex(index=list(food_codes), columns=[n.number for n in NUTRIENTS])
    wide.columns = list(NUTRIENT_NAMES)
    wide = wide.astype("float64").reset_index(drop=True)
    wide.insert(0, "food_code", np.asarray(food_codes, dtype="int64"))
    return wide


def _legacy_ingredients(path: Path) -> pd.DataFrame:
    """FNDDSSRLinks / FNDDSIngred in either known column order."""
    if _has_date_second(path):
        positions = {"food_code": 0, "seq": 3, "ingredient_code": 4, "description": 5,
                     "grams": 11}
    else:
        positions = {"food_code": 0, "seq": 1, "ingredient_code": 2, "description": 3,
                     "grams": 8}
    raw = _read_text(path, positions, numeric=["grams"])
    return _ingredient_frame(_text_codes(raw["food_code"], path, "food code"),
                             _text_codes(raw["seq"], path, "seq num"),
                             _text_codes(raw["ingredient_code"], path, "ingredient code"),
                             raw["description"], raw["grams"])


def _check_nutdesc(path: Path) -> None:
    """Every one of the 16 nutrients listed in NutDesc, in the expected unit."""
    raw = _read_text(path, {"code": 0, "unit": 3})
    units = dict(zip(_text_codes(raw["code"], path, "nutrient code"), raw["unit"], strict=True))
    for nutrient in NUTRIENTS:
        unit = units.get(nutrient.number)
        if unit is None or normalize_unit(unit) != normalize_unit(nutrient.unit):
            raise DataError(path, f"nutrient {nutrient.number} ({nutrient.name}) missing or in "
                            "the wrong unit", field="unit", value=unit, expected=nutrient.unit)


def _text_files(directory: Path) -> dict[str, Path]:
    """Legacy text files present in ``directory``, keyed by role (case-insensitive names)."""
    roles = {"mainfooddesc.txt": "foods", "fnddsnutval.txt": "nutrients",
             "fnddsingred.txt": "ingredients", "fnddssrlinks.txt": "ingredients",
             "nutdesc.txt": "nutrient_definitions"}
    found: dict[str, Path] = {}
    for candidate in sorted(directory.iterdir()):
        role = roles.get(candidate.name.lower())
        if role and candidate.is_file() and role not in found:
            found[role] = candidate
    return found


def _read_legacy(path: Path, files: dict[str, Path]) -> Fndds:
    """Read the legacy text release; MainFoodDesc and FNDDSNutVal are required."""
    for role, name in (("foods", "MainFoodDesc.txt"), ("nutrients", "FNDDSNutVal.txt")):
        if role not in files:
            raise DataError(path / name, "FNDDS text file missing", expected=EXPECTED)
    if "nutrient_definitions" in files:
        _check_nutdesc(files["nutrient_definitions"])
    foods = _legacy_foods(files["foods"])
    nutrients = _legacy_nutrients(files["nutrients"], foods["food_code"])
    ingredients = (_legacy_ingredients(files["ingredients"]) if "ingredients" in files
                   else empty_ingredients())
    return Fndds(path, "text", foods, nutrients, ingredients, files)


def read_fndds(path: str | Path) -> Fndds:
    """Read an FNDDS release from a directory of xlsx workbooks or of legacy ``^`` text files."""
    path = Path(path)
    if path.is_file() and path.suffix.lower() == ".xlsx":
        books = [path]
    elif path.is_dir():
        books = [p for p in sorted(path.glob("*.xlsx")) if not p.name.startswith("~$")]
    else:
        raise DataError(path, "FNDDS directory not found", expected=EXPECTED)
    result = _read_xlsx(path, books) if books else None
    if result is not None:
        return result
    files = _text_files(path) if path.is_dir() else {}
    if "foods" in files or "nutrients" in files:
        return _read_legacy(path, files)
    sheets = "; ".join(f"{b.name}: {_sheet_names(b)}" for b in books) or "no .xlsx files"
    raise DataError(path, f"no FNDDS files found (workbooks seen: {sheets})", expected=EXPECTED)
