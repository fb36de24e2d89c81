"""Read a directory tree of raw NHANES XPT files (SAS transport) into the tidy tables.

The tidy contract is :mod:`nutrireason.sources.nhanes_schema`. Files may sit directly in the
root (all cycles mixed) or in any sub-folders; cycles come from the file names
(``DEMO_J.XPT``, ``P_DEMO.XPT``, 2003-04 lab names such as ``L10AM_C.XPT``). Nothing is written.

Reading: the XPT header is parsed by pandas' transport reader; only the needed columns are then
converted (IBM to IEEE floats, vectorised), which keeps wide files such as DR1IFF fast. Files that
pandas cannot parse (e.g. transport v8) fall back to ``pyreadstat.read_xport``.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from nutrireason.errors import DataError
from nutrireason.sources.nhanes_schema import (
    CONCEPT_COLUMNS,
    CONCEPTS,
    CYCLES,
    NhanesTables,
    conform,
    empty_table,
)

TINY = 1e-70
LDL_MG_PER_MMOL = 38.67
DRUG_TABLE = "RXQ_DRUG"
RX_NOT_KNOWN = (77777, 99999)
_ANSWERED = (1, 2)
_DIETS = [*range(1, 13), 91]

# 2003-04 (cycle C) lab files have their own names.
C_LAB_NAMES = {"L10AM": "GLU", "L10": "GHB", "L40": "BIOPRO", "L13AM": "TRIGLY", "L25": "CBC"}

_DIET_BEHAVIOUR = CONCEPT_COLUMNS["diet_behaviour"]
_CBQ_OLD = {"CBD070": "CBD071", "CBD090": "CBD091", "CBD110": "CBD111", "CBD120": "CBD121",
            "CBD130": "CBD131"}

# concept -> source table -> {source variable: tidy column}; table order is preference order.
SPECS: dict[str, dict[str, dict[str, str]]] = {
    "demographics": {"DEMO": {
        "RIDAGEYR": "age_years", "RIAGENDR": "sex", "SDDSRVYR": "release",
        "WTMEC2YR": "weight_mec", "WTMECPRP": "weight_mec",
        "WTINT2YR": "weight_interview", "WTINTPRP": "weight_interview",
    }},
    "body": {"BMX": {"BMXBMI": "bmi", "BMXWAIST": "waist_cm"}},
    "blood_pressure": {
        "BPX": {**{f"BPXSY{k}": f"sbp_{k}" for k in range(1, 5)},
                **{f"BPXDI{k}": f"dbp_{k}" for k in range(1, 5)}},
        "BPXO": {**{f"BPXOSY{k}": f"sbp_{k}" for k in range(1, 4)},
                 **{f"BPXODI{k}": f"dbp_{k}" for k in range(1, 4)}},
    },
    "labs": {
        "GLU": {"LBXGLU": "glucose_mg_dl", "LBDGLUSI": "glucose_mmol_l"},
        "GHB": {"LBXGH": "hba1c_pct"},
        "BIOPRO": {"LBXSBU": "bun_mg_dl", "LBDSBUSI": "bun_mmol_l"},
        "TRIGLY": {"LBDLDL": "ldl_mg_dl", "LBDLDLSI": "ldl_mmol_l"},
        "CBC": {"LBXRBCSI": "rbc_million_ul", "LBXHGB": "hemoglobin_g_dl"},
    },
    "diabetes_questionnaire": {"DIQ": {"DIQ010": "diq010"}},
    "special_diets": {"DR1TOT": {
        "DRQSDIET": "on_special_diet", **{f"DRQSDT{k}": f"diet_{k}" for k in _DIETS},
    }},
    "diet_behaviour": {
        "DBQ": {c: c for c in _DIET_BEHAVIOUR},
        "CBQ": {**{c: c for c in _DIET_BEHAVIOUR}, **_CBQ_OLD},
        "DR1TOT": {c: c for c in _DIET_BEHAVIOUR},
        "SMQ": {"SMD650": "SMD650"},
        "SMQRTU": {"SMDANY": "SMDANY"},
    },
    "prescriptions": {
        "RXQ_RX": {"RXDDRGID": "drug_id", "RXDDRUG": "drug_name", "RXDDAYS": "days_taken"},
        DRUG_TABLE: {f"RXDDCI{i}{x.upper()}": f"multum_{i}{x}" for i in range(1, 5) for x in "abc"},
    },
    "prescription_use": {"RXQ_RX": {"RXDUSE": "rxduse"}},
    "heroin": {"DUQ": {"DUQ290": "duq290", "DUQ310Q": "last_used_qty",
                       "DUQ310U": "last_used_unit", "DUQ320": "days_past_month"}},
    "osteoporosis": {"OSQ": {"OSQ060": "osq060"}},
    "food_records": {"DR1IFF": {"DR1IFDCD": "food_code", "DR1IGRMS": "grams",
                                "DR1DRSTZ": "reliable"}},
}

TABLES = sorted({table for spec in SPECS.values() for table in spec})
# Tables with one row per participant (SEQN unique); RXQ_RX and DR1IFF have one row per item.
ROW_TABLES = {"RXQ_RX", "DR1IFF", DRUG_TABLE}
# Columns a file must have, beyond SEQN (RXQ_DRUG has no SEQN: its key is RXDDRGID).
REQUIRED = {"DEMO": ("RIDAGEYR", "RIAGENDR"), "DR1IFF": ("DR1IFDCD",), DRUG_TABLE: ("RXDDRGID",)}
# Files of the MEC examination (the dietary recall is taken there too): their participants are
# the ones DEMO marks examined (RIDSTATR 2); the other files are interview files (RIDSTATR 1, 2).
EXAM_TABLES = {"BMX", "BPX", "BPXO", "GLU", "GHB", "BIOPRO", "TRIGLY", "CBC", "DR1TOT", "DR1IFF"}
STATUS = "RIDSTATR"
# A file stops short of DEMO when the participants DEMO has after its last SEQN are too many to
# be chance for a subsample. A file holding n of the m eligible DEMO participants up to its last
# SEQN leaves k more in a row absent with probability B(n+1, m-n+k+1) / B(n+1, m-n+1) (its share
# unknown, uniform prior); below TRUNCATION_P (and at least TRUNCATION_MIN absent) the file was
# cut short. A genuine half subsample needs about 30 absent in a row to get there; a file cut at
# 70 % of its rows has thousands.
TRUNCATION_P = 1e-9
TRUNCATION_MIN = 3



@dataclass(frozen=True)
class XptFile:
    """One recognised raw file: its cycle letter ("*" for RXQ_DRUG), table and path."""

    cycle: str
    table: str
    path: Path


# ----------------------------------------------------------------------------------- reading


def _ibm_to_ieee(block: np.ndarray) -> np.ndarray:
    """Convert an (n, width<=8) uint8 block of IBM floats to float64; SAS missing -> NaN."""
    if block.shape[1] == 8:
        buf = np.ascontiguousarray(block)
    else:  # truncated floats: pad with zero bytes on the right
        buf = np.zeros((block.shape[0], 8), dtype=np.uint8)
        buf[:, : block.shape[1]] = block
    word = buf.view(">u8").ravel()
    first = (word >> np.uint64(56)).astype(np.uint8)
    fraction = word & np.uint64(0x00FFFFFFFFFFFFFF)
    missing = (fraction == 0) & (
        ((first >= 0x41) & (first <= 0x5A)) | (first == 0x5F) | (first == 0x2E)
    )
    exponent = (first & 0x7F).astype(np.int32) * 4 - 312
    value = np.ldexp(fraction.astype(np.float64), exponent)  # 0.F * 16**(e - 64), 56-bit F
    np.negative(value, out=value, where=first >= 0x80)
    value[missing] = np.nan
    return value


def _decode_chars(block: np.ndarray) -> np.ndarray:
    """Decode an (n, width) uint8 block of latin-1 text; blank -> None."""
    raw = np.ascontiguousarray(block).view(f"S{block.shape[1]}").ravel()
    return np.array([b.rstrip().decode("latin-1") or None for b in raw.tolist()], dtype=object)


def _open_header(path: Path):
    """Parse the transport header with pandas; a truncated file is a DataError."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reader = pd.read_sas(path, format="xport", encoding="latin-1", iterator=True)
    if any("corrupt" in str(w.message) for w in caught):
        reader.close()
        raise DataError(path, "truncated XPT file: its length is not a whole number of "
                        "80-byte records", expected="a complete SAS transport file")
    return reader


def _row_count(path: Path, start: int, width: int) -> int:
    """Rows in the data part of a transport file; a file that ends inside a row is truncated.

    A complete file holds whole rows followed by blank padding up to the next 80-byte record
    (fewer than 80 bytes). The last row may end in blank text, so the count is the rows needed to
    hold everything before the trailing blanks; if those rows do not fit in the file, the file
    was cut inside a row (a cut exactly between rows is caught by the DEMO cross-check)."""
    total = path.stat().st_size - start
    if total <= 0 or width <= 0:
        return 0
    with open(path, "rb") as handle:
        handle.seek(start + max(0, total - 80))
        last = handle.read(80)
    pad = min(len(last) - len(last.rstrip(b" \x00")), 79)  # blank (or NUL) padding
    end = total - pad
    rows = -(-end // width)
    if rows * width > total:
        done = rows - 1
        raise DataError(path, f"truncated XPT file: it ends inside row {rows:,} "
                        f"({end - done * width} of its {width} bytes present, "
                        f"{done:,} complete rows)",
                        expected="a complete SAS transport file (download it again)")
    return rows


def _read_columns(reader, path: Path, select) -> pd.DataFrame:
    """Convert only the columns chosen by ``select(upper_names)``, from the raw records."""
    try:
        fields, start, width = reader.fields, reader.record_start, reader.record_length
    finally:
        reader.close()
    nobs = _row_count(path, start, width)
    names = [f["name"].decode("latin-1").strip().upper() for f in fields]
    offsets = np.cumsum([0] + [f["field_length"] for f in fields])
    chosen = [names.index(n) for n in select(names)]
    with open(path, "rb") as handle:
        handle.seek(start)
        rows = np.fromfile(handle, dtype=np.uint8, count=nobs * width).reshape(nobs, width)
    data = {}
    for j in chosen:
        block = rows[:, offsets[j] : offsets[j + 1]]
        numeric = fields[j]["ntype"] == "numeric"
        data[names[j]] = _ibm_to_ieee(block) if numeric else _decode_chars(block)
    return pd.DataFrame(data, index=pd.RangeIndex(nobs))


def _read_pyreadstat(path: Path, select) -> pd.DataFrame:
    """Fallback reader (handles transport v8 too), reading only the chosen columns."""
    import pyreadstat

    _, meta = pyreadstat.read_xport(str(path), metadataonly=True)
    by_upper = {c.strip().upper(): c for c in meta.column_names}
    usecols = [by_upper[n] for n in select(list(by_upper))]
    frame, _ = pyreadstat.read_xport(str(path), usecols=usecols, encoding="ISO-8859-1")
    frame.columns = [c.strip().upper() for c in frame.columns]
    for col in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[col]):
            values = frame[col].astype(object).to_numpy()
            frame[col] = [(v.rstrip() or None) if isinstance(v, str) else None for v in values]
    return frame


def _selector(path: Path, table: str, wanted: set[str]):
    """Return a function choosing the columns to read that also checks the required ones."""
    required = REQUIRED.get(table, ())
    if table != DRUG_TABLE:
        required = ("SEQN", *required)

    def select(names: list[str]) -> list[str]:
        for col in required:
            if col not in names:
                raise DataError(path, f"required column missing from {table}", field=col,
                                expected=f"columns {', '.join(required)}")
        return [n for n in names if n in wanted or n in required]

    return select


def _read_any(path: Path, select) -> pd.DataFrame:
    """pandas' header parser first; if that path fails, pyreadstat; if both fail, re-raise."""
    try:
        return _read_columns(_open_header(path), path, select)
    except DataError:
        raise
    except Exception as first:
        try:
            return _read_pyreadstat(path, select)
        except DataError:
            raise
        except Exception:
            raise first from None


def read_xpt(path: str | Path, table: str, wanted: Iterable[str]) -> pd.DataFrame:
    """Read the ``wanted`` (upper-case) columns of one XPT file; key columns are checked."""
    path = Path(path)
    select = _selector(path, table, {w.upper() for w in wanted})
    try:
        frame = _read_any(path, select)
    except DataError:
        raise
    except Exception as exc:
        raise DataError(path, f"not a readable SAS transport (XPT) file: {exc}",
                        expected=f"an NHANES {table} XPT file (SAS transport v5)") from exc
    return _clean(frame, path, table)


def _clean(frame: pd.DataFrame, path: Path, table: str) -> pd.DataFrame:
    """Zero the tiny-value artefact, make SEQN int64 and check it is unique where it must be."""
    for col in frame.columns:
        if frame[col].dtype.kind == "f":
            values = frame[col].to_numpy(dtype=np.float64, copy=True)
            values[np.abs(values) < TINY] = 0.0
            frame[col] = values
    if "SEQN" in frame.columns:
        seqn = pd.to_numeric(frame["SEQN"], errors="coerce")
        if seqn.isna().any() or (seqn % 1 != 0).any():
            raise DataError(path, "SEQN must be a whole number in every row", field="SEQN",
                            value=frame.loc[seqn.isna() | (seqn % 1 != 0), "SEQN"].iloc[0])
        frame["SEQN"] = seqn.astype("int64")
        if table not in ROW_TABLES and frame["SEQN"].duplicated().any():
            dup = int(frame.loc[frame["SEQN"].duplicated(), "SEQN"].iloc[0])
            raise DataError(path, "participant appears twice", field="SEQN", value=dup,
                            expected=f"one row per participant in {table}")
    return frame


# --------------------------------------------------------------------------------- discovery


def classify(name: str) -> tuple[str | None, str]:
    """(cycle letter or None, table) from a file name; RXQ_DRUG has cycle "*"."""
    stem = name.rsplit(".", 1)[0].upper()
    if stem == DRUG_TABLE:
        return "*", stem
    if stem.startswith("P_"):
        return "P", stem[2:]
    match = re.fullmatch(r"(.+)_([A-Z])", stem)
    if not match:
        return None, stem
    table, letter = match.groups()
    if letter == "C" and table in C_LAB_NAMES:
        table = C_LAB_NAMES[table]
    return letter, table


def discover(root: Path) -> list[XptFile]:
    """All recognised NHANES files under ``root`` (any depth); unknown cycles warn and skip."""
    found = []
    for path in sorted(p for p in root.rglob("*") if p.suffix.lower() == ".xpt" and p.is_file()):
        cycle, table = classify(path.name)
        if table not in TABLES:
            continue
        if cycle != "*" and cycle not in CYCLES:
            warnings.warn(f"skipping {path}: no known NHANES cycle in its name "
                          f"(expected suffix _C.._J or prefix P_)", stacklevel=3)
            continue
        found.append(XptFile(cycle, table, path))
    _check_unique(found)
    return found


def _check_unique(files: list[XptFile]) -> None:
    """Two files for the same cycle and table are ambiguous (RXQ_DRUG copies are allowed)."""
    seen: dict[tuple[str, str], Path] = {}
    for f in files:
        key = (f.cycle, f.table)
        if key in seen and f.cycle != "*":
            raise DataError(f.path, f"second file for table {f.table} of cycle {f.cycle}",
                            value=str(seen[key]), expected="one file per table and cycle")
        seen[key] = f.path


def _choose_cycles(files: list[XptFile], cycles: set[str] | None, prefer: str | None,
                   root: Path) -> list[XptFile]:
    """Keep the asked cycles; refuse J and P together unless ``prefer`` picks one."""
    if cycles is not None:
        files = [f for f in files if f.cycle == "*" or f.cycle in cycles]
        for letter in sorted(cycles - {f.cycle for f in files}):
            raise DataError(root, f"no files found for requested cycle {letter}",
                            expected=f"files such as {_demo_name(letter)}")
    present = {f.cycle for f in files}
    if {"J", "P"} <= present:
        if prefer is None:
            j_file, p_file = (next(f.path for f in files if f.cycle == c) for c in "JP")
            raise DataError(
                root, f"both cycle J ({j_file.name}) and cycle P ({p_file.name}) found; "
                "P contains the J participants", expected="cycles=[...] or prefer='J' or 'P'")
        drop = "P" if prefer == "J" else "J"
        files = [f for f in files if f.cycle != drop]
    return files


def _demo_name(cycle: str) -> str:
    return "P_DEMO.XPT" if cycle == "P" else f"DEMO_{cycle}.XPT"


def _check_demo(files: list[XptFile], root: Path) -> None:
    """Every cycle read needs its DEMO file."""
    cycles = {f.cycle for f in files} - {"*"}
    with_demo = {f.cycle for f in files if f.table == "DEMO"}
    if not with_demo:
        raise DataError(root, "no DEMO file found for any cycle",
                        expected="files such as DEMO_J.XPT or P_DEMO.XPT")
    for cycle in sorted(cycles - with_demo):
        names = ", ".join(f.path.name for f in files if f.cycle == cycle)
        raise DataError(root, f"cycle {cycle} has files ({names}) but no DEMO file",
                        expected=_demo_name(cycle))


# ---------------------------------------------------------------------------------- concepts


def _rename(frame: pd.DataFrame, table: str, mapping: dict[str, str]):
    """seqn plus the tidy columns this frame supplies, and their provenance."""
    out = pd.DataFrame({"seqn": frame["SEQN"]}) if "SEQN" in frame else pd.DataFrame()
    prov: dict[str, list[str]] = {}
    for src, tidy in mapping.items():
        if src not in frame.columns:
            continue
        out[tidy] = out[tidy].combine_first(frame[src]) if tidy in out else frame[src]
        prov.setdefault(tidy, []).append(f"{table}.{src}")
    return out, prov


def _merge(left: pd.DataFrame | None, right: pd.DataFrame) -> pd.DataFrame:
    """Outer-join participant frames on seqn; a column both supply takes left's value first."""
    if left is None:
        return right
    merged = left.merge(right, on="seqn", how="outer", suffixes=("", "__r"))
    for col in [c for c in right.columns if c != "seqn" and c in left.columns]:
        merged[col] = merged[col].combine_first(merged.pop(f"{col}__r"))
    return merged


def _add_prov(into: dict[str, list[str]], prov: dict[str, list[str]]) -> None:
    for tidy, sources in prov.items():
        into.setdefault(tidy, []).extend(s for s in sources if s not in into.get(tidy, []))


def _join_tables(concept: str, parts: dict[str, pd.DataFrame], first_only: bool = False):
    """Outer-join the concept's tables present in ``parts`` (only the first if ``first_only``)."""
    merged, prov = None, {}
    for table, mapping in SPECS[concept].items():
        if table not in parts:
            continue
        frame, table_prov = _rename(parts[table], table, mapping)
        merged = _merge(merged, frame)
        _add_prov(prov, table_prov)
        if first_only:
            merged["device"] = table
            prov["device"] = [f"{table} file"]
            break
    return merged, prov


def _demographics(parts: dict[str, pd.DataFrame]):
    """DEMO renamed, sex as text, plus the file and 0-based row each participant came from."""
    frame, prov = _join_tables("demographics", parts)
    frame["sex"] = frame["sex"].map({1.0: "male", 2.0: "female"}).astype(object)
    frame["source_file"] = parts["DEMO"].attrs["source_file"]
    frame["source_row"] = np.arange(len(frame), dtype="int64")
    prov.update(source_file=["DEMO file"], source_row=["DEMO row (0-based)"])
    return frame, prov


def _labs(parts: dict[str, pd.DataFrame]):
    frame, prov = _join_tables("labs", parts)
    if frame is not None and "ldl_mg_dl" in frame:
        computed = frame["ldl_mg_dl"] / LDL_MG_PER_MMOL
        if "ldl_mmol_l" not in frame:
            prov["ldl_mmol_l"] = [f"TRIGLY.LBDLDL/{LDL_MG_PER_MMOL}"]
        frame["ldl_mmol_l"] = frame.get("ldl_mmol_l", computed).combine_first(computed)
    return frame, prov


def _special_diets(parts: dict[str, pd.DataFrame]):
    """diet_k: True when DRQSDTk is set, False when unset but DRQSDIET answered, else NA."""
    frame, prov = _join_tables("special_diets", parts)
    if frame is None:
        return frame, prov
    diet = frame.get("on_special_diet", pd.Series(np.nan, index=frame.index))
    answered = diet.isin(_ANSWERED)
    for k in _DIETS:
        col = f"diet_{k}"
        if col in frame:
            flag = pd.Series(pd.NA, index=frame.index, dtype="boolean")
            flag[answered] = False
            flag[frame[col].notna()] = True
            frame[col] = flag
    return frame, prov


def _prescriptions(parts: dict[str, pd.DataFrame]):
    """One row per drug: RXQ_RX rows with a drug, Multum categories joined from RXQ_DRUG."""
    if "RXQ_RX" not in parts:
        return None, {}
    spec = SPECS["prescriptions"]
    frame, prov = _rename(parts["RXQ_RX"], "RXQ_RX", spec["RXQ_RX"])
    frame = frame.loc[_has_drug(frame)].copy()
    if "days_taken" in frame:
        frame["days_taken"] = frame["days_taken"].where(~frame["days_taken"].isin(RX_NOT_KNOWN))
    if DRUG_TABLE in parts and "drug_id" in frame:
        drugs, drug_prov = _rename(parts[DRUG_TABLE], DRUG_TABLE, spec[DRUG_TABLE])
        drugs["drug_id"] = parts[DRUG_TABLE]["RXDDRGID"]
        drugs = drugs.loc[drugs["drug_id"].notna()].drop_duplicates("drug_id")
        frame = frame.merge(drugs, on="drug_id", how="left")
        _add_prov(prov, drug_prov)
    return frame, prov


def _has_drug(frame: pd.DataFrame) -> pd.Series:
    has = pd.Series(False, index=frame.index)
    for col in ("drug_id", "drug_name"):
        if col in frame:
            has |= frame[col].notna()
    return has


def _prescription_use(parts: dict[str, pd.DataFrame]):
    """RXDUSE once per participant (RXQ_RX repeats it on every drug row)."""
    if "RXQ_RX" not in parts:
        return None, {}
    return _join_tables("prescription_use", {"RXQ_RX": parts["RXQ_RX"].drop_duplicates("SEQN")})


def _food_records(parts: dict[str, pd.DataFrame]):
    """DR1IFF rows; rows without a food code are dropped with a warning."""
    if "DR1IFF" not in parts:
        return None, {}
    frame, prov = _rename(parts["DR1IFF"], "DR1IFF", SPECS["food_records"]["DR1IFF"])
    missing = frame["food_code"].isna()
    if missing.any():
        where = parts["DR1IFF"].attrs.get("source_file", "DR1IFF")
        warnings.warn(f"{where}: dropped {int(missing.sum())} rows without a food code "
                      "(DR1IFDCD)", stacklevel=4)
        frame = frame.loc[~missing].copy()
    frame["food_code"] = frame["food_code"].astype("int64")
    if "reliable" in frame:
        frame["reliable"] = frame["reliable"].eq(1).astype("boolean").mask(
            frame["reliable"].isna())
    return frame, prov


BUILDERS = {
    "demographics": _demographics,
    "body": lambda parts: _join_tables("body", parts),
    "blood_pressure": lambda parts: _join_tables("blood_pressure", parts, first_only=True),
    "labs": _labs,
    "diabetes_questionnaire": lambda parts: _join_tables("diabetes_questionnaire", parts),
    "special_diets": _special_diets,
    "diet_behaviour": lambda parts: _join_tables("diet_behaviour", parts),
    "prescriptions": _prescriptions,
    "prescription_use": _prescription_use,
    "heroin": lambda parts: _join_tables("heroin", parts),
    "osteoporosis": lambda parts: _join_tables("osteoporosis", parts),
    "food_records": _food_records,
}


def finish(concept: str, frame: pd.DataFrame | None) -> pd.DataFrame:
    """Conform to the schema, with its dtypes (an empty table when ``frame`` is None)."""
    return empty_table(concept) if frame is None else conform(concept, frame)


# -------------------------------------------------------------------------------- public API


def _validate(cycles, concepts, prefer, root: Path):
    """Check the arguments; return (cycle set or None, concept set)."""
    if not root.exists() or not root.is_dir():
        raise DataError(root, "NHANES directory does not exist or is not a directory",
                        expected="a directory of NHANES .XPT files")
    valid = " ".join(CYCLES)
    cycles = [cycles] if isinstance(cycles, str) else cycles
    concepts = [concepts] if isinstance(concepts, str) else concepts
    wanted_cycles = None if cycles is None else {str(c).upper() for c in cycles}
    for letter in sorted((wanted_cycles or set()) - set(CYCLES)):
        raise DataError(root, "unknown NHANES cycle requested", field="cycles", value=letter,
                        expected=f"one of {valid}")
    if prefer is not None and str(prefer).upper() not in ("J", "P"):
        raise DataError(root, "prefer must choose J or P", field="prefer", value=prefer,
                        expected="'J', 'P' or None")
    wanted_concepts = set(CONCEPTS) if concepts is None else set(concepts)
    for name in sorted(wanted_concepts - set(CONCEPTS)):
        raise DataError(root, "unknown concept requested", field="concepts", value=name,
                        expected=f"one of {', '.join(CONCEPTS)}")
    return wanted_cycles, wanted_concepts | {"demographics"}


def _columns_needed(concepts: set[str]) -> dict[str, set[str]]:
    """table -> source variables to read for the requested concepts."""
    needed: dict[str, set[str]] = {}
    for concept in concepts:
        for table, mapping in SPECS[concept].items():
            needed.setdefault(table, set()).update(mapping)
    return needed


def _read_all(files: list[XptFile], needed: dict[str, set[str]], progress: bool):
    """Read every needed file: {cycle: {table: frame}} plus the RXQ_DRUG frame (or None)."""
    from rich.progress import track

    todo = [f for f in files if f.table in needed]
    by_cycle: dict[str, dict[str, pd.DataFrame]] = {}
    drugs = []
    for f in track(todo, description="Reading NHANES XPT", disable=not progress):
        frame = read_xpt(f.path, f.table, needed[f.table])
        frame.attrs["source_file"] = str(f.path)
        if f.cycle == "*":
            drugs.append(frame)
        else:
            by_cycle.setdefault(f.cycle, {})[f.table] = frame
    drug = pd.concat(drugs, ignore_index=True).drop_duplicates("RXDDRGID") if drugs else None
    return by_cycle, drug


def _check_duplicates(demo: pd.DataFrame, files: list[XptFile]) -> None:
    """No participant may appear in two cycles."""
    dup = demo["seqn"].duplicated(keep=False)
    if dup.any():
        cycles = sorted(set(demo.loc[dup, "cycle"]))
        names = ", ".join(str(f.path) for f in files if f.table == "DEMO" and f.cycle in cycles)
        example = int(demo.loc[dup, "seqn"].iloc[0])
        raise DataError(names, f"{int(dup.sum())} rows share a participant (seqn) across cycles "
                        f"{', '.join(cycles)}", field="SEQN", value=example,
                        expected="each participant in one cycle only (J and P overlap)")


def _check_against_demo(by_cycle: dict[str, dict[str, pd.DataFrame]]) -> None:
    """Every file of a cycle against its DEMO: a file with participants DEMO lacks, or whose
    SEQNs stop well short of DEMO's last participant, is truncated (or from another cycle)."""
    for cycle in sorted(by_cycle):
        parts = by_cycle[cycle]
        if "DEMO" not in parts:
            continue
        demo = parts["DEMO"]
        demo_file = demo.attrs.get("source_file", _demo_name(cycle))
        demo_seqn = demo["SEQN"].to_numpy(dtype="int64")
        others = {t: f for t, f in sorted(parts.items()) if t != "DEMO" and "SEQN" in f}
        _check_demo_complete(demo_file, demo_seqn, others)
        for table, frame in others.items():
            where = frame.attrs.get("source_file", table)
            seqn = np.unique(frame["SEQN"].to_numpy(dtype="int64"))
            stray = seqn[~np.isin(seqn, demo_seqn)]
            if len(stray):
                raise DataError(where, f"{len(stray):,} participants are not in {demo_file} "
                                f"(first SEQN {int(stray[0])})", field="SEQN",
                                expected="the participants of the cycle's DEMO file only")
            _check_range(where, table, seqn, demo, demo_file)


def _check_demo_complete(demo_file: str, demo_seqn: np.ndarray,
                         others: dict[str, pd.DataFrame]) -> None:
    """Participants beyond DEMO's last SEQN in the cycle's other files mean DEMO is cut short."""
    last = int(demo_seqn.max()) if len(demo_seqn) else -1
    beyond = np.unique(np.concatenate(
        [f["SEQN"].to_numpy(dtype="int64") for f in others.values()] or [np.empty(0, "int64")]))
    beyond = beyond[beyond > last]
    if len(beyond):
        names = ", ".join(Path(f.attrs.get("source_file", t)).name for t, f in others.items()
                          if (f["SEQN"].to_numpy() > last).any())
        raise DataError(demo_file, f"truncated file: DEMO stops at SEQN {last} but {names} "
                        f"hold {len(beyond):,} participants after it (up to SEQN "
                        f"{int(beyond[-1])})", field="SEQN",
                        expected="a complete DEMO file (download it again)")


def _log_chance(present: int, covered: int, absent: int) -> float:
    """log P(``absent`` more eligible participants in a row are not in a file that holds
    ``present`` of the first ``covered``), its share unknown (uniform prior)."""
    missed = max(0, covered - present)

    def log_beta(a: float, b: float) -> float:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)

    return log_beta(present + 1, missed + absent + 1) - log_beta(present + 1, missed + 1)


def _check_range(where: str, table: str, seqn: np.ndarray, demo: pd.DataFrame,
                 demo_file: str) -> None:
    """A file whose last SEQN is far before DEMO's last eligible participant is cut short."""
    eligible = demo["SEQN"].to_numpy(dtype="int64")
    if STATUS in demo.columns:
        status = demo[STATUS].to_numpy(dtype="float64")
        keep = status == 2 if table in EXAM_TABLES else np.isin(status, (1, 2))
        if keep.any():
            eligible = eligible[keep]
    eligible = np.sort(eligible)
    last = int(seqn.max()) if len(seqn) else None
    covered = int(np.searchsorted(eligible, last, side="right")) if last is not None else 0
    absent = len(eligible) - covered
    if absent < TRUNCATION_MIN:
        return
    if len(seqn) and _log_chance(len(seqn), covered, absent) >= math.log(TRUNCATION_P):
        return
    stop = f"stops at SEQN {last}" if last is not None else "has no rows"
    kind = "examined" if table in EXAM_TABLES else "interviewed"
    raise DataError(where, f"truncated file: it {stop} while {demo_file} runs to SEQN "
                    f"{int(eligible[-1])}; the {absent:,} participants DEMO lists as {kind} "
                    f"after it are missing ({len(seqn):,} present)", field="SEQN",
                    expected="a complete file (download it again)")


def _build(concept: str, by_cycle, drug):
    """One concept over all cycles: the concatenated frame and its provenance."""
    frames, prov = [], {}
    for cycle in sorted(by_cycle):
        parts = dict(by_cycle[cycle])
        if drug is not None:
            parts[DRUG_TABLE] = drug
        frame, cycle_prov = BUILDERS[concept](parts)
        if frame is not None and len(frame.columns):
            frames.append(frame.assign(cycle=cycle))
            _add_prov(prov, cycle_prov)
    frame = pd.concat(frames, ignore_index=True) if frames else None
    return finish(concept, frame), {k: ", ".join(v) for k, v in prov.items()}


def read_nhanes_dir(
    root: str | Path,
    cycles: Iterable[str] | None = None,
    concepts: Iterable[str] | None = None,
    progress: bool = False,
    prefer: str | None = None,
) -> NhanesTables:
    """Read raw NHANES XPT files under ``root`` into tidy tables (every concept present).

    Cycles J and P overlap (P contains J's participants): when both are found, pass ``cycles``
    choosing one or ``prefer="J"``/``"P"``, otherwise DataError. Demographics are always read.
    """
    root = Path(root)
    wanted_cycles, wanted_concepts = _validate(cycles, concepts, prefer, root)
    prefer = None if prefer is None else str(prefer).upper()
    files = _choose_cycles(discover(root), wanted_cycles, prefer, root)
    _check_demo(files, root)
    needed = _columns_needed(wanted_concepts)
    needed["DEMO"] = needed.get("DEMO", set()) | {STATUS}
    by_cycle, drug = _read_all(files, needed, progress)
    _check_against_demo(by_cycle)
    tables, provenance = {}, {}
    for concept in CONCEPTS:
        if concept not in wanted_concepts:
            tables[concept] = finish(concept, None)
            continue
        tables[concept], provenance[concept] = _build(concept, by_cycle, drug)
        if concept == "demographics":
            _check_duplicates(tables[concept], files)
    return NhanesTables(tables=tables, provenance=provenance, source=str(root))
