"""Raw NHANES XPT reader: layouts, cycle rules, value conventions and errors (offline fixtures)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyreadstat
import pytest

from nutrireason.errors import DataError
from nutrireason.sources.nhanes import classify, read_nhanes_dir, read_xpt
from nutrireason.sources.nhanes_schema import CONCEPT_COLUMNS, CONCEPTS, KEYS
from tests.sources.nhanes_fixtures import SEQN_START, demo, seqns, write_tree, write_xpt

C0, E0, J0 = (int(seqns(c)[0]) for c in "CEJ")
P0 = SEQN_START["P"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("nhanes")
    write_tree(root, cycles=("C", "E", "J"))
    return root


@pytest.fixture(scope="module")
def tables(tree):
    return read_nhanes_dir(tree)


def row(frame: pd.DataFrame, seqn: int) -> pd.Series:
    match = frame.loc[frame["seqn"] == seqn]
    assert len(match) == 1, f"{len(match)} rows for seqn {seqn}"
    return match.iloc[0]


# ----------------------------------------------------------------------------- shape and types


def test_every_concept_present_with_schema_columns(tables):
    assert set(tables.tables) == set(CONCEPTS)
    for concept, frame in tables.tables.items():
        assert list(frame.columns) == KEYS + CONCEPT_COLUMNS[concept], concept
        assert frame["seqn"].dtype == "int64", concept
        assert frame["cycle"].dtype == object, concept


def test_demographics_values_and_dtypes(tables):
    demo_t = tables["demographics"]
    assert len(demo_t) == 12 and set(demo_t["cycle"]) == {"C", "E", "J"}
    first = row(demo_t, C0)
    assert first["age_years"] == 25.0 and first["sex"] == "male" and first["release"] == 3.0
    assert first["weight_mec"] == 1000.0 and first["weight_interview"] == 1001.0
    assert first["source_file"].endswith("DEMO_C.XPT") and first["source_row"] == 0
    assert row(demo_t, C0 + 1)["sex"] == "female"
    assert demo_t["age_years"].dtype == "float64" and demo_t["sex"].dtype == object
    assert demo_t["source_row"].dtype == "int64"
    assert tables.provenance["demographics"]["weight_mec"] == "DEMO.WTMEC2YR"


def test_provenance_names_table_and_variable(tables):
    assert tables.provenance["body"] == {"bmi": "BMX.BMXBMI", "waist_cm": "BMX.BMXWAIST"}
    assert tables.available("labs", "hba1c_pct")
    assert not tables.available("diet_behaviour", "DBQ197")
    assert "multum_4c" not in tables.provenance["prescriptions"]


def test_lower_case_file_names_are_read(tables):
    # the fixture writes BMX for C as bmx_c.xpt
    assert row(tables["body"], C0)["bmi"] == 22.5


@pytest.mark.parametrize("layout", ["flat", "nested"])
def test_both_layouts_give_the_same_tables(tmp_path, layout, tables):
    write_tree(tmp_path, cycles=("C", "E", "J"), layout=layout)
    again = read_nhanes_dir(tmp_path)
    for concept in CONCEPTS:
        left = tables[concept].drop(columns="source_file", errors="ignore")
        right = again[concept].drop(columns="source_file", errors="ignore")
        pd.testing.assert_frame_equal(left, right, check_like=False)


# ----------------------------------------------------------------------------- value rules


def test_tiny_values_round_to_exact_zero(tables):
    bp = row(tables["blood_pressure"], C0)
    assert bp["dbp_4"] == 0.0 and bp["dbp_3"] == 73.0
    food = tables["food_records"]
    assert (food.loc[food["seqn"] == J0 + 1, "grams"] == 0.0).all()


def test_c_lab_file_names_map_to_lab_tables(tables):
    labs = tables["labs"]
    c = row(labs, C0)
    assert c["glucose_mg_dl"] == 99.0 and c["glucose_mmol_l"] == pytest.approx(5.495)
    assert c["hba1c_pct"] == pytest.approx(5.1) and c["bun_mg_dl"] == 14.0
    assert c["rbc_million_ul"] == 4.5 and c["hemoglobin_g_dl"] == 13.5
    assert np.isnan(c["ldl_mg_dl"])  # outer join: not in the LDL subsample
    assert row(labs, C0 + 1)["ldl_mmol_l"] == pytest.approx(2.586)
    assert np.isnan(row(labs, C0 + 2)["glucose_mg_dl"])
    assert tables.provenance["labs"]["glucose_mg_dl"] == "GLU.LBXGLU"


def test_ldl_mmol_computed_when_si_column_absent(tables):
    j = row(tables["labs"], J0)
    assert j["ldl_mmol_l"] == pytest.approx(116.0 / 38.67)
    assert "TRIGLY.LBDLDL/38.67" in tables.provenance["labs"]["ldl_mmol_l"]


def test_cbq_old_names_renamed(tables):
    diet = tables["diet_behaviour"]
    e, j = row(diet, E0), row(diet, J0)
    assert (e["CBD071"], e["CBD091"], e["CBD131"]) == (100.0, 200.0, 500.0)
    assert (j["CBD071"], j["CBD131"]) == (10.0, 50.0)
    assert e["DBQ700"] == 3.0 and j["DR1TKCAL"] == 2000.0 and j["DBD100"] == 1.0
    assert np.isnan(row(diet, C0)["CBD071"])


def test_special_diet_true_false_na(tables):
    diets = tables["special_diets"]
    assert diets["diet_1"].dtype == "boolean"
    yes = row(diets, J0)
    assert yes["on_special_diet"] == 1.0
    assert yes["diet_1"] is True or yes["diet_1"] == True  # noqa: E712
    assert yes["diet_91"] == True and yes["diet_2"] == False  # noqa: E712
    no = row(diets, J0 + 1)
    assert all(no[f"diet_{k}"] == False for k in [*range(1, 13), 91])  # noqa: E712
    for unanswered in (J0 + 2, J0 + 3):  # DRQSDIET 9 (don't know) and missing
        assert row(diets, unanswered)[["diet_1", "diet_12"]].isna().all()


def test_special_diet_na_where_cycle_lacks_the_variable(tables):
    diets = tables["special_diets"]
    c_no, e_no = row(diets, C0 + 1), row(diets, E0 + 1)
    assert c_no["diet_8"] == False and pd.isna(c_no["diet_9"]) and pd.isna(c_no["diet_12"])  # noqa: E712
    assert e_no["diet_10"] == False and pd.isna(e_no["diet_11"])  # noqa: E712
    assert c_no["diet_91"] == False  # noqa: E712


def test_prescriptions_multum_join_and_refused_days(tables):
    rx = tables["prescriptions"]
    assert len(rx) == 4 and (rx["cycle"] == "J").all()  # the participant without drugs has none
    first = rx.loc[rx["seqn"] == J0].set_index("drug_id")
    assert first.loc["d00001", "days_taken"] == 365.0
    assert np.isnan(first.loc["d04379", "days_taken"])  # 77777
    assert list(first.loc["d04379", ["multum_1a", "multum_1b", "multum_1c"]]) == [57, 58, 60]
    assert first.loc["d00001", "drug_name"] == "METFORMIN"
    assert np.isnan(row(rx, J0 + 2)["days_taken"])  # 99999
    assert row(rx, J0 + 3)[["multum_1a", "multum_1b"]].isna().all()  # id not in RXQ_DRUG
    assert tables.provenance["prescriptions"]["multum_1a"] == "RXQ_DRUG.RXDDCI1A"
    use = tables["prescription_use"]
    assert len(use) == 4 and row(use, J0 + 1)["rxduse"] == 2.0


def test_prescriptions_without_drug_file(tmp_path):
    write_tree(tmp_path, cycles=("J",), drug_file=False)
    result = read_nhanes_dir(tmp_path)
    rx = result["prescriptions"]
    assert len(rx) == 4 and rx["multum_1a"].isna().all()
    assert not any(k.startswith("multum") for k in result.provenance["prescriptions"])


def test_food_records(tables):
    food = tables["food_records"]
    assert len(food) == 3
    assert food["food_code"].dtype == "int64" and food["reliable"].dtype == "boolean"
    assert list(food["food_code"]) == [11111000, 92410310, 58106230]
    assert list(food["reliable"]) == [True, True, False]
    assert food["grams"].iloc[0] == 244.0


def test_food_rows_without_code_are_dropped_with_warning(tmp_path):
    write_xpt(tmp_path / "DEMO_J.XPT", demo("J"))
    write_xpt(tmp_path / "DR1IFF_J.XPT", pd.DataFrame({
        "SEQN": [float(J0)] * 2, "DR1IFDCD": [11111000.0, np.nan], "DR1IGRMS": [1.0, 2.0]}))
    with pytest.warns(UserWarning, match="DR1IFF_J.XPT: dropped 1 rows without a food code"):
        food = read_nhanes_dir(tmp_path)["food_records"]
    assert list(food["grams"]) == [1.0] and food["reliable"].isna().all()


def test_blood_pressure_prefers_bpx_in_j(tables):
    j = row(tables["blood_pressure"], J0)
    assert j["device"] == "BPX" and j["sbp_4"] == 124.0


def test_missing_concept_files_give_empty_typed_tables(tmp_path):
    write_tree(tmp_path, cycles=("C",), drug_file=False)
    result = read_nhanes_dir(tmp_path)
    heroin = result["heroin"]
    assert heroin.empty and heroin["seqn"].dtype == "int64"
    assert list(heroin.columns) == KEYS + CONCEPT_COLUMNS["heroin"]
    assert result.provenance["heroin"] == {}


def test_optional_column_missing_is_na(tmp_path):
    write_xpt(tmp_path / "DEMO_D.XPT", demo("C"))
    write_xpt(tmp_path / "BMX_D.XPT", pd.DataFrame({"SEQN": seqns("C"), "BMXWAIST": [90.0] * 4}))
    result = read_nhanes_dir(tmp_path)
    assert result["body"]["bmi"].isna().all() and (result["body"]["waist_cm"] == 90.0).all()
    assert "bmi" not in result.provenance["body"]


def test_concepts_filter(tree):
    result = read_nhanes_dir(tree, concepts=["body"])
    assert len(result["body"]) == 4 and len(result["demographics"]) == 12
    assert result["labs"].empty and "labs" not in result.provenance
    with pytest.raises(DataError, match="unknown concept"):
        read_nhanes_dir(tree, concepts=["bodies"])


def test_cycles_filter(tree):
    result = read_nhanes_dir(tree, cycles=["c", "E"])
    assert set(result["demographics"]["cycle"]) == {"C", "E"}
    assert result["prescriptions"].empty


def test_progress_bar_runs(tree):
    assert len(read_nhanes_dir(tree, concepts=["body"], progress=True)["body"]) == 4


# ----------------------------------------------------------------------------- J and P


@pytest.fixture(scope="module")
def jp_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("jp")
    write_tree(root, cycles=("J", "P"), layout="nested")
    return root


def test_j_and_p_together_refused(jp_tree):
    with pytest.raises(DataError, match="both cycle J") as info:
        read_nhanes_dir(jp_tree)
    assert "P_" in str(info.value) and "prefer" in str(info.value)
    with pytest.raises(DataError, match="both cycle J"):
        read_nhanes_dir(jp_tree, cycles=["J", "P"])


@pytest.mark.parametrize("how", [{"prefer": "J"}, {"cycles": ["J"]}])
def test_choosing_j(jp_tree, how):
    result = read_nhanes_dir(jp_tree, **how)
    assert set(result["demographics"]["cycle"]) == {"J"} and len(result["demographics"]) == 4


@pytest.mark.parametrize("how", [{"prefer": "p"}, {"cycles": ["P"]}])
def test_choosing_p(jp_tree, how):
    result = read_nhanes_dir(jp_tree, **how)
    demo_t = result["demographics"]
    assert set(demo_t["cycle"]) == {"P"} and len(demo_t) == 8
    assert row(demo_t, P0)["weight_mec"] == pytest.approx(demo("P")["WTMECPRP"].iloc[4])
    assert result.provenance["demographics"]["weight_interview"] == "DEMO.WTINTPRP"
    bp = row(result["blood_pressure"], J0)
    assert bp["device"] == "BPXO" and bp["sbp_1"] == 131.0 and np.isnan(bp["sbp_4"])


def test_bad_prefer(jp_tree):
    with pytest.raises(DataError, match="prefer"):
        read_nhanes_dir(jp_tree, prefer="K")


def test_participant_in_two_cycles_refused(tmp_path):
    write_xpt(tmp_path / "DEMO_D.XPT", demo("C"))
    write_xpt(tmp_path / "DEMO_C.XPT", demo("C"))
    with pytest.raises(DataError, match="across cycles") as info:
        read_nhanes_dir(tmp_path)
    assert "DEMO_C.XPT" in str(info.value) and "DEMO_D.XPT" in str(info.value)


# ----------------------------------------------------------------------------- errors


def test_corrupt_file_named(tmp_path):
    write_xpt(tmp_path / "DEMO_J.XPT", demo("J"))
    bad = tmp_path / "BMX_J.XPT"
    bad.write_bytes(np.random.default_rng(1).bytes(5000))
    with pytest.raises(DataError, match="BMX_J.XPT") as info:
        read_nhanes_dir(tmp_path)
    assert "XPT" in str(info.value)


def test_text_file_renamed_xpt(tmp_path):
    write_xpt(tmp_path / "DEMO_J.XPT", demo("J"))
    (tmp_path / "DIQ_J.xpt").write_text("SEQN,DIQ010\n1,2\n")
    with pytest.raises(DataError, match="DIQ_J.xpt"):
        read_nhanes_dir(tmp_path)


def test_truncated_file(tmp_path):
    path = write_xpt(tmp_path / "DEMO_J.XPT", demo("J"))
    path.write_bytes(path.read_bytes()[:-50])
    with pytest.raises(DataError, match="truncated"):
        read_nhanes_dir(tmp_path)


def test_missing_seqn(tmp_path):
    write_xpt(tmp_path / "DEMO_J.XPT", demo("J"))
    write_xpt(tmp_path / "BMX_J.XPT", pd.DataFrame({"BMXBMI": [20.0]}))
    with pytest.raises(DataError, match="BMX_J.XPT") as info:
        read_nhanes_dir(tmp_path)
    assert info.value.field == "SEQN"


def test_demo_without_age(tmp_path):
    write_xpt(tmp_path / "DEMO_J.XPT", demo("J").drop(columns="RIDAGEYR"))
    with pytest.raises(DataError, match="DEMO_J.XPT") as info:
        read_nhanes_dir(tmp_path)
    assert info.value.field == "RIDAGEYR"


def test_duplicate_participant_in_one_file(tmp_path):
    frame = demo("J")
    frame.loc[1, "SEQN"] = frame.loc[0, "SEQN"]
    write_xpt(tmp_path / "DEMO_J.XPT", frame)
    with pytest.raises(DataError, match="twice"):
        read_nhanes_dir(tmp_path)


def test_unknown_cycle_requested(tree):
    with pytest.raises(DataError, match="unknown NHANES cycle") as info:
        read_nhanes_dir(tree, cycles=["J", "K"])
    assert info.value.value == "K"


def test_requested_cycle_without_files(tree):
    with pytest.raises(DataError, match="cycle D"):
        read_nhanes_dir(tree, cycles=["D"])


def test_unknown_cycle_file_skipped_with_warning(tmp_path):
    write_xpt(tmp_path / "DEMO_J.XPT", demo("J"))
    write_xpt(tmp_path / "DEMO_K.XPT", demo("C"))
    write_xpt(tmp_path / "ALQ_J.XPT", pd.DataFrame({"SEQN": [1.0]}))  # not a table we read
    with pytest.warns(UserWarning, match="DEMO_K.XPT"):
        result = read_nhanes_dir(tmp_path)
    assert set(result["demographics"]["cycle"]) == {"J"}


def test_missing_directory(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        read_nhanes_dir(tmp_path / "nope")
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    with pytest.raises(DataError, match="not a directory"):
        read_nhanes_dir(afile)


def test_no_demo_file(tmp_path):
    write_xpt(tmp_path / "BMX_J.XPT", pd.DataFrame({"SEQN": [1.0], "BMXBMI": [20.0]}))
    with pytest.raises(DataError, match="no DEMO file"):
        read_nhanes_dir(tmp_path)


def test_cycle_without_demo(tmp_path):
    write_xpt(tmp_path / "DEMO_J.XPT", demo("J"))
    write_xpt(tmp_path / "BMX_H.XPT", pd.DataFrame({"SEQN": [1.0], "BMXBMI": [20.0]}))
    with pytest.raises(DataError, match="cycle H"):
        read_nhanes_dir(tmp_path)


def test_two_files_for_one_table(tmp_path):
    write_xpt(tmp_path / "DEMO_J.XPT", demo("J"))
    write_xpt(tmp_path / "copy" / "demo_j.xpt", demo("J"))
    with pytest.raises(DataError, match="second file"):
        read_nhanes_dir(tmp_path)


# ----------------------------------------------------------------------------- low level


@pytest.mark.parametrize(("name", "expected"), [
    ("DEMO_J.XPT", ("J", "DEMO")), ("p_demo.xpt", ("P", "DEMO")),
    ("L10AM_C.XPT", ("C", "GLU")), ("L13AM_C.xpt", ("C", "TRIGLY")), ("L25_C.XPT", ("C", "CBC")),
    ("RXQ_RX_J.XPT", ("J", "RXQ_RX")), ("RXQ_DRUG.xpt", ("*", "RXQ_DRUG")),
    ("DEMO.XPT", (None, "DEMO")), ("BPXO_J.XPT", ("J", "BPXO")), ("DEMO_K.XPT", ("K", "DEMO")),
])
def test_classify(name, expected):
    assert classify(name) == expected


def test_reader_matches_pandas_and_handles_text(tmp_path):
    frame = pd.DataFrame({
        "SEQN": [1.0, 2.0, 3.0, 4.0],
        "x": [-1.5, 123456789.125, np.nan, 3.14159],
        "TXT": ["abc", "", "d00001", "x y"],
    })
    path = write_xpt(tmp_path / "T.XPT", frame)
    ours = read_xpt(path, "T", ["X", "TXT"])
    theirs = pd.read_sas(path, format="xport", encoding="latin-1")
    assert list(ours.columns) == ["SEQN", "X", "TXT"] and ours["SEQN"].dtype == "int64"
    np.testing.assert_allclose(ours["X"], theirs["x"], rtol=1e-15)
    np.testing.assert_array_equal(ours["X"], frame["x"])  # exact round trip
    assert [ours["TXT"][i] for i in (0, 2, 3)] == ["abc", "d00001", "x y"]
    assert pd.isna(ours["TXT"][1])


def test_transport_v8_falls_back_to_pyreadstat(tmp_path):
    path = tmp_path / "DEMO_J.XPT"
    pyreadstat.write_xport(demo("J"), str(path), file_format_version=8, table_name="DEMO_J")
    result = read_nhanes_dir(tmp_path)
    assert list(result["demographics"]["age_years"]) == [25.0, 40.0, 80.0, 12.0]


def test_single_strings_accepted_for_cycles_and_concepts(tree):
    result = read_nhanes_dir(tree, cycles="C", concepts="labs")
    assert set(result["labs"]["cycle"]) == {"C"} and result["body"].empty
