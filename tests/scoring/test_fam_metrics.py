"""FAM-Bench metrics: canonical citation matching, dish and ranking tables, CTC, end to end."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pytest
from scipy.stats import kendalltau

from nutrireason.runs.records import Record
from nutrireason.scoring import fam_metrics as F
from nutrireason.scoring import metrics as M
from nutrireason.scoring import score_records

BEANS = [
    {"line": "1 cup white beans, drained", "food": "white beans", "canonical": "beans"},
    {"line": "4 oz semisoft goat cheese, crumbled", "food": "semisoft goat cheese",
     "canonical": "cheese"},
    {"line": "2 tbsp butter", "food": "butter", "canonical": "butter"},
    {"line": "1 tsp salt", "food": "salt", "canonical": "salt"},
    {"line": "2 tomatoes, diced", "food": "tomatoes", "canonical": "tomato"},
    {"line": "1 pinch saffron", "food": "saffron", "canonical": ""},
]
CAKE = [
    {"line": "1 cup white sugar", "food": "white sugar", "canonical": "sugar"},
    {"line": "2 cups all-purpose flour", "food": "all-purpose flour", "canonical": "wheat flour"},
    {"line": "3 eggs", "food": "eggs", "canonical": "egg"},
]

# ----------------------------------------------------------------------- canonical matching


def test_normalise_name():
    assert F.normalise_name("  Baker's  Chocolate, chopped!") == "baker chocolate chopped"
    assert F.normalise_name("Peas") == "pea"
    assert F.normalise_name("tomatoes") == "tomato"
    assert F.normalise_name("glass noodles") == "glass noodle"  # "ss" kept
    assert F.normalise_name("oats") == "oat" and F.normalise_name("gas") == "gas"
    assert F.normalise_name(None) == ""


@pytest.mark.parametrize(("cited", "expected"), [
    (["Butter"], ["butter"]),  # (1) equal to a canonical name
    (["tomatoes"], ["tomato"]),  # (1) after singularising
    (["white beans"], ["bean"]),  # (2) equal to a food phrase -> its canonical ("beans")
    (["White Bean"], ["bean"]),  # (2) plural on one side only
    (["goat cheese"], ["cheese"]),  # (3) cited tokens inside the line / food phrase
    (["sea salt"], ["salt"]),  # (3) canonical tokens all cited
    (["bacon"], ["bacon"]),  # (4) unmatched: kept, becomes a false positive
    (["saffron"], []),  # matched, but the canonical is unknown: left out
    (["Salt", "salt.", "sea salt", ""], ["salt"]),  # distinct, empty names skipped
    (["bacon", "Butter"], ["bacon", "butter"]),  # first-cited order
])
def test_canonical_citations(cited, expected):
    assert F.canonical_citations(cited, BEANS) == expected


def test_containment_picks_the_largest_jaccard_then_the_first():
    oils = [{"line": "2 tbsp extra virgin olive oil", "food": "extra virgin olive oil",
             "canonical": "olive oil"},
            {"line": "1 tbsp sesame oil", "food": "sesame oil", "canonical": "sesame oil"},
            {"line": "1 tbsp peanut oil", "food": "peanut oil", "canonical": "peanut oil"}]
    # "oil" is in all three: Jaccard with the food phrase 1/4, 1/2, 1/2 -> sesame (first of 1/2)
    assert F.canonical_citations(["oil"], oils) == ["sesame oil"]
    # only the olive oil line holds every cited token
    assert F.canonical_citations(["virgin olive oil"], oils) == ["olive oil"]
    assert F.canonical_citations(["coconut oil"], oils) == ["coconut oil"]
    assert F.canonical_citations(["flour"], CAKE) == ["wheat flour"]


# ----------------------------------------------------------------------- fam_dish

DISH = [  # (condition, gold decision, rationale, ingredients, parse_ok, parsed)
    ("hypertension", "not_recommend", ["butter", "salt"], BEANS, True,
     {"decision": "not_recommend", "ingredients": ["Butter", "sea salt", "bacon"]}),
    ("hypertension", "recommend", ["beans", "tomato"], BEANS, True,
     {"decision": "recommend", "ingredients": ["white beans", "tomatoes"]}),
    ("hypertension", "not_recommend", ["cheese", "salt"], BEANS, False, None),
    ("diabetes", "not_recommend", ["sugar", "wheat flour"], CAKE, True,
     {"decision": "recommend", "ingredients": ["Sugar", "flour"]}),
    ("diabetes", "recommend", ["egg"], CAKE, True,
     {"decision": None, "ingredients": ["eggs"]}),
    ("diabetes", "not_recommend", ["sugar"], CAKE, True,
     {"decision": "not_recommend", "ingredients": ["eggs", "honey"]}),
]


def dish_gold(condition, decision, rationale, ingredients):
    return {"decision": decision, "condition": condition, "rationale": rationale,
            "ingredients": ingredients}


def dish_table() -> M.Table:
    gold = [dish_gold(*row[:4]) for row in DISH]
    return F.dish_table([row[5] for row in DISH], gold, [row[4] for row in DISH])


def test_dish_rows_by_hand():
    rows = dish_table().stats[:, :9]
    # correct, recommend, bad | canonical tp fp fn | strict tp fp fn
    expected = [[1, 0, 0, 2, 1, 0, 1, 2, 1],  # bacon FP; strict: "sea salt" != "salt"
                [1, 1, 0, 2, 0, 0, 0, 2, 2],  # strict: "white beans"/"tomatoes" both miss
                [0, 0, 1, 0, 0, 2, 0, 0, 2],  # unparseable: cites nothing
                [0, 1, 0, 2, 0, 0, 1, 1, 1],  # wrong decision; strict: "flour" misses
                [0, 0, 1, 0, 0, 1, 0, 0, 1],  # decision None: unparseable, "eggs" ignored
                [1, 0, 0, 0, 2, 1, 0, 2, 1]]  # egg and honey are both false positives
    np.testing.assert_array_equal(rows, expected)


def test_dish_metrics_by_hand():
    m = dish_table().point()
    assert m["accuracy"] == pytest.approx(3 / 6)
    assert m["recommend_rate"] == pytest.approx(2 / 6)
    assert m["unparseable_rate"] == pytest.approx(2 / 6)
    # canonical: tp 2+2+0+2+0+0 = 6, fp 1+0+0+0+0+2 = 3, fn 0+0+2+0+1+1 = 4
    assert m["rationale_micro_precision"] == pytest.approx(6 / 9)
    assert m["rationale_micro_recall"] == pytest.approx(6 / 10)
    assert m["rationale_micro_f1"] == pytest.approx(12 / 19)  # 2*6 / (2*6 + 3 + 4)
    # hypertension tp 4 fp 1 fn 2 -> 8/11; diabetes tp 2 fp 2 fn 2 -> 4/8; mean 27/44
    assert m["rationale_macro_f1"] == pytest.approx((8 / 11 + 1 / 2) / 2)
    # strict: tp 2, fp 2+2+0+1+0+2 = 7, fn 1+2+2+1+1+1 = 8 -> 4/19
    assert m["rationale_micro_f1_strict"] == pytest.approx(4 / 19)
    # hypertension tp 1 fp 4 fn 5 -> 2/11; diabetes tp 1 fp 3 fn 3 -> 2/8; mean 19/88
    assert m["rationale_macro_f1_strict"] == pytest.approx((2 / 11 + 1 / 4) / 2)
    assert set(m) == set(F.DISH_METRICS)


def test_macro_f1_only_averages_conditions_present_in_the_resample():
    table = dish_table()
    hypertension = table.subset(np.array([0, 1, 2])).point()
    assert hypertension["rationale_macro_f1"] == pytest.approx(8 / 11)  # not (8/11 + 0) / 2
    assert hypertension["rationale_macro_f1_strict"] == pytest.approx(2 / 11)
    # a resample with row 3 twice and row 0 once: diabetes tp 4 fp 0 fn 0 -> 1,
    # hypertension tp 2 fp 1 fn 0 -> 4/5; macro (1 + 4/5) / 2
    resample = table.subset(np.array([3, 3, 0])).point()
    assert resample["rationale_macro_f1"] == pytest.approx(0.9)
    assert resample["rationale_micro_f1"] == pytest.approx(12 / 13)  # tp 6, fp 1, fn 0


def test_dish_bootstrap_is_finite_and_brackets_the_value():
    out = M.with_ci(dish_table(), 500, seed=3)
    assert set(out) == set(F.DISH_METRICS)
    for m in out.values():
        assert np.isfinite(list(m.values())).all()
        assert m["low"] <= m["value"] <= m["high"]
    assert out["rationale_macro_f1"]["low"] < out["rationale_macro_f1"]["high"]


def test_empty_dish_table():
    table = F.dish_table([], [], [])
    assert table.n == 0 and M.with_ci(table) == {}


# ----------------------------------------------------------------------- fam_rank


def test_complete_ranking():
    assert F.complete_ranking(["C", "A"]) == ["C", "A", "B", "D"]
    assert F.complete_ranking(["c", "A", "A", "X"]) == ["C", "A", "B", "D"]
    assert F.complete_ranking(None) == ["A", "B", "C", "D"]
    assert F.complete_ranking(["B"], "ABC") == ["B", "A", "C"]


@pytest.mark.parametrize(("ranking", "tau"), [
    (["A", "B", "C", "D"], 1.0),
    (["D", "C", "B", "A"], -1.0),
    (["B", "A", "C", "D"], 4 / 6),  # one discordant pair: (5 - 1) / 6
    (["D"], 0.0),  # -> D A B C: AD, BD, CD discordant, AB, AC, BC concordant
    (["B", "D"], 0.0),  # -> B D A C: AB, AD, CD discordant, AC, BC, BD concordant
])
def test_kendall_tau_by_hand(ranking, tau):
    assert F.kendall_tau(ranking, ["A", "B", "C", "D"]) == pytest.approx(tau)


def test_kendall_tau_matches_scipy():
    gold = ["C", "A", "D", "B"]
    for perm in permutations("ABCD"):
        for ranking in (list(perm), list(perm[:2])):
            full = F.complete_ranking(ranking)
            expected = kendalltau([full.index(x) for x in gold], range(4)).statistic
            assert F.kendall_tau(ranking, gold) == pytest.approx(expected)


def rank_gold(ranking):
    return {"ranking": list(ranking), "labels": {}, "avoid_violations": {}, "utility": {}}


def test_rank_metrics_by_hand():
    gold = [rank_gold("CADB")] * 5
    pred = [{"ranking": ["C", "B", "A", "D"], "option_decisions": None},
            {"ranking": ["A", "D", "C"], "option_decisions": None},
            {"ranking": ["A", "B"], "option_decisions": None},
            None,
            {"ranking": [], "option_decisions": None}]
    ok = [True, True, True, False, True]
    rows = F.rank_table(pred, gold, ok).stats[:, :4]
    # top1, reciprocal rank, tau, bad. Row 0: CA CD CB AD concordant, AB DB discordant -> 2/6.
    # Row 1: A D C B: CA CD discordant, rest concordant -> 2/6; C at position 3 -> 1/3.
    # Row 2: A B C D: CA CB DB discordant, CD AD AB concordant -> 0; C not returned -> 0.
    np.testing.assert_allclose(rows, [[1, 1, 1 / 3, 0], [0, 1 / 3, 1 / 3, 0], [0, 0, 0, 0],
                                      [0, 0, 0, 1], [0, 0, 0, 1]])
    m = F.rank_metrics(pred, gold, ok)
    assert m["top1_accuracy"] == pytest.approx(1 / 5)
    assert m["mrr"] == pytest.approx((1 + 1 / 3) / 5)
    assert m["kendall_tau"] == pytest.approx((2 / 6 + 2 / 6) / 5)
    assert m["unparseable_rate"] == pytest.approx(2 / 5)
    assert (m["ctc"], m["ctc_pairs"], m["ctc_coverage"]) == (0.0, 0.0, 0.0)


# ----------------------------------------------------------------------- CTC

MIXED = {"A": "recommend", "B": "not_recommend", "C": "recommend", "D": "not_recommend"}


def test_ctc_pairs_by_hand():
    # B A D C: (A,B) no, (A,D) yes, (C,B) no, (C,D) no
    assert F.ctc_pairs(["B", "A", "D", "C"], MIXED) == (1, 4)
    assert F.ctc_pairs(["A", "C", "B", "D"], MIXED) == (4, 4)
    assert F.ctc_pairs(["A"], dict.fromkeys("ABCD", "recommend")) == (0, 0)
    # partial D A -> D A B C; A not, B C D rec: (B,A) no, (C,A) no, (D,A) yes
    decisions = {"A": "not_recommend", "B": "recommend", "C": "recommend", "D": "recommend"}
    assert F.ctc_pairs(["D", "A"], decisions) == (1, 3)


CTC_CASES = [  # (gold ranking, parse_ok, parsed): agree, pairs, covered
    ("ACBD", True, {"ranking": ["B", "A", "D", "C"], "option_decisions": MIXED}),  # 1, 4, yes
    ("ABCD", True, {"ranking": ["A", "B", "C", "D"],
                    "option_decisions": dict.fromkeys("ABCD", "recommend")}),  # 0, 0, yes
    ("ABCD", True, {"ranking": ["A", "B", "C", "D"], "option_decisions": None}),  # not covered
    ("ABCD", True, {"ranking": ["A", "B"], "option_decisions": {
        "A": "recommend", "B": "recommend", "C": "not_recommend", "D": None}}),  # not covered
    ("ABCD", True, {"ranking": ["D", "A"], "option_decisions": {
        "A": "not_recommend", "B": "recommend", "C": "recommend", "D": "recommend"}}),  # 1, 3
    ("ABCD", False, {"ranking": ["A"], "option_decisions": MIXED}),  # unparseable: not covered
]


def ctc_table() -> M.Table:
    return F.rank_table([c[2] for c in CTC_CASES], [rank_gold(c[0]) for c in CTC_CASES],
                        [c[1] for c in CTC_CASES])


def test_ctc_pools_pairs_over_covered_records():
    table = ctc_table()
    np.testing.assert_array_equal(table.stats[:, 4:], [[1, 4, 1], [0, 0, 1], [0, 0, 0],
                                                       [0, 0, 0], [1, 3, 1], [0, 0, 0]])
    m = table.point()
    assert m["ctc"] == pytest.approx(2 / 7)  # (1 + 1) / (4 + 3), not the mean of 1/4 and 1/3
    assert m["ctc_pairs"] == 7
    assert m["ctc_coverage"] == pytest.approx(3 / 6)
    assert m["unparseable_rate"] == pytest.approx(1 / 6)
    assert set(m) == set(F.RANK_METRICS)
    # no pairs: ctc 0 and the pair count says so
    none = table.subset(np.array([1, 2])).point()
    assert (none["ctc"], none["ctc_pairs"], none["ctc_coverage"]) == (0.0, 0.0, 0.5)
    # a resample is a ratio of sums: rows 0, 0, 4, 2 -> (1 + 1 + 1) / (4 + 4 + 3)
    resample = table.subset(np.array([0, 0, 4, 2])).point()
    assert resample["ctc"] == pytest.approx(3 / 11) and resample["ctc_pairs"] == 11


def test_ctc_bootstrap():
    out = M.with_ci(ctc_table(), 500, seed=1)
    assert set(out) == set(F.RANK_METRICS)
    for m in out.values():
        assert m["low"] <= m["value"] <= m["high"]
    assert out["ctc"]["low"] < out["ctc"]["high"] and out["ctc_pairs"]["value"] == 7
    assert out["ctc"]["low"] >= 0 and out["ctc"]["high"] <= 1


# ----------------------------------------------------------------------- end to end


def record(task: str, i: int, gold: dict, parse_ok: bool, parsed, conditions: list[str],
           status: str = "ok") -> Record:
    return Record(key=f"{task}-{i}::plain::m", item_id=f"{task}-{i}", method="plain", model="m",
                  status=status, parsed=parsed, parse_ok=parse_ok, gold=gold,
                  meta={"task": task, "conditions": conditions})


def test_score_records_end_to_end():
    records = [record("fam_dish", i, dish_gold(*row[:4]), row[4], row[5], [row[0]])
               for i, row in enumerate(DISH)]
    records.append(record("fam_dish", 9, dish_gold(*DISH[0][:4]), False, None,
                          ["hypertension"], status="error"))
    records += [record("fam_rank", i, rank_gold(c[0]), c[1], c[2], ["diabetes" if i % 2 else
                                                                    "hypertension"])
                for i, c in enumerate(CTC_CASES)]
    scores = score_records(records, bootstrap=200)
    groups = {g["task"]: g for g in scores["groups"]}
    assert set(groups) == {"fam_dish", "fam_rank"}
    dish, rank = groups["fam_dish"], groups["fam_rank"]
    assert (dish["n"], dish["errors"], rank["n"], rank["errors"]) == (6, 1, 6, 0)
    assert set(dish["metrics"]) == set(F.DISH_METRICS)
    assert set(rank["metrics"]) == set(F.RANK_METRICS)
    assert dish["metrics"]["rationale_macro_f1"]["value"] == pytest.approx(27 / 44)
    assert dish["metrics"]["accuracy"]["value"] == pytest.approx(0.5)
    assert rank["metrics"]["ctc"]["value"] == pytest.approx(2 / 7)
    for g in (dish, rank):
        for m in g["metrics"].values():
            assert m["low"] <= m["value"] <= m["high"]
    by = {(b["task"], b["condition"]): b for b in scores["breakdowns"]["condition"]}
    assert set(by) == {(t, c) for t in ("fam_dish", "fam_rank")
                       for c in ("hypertension", "diabetes")}
    hyper = by[("fam_dish", "hypertension")]
    assert hyper["n"] == 3
    assert hyper["metrics"]["rationale_macro_f1"]["value"] == pytest.approx(8 / 11)
    assert by[("fam_dish", "diabetes")]["metrics"]["accuracy"]["value"] == pytest.approx(1 / 3)
    # rank rows 0, 2, 4 are hypertension: pairs 4 + 0 + 3, agree 1 + 0 + 1
    rank_hyper = by[("fam_rank", "hypertension")]["metrics"]
    assert rank_hyper["ctc"]["value"] == pytest.approx(2 / 7)
    assert rank_hyper["ctc_pairs"]["value"] == 7
    assert by[("fam_rank", "diabetes")]["metrics"]["ctc_coverage"]["value"] == pytest.approx(
        1 / 3)
