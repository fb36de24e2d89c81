"""Metrics: hand-computed cases, agreement with the reference libraries, bootstrap."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from nutrireason.schema import get_benchmark
from nutrireason.scoring import metrics as M

TAGS = get_benchmark("ngqa").labels

# ----------------------------------------------------------------------- hand-computed


def test_binary_by_hand():
    gold = ["Yes", "Yes", "No", "No", "Yes"]
    pred = ["Yes", "No", "No", "Yes", None]  # the last is unparseable: taken as "No" (wrong)
    ok = [True, True, True, True, False]
    m = M.binary_metrics(pred, gold, ok)
    # y_true 1 1 0 0 1, y_pred 1 0 0 1 0: correct 2/5; tp 1, fp 1, fn 2
    assert m["accuracy"] == pytest.approx(0.4)
    assert m["precision"] == pytest.approx(0.5)
    assert m["recall"] == pytest.approx(1 / 3)
    assert m["f1"] == pytest.approx(0.4)
    assert m["unparseable_rate"] == pytest.approx(0.2)


def test_binary_unparseable_is_wrong_even_when_gold_is_no():
    m = M.binary_metrics(["Maybe", None], ["No", "No"], [True, False])
    assert m["accuracy"] == 0 and m["unparseable_rate"] == 1 and m["precision"] == 0


def test_multilabel_by_hand():
    gold = [["low_carb", "high_sugar"], ["high_sodium"], ["low_carb"]]
    pred = [["low_carb"], ["high_sodium", "high_sugar"], ["low_carb"]]
    m = M.multilabel_metrics(pred, gold, [True] * 3)
    # Jaccard 1/2, 1/2, 1 -> 2/3. Per label (support by gold): low_carb P=R=F=1 (support 2),
    # high_sugar 0/0/0 (support 1), high_sodium 1/1/1 (support 1) -> weighted 3/4.
    assert m["accuracy"] == pytest.approx(2 / 3)
    assert m["precision"] == pytest.approx(0.75)
    assert m["recall"] == pytest.approx(0.75)
    assert m["f1"] == pytest.approx(0.75)
    assert m["subset_accuracy"] == pytest.approx(1 / 3)
    assert m["unparseable_rate"] == 0


def test_multilabel_empty_vs_empty_is_one_but_unparseable_is_zero():
    assert M.multilabel_metrics([[]], [[]], [True])["accuracy"] == 1
    m = M.multilabel_metrics([None, ["low_carb"]], [[], ["low_carb"]], [False, True])
    assert m["accuracy"] == 0.5 and m["subset_accuracy"] == 0.5 and m["unparseable_rate"] == 0.5


def test_multilabel_orientation_gold_is_y_true():
    a, b = "low_carb", "high_sugar"
    gold = [[a, b], [a, b], [b]]
    pred = [[a], [a], [a, b]]
    m = M.multilabel_metrics(pred, gold, [True] * 3)
    # gold support a=2, b=3. a: tp 2, fp 1, fn 0 -> P 2/3, R 1; b: tp 1, fp 0, fn 2 -> P 1, R 1/3
    assert m["precision"] == pytest.approx((2 * 2 / 3 + 3 * 1) / 5)  # 13/15
    assert m["recall"] == pytest.approx((2 * 1 + 3 * 1 / 3) / 5)  # 3/5
    # swapped (the NGQA code's mistake): support a=3, b=1; a: P 1, R 2/3; b: P 1/3, R 1
    swapped = M.multilabel_metrics(gold, pred, [True] * 3)
    assert swapped["precision"] == pytest.approx((3 * 1 + 1 / 3) / 4)  # 5/6
    assert swapped["recall"] == pytest.approx((3 * 2 / 3 + 1) / 4)  # 3/4
    # and the same orientation as scikit-learn with y_true = gold
    y_true, y_pred, _, _ = M.multilabel_arrays(pred, gold, [True] * 3)
    p, r, _, _ = precision_recall_fscore_support(y_true, y_pred, average="weighted",
                                                 zero_division=0)
    assert (m["precision"], m["recall"]) == pytest.approx((p, r))


def test_vocabulary_has_the_14_tags_then_others():
    vocab = M.vocabulary([["low_carb", "high_fibre"]], labels=TAGS)
    assert len(TAGS) == 14 and vocab[:14] == list(TAGS) and vocab[14:] == ["high_fibre"]


def test_text_by_hand():
    m = M.text_metrics(["the cat sat"], ["the cat sat on the mat"], [True])
    # unigrams: 3 of 3 predicted match, 3 of 6 reference -> F = 2 * 1 * 0.5 / 1.5
    assert m["rouge1"] == pytest.approx(2 / 3)
    # bigrams: 2 of 2, 2 of 5 -> F = 2 * 0.4 / 1.4
    assert m["rouge2"] == pytest.approx(4 / 7)
    assert m["bleu"] == 0.0  # no 4-gram in a 3-token hypothesis
    same = "Yes, because the food is low in carb."
    m = M.text_metrics([same, "whatever"], [same, same], [True, False])
    assert m["rouge1"] == pytest.approx(0.5) and m["unparseable_rate"] == 0.5
    # the unparseable one scores as "": BLEU has the full ref length but only one hypothesis
    sys_len = ref_len = 10  # 13a: "Yes , because the food is low in carb ." = 10 tokens
    assert m["bleu"] == pytest.approx(math.exp(1 - 2 * ref_len / sys_len))


def test_retrieval_by_hand():
    got = [[["a", "r", "b"], ["c", "r", "d"]]]
    want = [[["a", "r", "b"], ["e", "r", "f"], ["g", "r", "h"]]]
    m = M.retrieval_metrics(got, want)
    assert m == pytest.approx({"precision": 0.5, "recall": 1 / 3, "f1": 0.4})


# ----------------------------------------------------------------------- vs reference libraries

verdicts = st.sampled_from(["Yes", "No"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(verdicts, verdicts, st.booleans()), min_size=1, max_size=40))
def test_binary_matches_sklearn(rows):
    gold, pred, ok = map(list, zip(*rows, strict=True))
    m = M.binary_metrics(pred, gold, ok)
    y_true = [g == "Yes" for g in gold]
    y_pred = [(p == "Yes") if k else (g != "Yes") for p, g, k in zip(pred, gold, ok, strict=True)]
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="binary",
                                                 pos_label=True, zero_division=0)
    assert m["accuracy"] == pytest.approx(accuracy_score(y_true, y_pred))
    assert (m["precision"], m["recall"], m["f1"]) == pytest.approx((p, r, f))


tag_sets = st.lists(st.sampled_from([*TAGS[:6], "high_fibre"]), max_size=4)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(tag_sets, tag_sets), min_size=1, max_size=30))
def test_multilabel_matches_sklearn_weighted(rows):
    pred, gold = map(list, zip(*rows, strict=True))
    ok = [True] * len(rows)
    m = M.multilabel_metrics(pred, gold, ok, labels=TAGS)
    y_true, y_pred, _, _ = M.multilabel_arrays(pred, gold, ok, labels=TAGS)
    p, r, f, _ = precision_recall_fscore_support(y_true, y_pred, average="weighted",
                                                 zero_division=0)
    assert (m["precision"], m["recall"], m["f1"]) == pytest.approx((p, r, f))
    jac = [1.0 if not (set(a) | set(b)) else len(set(a) & set(b)) / len(set(a) | set(b))
           for a, b in zip(pred, gold, strict=True)]
    assert m["accuracy"] == pytest.approx(np.mean(jac))


WORDS = ["yes", "no", "because", "the", "food", "is", "low", "high", "in", "carb", "sugar",
         "sodium", "calorie", ",", "."]
words = st.lists(st.sampled_from(WORDS), min_size=0, max_size=14)
sentences = words.map(" ".join)
SCORER = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(sentences, sentences), min_size=1, max_size=12))
def test_text_matches_rouge_score_and_sacrebleu(rows):
    pred, gold = map(list, zip(*rows, strict=True))
    m = M.text_metrics(pred, gold, [True] * len(rows))
    for key in ("rouge1", "rouge2", "rougeL"):
        want = np.mean([SCORER.score(g, p)[key].fmeasure for p, g in rows])
        assert m[key] == pytest.approx(want)
    assert m["bleu"] == pytest.approx(BLEU().corpus_score(pred, [gold]).score / 100, abs=1e-9)


# ----------------------------------------------------------------------- bootstrap


def test_resampled_sums_equal_explicit_resampling():
    stats = np.arange(21, dtype=float).reshape(7, 3)
    sums = M.resampled_sums(stats, 50, np.random.default_rng(3))
    idx = np.random.default_rng(3).integers(0, 7, size=(50, 7))
    assert np.allclose(sums, stats[idx].sum(axis=1))


def test_ci_is_seeded_and_brackets_the_value():
    rng = np.random.default_rng(0)
    gold = rng.choice(["Yes", "No"], 200).tolist()
    pred = rng.choice(["Yes", "No"], 200).tolist()
    table = M.binary_table(pred, gold, [True] * 200)
    a, b = M.with_ci(table, 500, seed=1), M.with_ci(table, 500, seed=1)
    assert a == b
    for m in a.values():
        assert m["low"] <= m["value"] <= m["high"]
    assert a["accuracy"]["high"] - a["accuracy"]["low"] == pytest.approx(0.14, abs=0.04)
    none = M.with_ci(table, 0)
    assert none["f1"]["low"] == none["f1"]["value"] == none["f1"]["high"]
    assert M.with_ci(table.subset(np.array([], dtype=int))) == {}


def _fake_bert_score(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """bert_score and torch stand-ins: record each call, F1 = 0.5 per pair."""
    import sys
    import types

    calls: list[dict] = []

    class F1:
        def __init__(self, n: int) -> None:
            self.n = n

        def numpy(self) -> np.ndarray:
            return np.full(self.n, 0.5)

    def score(cands, refs, **kwargs):
        calls.append({"n": len(cands), **kwargs})
        return None, None, F1(len(cands))

    monkeypatch.setitem(sys.modules, "bert_score", types.SimpleNamespace(score=score))
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    return calls


def test_bertscore_takes_the_encoder_directory_the_caller_resolved(monkeypatch, tmp_path):
    from nutrireason.errors import DataError, NutriReasonError

    calls = _fake_bert_score(monkeypatch)
    scores, used = M.bertscore_f1(["a", "b"], ["a", "c"], tmp_path)
    assert scores.tolist() == [0.5, 0.5] and used == str(tmp_path)
    assert calls == [{"n": 2, "model_type": str(tmp_path), "num_layers": 6, "batch_size": 64,
                      "device": None, "verbose": False}]
    with pytest.raises(NutriReasonError, match="--bertscore-model"):  # scoring looks nothing up
        M.bertscore_f1(["a"], ["a"], None)
    with pytest.raises(DataError, match="BERTScore model directory not found"):
        M.bertscore_f1(["a"], ["a"], tmp_path / "missing")
    assert len(calls) == 1


def test_bertscore_without_bert_score_names_the_extra(monkeypatch, tmp_path):
    import sys

    from nutrireason.errors import MissingDependency
    from nutrireason.models.errors import MissingDependency as ModelsMissingDependency

    assert ModelsMissingDependency is MissingDependency  # one class, two import paths
    monkeypatch.setitem(sys.modules, "bert_score", None)
    with pytest.raises(MissingDependency, match=r"nutrireason\[bertscore\]"):
        M.bertscore_f1(["a"], ["a"], tmp_path)
