"""The NGQA paper's Tables 1, 2, 10 and 11 as transcribed, this build's tables beside them, and
the reasons they differ; what `ngqa users` and `ngqa stats` print of them."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from nutrireason.ngqa import paper
from nutrireason.ngqa.users import annotate_users, diet_by_condition_table, prevalence_table
from nutrireason.ngqa.users_build import UsersBuild
from nutrireason.pipeline import show
from nutrireason.sources.nhanes_schema import CONCEPTS, NhanesTables, conform, empty_table
from nutrireason.standards import load_standards
from tests.conftest import real_bundle

SEED = Path("/work/shared/seeds/000_11444e1f96bb76f5.txt")
needs_seed = pytest.mark.skipif(not SEED.exists(), reason="the NGQA seed text is not here")


def seed_block(header: str) -> list[list[str]]:
    """The tab-separated rows after the seed line starting with ``header``, up to a blank
    line, with thousands separators removed."""
    lines = SEED.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 1:]:
        if not line.strip():
            break
        rows.append([cell.replace(",", "") for cell in line.split("\t")])
    return rows


# --- the transcription -------------------------------------------------------------------

def test_key_figures_without_the_seed():
    assert paper.PAPER_USERS == 95_872 and paper.PAPER_HABITS == 54
    assert paper.PAPER_TABLE11["Obesity"] == 18_271
    assert paper.PAPER_TABLE11["Hypertension"] == 10_257
    assert paper.PAPER_TABLE11["Weight Loss/Low Calorie Diet"] == 4_693
    assert paper.PAPER_TABLE11["Low Salt/Low Sodium Diet"] == 1_037
    assert paper.PAPER_TABLE11["Diabetes"] == 3_837
    assert paper.PAPER_TABLE10["Weight Loss/Low Calorie Diet"][:2] == (2_253, 647)
    assert paper.PAPER_TABLE10["Low Salt/Low Sodium Diet"][:2] == (442, 350)
    assert paper.PAPER_TABLE10["Diabetic Diet"][paper.TABLE10_CONDITIONS.index("Diabetes")] == 647
    assert paper.PAPER_TABLES["standard"][0] == 3_622
    assert paper.PAPER_TABLES["complex"][4] == 76.32


@needs_seed
def test_tables_10_and_11_match_the_seed():
    table10 = seed_block("Diet Type\tObesity")
    assert {row[0]: tuple(int(v) for v in row[1:]) for row in table10} == paper.PAPER_TABLE10
    header = SEED.read_text(encoding="utf-8").splitlines()
    assert tuple(next(line for line in header if line.startswith("Diet Type\t")).split(
        "\t")[1:]) == paper.TABLE10_CONDITIONS
    table11 = seed_block("Status\t# Users")
    assert {row[0]: int(row[1]) for row in table11} == paper.PAPER_TABLE11


@needs_seed
def test_tables_1_2_and_the_prose_figures_match_the_seed():
    table1 = {row[0].lower(): row[1:] for row in seed_block("Question Level\t# Records")}
    table2 = {row[0].lower(): row[1:] for row in seed_block("Question Level\tAvg. Node SNR")}
    for level, (records, nodes, edges, node_snr, tag_snr) in paper.PAPER_TABLES.items():
        assert [int(table1[level][0]), *map(float, table1[level][1:])] == [records, nodes, edges]
        assert [float(v) for v in table2[level]] == [node_snr, tag_snr]
    text = SEED.read_text(encoding="utf-8")
    assert f"a total of {paper.PAPER_USERS:,} unique users" in text
    assert f"{paper.PAPER_HABITS} distinct dietary habits" in text
    assert re.search(r"obesity \(18,271 users\) and hypertension \(10,257 users\)", text)


def test_table10_cells_fit_inside_table11_totals():
    for diet, row in paper.PAPER_TABLE10.items():
        for condition, count in zip(paper.TABLE10_CONDITIONS, row, strict=True):
            assert count <= paper.PAPER_TABLE11[diet] and count <= paper.PAPER_TABLE11[condition]


def test_paper_labels_are_the_standards_labels():
    conditions = load_standards().conditions.conditions
    diets = [c.label for c in conditions if c.kind == "special_diet"]
    health = {c.label for c in conditions if c.kind == "health_condition"}
    assert list(paper.PAPER_TABLE10) == diets
    assert set(paper.TABLE10_CONDITIONS) == health
    assert set(paper.PAPER_TABLE11) == set(diets) | health


# --- beside the paper ----------------------------------------------------------------------

def small_prevalence() -> pd.DataFrame:
    return pd.DataFrame([
        {"status": "Weight Loss/Low Calorie Diet", "users": 12, "evaluable": 90},
        {"status": "Renal/Kidney Diet", "users": 0, "evaluable": 0},
        {"status": "Obesity", "users": 40, "evaluable": 95},
        {"status": "Hypertension", "users": 20, "evaluable": 80},
        {"status": "Opioid Misuse", "users": 1, "evaluable": 10},
        {"status": "Diabetes", "users": 10, "evaluable": 99},
    ])


def small_diet_by_condition() -> pd.DataFrame:
    return pd.DataFrame([
        {"diet": "Weight Loss/Low Calorie Diet", "Obesity": 8, "Opioid Misuse": 0,
         "Hypertension": 5, "Diabetes": 2},
        {"diet": "Renal/Kidney Diet", "Obesity": 0, "Opioid Misuse": 0, "Hypertension": 0,
         "Diabetes": 0},
    ])


def test_beside_table11_gives_counts_and_shares_of_all_users():
    beside = paper.beside_table11(small_prevalence(), adults=100).set_index("status")
    obesity = beside.loc["Obesity"]
    assert obesity["this build"] == 40 and obesity["paper"] == 18_271
    assert obesity["evaluable"] == 95
    assert obesity["this build share"] == pytest.approx(0.40)
    assert obesity["paper share"] == pytest.approx(18_271 / 95_872)
    assert obesity["share ratio"] == pytest.approx(0.40 / (18_271 / 95_872))
    renal = beside.loc["Renal/Kidney Diet"]  # no user could be evaluated: no count, not zero
    assert pd.isna(renal["this build"]) and pd.isna(renal["this build share"])
    assert renal["paper"] == 59 and pd.isna(renal["share ratio"])


def test_beside_table10_shares_are_of_the_users_with_the_condition():
    beside = paper.beside_table10(small_diet_by_condition(), small_prevalence())
    assert len(beside) == 2 * 4
    cell = beside.set_index(["diet", "condition"]).loc[("Weight Loss/Low Calorie Diet",
                                                        "Obesity")]
    assert cell["this build"] == 8 and cell["paper"] == 2_253
    assert cell["this build share"] == pytest.approx(8 / 40)
    assert cell["paper share"] == pytest.approx(2_253 / 18_271)
    renal = beside[beside["diet"] == "Renal/Kidney Diet"]
    assert renal["this build"].isna().all() and list(renal["paper"]) == [25, 24, 13, 7]


def test_views_format_counts_and_shares():
    view11 = paper.table11_view(paper.beside_table11(small_prevalence(), 100))
    obesity = view11[view11["status"] == "Obesity"].iloc[0]
    assert (obesity["this build"], obesity["paper"]) == ("40", "18,271")
    assert (obesity["share: this build"], obesity["share: paper"]) == ("40.00%", "19.06%")
    view10 = paper.table10_view(paper.beside_table10(small_diet_by_condition(),
                                                     small_prevalence()))
    assert list(view10.columns) == ["diet", *paper.TABLE10_CONDITIONS]
    assert view10.iloc[0]["Obesity"] == "8 / 2,253\n20.0% / 12.3%"
    assert view10.iloc[1]["Diabetes"].startswith("- / 7\n- / ")


# --- the reasons -------------------------------------------------------------------------

CONCRETE = re.compile(r"\b[A-Z][A-Z0-9_]{3,}\b|\w+\.(yaml|md|json)\b|section \d|Appendix|B\.\d")


def test_every_reason_names_something_concrete():
    entries = paper.differences(adults=5_533, habit_tags_in_use=31)
    assert len(entries) >= 8
    for entry in entries:
        assert entry.what and entry.why and entry.tables, entry
        assert set(entry.tables) <= {1, 2, 10, 11}, entry
        assert CONCRETE.search(entry.why), entry.why
    shown = {t for e in entries for t in e.tables}
    assert shown == {1, 2, 10, 11}


def test_reasons_read_the_standards_files():
    standards = load_standards()
    habits = standards.habits
    absent = {f for family in habits.not_available for f in family.items}
    possible = sum(len(i.tags) for i in habits.items if i.variable not in absent)
    entry = next(e for e in paper.differences(habit_tags_in_use=31) if "Habit" in e.what)
    assert f"at most {possible} of {len(habits.tags)}" in entry.what
    assert "31 in use" in entry.what and all(v in entry.why for v in absent)
    assert all(f.family in entry.why for f in habits.not_available if not f.items)
    diets = next(e for e in paper.differences() if "special diets" in e.what)
    assert all(label in diets.what for label in paper.missing_diets(standards))
    records = next(e for e in paper.differences() if e.what.startswith("Records"))
    assert "8,490" in records.why and "3,622" in records.why and "1,690" in records.why
    population = paper.differences(adults=5_533)[0]
    assert "95,872" in population.why and "5,533" in population.why


def test_differences_frame_filters_by_table_and_source():
    entries = paper.differences()
    users = paper.differences_frame(entries, (10, 11))
    assert list(users.columns) == ["what differs", "why", "tables"]
    assert any("Opioid" in w for w in users["what differs"])
    assert not any(w.startswith("Foods") for w in users["what differs"])
    raw = paper.differences_frame(entries, (10, 11), offline=False)
    assert len(raw) < len(users) and not raw["why"].str.contains("DUQ310Q").any()


def test_the_bundle_lacks_exactly_what_the_reasons_say():
    """Against the offline bundle's metadata: every listed variable is absent, every other
    variable a tagged diet or a habit item asks for is present."""
    meta = real_bundle("nhanes") / "2017-2018" / "NHANES_metadata_2017-2018.tsv"
    present = set(pd.read_csv(meta, sep="\t")["Variable"].str.upper())
    assert not set(paper.BUNDLE_LACKS) & present
    standards = load_standards()
    asked = [f"DRQSDT{c.diet_code}" for c in standards.conditions.conditions
             if c.kind == "special_diet"]
    asked += ["BPXSY1", "BPXSY3", "BPXDI1", "BPXDI3", "LBXGH", "DIQ010", "DUQ290", "DUQ320"]
    assert {v for v in asked if v not in paper.BUNDLE_LACKS} <= present
    # the habit reason's "at most" count: items not listed as unavailable are in the bundle
    unavailable = set(paper.offline_habit_items(standards))
    assert {i.variable for i in standards.habits.items} - unavailable <= present
    assert not unavailable & present


# --- what the commands print ---------------------------------------------------------------

@pytest.fixture
def printed(monkeypatch):
    """Point show.py's console at a fixed-width buffer; return a function giving the text."""
    buffer = io.StringIO()
    monkeypatch.setattr(show, "console", Console(file=buffer, width=250, color_system=None))
    return buffer.getvalue


def stats_dict(level_rule: bool) -> dict:
    """Shaped like build.statistics() plus the build's level_rule record."""
    levels = {level: {"records": records, "avg_nodes": 20.0, "avg_edges": 19.5,
                      "avg_node_snr": 21.0, "avg_tag_snr": 30.0, "yes_share": 0.5,
                      "tag_frequencies": {"low_sodium": 3}}
              for level, (records, *_) in paper.PAPER_TABLES.items()}
    stats = {"users_with_conditions": 3_210, "foods": 456, "levels": levels}
    if level_rule:
        strict = {"questions": 3_622, "two_tags": 1.0, "two_conditions": 1.0, "strict": 1.0}
        stats["level_rule"] = {"rule": "strict", "standard": strict,
                               "by_rule": {"strict": strict, "loose": {
                                   "questions": 3_622, "two_tags": 0.8123,
                                   "two_conditions": 0.5, "strict": 0.75}},
                               "candidates": {"loose": 120_000, "strict": 45_678}}
    return stats


def test_ngqa_stats_prints_the_reasons_and_the_level_rule(printed):
    show.print_ngqa_stats(stats_dict(level_rule=True))
    text = printed()
    assert "8,490 / 8,490" in text and "25.84" in text
    assert "Standard level: strict vs loose rule" in text
    assert "strict rule (used)" in text and "loose rule" in text
    assert "81.2%" in text and "100.0%" in text and "45,678" in text and "120,000" in text
    assert "Why Tables 1 and 2 differ" in text
    assert "Habit tags" in text and "FNDDS" in text and "DRQSDT4" in text


def test_ngqa_stats_without_level_rule_prints_no_rule_table(printed):
    show.print_ngqa_stats(stats_dict(level_rule=False))
    text = printed()
    assert "strict vs loose" not in text and "Why Tables 1 and 2 differ" in text


def test_ngqa_stats_reasons_survive_a_narrow_terminal(capsys, monkeypatch):
    monkeypatch.setattr(show, "console", Console(width=60, color_system=None))
    show.print_ngqa_stats(stats_dict(level_rule=True))
    out = capsys.readouterr().out
    assert "Standard level" in out and "Why Tables 1 and 2" in out and "FNDDS" in out


def users_build(tmp_path: Path, source: str) -> UsersBuild:
    """A real annotation of five adults with no health data, as if read from ``source``."""
    tables = {c: empty_table(c) for c in CONCEPTS}
    tables["demographics"] = conform("demographics", pd.DataFrame({
        "seqn": [1, 2, 3, 4, 5], "cycle": ["J"] * 5, "age_years": [30, 40, 50, 60, 70],
        "sex": ["male", "female"] * 2 + ["male"], "source_file": "x", "source_row": range(5)}))
    annotation = annotate_users(NhanesTables(tables, {c: {} for c in CONCEPTS}, source=source))
    return UsersBuild(tmp_path / "users.parquet", tmp_path / "users.parquet.manifest.json",
                      annotation, prevalence_table(annotation.users),
                      diet_by_condition_table(annotation.users))


def test_ngqa_users_prints_tables_10_and_11_beside_the_paper(printed, tmp_path):
    show.print_users_summary(users_build(tmp_path, "offline bundle test.tsv"))
    text = printed()
    assert "Table 11" in text and "Table 10" in text and "95,872" in text
    assert "18,271" in text and "2,253" in text and "- / 2,253" in text
    assert "Why Tables 10 and 11 differ" in text and "DUQ310Q" in text
    assert "5 adults annotated" in text


def test_ngqa_users_from_raw_files_leaves_out_the_bundle_reasons(printed, tmp_path):
    show.print_users_summary(users_build(tmp_path, "/data/nhanes"))
    text = printed()
    assert "Shares: different denominators" in text
    assert "no prescription arm" not in text and "Habit" not in text.split("Why Tables")[1]
    assert "reasons the offline bundle causes are left out" in text
