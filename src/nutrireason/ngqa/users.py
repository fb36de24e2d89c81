"""User annotation (NGQA section 3, B.2, B.4): adults, four health conditions, special diets,
dietary-habit tags. Works on any :class:`NhanesTables`; a rule whose variables the source lacks
is evaluated with what exists, and :class:`RuleReport` says which variables it used.
"""

from __future__ import annotations

import operator
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from nutrireason.sources.nhanes_schema import KEYS, NhanesTables
from nutrireason.standards import HabitItem, Standards, load_standards

CONDITIONS = ["obesity", "hypertension", "diabetes", "opioid_misuse"]
COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


@dataclass(frozen=True)
class RuleReport:
    """How one rule was evaluated: variables used, users it could evaluate, users it flagged."""

    rule: str
    variables: list[str]
    evaluable: int
    positive: int
    note: str = ""


@dataclass
class UserAnnotation:
    """Annotated adults (one row each) plus per-rule and per-habit reports."""

    users: pd.DataFrame
    rules: list[RuleReport]
    habit_cutoffs: pd.DataFrame
    source: str

    def rule_table(self) -> pd.DataFrame:
        """The rule reports as a table."""
        return pd.DataFrame([asdict(r) for r in self.rules])


def annotate_users(tables: NhanesTables, standards: Standards | None = None) -> UserAnnotation:
    """Annotate every adult participant in ``tables`` with conditions, diets and habits."""
    standards = standards or load_standards()
    users = _adults(tables, standards)
    reports = []
    for rule in (_obesity, _hypertension, _diabetes, _opioid_misuse):
        flags, report = rule(users, tables, standards)
        users[report.rule] = flags
        reports.append(report)
    for condition in standards.conditions.conditions:
        if condition.kind == "special_diet":
            flags, report = _diet(users, tables, condition.id, condition.diet_code)
            users[condition.id] = flags
            reports.append(report)
    habits, cutoffs = _habits(users, tables, standards)
    users["habits"] = habits
    users["conditions"] = _labels(users, standards, "health_condition")
    users["diets"] = _labels(users, standards, "special_diet")
    return UserAnnotation(users.reset_index(drop=True), reports, cutoffs, tables.source)


def _adults(tables: NhanesTables, standards: Standards) -> pd.DataFrame:
    demo = tables["demographics"]
    minimum = standards.conditions.rules.adult_min_age.value
    adults = demo[demo["age_years"] >= minimum]
    columns = [*KEYS, "source_file", "source_row", "age_years", "sex"]
    return adults[columns].sort_values(KEYS).reset_index(drop=True)


def _attach(users: pd.DataFrame, frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The given columns of a per-participant table, aligned to ``users`` rows."""
    return users[KEYS].merge(frame[KEYS + columns], on=KEYS, how="left")


def _used(tables: NhanesTables, concept: str, columns: list[str]) -> list[str]:
    provenance = tables.provenance.get(concept, {})
    return [provenance[c] for c in columns if c in provenance]


def _boolean(flags: pd.Series | np.ndarray, evaluable: pd.Series | np.ndarray) -> pd.Series:
    """Boolean flags with NA where the rule could not be evaluated."""
    out = pd.Series(np.asarray(flags, dtype=bool), dtype="boolean")
    out[~np.asarray(evaluable, dtype=bool)] = pd.NA
    return out


def _report(rule: str, flags: pd.Series, variables: list[str], note: str = "") -> RuleReport:
    return RuleReport(rule, variables, int(flags.notna().sum()), int(flags.fillna(False).sum()),
                      note)


def _obesity(users, tables, standards):
    body = _attach(users, tables["body"], ["bmi"])
    cut = standards.indicator("bmi").high.value
    flags = _boolean(body["bmi"] >= cut, body["bmi"].notna())
    note = f"BMI >= {cut}"
    return flags, _report("obesity", flags, _used(tables, "body", ["bmi"]), note)


def _hypertension(users, tables, standards):
    n = int(standards.conditions.rules.bp_max_readings.value)
    sys_cols = [f"sbp_{i}" for i in range(1, n + 1)]
    dia_cols = [f"dbp_{i}" for i in range(1, n + 1)]
    bp = _attach(users, tables["blood_pressure"], sys_cols + dia_cols)
    systolic = bp[sys_cols].where(bp[sys_cols] > 0).mean(axis=1)
    diastolic = bp[dia_cols].where(bp[dia_cols] > 0).mean(axis=1)
    sys_cut = standards.indicator("systolic_bp").high.value
    dia_cut = standards.indicator("diastolic_bp").high.value
    users["mean_sbp"] = systolic.to_numpy()
    users["mean_dbp"] = diastolic.to_numpy()
    positive = (systolic >= sys_cut) | (diastolic >= dia_cut)
    flags = _boolean(positive, systolic.notna() | diastolic.notna())
    note = (f"mean systolic >= {sys_cut} or mean diastolic >= {dia_cut} over the available "
            "readings; 0 mmHg readings treated as missing")
    variables = _used(tables, "blood_pressure", sys_cols + dia_cols)
    return flags, _report("hypertension", flags, variables, note)


def _diabetes(users, tables, standards):
    rules = standards.conditions.rules
    told = _attach(users, tables["diabetes_questionnaire"], ["diq010"])["diq010"]
    labs = _attach(users, tables["labs"], ["glucose_mmol_l", "hba1c_pct"])
    compare = COMPARE[rules.diabetes_lab_comparator.comparator or ">="]
    glucose_cut = standards.indicator("glucose_mmol_l").high.value
    hba1c_cut = standards.indicator("hba1c_pct").high.value
    lab_positive = compare(labs["glucose_mmol_l"], glucose_cut) & compare(
        labs["hba1c_pct"], hba1c_cut)
    lab_evaluable = labs["glucose_mmol_l"].notna() & labs["hba1c_pct"].notna()
    told_evaluable = told.isin([1.0, 2.0, 3.0])
    positive = (told == rules.diq010_yes.value) | (lab_positive & lab_evaluable)
    flags = _boolean(positive, told_evaluable | lab_evaluable)
    variables = _used(tables, "diabetes_questionnaire", ["diq010"])
    lab_vars = _used(tables, "labs", ["glucose_mmol_l", "hba1c_pct"])
    if len(lab_vars) == 2:
        variables += lab_vars
        note = f"DIQ010 = 1, or glucose and HbA1c both {rules.diabetes_lab_comparator.comparator} "
        note += f"{glucose_cut} mmol/L and {hba1c_cut} %"
    else:
        note = "DIQ010 = 1 only: the source lacks fasting glucose, so the lab arm is not evaluated"
    return flags, _report("diabetes", flags, variables, note)


def _opioid_misuse(users, tables, standards):
    heroin, heroin_ok, heroin_note = _recent_heroin(users, tables, standards)
    rx, rx_ok, rx_note = _long_opioid_prescription(users, tables, standards)
    flags = _boolean((heroin & heroin_ok) | (rx & rx_ok), heroin_ok | rx_ok)
    variables = _used(tables, "heroin", ["duq290", "last_used_qty", "last_used_unit",
                                         "days_past_month"])
    variables += _used(tables, "prescription_use", ["rxduse"])
    variables += _used(tables, "prescriptions", ["days_taken", "multum_1a", "multum_1b",
                                                 "multum_1c"])
    return flags, _report("opioid_misuse", flags, variables, f"{heroin_note}; {rx_note}")


def _recent_heroin(users, tables, standards):
    rules = standards.conditions.rules
    columns = ["duq290", "last_used_qty", "last_used_unit", "days_past_month"]
    duq = _attach(users, tables["heroin"], columns)
    unit_days = {unit: v.value for unit, v in rules.heroin_unit_days.items()}
    days_since = duq["last_used_qty"] * duq["last_used_unit"].map(unit_days)
    recent = (days_since <= rules.heroin_recent_days.value) | (duq["days_past_month"] >= 1)
    positive = (duq["duq290"] == rules.heroin_yes.value) & recent
    evaluable = duq["duq290"].isin([1.0, 2.0])
    if tables.available("heroin", "last_used_qty"):
        note = f"heroin (DUQ290 = 1) last used within {rules.heroin_recent_days.value:g} days"
    else:
        note = ("heroin within a year approximated by use in the past 30 days (DUQ320 >= 1): "
                "the source lacks DUQ310Q/U, so earlier use within the year is missed")
    return positive.fillna(False).to_numpy(dtype=bool), evaluable.to_numpy(), note


def _long_opioid_prescription(users, tables, standards):
    rules = standards.conditions.rules
    if not tables.available("prescription_use", "rxduse"):
        nothing = np.zeros(len(users), dtype=bool)
        return nothing, nothing, "prescription arm not evaluated: the source has no RXQ_RX"
    multum = rules.multum_opioid
    rx = tables["prescriptions"]
    is_opioid = np.zeros(len(rx), dtype=bool)
    for k in range(1, 5):
        is_opioid |= (
            rx[f"multum_{k}a"].isin(multum.level1)
            & rx[f"multum_{k}b"].isin(multum.level2)
            & rx[f"multum_{k}c"].isin(multum.level3)
        ).to_numpy()
    compare = COMPARE[rules.opioid_prescription_min_days.comparator or ">"]
    long_use = is_opioid & compare(rx["days_taken"], rules.opioid_prescription_min_days.value)
    hits = rx.loc[long_use.to_numpy(dtype=bool), KEYS].drop_duplicates()
    hits = hits.assign(hit=True)
    positive = users[KEYS].merge(hits, on=KEYS, how="left")["hit"].fillna(False)
    use = _attach(users, tables["prescription_use"], ["rxduse"])["rxduse"]
    note = (f"opioid prescription (Multum {multum.level1}>{multum.level2}>{multum.level3}) "
            f"taken {rules.opioid_prescription_min_days.comparator} "
            f"{rules.opioid_prescription_min_days.value:g} days")
    return positive.to_numpy(dtype=bool), use.isin([1.0, 2.0]).to_numpy(), note


def _diet(users, tables, diet_id, code):
    column = f"diet_{code}"
    diets = _attach(users, tables["special_diets"], [column])[column]
    flags = diets.astype("boolean")
    variables = _used(tables, "special_diets", [column])
    note = "" if variables else f"the source lacks DRQSDT{code}"
    return flags, _report(diet_id, flags, variables, note)


def _habits(users, tables, standards):
    """Each user's habit tags (item order; an item's tags in its own order) and a report table.

    The report has one row per ``extremes`` item (its cutoffs) and one row per listed code of a
    ``code`` or ``diet`` item; a code row holds its tag in ``high_tag`` and its count in
    ``n_high``. An item whose variable the source lacks tags nobody and reports 0 valid answers.
    """
    share = standards.habits.share.value
    max_share = standards.habits.max_share.value
    tags = [[] for _ in range(len(users))]
    rows = []
    for item in standards.habits.items:
        values = _habit_values(users, tables, item)
        chosen = _chosen_values(values, item, share, max_share)
        for tag, picked in chosen:
            for index in np.flatnonzero(values.isin(picked).to_numpy()):
                tags[index].append(tag)
        rows += _habit_rows(item, values, chosen)
    return tags, pd.DataFrame(rows)


def _habit_values(users: pd.DataFrame, tables: NhanesTables, item: HabitItem) -> pd.Series:
    """The item's answers per user on NHANES's coding (all missing when the source lacks it)."""
    if item.diet_code is not None:
        return _diet_values(users, tables, item.diet_code)
    if not tables.available("diet_behaviour", item.variable):
        return pd.Series(np.nan, index=users.index, dtype="float64")
    return _clean(_attach(users, tables["diet_behaviour"], [item.variable])[item.variable], item)


def _diet_values(users: pd.DataFrame, tables: NhanesTables, code: int) -> pd.Series:
    """DRQSDT<code> as NHANES codes it: ``code`` when on the diet, 0 when answered and not on
    it, missing when not asked or when the source lacks the column."""
    column = f"diet_{code}"
    if not tables.available("special_diets", column):
        return pd.Series(np.nan, index=users.index, dtype="float64")
    flags = _attach(users, tables["special_diets"], [column])[column].astype("boolean")
    return flags.astype("float64").mul(code)


def _chosen_values(
    values: pd.Series, item: HabitItem, share: float, max_share: float
) -> list[tuple[str, list[float]]]:
    """(tag, answer values that give it) for each tag of the item, in the item's tag order."""
    if item.kind != "extremes":
        return [(tag, [code]) for code, tag in item.codes.items()]
    high, low = _extreme_sets(values, share, max_share)
    return [(str(item.high), high), (str(item.low), low)]


def _clean(values: pd.Series, item: HabitItem) -> pd.Series:
    values = values.astype("float64")
    values = values.where(~values.isin(item.missing))
    return values.replace(item.replace) if item.replace else values


def _extreme_sets(
    values: pd.Series, share: float, max_share: float
) -> tuple[list[float], list[float]]:
    """Values in the top and bottom ``share`` of the distribution.

    A value belongs to the top set when at most ``share`` of valid answers are at or above it.
    When even the largest value holds more than ``share`` (ordinal scales), the top set is that
    value alone if it holds at most ``max_share``, else empty. The bottom set mirrors this.
    """
    counts = values.dropna().value_counts(normalize=True).sort_index()
    if len(counts) < 2:
        return [], []
    at_or_above = counts[::-1].cumsum()[::-1]
    at_or_below = counts.cumsum()
    high = list(at_or_above[at_or_above <= share].index)
    low = list(at_or_below[at_or_below <= share].index)
    if not high and counts.iloc[-1] <= max_share:
        high = [counts.index[-1]]
    if not low and counts.iloc[0] <= max_share:
        low = [counts.index[0]]
    return high, low


def _habit_rows(
    item: HabitItem, values: pd.Series, chosen: list[tuple[str, list[float]]]
) -> list[dict]:
    n_valid = int(values.notna().sum())
    counts = [int(values.isin(picked).sum()) for _, picked in chosen]
    if item.kind == "extremes":
        (_, high), (_, low) = chosen
        return [_cutoff_row(item, high, low, n_valid, *counts)]
    return [_code_row(item, code, tag, n_valid, n)
            for (code, tag), n in zip(item.codes.items(), counts, strict=True)]


def _cutoff_row(item, high, low, n_valid, n_high, n_low) -> dict:
    return {
        "variable": item.variable,
        "kind": item.kind,
        "code": None,
        "high_tag": item.high,
        "low_tag": item.low,
        "n_valid": n_valid,
        "high_from": None if not high else float(min(high)),
        "low_to": None if not low else float(max(low)),
        "n_high": n_high,
        "n_low": n_low,
        "share_high": n_high / n_valid if n_valid else None,
        "share_low": n_low / n_valid if n_valid else None,
    }


def _code_row(item: HabitItem, code: float, tag: str, n_valid: int, n_tagged: int) -> dict:
    return {
        "variable": item.variable,
        "kind": item.kind,
        "code": float(code),
        "high_tag": tag,
        "low_tag": None,
        "n_valid": n_valid,
        "high_from": None,
        "low_to": None,
        "n_high": n_tagged,
        "n_low": 0,
        "share_high": n_tagged / n_valid if n_valid else None,
        "share_low": None,
    }


def _labels(users: pd.DataFrame, standards: Standards, kind: str) -> list[list[str]]:
    ids = [c.id for c in standards.conditions.conditions if c.kind == kind]
    flags = users[ids].fillna(False).to_numpy(dtype=bool)
    return [[ids[j] for j in np.flatnonzero(row)] for row in flags]


def prevalence_table(users: pd.DataFrame, standards: Standards | None = None) -> pd.DataFrame:
    """NGQA Table 11: number of users per special diet and health condition."""
    standards = standards or load_standards()
    rows = []
    for condition in _ordered(standards):
        flags = users[condition.id]
        rows.append({"status": condition.label, "users": int(flags.fillna(False).sum()),
                     "evaluable": int(flags.notna().sum())})
    return pd.DataFrame(rows)


def diet_by_condition_table(
    users: pd.DataFrame, standards: Standards | None = None
) -> pd.DataFrame:
    """NGQA Table 10: users with each health condition following each diet."""
    standards = standards or load_standards()
    conditions = [c for c in standards.conditions.conditions if c.kind == "health_condition"]
    rows = []
    for diet in (c for c in standards.conditions.conditions if c.kind == "special_diet"):
        on_diet = users[diet.id].fillna(False).to_numpy(dtype=bool)
        row = {"diet": diet.label}
        for condition in conditions:
            has = users[condition.id].fillna(False).to_numpy(dtype=bool)
            row[condition.label] = int((on_diet & has).sum())
        rows.append(row)
    return pd.DataFrame(rows)


def _ordered(standards: Standards):
    diets = [c for c in standards.conditions.conditions if c.kind == "special_diet"]
    conditions = [c for c in standards.conditions.conditions if c.kind == "health_condition"]
    return diets + conditions
