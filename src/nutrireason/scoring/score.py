"""Score a run directory: ``records.jsonl`` -> ``metrics.json``, ``scores.jsonl`` and three CSV
tables.

Groups are (method, model, task, level). Conventions (also in the README of a run's report):

* ``n`` is the number of *scored* samples: records with status "ok". It is the denominator of
  every answer metric. Records with status "error" are not answers: they are counted in
  ``errors`` and ``error_rate = errors / (n + errors)``, never scored as right or wrong.
* An unparseable answer (ok status, ``parse_ok`` False) is scored as wrong.
* ``efficiency`` averages over all records of the group, errors included.
* ``with_extractor`` (only when the run used ``--extractor``): each group's metrics with the
  answers the rules could not read taken as the extractor model read them, and how many were
  (``extracted``); the groups above always score the rules' reading.
* ``reading`` says how the group's answers were read (:func:`reading_stats`): the shares cut
  off at the token limit (``truncated_rate``), declined (``refusal_rate``) and hedged
  (``hedge_rate``), the count of each reading rule and of each reason an answer did not count,
  and the mean reasoning tokens; in ``metrics_groups.csv`` as ``reading_<name>``.
* ``retrieval`` uses the scored records that have ``retrieved`` and a non-empty
  ``meta.signal``; it is null when there are none.
* Every metric carries a 95 % percentile bootstrap interval (``bootstrap`` resamples, seeded)
  that resamples *clusters*: the task's unit from its spec (``TaskSpec.clusters``: the NGQA
  user, a FAM-Bench recipe or a ranking item's dish set; ``cluster`` chooses another meta key,
  ``"item"`` the item alone; a record without the key is its item's cluster, so repeats of an
  item always go together). ``low``/``high`` are that interval, ``naive_low``/``naive_high``
  the independent-sample one, ``design_effect`` the ratio of their variances (for means the
  analytic one, with the cluster-robust ``se`` and ``naive_se``), and the group's
  ``clusters`` says what it clustered on. With ``bootstrap=0`` low = high = value. A group
  with no scored sample has ``metrics: {}``.
* ``repeats`` (only when an item was answered more than once, ``run --repeats``): the items
  answered several times, the mean answers per such item and the share whose answers agree.
* Breakdowns pool levels: one row per (method, model, task, value) for each breakdown the
  task's benchmark declares (conditions, diets, recipe categories); a sample counts for every
  value in its meta.
* FAM-Bench ``fam_dish`` (see :mod:`nutrireason.scoring.fam_metrics`): ``accuracy`` of the
  decision, ``recommend_rate``, ``unparseable_rate`` (parse failure or no decision: wrong, not a
  "recommend", no citation), rationale micro precision / recall / F1 and macro F1 (mean
  per-condition F1 over the conditions present) with citations mapped to the item's canonical
  ingredient names, and ``_strict`` F1 variants on exact lower-cased strings.
* FAM-Bench ``fam_rank``: ``top1_accuracy``, ``mrr``, ``kendall_tau`` (tau-a; a partial
  ranking is completed with the missing letters in alphabetical order; unparseable scores 0 on
  all three), ``unparseable_rate``, and cross-task consistency ``ctc`` = agreeing / all
  (recommended, not recommended) pairs of the model's own decisions, pooled over the records
  with a decision for every option (0 when there are no pairs), ``ctc_pairs`` (the total pair
  count, not a mean) and ``ctc_coverage`` (share of records with usable decisions).
* Other tasks than binary / multi_label / text_generation / fam_dish / fam_rank get
  ``accuracy`` (exact match) and ``unparseable_rate``.
* FAM-Bench Table 1's common pool (:mod:`nutrireason.scoring.fam_metrics`): per (model, task),
  the items every text-input prompting mode of the run answered validly, and each mode's
  metrics on them, under the ``pools`` key (only when the run has such a mode).

``scores.jsonl`` holds one :class:`~nutrireason.schema.SampleScore` per record, in records
order. ``values`` are the per-sample columns of the group's own metric table whose mean is a
metric (so a group's metric is the mean of its samples' values): binary ``accuracy``;
multi_label ``accuracy`` (Jaccard) and ``subset_accuracy``; text_generation ``rouge1``,
``rouge2``, ``rougeL`` (and ``bertscore_f1`` when computed; BLEU is corpus-level, no per-sample
value); fam_dish ``accuracy``, ``recommend_rate``; fam_rank ``top1_accuracy``, ``mrr``,
``kendall_tau``, ``ctc_coverage``; other tasks ``accuracy``; every task ``unparseable_rate``;
``retrieval_precision`` / ``_recall`` / ``_f1`` for a sample that counts for retrieval.
``correct`` is the sample's value of :data:`CORRECT_METRIC` (exact match, exact set match,
decision, top-1) as a bool, None for text generation and for an error record (``values`` {}).
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from nutrireason.errors import NutriReasonError
from nutrireason.schema import (
    METRICS_FILE,
    SCORES_FILE,
    Breakdown,
    Record,
    SampleScore,
    answer_kind,
    benchmark_names,
    breakdowns_of,
    get_benchmark,
    read_records,
    spec_for_task,
    task_spec,
)
from nutrireason.scoring import fam_metrics
from nutrireason.scoring import metrics as M
from nutrireason.scoring import stats as S
from nutrireason.storage import atomic_path, write_json_atomic, write_jsonl_atomic

GROUPS_CSV = "metrics_groups.csv"
EFFICIENCY = ("calls_per_sample", "prompt_tokens", "completion_tokens", "latency_s")
# Per answer shape (schema.ANSWER_KINDS): the per-sample value that says whether an answer is
# right; None: no single right answer.
CORRECT_METRIC: dict[str, str | None] = {
    "yes_no": "accuracy", "tag_set": "subset_accuracy", "sentence": None,
    "decision": "accuracy", "ranking": "top1_accuracy", "quantity": "accuracy"}
DEFAULT_CORRECT = "accuracy"  # other tasks: exact match


class Scores(dict):
    """The ``metrics.json`` dict of a scored run; ``samples`` holds its ``scores.jsonl`` lines
    (one per record). JSON and ``==`` see only the dict, so metrics.json never holds them."""

    def __init__(self, data: dict[str, Any], samples: list[SampleScore]) -> None:
        super().__init__(data)
        self.samples = samples


def score_run(run_dir: str | Path, bootstrap: int = 1000, seed: int = 0,
              bertscore: bool = False, bertscore_model: str | Path | None = None,
              cluster: str | None = None) -> Scores:
    """The metrics of a run directory as the ``metrics.json`` dict, with the per-sample scores
    (nothing written; :func:`write_scores` writes both)."""
    run_dir = Path(run_dir)
    return score_records(read_records(run_dir), run=str(run_dir), bootstrap=bootstrap,
                         seed=seed, bertscore=bertscore, bertscore_model=bertscore_model,
                         cluster=cluster)


NO_CLUSTER = "item"  # `--cluster item`: each item its own cluster (repeats of it together)


def cluster_key(task: str, chosen: str | None = None) -> str:
    """The meta key a task's samples cluster on: ``chosen``, else the first of its spec's
    ``clusters``, else :data:`NO_CLUSTER`."""
    if chosen:
        return chosen
    found = spec_for_task(task)
    return found[1].clusters[0] if found and found[1].clusters else NO_CLUSTER


def cluster_label(record: Record, key: str) -> Hashable:
    """The cluster a record belongs to under ``key``: its meta value (a list or dict as the
    sorted tuple of its values), or the record's item when the meta lacks it."""
    value = record.meta.get(key) if key != NO_CLUSTER else None
    if value is None or value == "" or value == [] or value == {}:
        return ("item", record.item_id)
    if isinstance(value, dict):
        return tuple(sorted(str(v) for v in value.values()))
    if isinstance(value, list):
        return tuple(sorted(str(v) for v in value))
    return str(value)


def record_clusters(records: Sequence[Record], key: str) -> np.ndarray:
    """The records' cluster codes under ``key`` (:func:`cluster_label`)."""
    return S.cluster_codes([cluster_label(r, key) for r in records])


def level_rank(level: str) -> tuple[int, str]:
    """Levels in their benchmark's order (NGQA: sparse, standard, complex), others after."""
    return _level_order().get(level, 9), level


@cache
def _level_order() -> dict[str, int]:
    order: dict[str, int] = {}
    for name in benchmark_names():
        for rank, level in enumerate(get_benchmark(name).levels):
            order.setdefault(level, rank)
    return order


def _breakdowns(task: str) -> tuple[Breakdown, ...]:
    found = spec_for_task(task)
    return found[0].breakdowns if found else ()


def _task(record: Record) -> str:
    return str(record.meta.get("task") or "unknown")


def _level(record: Record) -> str:
    return str(record.meta.get("level") or "")


def score_records(records: Sequence[Record], run: str = "", bootstrap: int = 1000,
                  seed: int = 0, bertscore: bool = False,
                  bertscore_model: str | Path | None = None, cluster: str | None = None
                  ) -> Scores:
    """Score records in memory (what :func:`score_run` does after reading the file): the
    metrics.json dict, with one :class:`SampleScore` per record in ``.samples``. ``cluster``:
    the meta key samples cluster on (default: each task's own, :func:`cluster_key`)."""
    bert, model_used = _bertscore(records, bertscore, bertscore_model)
    texts = [r for r in records if r.status == "ok" and scorer_of(_task(r)) == TEXT_SCORER]
    M.prime_text_pairs(M.text_pairs([r.parsed for r in texts], [r.gold for r in texts],
                                    [r.parse_ok for r in texts]))
    families: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, record in enumerate(records):
        families[(record.method, record.model, _task(record))].append(i)
    groups: list[dict[str, Any]] = []
    breakdowns: dict[str, list[dict[str, Any]]] = {
        b.name: [] for b in breakdowns_of(task for _, _, task in families)}
    samples: dict[int, SampleScore] = {}
    for (method, model, task), rows in sorted(families.items()):
        family = [records[i] for i in rows]
        ok_rows = [j for j, r in enumerate(family) if r.status == "ok"]
        ok = [family[j] for j in ok_rows]
        table = _answer_table(task, ok, [bert.get(rows[j]) for j in ok_rows] if bert else None)
        key = cluster_key(task, cluster)
        codes = record_clusters(ok, key)
        retrieval = _retrieval(ok)
        for i, score in zip(rows, _sample_scores(task, family, ok_rows, table, retrieval),
                            strict=True):
            samples[i] = score
        levels: dict[str, list[int]] = defaultdict(list)
        for j, record in enumerate(family):
            levels[_level(record)].append(j)
        ok_index = {j: k for k, j in enumerate(ok_rows)}
        for level in sorted(levels, key=level_rank):
            members = levels[level]
            scored = np.array([ok_index[j] for j in members if j in ok_index], dtype=int)
            groups.append(_group(method, model, task, level, [family[j] for j in members],
                                 table.subset(scored), retrieval, scored, bootstrap, seed,
                                 (key, codes)))
        for breakdown in _breakdowns(task):
            by_value: dict[str, list[int]] = defaultdict(list)
            for k, record in enumerate(ok):
                for value in breakdown.values(record.meta):
                    by_value[value].append(k)
            for value in sorted(by_value):
                chosen = np.array(by_value[value], dtype=int)
                sub = table.subset(chosen)
                breakdowns[breakdown.name].append(
                    {"method": method, "model": model, "task": task, breakdown.name: value,
                     "n": sub.n, "metrics": M.with_ci(sub, bootstrap, seed,
                                                      clusters=codes[chosen])})
    data: dict[str, Any] = {"run": run, "records": len(records), "bertscore_model": model_used,
                            "groups": groups, "breakdowns": breakdowns}
    pools = _pools(records, bootstrap, seed, cluster)
    if pools:
        data["pools"] = pools
    extracted = with_extractor(records)
    if extracted is not None:
        alternate = score_records(extracted, run=run, bootstrap=bootstrap, seed=seed,
                                  cluster=cluster)
        read = Counter((r.method, r.model, _task(r), _level(r)) for r in extracted
                       if r.extra.get("read_by_extractor"))
        data["with_extractor"] = [
            {k: g[k] for k in ("method", "model", "task", "level", "n", "metrics")}
            | {"extracted": read[(g["method"], g["model"], g["task"], g["level"])]}
            for g in alternate["groups"]]
    return Scores(data, [samples[i] for i in range(len(records))])


def with_extractor(records: Sequence[Record]) -> list[Record] | None:
    """The records as the ``--extractor`` model read them: an answer the rules could not read
    and the extractor could takes the extractor's value (``extra.read_by_extractor``); None
    when no record has an extractor reading."""
    if not any(isinstance(r.extra.get("extractor"), dict) for r in records):
        return None
    out = []
    for record in records:
        found = record.extra.get("extractor")
        if isinstance(found, dict) and found.get("parse_ok") and not record.parse_ok:
            extra = {k: v for k, v in record.extra.items() if k != "extractor"}
            record = record.model_copy(update={"parsed": found["parsed"], "parse_ok": True,
                                               "extra": extra | {"read_by_extractor": True}})
        elif "extractor" in record.extra:
            extra = {k: v for k, v in record.extra.items() if k != "extractor"}
            record = record.model_copy(update={"extra": extra})
        out.append(record)
    return out


def _sample_scores(task: str, family: list[Record], ok_rows: list[int], table: M.Table,
                   retrieval: tuple[M.Table, np.ndarray] | None) -> list[SampleScore]:
    """One score per record of a (method, model, task) family, in family order, read off the
    same per-sample columns that the family's metrics are means of."""
    columns = {name: column.tolist() for name, column in table.values().items()}
    extra: dict[int, dict[str, float]] = defaultdict(dict)  # by index among ok records
    if retrieval is not None:
        rtable, positions = retrieval
        for name, column in rtable.values().items():
            for k, value in zip(positions.tolist(), column.tolist(), strict=True):
                extra[k][f"retrieval_{name}"] = value
    correct_name = CORRECT_METRIC.get(scorer_of(task) or "", DEFAULT_CORRECT)
    ok_index = {j: k for k, j in enumerate(ok_rows)}
    out = []
    for j, record in enumerate(family):
        k = ok_index.get(j)
        values: dict[str, float] = {}
        correct = None
        if k is not None:
            values = {name: column[k] for name, column in columns.items()}
            values.update(extra.get(k, {}))
            if correct_name is not None and correct_name in values:
                correct = values[correct_name] == 1.0
        # Every field is already of its type (floats from tolist()): no validation pass.
        out.append(SampleScore.model_construct(
            key=record.key, item_id=record.item_id, method=record.method, model=record.model,
            task=task, level=_level(record), status=record.status, parse_ok=record.parse_ok,
            correct=correct, values=values))
    return out


def _pools(records: Sequence[Record], bootstrap: int, seed: int,
           cluster: str | None = None) -> list[dict[str, Any]]:
    """FAM-Bench Table 1's common pool per (model, task) over the run's text-input prompting
    modes: the pool size and each mode's metrics (with clustered intervals) on the pooled
    items."""
    answers: dict[tuple[str, str], dict[str, dict[str, fam_metrics.Answer]]] = \
        defaultdict(lambda: defaultdict(dict))
    labels: dict[str, Hashable] = {}
    for record in records:
        task = _task(record)
        spec = task_spec(task)
        if spec is not None and spec.pooled and fam_metrics.pooled_method(record.method):
            ok = record.status == "ok" and record.parse_ok
            answers[(record.model, task)][record.method][record.item_id] = (
                record.parsed, record.gold, ok)
            labels[record.item_id] = cluster_label(record, cluster_key(task, cluster))
    pools = []
    for (model, task), by_method in sorted(answers.items()):
        ids = fam_metrics.common_pool(task, by_method)
        codes = S.cluster_codes([labels[i] for i in ids])
        pools.append({"model": model, "task": task, "methods": sorted(by_method),
                      "n": len(ids),
                      "metrics": {method: M.with_ci(fam_metrics.pool_table(task, found, ids),
                                                    bootstrap, seed, clusters=codes)
                                  for method, found in sorted(by_method.items())}})
    return pools


def _group(method: str, model: str, task: str, level: str, members: list[Record],
           table: M.Table, retrieval: tuple[M.Table, np.ndarray] | None, scored: np.ndarray,
           bootstrap: int, seed: int, clusters: tuple[str, np.ndarray]) -> dict[str, Any]:
    errors = sum(r.status == "error" for r in members)
    key, codes = clusters  # codes: per ok record of the family
    retrieval_metrics = None
    if retrieval is not None:
        rtable, positions = retrieval  # positions: index among ok records, or -1
        keep = np.flatnonzero(np.isin(positions, scored))
        if keep.size:
            retrieval_metrics = M.with_ci(rtable.subset(keep), bootstrap, seed,
                                          clusters=codes[positions[keep]])
    total = len(members)
    mine = codes[scored]
    repeats = repeat_agreement(members)
    return ({"repeats": repeats} if repeats else {}) | {
        "method": method, "model": model, "task": task, "level": level,
        "n": table.n, "errors": errors, "error_rate": errors / total if total else 0.0,
        "clusters": {"by": key, "count": len(np.unique(mine)),
                     "largest": int(np.bincount(mine).max()) if mine.size else 0},
        "metrics": M.with_ci(table, bootstrap, seed, clusters=mine),
        "efficiency": _efficiency(members),
        "retrieval": retrieval_metrics,
        "method_stats": _method_stats(members),
        "reading": reading_stats(members),
    }


def repeat_agreement(members: Sequence[Record]) -> dict[str, Any] | None:
    """How an item's repeated answers (``run --repeats``) agree, over the answered records:
    the items answered more than once, the mean answers per such item, and the share of them
    whose answers are all the same (read answers, an unreadable one as its own value); None
    when no item was answered twice."""
    answers: dict[str, list[str]] = defaultdict(list)
    for record in members:
        if record.status == "ok":
            answers[record.item_id].append(json.dumps(
                record.parsed if record.parse_ok else None, sort_keys=True, default=str))
    repeated = [found for found in answers.values() if len(found) > 1]
    if not repeated:
        return None
    return {"items": len(repeated), "answers_per_item": float(np.mean([len(f) for f in repeated])),
            "agreement": float(np.mean([len(set(f)) == 1 for f in repeated]))}


READING_RATES = ("truncated_rate", "refusal_rate", "hedge_rate")


def reading_stats(members: Sequence[Record]) -> dict[str, Any]:
    """How the group's answers were read (records with status "ok"): the share cut off at the
    token limit, declined and hedged, the count of each rule and of each reason an answer did
    not count, and the mean reasoning tokens per sample. Records written before readings were
    kept count under the rule ``unrecorded``."""
    ok = [r for r in members if r.status == "ok"]
    rules: dict[str, int] = defaultdict(int)
    reasons: dict[str, int] = defaultdict(int)
    for record in ok:
        reading = record.reading
        rules[str(reading.get("rule") or "unrecorded")] += 1
        if not record.parse_ok:
            reasons[str(reading.get("reason") or "no_answer")] += 1
    n = len(ok)
    rates = {f"{reason}_rate": reasons.get(reason, 0) / n if n else 0.0
             for reason in ("truncated", "refusal", "hedge")}
    tokens = [r.usage.get("reasoning_tokens", 0) for r in ok]
    return {**rates, "rules": dict(sorted(rules.items())), "reasons": dict(sorted(reasons.items())),
            "reasoning_tokens": float(np.mean(tokens)) if tokens else 0.0}


def _method_stats(members: list[Record]) -> dict[str, Any] | None:
    """The group's method statistics (each answered record's ``method_stats``): a figure with
    the same value on every record (a bound, a setting) as it is, any other averaged (a
    yes / no as its share); None when no answered record has any."""
    found = [r.method_stats for r in members if r.status == "ok" and r.method_stats]
    if not found:
        return None
    names = list(dict.fromkeys(name for stats in found for name in stats))
    pooled: dict[str, Any] = {}
    for name in names:
        values = [stats[name] for stats in found if name in stats]
        same = all(value == values[0] and type(value) is type(values[0]) for value in values)
        pooled[name] = values[0] if same and not isinstance(values[0], bool) else \
            float(np.mean([float(value) for value in values]))
    return pooled
def _efficiency(members: list[Record]) -> dict[str, float]:
    if not members:
        return dict.fromkeys(EFFICIENCY, 0.0)
    values = np.array([[r.n_calls, r.usage.get("prompt_tokens", 0),
                        r.usage.get("completion_tokens", 0), r.latency_s] for r in members],
                      dtype=float)
    return {k: float(v) for k, v in zip(EFFICIENCY, values.mean(axis=0), strict=True)}


def _binary(pred: list, gold: list, parse_ok: list, bert: Any, labels: Any) -> M.Table:
    return M.binary_table(pred, gold, parse_ok)


def _multilabel(pred: list, gold: list, parse_ok: list, bert: Any, labels: Any) -> M.Table:
    return M.multilabel_table(pred, gold, parse_ok, labels=labels)


def _text(pred: list, gold: list, parse_ok: list, bert: Any, labels: Any) -> M.Table:
    scores = None if bert is None else [0.0 if s is None else s for s in bert]
    return M.text_table(pred, gold, parse_ok, scores)


def _dish(pred: list, gold: list, parse_ok: list, bert: Any, labels: Any) -> M.Table:
    return fam_metrics.dish_table(pred, gold, parse_ok)


def _rank(pred: list, gold: list, parse_ok: list, bert: Any, labels: Any) -> M.Table:
    return fam_metrics.rank_table(pred, gold, parse_ok)


# The metric tables by answer shape; a benchmark's spec (schema.TaskSpec.answer) names the
# shape of each of its tasks. A task no spec knows gets exact-match accuracy.
SCORERS: dict[str, Callable[..., M.Table]] = {
    "yes_no": _binary, "tag_set": _multilabel, "sentence": _text,
    "decision": _dish, "ranking": _rank}
TEXT_SCORER = "sentence"  # the shape whose answers BERTScore reads


def scorer_of(task: str) -> str | None:
    """The scorer key (the answer shape) of a task's registered benchmark, or None."""
    return answer_kind(task)


def _answer_table(task: str, ok: list[Record], bert: list[float | None] | None) -> M.Table:
    pred = [r.parsed for r in ok]
    gold = [r.gold for r in ok]
    parse_ok = [r.parse_ok for r in ok]
    found = spec_for_task(task)
    if found is not None and found[1].answer == "quantity":
        return M.quantity_table(pred, gold, parse_ok, float(found[1].tolerance or 0.0))
    if found is not None and found[1].answer in SCORERS:
        return SCORERS[found[1].answer](pred, gold, parse_ok, bert, found[0].labels)
    bad = ~np.asarray(parse_ok, dtype=bool)
    exact = np.array([p == g for p, g in zip(pred, gold, strict=True)], dtype=bool) & ~bad
    return M.mean_table({"accuracy": exact, "unparseable_rate": bad})


def _retrieval(ok: list[Record]) -> tuple[M.Table, np.ndarray] | None:
    positions = [k for k, r in enumerate(ok) if r.retrieved is not None and r.meta.get("signal")]
    if not positions:
        return None
    table = M.retrieval_table([ok[k].retrieved for k in positions],
                              [ok[k].meta["signal"] for k in positions])
    return table, np.array(positions, dtype=int)


def _bertscore(records: Sequence[Record], enabled: bool,
               model: str | Path | None) -> tuple[dict[int, float], str | None]:
    """BERTScore F1 by record index for every parsed text answer, in one batched call."""
    if not enabled:
        return {}, None
    rows = [i for i, r in enumerate(records) if scorer_of(_task(r)) == TEXT_SCORER
            and r.status == "ok" and r.parse_ok and r.parsed is not None]
    pairs = [(str(records[i].parsed), str(records[i].gold or "")) for i in rows]
    unique = list(dict.fromkeys(pairs))
    scores, used = M.bertscore_f1([p for p, _ in unique], [g for _, g in unique],
                                  None if model is None else str(model))
    where = {p: float(s) for p, s in zip(unique, scores, strict=True)}
    return {i: where[p] for i, p in zip(rows, pairs, strict=True)}, used


# --------------------------------------------------------------------------- writing


def _metric_rows(metrics: dict[str, dict[str, float]]) -> list[list[Any]]:
    return [[name, m["value"], m["low"], m["high"]] for name, m in sorted(metrics.items())]


def _csv_text(header: list[str], rows: list[list[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _write_text(path: Path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_scores(run_dir: str | Path, scores: Scores) -> dict[str, Path]:
    """Write ``scores.jsonl`` (one :class:`SampleScore` per record), ``metrics.json`` and the
    long-format CSVs (one row per metric), each atomically; ``scores`` is what
    :func:`score_run` or :func:`score_records` returned.

    ``metrics_groups.csv``: method, model, task, level, n, errors, error_rate, metric, value,
    low, high (retrieval metrics as ``retrieval_<name>``, efficiency as ``efficiency_<name>``
    with low = high = value). One CSV per breakdown the run's benchmarks declare
    (:attr:`~nutrireason.schema.BenchmarkSpec.breakdowns`; ``metrics_conditions.csv``, ...):
    method, model, task, the breakdown's value, n, metric, value, low, high.
    """
    samples = getattr(scores, "samples", None)
    if samples is None:
        raise NutriReasonError("write_scores needs what score_run or score_records returned: it "
                               "carries the per-sample scores for scores.jsonl, which a plain "
                               "metrics dict lacks")
    run_dir = Path(run_dir)
    files = {b.name: b.file for b in breakdowns_of()}
    paths = {"scores": run_dir / SCORES_FILE, "json": run_dir / METRICS_FILE,
             "groups": run_dir / GROUPS_CSV,
             **{name: run_dir / files[name] for name in scores["breakdowns"]}}
    # scores.jsonl first: a metrics.json newer than the records always has its scores beside it.
    # not strict: a per-sample value may be NaN (undefined) and must read back as a float
    write_jsonl_atomic(paths["scores"], (s.model_dump(mode="json") for s in samples),
                       strict=False)
    write_json_atomic(paths["json"], scores, strict=False)  # NaN: a metric undefined here
    rows = []
    for g in scores["groups"]:
        head = [g["method"], g["model"], g["task"], g["level"], g["n"], g["errors"],
                g["error_rate"]]
        metrics = dict(g["metrics"])
        metrics.update({f"retrieval_{k}": v for k, v in (g["retrieval"] or {}).items()})
        metrics.update({f"efficiency_{k}": {"value": v, "low": v, "high": v}
                        for k, v in g["efficiency"].items()})
        reading = g.get("reading") or {}
        metrics.update({f"reading_{k}": {"value": reading[k], "low": reading[k],
                                         "high": reading[k]}
                        for k in (*READING_RATES, "reasoning_tokens") if k in reading})
        rows += [head + row for row in _metric_rows(metrics)]
    _write_text(paths["groups"], _csv_text(
        ["method", "model", "task", "level", "n", "errors", "error_rate", "metric", "value",
         "low", "high"], rows))
    for key in scores["breakdowns"]:
        rows = [[b["method"], b["model"], b["task"], b[key], b["n"], *row]
                for b in scores["breakdowns"][key] for row in _metric_rows(b["metrics"])]
        _write_text(paths[key], _csv_text(
            ["method", "model", "task", key, "n", "metric", "value", "low", "high"], rows))
    return paths
