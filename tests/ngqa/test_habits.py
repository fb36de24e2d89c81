"""Habit tags of every kind (extremes, code, diet) on small hand-made tidy tables, and the
habits standards file: its tag count and its list of families the offline bundle lacks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from nutrireason.errors import DataError
from nutrireason.ngqa.users import annotate_users
from nutrireason.sources.nhanes_bundle import META_FILE
from nutrireason.sources.nhanes_schema import CONCEPTS, NhanesTables, conform, empty_table
from nutrireason.standards import load_standards, standards_dir

N = 20  # adults seqn 1..20; with 20 distinct values the top and bottom 10 % are two users each
SEQNS = list(range(1, N + 1))


def make_tables(behaviour: dict[str, list] | None = None,
                diets: dict[str, list] | None = None) -> NhanesTables:
    """Tidy tables for N adults. ``behaviour`` columns go into diet_behaviour even when the
    schema does not list them yet (as a reader that passes SMD650 / SMDANY on would)."""
    base = {"seqn": SEQNS, "cycle": ["J"] * N}
    tables = {c: empty_table(c) for c in CONCEPTS}
    provenance: dict[str, dict[str, str]] = {c: {} for c in CONCEPTS}
    demo = {**base, "age_years": [40] * N, "sex": ["male", "female"] * (N // 2),
            "source_file": "DEMO_J.XPT", "source_row": range(N)}
    tables["demographics"] = conform("demographics", pd.DataFrame(demo))
    if behaviour:
        frame = conform("diet_behaviour", pd.DataFrame(base))
        for column, values in behaviour.items():
            frame[column] = pd.Series(values, dtype="float64")
        tables["diet_behaviour"] = frame
        provenance["diet_behaviour"] = {c: f"test.{c}" for c in behaviour}
    if diets:
        tables["special_diets"] = conform("special_diets", pd.DataFrame({**base, **diets}))
        provenance["special_diets"] = {c: f"test.{c}" for c in diets}
    return NhanesTables(tables, provenance, source="test")


def habits_of(tables: NhanesTables, standards=None) -> dict[int, list[str]]:
    users = annotate_users(tables, standards).users
    return dict(zip(users["seqn"], users["habits"], strict=True))


def with_tag(habits: dict[int, list[str]], tag: str) -> set[int]:
    return {seqn for seqn, tags in habits.items() if tag in tags}


def report(tables: NhanesTables, variable: str) -> pd.DataFrame:
    cutoffs = annotate_users(tables).habit_cutoffs
    return cutoffs[cutoffs["variable"] == variable].reset_index(drop=True)


# ------------------------------------------------------------------------- kind: extremes


def test_cigarettes_per_day_top_and_bottom_tenth():
    # seqn k smokes k cigarettes a day, except seqn 19 (not asked: missing) and seqn 20
    # (refused, 777): 18 valid answers 1..18. At or above 18 is 1/18 = 5.6 % (<= 10 %), at or
    # above 17 is 2/18 = 11.1 % (> 10 %): only seqn 18 is heavy. Mirrored: only seqn 1 is light.
    values = [float(k) for k in range(1, 19)] + [None, 777.0]
    tables = make_tables(behaviour={"SMD650": values})
    habits = habits_of(tables)
    assert with_tag(habits, "Heavy cigarette smoker") == {18}
    assert with_tag(habits, "Light cigarette smoker") == {1}
    row = report(tables, "SMD650").iloc[0]
    assert row["kind"] == "extremes" and row["n_valid"] == 18  # 777 is refused, not 777 a day
    assert (row["high_from"], row["low_to"]) == (18.0, 1.0)


def test_heavy_smokers_with_a_tied_top_answer():
    # 20 valid answers: 18 smoke 10 a day, two smoke 40 (10 % exactly: at or above 40 is 2/20)
    values = [10.0] * 18 + [40.0, 40.0]
    habits = habits_of(make_tables(behaviour={"SMD650": values}))
    assert with_tag(habits, "Heavy cigarette smoker") == {19, 20}
    assert with_tag(habits, "Light cigarette smoker") == set()  # 10 a day is 90 % of answers


# ----------------------------------------------------------------------------- kind: code


def test_any_tobacco_code_tags_yes_answers_only():
    # SMDANY: 1 yes, 2 no, 7 refused, 9 don't know. Yes: seqn 1, 2, 3 (15 % of 20: a code item
    # tags every yes, there is no 10 % rule). 7 and 9 (seqn 4, 5) are not answers; seqn 6 missing.
    values = [1, 1, 1, 7, 9, None] + [2] * 14
    tables = make_tables(behaviour={"SMDANY": values})
    assert with_tag(habits_of(tables), "Used tobacco in the last 5 days") == {1, 2, 3}
    row = report(tables, "SMDANY").iloc[0]
    assert row["kind"] == "code" and row["code"] == 1.0
    assert (row["n_valid"], row["n_high"], row["n_low"]) == (17, 3, 0)


def custom_standards(tmp_path: Path, extra_items: str):
    """A copy of the packaged standards with ``extra_items`` appended to the habit items."""
    target = tmp_path / "standards"
    shutil.copytree(standards_dir(), target)
    habits = target / "habits.yaml"
    text = habits.read_text(encoding="utf-8")
    items_end = text.index("\nnot_available:") + 1
    habits.write_text(text[:items_end] + extra_items + text[items_end:], encoding="utf-8")
    return target


ATE_MORE_OR_LESS = '''  - {variable: DR1_300, table: DR1TOT, kind: code, meaning: "DR1TOT DR1_300",
     codes: {1: "Ate more food than usual", 3: "Ate less food than usual"}, missing: [7, 9]}
'''


def test_code_item_with_two_codes(tmp_path):
    # DR1_300: 1 much more than usual (seqn 1, 2), 2 usual (not a habit), 3 much less (seqn 3),
    # 9 don't know (seqn 4: no tag)
    standards = load_standards(custom_standards(tmp_path, ATE_MORE_OR_LESS))
    values = [1, 1, 3, 9] + [2] * 16
    habits = habits_of(make_tables(behaviour={"DR1_300": values}), standards)
    assert with_tag(habits, "Ate more food than usual") == {1, 2}
    assert with_tag(habits, "Ate less food than usual") == {3}
    assert habits[4] == [] and habits[5] == []


# ----------------------------------------------------------------------------- kind: diet


def test_diet_habits_from_special_diet_flags():
    # seqn 1 gluten-free; seqn 2 gluten-free and high fiber; seqn 3 on a weight loss diet only
    # (diet_1 is a diet node, not a habit); seqn 4 did not answer DRQSDIET (flags NA).
    gluten = [True, True, False, None] + [False] * (N - 4)
    fiber = [False, True, False, None] + [False] * (N - 4)
    weight_loss = [False, False, True, None] + [False] * (N - 4)
    tables = make_tables(diets={"on_special_diet": [1, 1, 1, None] + [2] * (N - 4),
                                "diet_11": gluten, "diet_6": fiber, "diet_1": weight_loss})
    habits = habits_of(tables)
    assert with_tag(habits, "Eats gluten free diet") == {1, 2}
    assert with_tag(habits, "Eats high fiber diet") == {2}
    assert habits[2] == ["Eats high fiber diet", "Eats gluten free diet"]  # item order: 6, 11
    assert habits[3] == [] and habits[4] == []
    row = report(tables, "DRQSDT11").iloc[0]
    assert (row["kind"], row["n_valid"], row["n_high"]) == ("diet", N - 1, 2)
    # DRQSDT91 is not in these tables: nobody tagged, nothing valid
    other = report(tables, "DRQSDT91").iloc[0]
    assert (other["n_valid"], other["n_high"]) == (0, 0)


# ------------------------------------------------------------------------ order and stability


def mixed_tables(order: list[int]) -> NhanesTables:
    """Heavy smoker + tobacco + gluten-free for seqn 20; rows given in ``order``."""
    tables = make_tables(behaviour={"SMD650": [float(k) for k in SEQNS],
                                    "SMDANY": [2] * (N - 1) + [1]},
                         diets={"on_special_diet": [2] * (N - 1) + [1],
                                "diet_11": [False] * (N - 1) + [True]})
    for concept in ("diet_behaviour", "special_diets"):
        tables.tables[concept] = tables[concept].iloc[order].reset_index(drop=True)
    return tables


def test_a_users_habits_keep_item_order_and_do_not_depend_on_row_order():
    forward = habits_of(mixed_tables(list(range(N))))
    backward = habits_of(mixed_tables(list(range(N))[::-1]))
    assert forward == backward
    assert forward[20] == ["Heavy cigarette smoker", "Used tobacco in the last 5 days",
                           "Eats gluten free diet"]
    assert habits_of(mixed_tables(list(range(N)))) == forward


# --------------------------------------------------------------------------- the standards


def test_habit_tag_count():
    habits = load_standards().habits
    kinds = [item.kind for item in habits.items]
    # the paper's 27 extremes items (54 tags) + SMD650 (2 tags) + SMDANY (1) + 4 diets (1 each)
    assert kinds.count("extremes") == 28 and kinds.count("code") == 1 and kinds.count("diet") == 4
    assert len(habits.items) == 33
    assert len(habits.tags) == len(set(habits.tags)) == 61


def test_diet_habits_are_not_diet_nodes():
    standards = load_standards()
    nodes = {c.diet_code for c in standards.conditions.conditions if c.diet_code is not None}
    diet_habits = {item.diet_code for item in standards.habits.items if item.kind == "diet"}
    assert diet_habits == {5, 6, 11, 91} and not diet_habits & nodes


def test_not_available_names_variables_tables_and_reasons():
    habits = load_standards().habits
    families = {f.family: f for f in habits.not_available}
    assert {"fish", "shellfish", "dietary supplements", "food eaten compared with usual",
            "nutrition labels", "organic food"} <= set(families)
    for family in habits.not_available:
        assert family.variables and family.tables and family.reason.strip(), family.family
        assert family.tags, family.family
    assert families["dietary supplements"].variables == ["DSDCOUNT", "DSD010"]
    assert families["food eaten compared with usual"].variables == ["DR1_300"]


def test_not_available_agrees_with_the_bundle(nhanes_bundle_dirs):
    # The list is a claim about the bundle: none of its variables is there, and every habit
    # item the bundle cannot evaluate belongs to one of its families.
    meta = pd.read_csv(nhanes_bundle_dirs[0] / META_FILE, sep="\t")
    in_bundle = set(meta["Variable"].str.upper())
    habits = load_standards().habits
    for family in habits.not_available:
        assert not set(family.variables) & in_bundle, family.family
    covered = {v for family in habits.not_available for v in family.items}
    lacking = {item.variable for item in habits.items} - in_bundle
    assert lacking == covered
    assert {"SMD650", "SMDANY"} <= in_bundle


# --------------------------------------------------------------------- malformed habit items


def load_error(tmp_path: Path, extra_items: str) -> str:
    with pytest.raises(DataError) as caught:
        load_standards(custom_standards(tmp_path, extra_items))
    return str(caught.value)


@pytest.mark.parametrize(("extra", "words"), [
    ('  - {variable: X1, table: T, meaning: m, high: "a"}\n', "needs both 'high' and 'low'"),
    ('  - {variable: X1, table: T, meaning: m, kind: code, high: "a", codes: {1: "b"}}\n',
     "no high/low/replace"),
    ('  - {variable: X1, table: T, meaning: m, kind: code}\n', "needs 'codes'"),
    ('  - {variable: X1, table: T, meaning: m, kind: code, codes: {7: "b"}, missing: [7]}\n',
     "also listed as missing"),
    ('  - {variable: DRQSDT6X, table: DR1TOT, meaning: m, kind: diet, codes: {6: "b"}}\n',
     "DRQSDT<k> with the single code k"),
])
def test_malformed_items_are_refused(tmp_path, extra, words):
    message = load_error(tmp_path, extra)
    assert "habits.yaml" in message and words in message


def test_a_diet_habit_that_is_a_diet_node_is_refused(tmp_path):
    extra = ('  - {variable: DRQSDT1, table: DR1TOT, meaning: m, kind: diet,\n'
             '     codes: {1: "Eats weight loss diet"}}\n')
    message = load_error(tmp_path, extra)
    assert "already a special-diet node" in message and "DRQSDT1" in message


def test_a_family_naming_an_unknown_item_is_refused(tmp_path):
    target = custom_standards(tmp_path, "")
    habits = target / "habits.yaml"
    text = habits.read_text(encoding="utf-8").replace("items: [DR1_320Z]", "items: [DR1_999]")
    habits.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_standards(target)
    assert "DR1_999" in str(caught.value) and "not_available" in str(caught.value)
