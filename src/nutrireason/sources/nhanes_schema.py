"""The tidy NHANES tables every reader produces and every later stage reads.

One table per concept, keyed by ``seqn`` (int64) and ``cycle`` (one letter, "C".."J" or "P").
Both the raw XPT reader (:mod:`nutrireason.sources.nhanes`) and the offline-bundle reader
(:mod:`nutrireason.sources.nhanes_bundle`) return a :class:`NhanesTables`; a column the source
lacks is present and all-missing, and ``NhanesTables.provenance`` says which source variables
filled which tidy columns.

Value conventions: numeric measurements are float64 in the units named in the column; coded
questionnaire answers keep NHANES's own codes (float64, e.g. DIQ010 1 yes / 2 no / 3 borderline,
7 refused, 9 don't know) so that the rules in ``ngqa.users`` read like the codebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

KEYS = ["seqn", "cycle"]

CYCLES: dict[str, str] = {
    "C": "2003-2004",
    "D": "2005-2006",
    "E": "2007-2008",
    "F": "2009-2010",
    "G": "2011-2012",
    "H": "2013-2014",
    "I": "2015-2016",
    "J": "2017-2018",
    "P": "2017-2020",
}

# tidy column -> meaning. Columns beyond KEYS, per concept.
CONCEPT_COLUMNS: dict[str, list[str]] = {
    # RIDAGEYR (80 = 80 and over), RIAGENDR mapped to "male"/"female", SDDSRVYR, weights;
    # source_file / source_row: the file and 0-based data row this participant was read from.
    "demographics": [
        "age_years", "sex", "release", "weight_mec", "weight_interview", "source_file",
        "source_row",
    ],
    # BMXBMI, BMXWAIST
    "body": ["bmi", "waist_cm"],
    # BPXSY1-4/BPXDI1-4 (BPX) or BPXOSY1-3/BPXODI1-3 (BPXO); device says which.
    "blood_pressure": [
        "sbp_1", "sbp_2", "sbp_3", "sbp_4", "dbp_1", "dbp_2", "dbp_3", "dbp_4", "device",
    ],
    # GLU, GHB, BIOPRO, TRIGLY, CBC (C names L10AM_C, L10_C, L40_C, L13AM_C, L25_C)
    "labs": [
        "glucose_mg_dl", "glucose_mmol_l", "hba1c_pct", "bun_mg_dl", "bun_mmol_l",
        "ldl_mg_dl", "ldl_mmol_l", "rbc_million_ul", "hemoglobin_g_dl",
    ],
    # DIQ010 code
    "diabetes_questionnaire": ["diq010"],
    # DRQSDIET code (1 yes, 2 no), diet_k True/False, NA where the cycle lacks DRQSDTk
    "special_diets": [
        "on_special_diet", "diet_1", "diet_2", "diet_3", "diet_4", "diet_5", "diet_6",
        "diet_7", "diet_8", "diet_9", "diet_10", "diet_11", "diet_12", "diet_91",
    ],
    # Diet behaviour and consumer behaviour items, NHANES codes as column names (upper case),
    # CBQ I-J names (CBD071 ...) used for every cycle. Day-1 totals used as habits come along.
    "diet_behaviour": [
        "DBQ700", "DBQ197", "DBQ229", "DBQ235A", "DBQ235B", "DBQ235C", "DBD895", "DBD900",
        "DBD905", "DBD910", "DBD100", "DRQSPREP", "DR1_320Z", "CBD071", "CBD091", "CBD111",
        "CBD121", "CBD131", "DR1TKCAL", "DR1TPROT", "DR1TCARB", "DR1TSUGR", "DR1TFIBE",
        "DR1TTFAT", "DR1TSFAT", "DR1TCHOL", "DR1TSODI", "DR1TALCO", "DR1TCAFF",
        "SMD650", "SMDANY",  # smoking habits (SMQ, SMQRTU)
    ],
    # One row per (participant, drug): RXDDRGID, RXDDRUG, RXDDAYS (77777/99999 -> NA),
    # Multum categories from RXQ_DRUG (level 1/2/3 of up to four categories).
    "prescriptions": [
        "drug_id", "drug_name", "days_taken",
        "multum_1a", "multum_1b", "multum_1c", "multum_2a", "multum_2b", "multum_2c",
        "multum_3a", "multum_3b", "multum_3c", "multum_4a", "multum_4b", "multum_4c",
    ],
    # RXDUSE per participant (1 yes, 2 no) so "no prescriptions" differs from "not asked".
    "prescription_use": ["rxduse"],
    # DUQ290 ever heroin (code), DUQ310Q/DUQ310U last use, DUQ320 days used in the past month
    "heroin": ["duq290", "last_used_qty", "last_used_unit", "days_past_month"],
    # OSQ060 code
    "osteoporosis": ["osq060"],
    # DR1IFF: one row per food eaten on day 1
    "food_records": ["food_code", "grams", "reliable"],
}

CONCEPTS = list(CONCEPT_COLUMNS)

# Value dtypes: text columns are object (None when missing), flags are pandas' nullable boolean,
# ids are int64, every other column is float64 (NHANES codes and measurements alike).
STRING_COLUMNS = {"sex", "device", "drug_id", "drug_name", "source_file"}
INT_COLUMNS = {"food_code", "source_row"}
BOOLEAN_COLUMNS = {"reliable", *CONCEPT_COLUMNS["special_diets"][1:]}  # diet_k flags


@dataclass
class NhanesTables:
    """The tidy tables of one NHANES read, plus where each column came from.

    ``provenance[concept][tidy_column]`` is a short text naming the source variable(s), or is
    absent when no source variable existed for that column.
    """

    tables: dict[str, pd.DataFrame]
    provenance: dict[str, dict[str, str]] = field(default_factory=dict)
    source: str = ""

    def __getitem__(self, concept: str) -> pd.DataFrame:
        return self.tables[concept]

    def available(self, concept: str, column: str) -> bool:
        """True when the column was filled from some source variable."""
        return column in self.provenance.get(concept, {})


def empty_table(concept: str) -> pd.DataFrame:
    """An empty tidy table with the concept's columns and dtypes."""
    return conform(concept, pd.DataFrame(columns=KEYS + CONCEPT_COLUMNS[concept]))


def conform(concept: str, frame: pd.DataFrame) -> pd.DataFrame:
    """Return ``frame`` with exactly the concept's columns in order (missing ones as NA) and
    the schema's dtypes."""
    out = frame.reindex(columns=KEYS + CONCEPT_COLUMNS[concept]).reset_index(drop=True)
    out["seqn"] = out["seqn"].astype("int64")
    out["cycle"] = out["cycle"].astype("object")
    for column in CONCEPT_COLUMNS[concept]:
        out[column] = _as_dtype(out[column], column)
    return out


def _as_dtype(values: pd.Series, column: str) -> pd.Series:
    if column in STRING_COLUMNS:
        return values.astype(object).where(values.notna(), None)
    if column in BOOLEAN_COLUMNS:
        return values.astype("boolean")
    if column in INT_COLUMNS:
        return values.astype("int64")
    return pd.to_numeric(values, errors="coerce").astype("float64")
