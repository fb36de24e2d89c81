"""Each B.4 rule on small hand-made tidy tables, including arms the offline bundle lacks."""

from __future__ import annotations

import pandas as pd
import pytest

from nutrireason.ngqa.users import _extreme_sets, annotate_users
from nutrireason.sources.nhanes_schema import CONCEPTS, NhanesTables, conform, empty_table

SEQNS = [1, 2, 3, 4, 5, 6]


def make_tables(**concepts: dict[str, list]) -> NhanesTables:
    """Tidy tables for six adults (seqn 1..6, cycle H) plus the given per-user columns."""
    base = {"seqn": SEQNS, "cycle": ["H"] * 6}
    tables = {c: empty_table(c) for c in CONCEPTS}
    provenance: dict[str, dict[str, str]] = {c: {} for c in CONCEPTS}
    demo = {**base, "age_years": [30, 40, 50, 60, 17, 80], "sex": ["male", "female"] * 3,
            "source_file": "DEMO_H.XPT", "source_row": range(6)}
    tables["demographics"] = conform("demographics", pd.DataFrame(demo))
    for concept, columns in concepts.items():
        frame = pd.DataFrame(columns if "seqn" in columns else {**base, **columns})
        tables[concept] = conform(concept, frame)
        provenance[concept] = {c: f"X.{c.upper()}" for c in columns if c not in base}
    return NhanesTables(tables, provenance, source="test")


def flags(annotation, column) -> list:
    return [None if pd.isna(v) else bool(v) for v in annotation.users[column]]


def test_minors_are_excluded():
    users = annotate_users(make_tables()).users
    assert 5 not in set(users["seqn"]) and len(users) == 5


def test_obesity_threshold_is_inclusive():
    tables = make_tables(body={"bmi": [29.9, 30.0, None, 45.0, 50.0, 18.0]})
    assert flags(annotate_users(tables), "obesity") == [False, True, None, True, False]


def test_hypertension_means_available_readings_and_ignores_zero_diastolic():
    tables = make_tables(blood_pressure={
        "sbp_1": [150, 120, None, 130, 0, 139], "sbp_2": [130, 120, None, 150, 0, 141],
        "sbp_3": [None] * 6, "sbp_4": [140, None, None, None, None, None],
        "dbp_1": [70, 0, None, 80, 0, 70], "dbp_2": [70, 95, None, 80, 0, 70],
        "dbp_3": [None] * 6, "dbp_4": [None] * 6})
    # seqn1 mean sbp 140 -> yes; seqn2 dbp (0 dropped) 95 -> yes; seqn3 no readings -> NA;
    # seqn4 mean sbp 140 -> yes; seqn6 mean sbp 140 -> yes
    assert flags(annotate_users(tables), "hypertension") == [True, True, None, True, True]


def test_diabetes_questionnaire_or_both_labs():
    tables = make_tables(
        diabetes_questionnaire={"diq010": [1, 2, 2, 3, 2, None]},
        labs={"glucose_mmol_l": [5, 7.0, 7.5, 8, 9, 7.2], "hba1c_pct": [5, 6.5, 6.0, 7, 7, 6.6]},
    )
    annotation = annotate_users(tables)
    assert flags(annotation, "diabetes") == [True, True, False, True, True]
    report = {r.rule: r for r in annotation.rules}["diabetes"]
    assert "X.GLUCOSE_MMOL_L" in report.variables


def test_opioid_misuse_from_heroin_within_a_year_or_long_opioid_prescription():
    heroin = {"duq290": [1, 1, 2, 1, 2, None], "last_used_qty": [11, 2, None, None, None, None],
              "last_used_unit": [3, 4, None, None, None, None],
              "days_past_month": [None, None, None, 3, None, None]}
    rx = {"seqn": [2, 3, 3, 6], "cycle": ["H"] * 4, "drug_id": ["d1", "d2", "d3", "d4"],
          "drug_name": ["OXYCODONE", "HYDROCODONE", "IBUPROFEN", "OXYCODONE"],
          "days_taken": [30, 120, 400, 91],
          "multum_1a": [57, 57, 57, 57], "multum_1b": [58, 58, 58, 58],
          "multum_1c": [60, 191, 59, 60]}
    tables = make_tables(heroin=heroin, prescriptions=rx,
                         prescription_use={"rxduse": [2, 1, 1, 2, 2, 1]})
    annotation = annotate_users(tables)
    # 1: heroin 11 months ago; 2: heroin 2 years ago, opioid only 30 days -> no;
    # 3: hydrocodone combination 120 days; 4: heroin in the past month; 6: 91 days -> yes
    assert flags(annotation, "opioid_misuse") == [True, False, True, True, True]


def test_special_diet_flags_pass_through():
    tables = make_tables(special_diets={"on_special_diet": [1, 2, 1, None, 2, 2],
                                        "diet_12": [True, False, False, None, False, False]})
    annotation = annotate_users(tables)
    assert flags(annotation, "renal_diet") == [True, False, False, None, False]
    assert annotation.users.loc[0, "diets"] == ["renal_diet"]


def test_extreme_sets_on_continuous_and_tied_values():
    values = pd.Series(range(100), dtype="float64")
    high, low = _extreme_sets(values, 0.10, 0.30)
    assert high == list(range(90, 100)) and low == list(range(10))
    ordinal = pd.Series([1] * 5 + [2] * 60 + [3] * 35, dtype="float64")
    high, low = _extreme_sets(ordinal, 0.10, 0.30)
    assert low == [1.0] and high == []  # top answer holds 35 % > max_share
    assert _extreme_sets(pd.Series([1.0, 1.0]), 0.1, 0.3) == ([], [])


@pytest.mark.parametrize("code", [7777, 9999])
def test_habit_missing_codes_are_not_answers(code):
    values = [1, 2, 3, code, 4, 5]
    tables = make_tables(diet_behaviour={"DBD895": values})
    annotation = annotate_users(tables)
    row = annotation.habit_cutoffs.set_index("variable").loc["DBD895"]
    assert row["n_valid"] == 4  # seqn 4 gave a coded non-answer, seqn 5 is a minor
