"""USDA SR28 (Standard Reference, release 28) ASCII files: tidy foods, nutrients and portions.

Format (SR28 documentation, checked on the real files): one table per ``<NAME>.txt`` file, no
header, fields separated by ``^``, text fields quoted with ``~``, latin-1, CRLF line ends.
Every nutrient value is per 100 g of edible portion.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nutrireason.errors import DataError
from nutrireason.sources.nutrients import NUTRIENTS, normalize_unit

SEPARATOR = "^"
QUOTE = "~"
ENCODING = "latin-1"


@dataclass(frozen=True)
class TableLayout:
    """Column names of one SR28 file, in file order, and which of them are numeric."""

    columns: tuple[str, ...]
    numeric: tuple[str, ...] = ()


LAYOUTS: dict[str, TableLayout] = {
    "FOOD_DES": TableLayout(
        ("NDB_No", "FdGrp_Cd", "Long_Desc", "Shrt_Desc", "ComName", "ManufacName", "Survey",
         "Ref_desc", "Refuse", "SciName", "N_Factor", "Pro_Factor", "Fat_Factor", "CHO_Factor"),
        ("Refuse", "N_Factor", "Pro_Factor", "Fat_Factor", "CHO_Factor"),
    ),
    "NUT_DATA": TableLayout(
        ("NDB_No", "Nutr_No", "Nutr_Val", "Num_Data_Pts", "Std_Error", "Src_Cd", "Deriv_Cd",
         "Ref_NDB_No", "Add_Nutr_Mark", "Num_Studies", "Min", "Max", "DF", "Low_EB", "Up_EB",
         "Stat_cmt", "AddMod_Date", "CC"),
        ("Nutr_Val", "Num_Data_Pts", "Std_Error", "Num_Studies", "Min", "Max", "DF", "Low_EB",
         "Up_EB"),
    ),
    "NUTR_DEF": TableLayout(
        ("Nutr_No", "Units", "Tagname", "NutrDesc", "Num_Dec", "SR_Order"),
        ("Num_Dec", "SR_Order"),
    ),
    "FD_GROUP": TableLayout(("FdGrp_Cd", "FdGrp_Desc")),
    "WEIGHT": TableLayout(
        ("NDB_No", "Seq", "Amount", "Msre_Desc", "Gm_Wgt", "Num_Data_Pts", "Std_Dev"),
        ("Seq", "Amount", "Gm_Wgt", "Num_Data_Pts", "Std_Dev"),
    ),
    "LANGUAL": TableLayout(("NDB_No", "Factor_Code")),
}

EXPECTED_FILES = ", ".join(f"{name}.txt" for name in LAYOUTS)


@dataclass(frozen=True)
class Sr28:
    """The SR28 tables in tidy form; ``nutrients`` is wide, one row per food, per 100 g."""

    directory: Path
    foods: pd.DataFrame
    nutrients: pd.DataFrame
    nutrient_definitions: pd.DataFrame
    food_groups: pd.DataFrame
    weights: pd.DataFrame
    langual: pd.DataFrame


# --- generic ^/~ reader (also used by the legacy FNDDS reader) ---------------------------------


def _nonblank_lines(data: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Start, end (exclusive, without CR) and 1-based number of every non-blank line."""
    buf = np.frombuffer(data, dtype=np.uint8)
    newlines = np.flatnonzero(buf == ord("\n"))
    starts = np.concatenate(([0], newlines + 1))
    ends = np.concatenate((newlines, [len(buf)]))
    has_cr = np.zeros(len(ends), dtype=bool)
    nonempty = ends > starts
    has_cr[nonempty] = buf[ends[nonempty] - 1] == ord("\r")
    ends = ends - has_cr
    keep = ends > starts
    return starts[keep], ends[keep], np.flatnonzero(keep) + 1


def _separator_positions(data: bytes) -> np.ndarray:
    """Positions of ``^`` outside ``~`` quotes (quote parity counted from the file start)."""
    buf = np.frombuffer(data, dtype=np.uint8)
    parity = np.cumsum(buf == ord(QUOTE), dtype=np.uint8) & 1  # wraps mod 256: parity kept
    return np.flatnonzero((buf == ord(SEPARATOR)) & (parity == 0))


def field_counts(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Line numbers and field counts of every non-blank line of a ``^``/``~`` file."""
    starts, ends, numbers = _nonblank_lines(data)
    seps = _separator_positions(data)
    counts = np.searchsorted(seps, ends) - np.searchsorted(seps, starts) + 1
    return numbers, counts


def check_field_counts(path: Path, data: bytes, expected: int) -> np.ndarray:
    """Raise DataError at the first line without ``expected`` fields; return line numbers."""
    numbers, counts = field_counts(data)
    bad = np.flatnonzero(counts != expected)
    if len(bad):
        i = bad[0]
        raise DataError(
            path,
            f"line {numbers[i]} has {counts[i]} fields",
            expected=f"{expected} fields separated by '{SEPARATOR}' on every line",
        )
    return numbers


def _parse(data: bytes, columns: Sequence[str], usecols: Sequence[str], numeric: set[str],
           as_text: bool = False) -> pd.DataFrame:
    """Run pandas' C parser on ``data``; numeric columns as float unless ``as_text``."""
    dtype = {c: (str if as_text or c not in numeric else "float64") for c in usecols}
    return pd.read_csv(
        io.BytesIO(data), sep=SEPARATOR, quotechar=QUOTE, header=None, names=list(columns),
        usecols=list(usecols), dtype=dtype, encoding=ENCODING, engine="c",
        keep_default_na=False, na_values={c: [""] for c in usecols if c in numeric},
    )


def _raise_non_numeric(path: Path, data: bytes, columns: Sequence[str], usecols: Sequence[str],
                       numeric: set[str], lines: np.ndarray) -> None:
    """Find the first non-numeric value in a numeric column and raise DataError for it."""
    text = _parse(data, columns, usecols, numeric, as_text=True)
    for column in (c for c in usecols if c in numeric):
        values = text[column].str.strip()
        parsed = pd.to_numeric(values.where(values != ""), errors="coerce")
        bad = np.flatnonzero(parsed.isna().to_numpy() & (values != "").to_numpy())
        if len(bad):
            raise DataError(path, f"non-numeric value on line {lines[bad[0]]}", field=column,
                            value=values.iloc[bad[0]], expected="a number or an empty field")
    raise DataError(path, "a numeric column could not be parsed", expected="numbers")


def read_caret_file(
    path: str | Path,
    columns: Sequence[str],
    *,
    usecols: Sequence[str] | None = None,
    numeric: Sequence[str] = (),
) -> pd.DataFrame:
    """Read a headerless ``^``/``~`` latin-1 file whose lines have exactly ``len(columns)`` fields.

    Text columns come back as strings (empty stays ``""``); ``numeric`` ones as float64 (NaN).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(path, f"cannot read file ({exc.strerror})") from exc
    lines = check_field_counts(path, data, len(columns))
    usecols = list(columns if usecols is None else usecols)
    wanted = set(numeric) & set(usecols)
    if not len(lines):
        return pd.DataFrame({c: pd.Series(dtype="float64" if c in wanted else str)
                             for c in usecols})
    try:
        return _parse(data, columns, usecols, wanted)
    except ValueError as exc:
        if isinstance(exc, pd.errors.ParserError):
            raise DataError(path, f"cannot parse file ({exc})") from exc
        _raise_non_numeric(path, data, columns, usecols, wanted, lines)
        raise  # pragma: no cover - _raise_non_numeric always raises


# --- SR28 tables --------------------------------------------------------------------------------


def find_file(directory: str | Path, name: str) -> Path:
    """Path of ``<name>.txt`` in ``directory`` (case-insensitive); DataError when missing."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DataError(directory, "SR28 directory not found",
                        expected=f"a directory holding the SR28 ASCII files {EXPECTED_FILES}")
    target = f"{name}.txt".lower()
    for candidate in sorted(directory.iterdir()):
        if candidate.name.lower() == target and candidate.is_file():
            return candidate
    raise DataError(directory / f"{name}.txt", "SR28 file missing",
                    expected=f"the SR28 ASCII files {EXPECTED_FILES}")


def read_table(
    directory: str | Path, name: str, columns: Sequence[str] | None = None
) -> pd.DataFrame:
    """One SR28 table with its documented column names (codes stay zero-padded strings)."""
    key = name.upper().removesuffix(".TXT")
    if key not in LAYOUTS:
        raise DataError(directory, "unknown SR28 table", value=name,
                        expected=f"one of {', '.join(LAYOUTS)}")
    layout = LAYOUTS[key]
    path = find_file(directory, key)
    if columns is not None:
        unknown = [c for c in columns if c not in layout.columns]
        if unknown:
            raise DataError(path, "unknown column requested", value=unknown,
                            expected=f"columns among {', '.join(layout.columns)}")
    return read_caret_file(path, layout.columns, usecols=columns, numeric=layout.numeric)


def _check_codes(frame: pd.DataFrame, column: str, digits: int, path: Path) -> None:
    """Raise DataError unless every value of ``column`` is a ``digits``-digit code."""
    ok = frame[column].str.fullmatch(rf"\d{{{digits}}}").fillna(False).to_numpy(dtype=bool)
    if not ok.all():
        value = frame[column].iloc[int(np.flatnonzero(~ok)[0])]
        raise DataError(path, f"bad code on data line {int(np.flatnonzero(~ok)[0]) + 1}",
                        field=column, value=value, expected=f"a {digits}-digit code")


def _tidy_groups(directory: Path) -> pd.DataFrame:
    """FD_GROUP as ``group_code, group``."""
    raw = read_table(directory, "FD_GROUP")
    _check_codes(raw, "FdGrp_Cd", 4, find_file(directory, "FD_GROUP"))
    return raw.rename(columns={"FdGrp_Cd": "group_code", "FdGrp_Desc": "group"})


def _tidy_foods(directory: Path, groups: pd.DataFrame) -> pd.DataFrame:
    """FOOD_DES joined to its food group description."""
    raw = read_table(directory, "FOOD_DES")
    path = find_file(directory, "FOOD_DES")
    _check_codes(raw, "NDB_No", 5, path)
    names = dict(zip(groups["group_code"], groups["group"], strict=True))
    unknown = ~raw["FdGrp_Cd"].isin(list(names))
    if unknown.any():
        raise DataError(path, "food group code not in FD_GROUP", field="FdGrp_Cd",
                        value=raw.loc[unknown, "FdGrp_Cd"].iloc[0],
                        expected="a code listed in FD_GROUP.txt")
    return pd.DataFrame({
        "ndb_no": raw["NDB_No"],
        "description": raw["Long_Desc"],
        "short_description": raw["Shrt_Desc"],
        "group_code": raw["FdGrp_Cd"],
        "group": raw["FdGrp_Cd"].map(names),
        "survey": (raw["Survey"] == "Y").astype(bool),
        "common_name": raw["ComName"],
        "manufacturer": raw["ManufacName"],
        "refuse": raw["Refuse"].fillna(0.0).astype(float),  # % of as-purchased weight
        "refuse_description": raw["Ref_desc"],
    })


def _tidy_definitions(directory: Path) -> pd.DataFrame:
    """NUTR_DEF with tidy names; checks the units of the 16 NGQA nutrients."""
    raw = read_table(directory, "NUTR_DEF")
    path = find_file(directory, "NUTR_DEF")
    _check_codes(raw, "Nutr_No", 3, path)
    defs = pd.DataFrame({
        "nutr_no": raw["Nutr_No"].astype("int64"),
        "unit": raw["Units"],
        "tagname": raw["Tagname"],
        "description": raw["NutrDesc"],
        "decimals": raw["Num_Dec"].astype("Int64"),
        "sr_order": raw["SR_Order"].astype("Int64"),
    })
    units = dict(zip(defs["nutr_no"], defs["unit"], strict=True))
    for nutrient in NUTRIENTS:
        unit = units.get(nutrient.number)
        if unit is None or normalize_unit(unit) != normalize_unit(nutrient.unit):
            raise DataError(path, f"nutrient {nutrient.number} ({nutrient.name}) missing or in "
                            "the wrong unit", field="Units", value=unit, expected=nutrient.unit)
    return defs


# Nutrients read beside the 16 of NGQA Table 4 (no NGQA tag): FAM-Bench's GERD fat rule reads
# total fat. name -> (SR28 Nutr_No, unit).
EXTRA_NUTRIENTS: dict[str, tuple[int, str]] = {"total_fat": (204, "g")}


def wide_nutrients(long: pd.DataFrame, ndb_numbers: pd.Series, path: Path) -> pd.DataFrame:
    """Pivot NUT_DATA rows (NDB_No, Nutr_No, Nutr_Val) to one row per food, tidy columns: the
    16 NGQA nutrients, then :data:`EXTRA_NUTRIENTS`."""
    codes = {str(n.number): n.name for n in NUTRIENTS}
    codes |= {str(number): name for name, (number, _) in EXTRA_NUTRIENTS.items()}
    rows = long[long["Nutr_No"].isin(list(codes))]
    dup = rows.duplicated(["NDB_No", "Nutr_No"])
    if dup.any():
        first = rows[dup].iloc[0]
        raise DataError(path, "nutrient listed twice for one food", field="Nutr_No",
                        value=f"{first['NDB_No']}/{first['Nutr_No']}",
                        expected="one value per food and nutrient")
    wide = rows.pivot(index="NDB_No", columns="Nutr_No", values="Nutr_Val")
    wide = wide.reindex(index=list(ndb_numbers), columns=list(codes)).rename(columns=codes)
    wide = wide.astype("float64").reset_index(drop=True)
    wide.insert(0, "ndb_no", list(ndb_numbers))
    wide.columns.name = None
    return wide


def _tidy_weights(directory: Path) -> pd.DataFrame:
    """WEIGHT as ``ndb_no, seq, amount, measure, grams``."""
    raw = read_table(directory, "WEIGHT", ["NDB_No", "Seq", "Amount", "Msre_Desc", "Gm_Wgt"])
    return pd.DataFrame({
        "ndb_no": raw["NDB_No"],
        "seq": raw["Seq"].astype("Int64"),
        "amount": raw["Amount"],
        "measure": raw["Msre_Desc"],
        "grams": raw["Gm_Wgt"],
    })


def read_sr28(directory: str | Path) -> Sr28:
    """Read the six SR28 files used here into tidy tables (a few seconds for all of NUT_DATA)."""
    directory = Path(directory)
    for name in LAYOUTS:
        find_file(directory, name)
    groups = _tidy_groups(directory)
    foods = _tidy_foods(directory, groups)
    definitions = _tidy_definitions(directory)
    long = read_table(directory, "NUT_DATA", ["NDB_No", "Nutr_No", "Nutr_Val"])
    nutrients = wide_nutrients(long, foods["ndb_no"], find_file(directory, "NUT_DATA"))
    langual = read_table(directory, "LANGUAL").rename(
        columns={"NDB_No": "ndb_no", "Factor_Code": "factor_code"})
    return Sr28(directory, foods, nutrients, definitions, groups, _tidy_weights(directory),
                langual)
