"""The offline NHANES bundle reader: label decoding, tidy tables, errors (fixtures + real file)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from nutrireason.errors import DataError
from nutrireason.sources.nhanes_bundle import (
    CODEBOOK_FILE,
    DATA_FILE,
    META_FILE,
    read_nhanes_bundle,
)
from nutrireason.sources.nhanes_schema import CONCEPT_COLUMNS, CONCEPTS, KEYS

LONG = {
    "SEQN": "SEQN", "AgeInYearsAtScreening": "RIDAGEYR", "Gender": "RIAGENDR",
    "BodyMassIndexKgm2": "BMXBMI", "DoctorToldYouHaveDiabetes": "DIQ010",
    "HowHealthyIsTheDiet": "DBQ700", "EverUsedHeroin": "DUQ290", "OnSpecialDiet": "DRQSDIET",
    "LowSaltlowSodiumDiet": "DRQSDT3", "OfMealsNotHomePrepared": "DBD895",
}
CODEBOOK = {
    "DIQ010": ({"1": "Yes", "2": "No", "3": "Borderline", "7": "Refused"}, {"1": "Yes", "0": "No"}),
    "DBQ700": ({"1": "Excellent", "2": "Very good", "3": "Good", "4": "Fair", "5": "Poor"}, {}),
    "DUQ290": ({"1": "Yes", "2": "No"}, {"1": "Yes", "0": "No"}),
    "DRQSDIET": ({"1": "Yes", "2": "No"}, {"1": "Yes", "0": "No"}),
    "DBD895": ({"0": "None", "1 to 21": "Range of Values", "5555": "More than 21"}, {}),
}


def write_bundle(root: Path, rows: list[dict]) -> tuple[Path, Path]:
    """A bundle in the real layout: long-named TSV, metadata TSV, gzipped ';' codebook."""
    nhanes, book = root / "nhanes", root / "pynhanes"
    (nhanes / "2017-2018").mkdir(parents=True)
    book.mkdir()
    pd.DataFrame(rows).to_csv(nhanes / DATA_FILE, sep="\t", index=False)
    meta = pd.DataFrame({"VariableNameLong": list(LONG), "Variable": list(LONG.values()),
                         "Source": "x"})
    meta.to_csv(nhanes / META_FILE, sep="\t", index=False)
    codebook = pd.DataFrame([{"Code": code, "Codebook": json.dumps(full),
                              "Recoded Codebook": json.dumps(recoded) if recoded else ""}
                             for code, (full, recoded) in CODEBOOK.items()])
    with gzip.open(book / CODEBOOK_FILE, "wt", encoding="utf-8") as handle:
        codebook.to_csv(handle, sep=";", index=False)
    return nhanes, book


ROWS = [
    {"SEQN": 93703.0, "AgeInYearsAtScreening": 2, "Gender": "Female", "BodyMassIndexKgm2": 17.5,
     "DoctorToldYouHaveDiabetes": "0", "HowHealthyIsTheDiet": None, "EverUsedHeroin": None,
     "OnSpecialDiet": 0, "LowSaltlowSodiumDiet": None, "OfMealsNotHomePrepared": 5.397605e-79},
    {"SEQN": 93704.0, "AgeInYearsAtScreening": 45, "Gender": "Male", "BodyMassIndexKgm2": 31.2,
     "DoctorToldYouHaveDiabetes": "Borderline", "HowHealthyIsTheDiet": "Very good",
     "EverUsedHeroin": 1, "OnSpecialDiet": 1, "LowSaltlowSodiumDiet": 3,
     "OfMealsNotHomePrepared": 4},
    {"SEQN": 93705.0, "AgeInYearsAtScreening": 80, "Gender": "Female", "BodyMassIndexKgm2": None,
     "DoctorToldYouHaveDiabetes": "1", "HowHealthyIsTheDiet": "poor", "EverUsedHeroin": 0,
     "OnSpecialDiet": None, "LowSaltlowSodiumDiet": None, "OfMealsNotHomePrepared": 2},
]


def test_decodes_labels_back_to_nhanes_codes(tmp_path):
    tables = read_nhanes_bundle(*write_bundle(tmp_path, ROWS))
    assert tables["diabetes_questionnaire"]["diq010"].tolist() == [2.0, 3.0, 1.0]
    assert tables["diet_behaviour"]["DBQ700"].tolist()[1:] == [2.0, 5.0]
    assert tables["heroin"]["duq290"].tolist()[1:] == [1.0, 2.0]
    assert tables["demographics"]["sex"].tolist() == ["female", "male", "female"]
    assert tables["diet_behaviour"]["DBD895"].tolist() == [0.0, 4.0, 2.0]  # 5.4e-79 -> 0


def test_special_diet_flags_are_true_false_or_missing(tmp_path):
    diets = read_nhanes_bundle(*write_bundle(tmp_path, ROWS))["special_diets"]
    assert diets["diet_3"].tolist() == [False, True, pd.NA]
    assert diets["diet_12"].isna().all()  # the bundle has no DRQSDT12


def test_every_concept_has_the_schema_columns_and_provenance(tmp_path):
    tables = read_nhanes_bundle(*write_bundle(tmp_path, ROWS))
    for concept in CONCEPTS:
        assert list(tables[concept].columns) == KEYS + CONCEPT_COLUMNS[concept]
    assert tables.provenance["body"] == {"bmi": "bundle.BMXBMI"}
    assert not tables.available("labs", "glucose_mmol_l")
    assert tables["demographics"]["source_row"].tolist() == [0, 1, 2]
    assert len(tables["prescriptions"]) == 0


def test_missing_data_file_names_it_and_says_how_to_get_it(tmp_path):
    nhanes, book = write_bundle(tmp_path, ROWS)
    (nhanes / DATA_FILE).unlink()
    with pytest.raises(DataError, match="NHANES_data_2017-2018.tsv.*data pull"):
        read_nhanes_bundle(nhanes, book)


def test_missing_seqn_column_is_named(tmp_path):
    rows = [{k: v for k, v in row.items() if k != "SEQN"} for row in ROWS]
    with pytest.raises(DataError, match="field 'SEQN'"):
        read_nhanes_bundle(*write_bundle(tmp_path, rows))


def test_unknown_value_label_names_file_field_and_value(tmp_path):
    rows = [dict(ROWS[1], HowHealthyIsTheDiet="Superb")]
    with pytest.raises(DataError, match=r"NHANES_data_2017-2018.tsv.*'DBQ700'.*'Superb'"):
        read_nhanes_bundle(*write_bundle(tmp_path, rows))


def test_missing_codebook_is_named(tmp_path):
    nhanes, book = write_bundle(tmp_path, ROWS)
    (book / CODEBOOK_FILE).unlink()
    with pytest.raises(DataError, match="nhanes_codebook.csv.gz"):
        read_nhanes_bundle(nhanes, book)


def test_real_bundle_reads_every_row(nhanes_bundle_dirs):
    tables = read_nhanes_bundle(*nhanes_bundle_dirs)
    demo = tables["demographics"]
    assert len(demo) == 8366 and demo["seqn"].is_unique
    assert demo["sex"].value_counts().to_dict() == {"female": 4272, "male": 4094}
    diq = tables["diabetes_questionnaire"]["diq010"].value_counts(dropna=False).to_dict()
    assert diq[1.0] == 853 and diq[2.0] == 7334 and diq[3.0] == 175
    assert tables["special_diets"]["diet_1"].sum() == 475
    assert tables.available("labs", "hba1c_pct") and not tables.available("labs", "bun_mmol_l")
