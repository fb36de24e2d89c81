"""Is arm A better than arm B? Paired differences between two scored runs, per group, with
clustered intervals, a Holm-corrected verdict, and the power of such a comparison.

An *arm* is one (method, model) of a run. Samples pair on (task, level, item id): an item
answered several times (``run --repeats``) counts once, with its values averaged first. Only
samples both arms answered (status "ok") pair; the rest are counted, never scored.

Per group (``by``: any of task, level, a benchmark's breakdowns such as condition, diet or
category, method, model), the compared value is a
per-sample metric of ``scores.jsonl`` (default: the task's headline, e.g. accuracy; see
:func:`default_metric`). :func:`~nutrireason.scoring.stats.paired_test` gives the difference
A - B, its paired cluster bootstrap interval and p-value; Holm's correction runs over every
group of the comparison, and each group also gets a Bonferroni interval (level
``1 - alpha / groups``), the simultaneous interval a forest plot shows.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nutrireason.errors import DataError
from nutrireason.schema import (
    Record,
    SampleScore,
    breakdowns_of,
    read_records,
    scores_for,
    spec_for_task,
)
from nutrireason.scoring import stats as S
from nutrireason.scoring.score import CORRECT_METRIC, cluster_key, cluster_label, scorer_of

DEFAULT_BY = ("task", "level")
TEXT_METRIC = "rougeL"  # text generation has no right answer: its headline is ROUGE-L
RESULT_FIELDS = ("metric", "n", "clusters", "cluster_by", "mean_a", "mean_b", "difference",
                 "low", "high", "corrected_low", "corrected_high", "p_value", "p_holm", "test",
                 "a_only_right", "b_only_right", "verdict")


def by_keys() -> tuple[str, ...]:
    """What ``--by`` may name: task, level, every registered benchmark's breakdowns
    (condition, diet, category, ...), method, model."""
    return ("task", "level", *(b.name for b in breakdowns_of()), "method", "model")


def check_by(by: Sequence[str]) -> None:
    known = by_keys()
    unknown = [key for key in by if key not in known]
    if unknown:
        raise DataError(None, f"cannot group by {unknown[0]!r}", field="--by", value=unknown[0],
                        expected=f"a comma-separated list of {', '.join(known)}")


@dataclass(frozen=True)
class Arm:
    """One (method, model) of a run."""

    method: str
    model: str

    @property
    def label(self) -> str:
        return f"{self.method} / {self.model}"


@dataclass
class RunSamples:
    """A scored run's ok samples: the per-sample values and records by (arm, item key)."""

    path: Path
    values: dict[Arm, dict[tuple[str, str, str], list[dict[str, float]]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    records: dict[tuple[str, str, str], Record] = field(default_factory=dict)
    errors: int = 0

    @property
    def arms(self) -> list[Arm]:
        return sorted(self.values, key=lambda a: (a.method, a.model))


def item_key(record: Record) -> tuple[str, str, str]:
    """What pairs two samples: (task, level, item id)."""
    return record.task, record.level, record.item_id


def load_samples(run_dir: Path, method: str | None = None, model: str | None = None
                 ) -> RunSamples:
    """A scored run's samples, optionally only one method's or model's."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise DataError(run_dir, "no such run directory", expected="a run from `nutrireason run`")
    records = read_records(run_dir)
    out = samples_of(run_dir, records, scores_for(run_dir, records), method, model)
    if not out.values:
        chosen = " ".join(f"{k} {v!r}" for k, v in (("method", method), ("model", model)) if v)
        raise DataError(run_dir, f"no answered samples{' for ' + chosen if chosen else ''}")
    return out


def samples_of(path: Path, records: Sequence[Record], scores: dict[str, SampleScore],
               method: str | None = None, model: str | None = None) -> RunSamples:
    """The ok samples of ``records`` with their scores (by record key), optionally only one
    method's or model's; errors are counted."""
    out = RunSamples(Path(path))
    for record in records:
        if (method and record.method != method) or (model and record.model != model):
            continue
        if record.status != "ok":
            out.errors += 1
            continue
        key = item_key(record)
        out.values[Arm(record.method, record.model)][key].append(scores[record.key].values)
        out.records.setdefault(key, record)
    return out


def only_arm(samples: RunSamples, arm: Arm) -> RunSamples:
    """The samples of one arm."""
    out = RunSamples(samples.path, records=samples.records)
    out.values[arm] = samples.values[arm]
    return out


def merged_samples(runs: Sequence[RunSamples]) -> RunSamples:
    """The samples of several runs as one (a report's runs: the same arm may answer one task in
    one run and another task in the next); an item answered in two runs keeps both answers."""
    out = RunSamples(runs[0].path if runs else Path("."))
    for samples in runs:
        for arm, items in samples.values.items():
            for key, values in items.items():
                out.values[arm][key].extend(values)
        for key, record in samples.records.items():
            out.records.setdefault(key, record)
        out.errors += samples.errors
    return out


def arm_comparisons(runs: Sequence[RunSamples], resamples: int = 1000, seed: int = 0,
                    alpha: float = S.ALPHA, limit: int = 60) -> dict[str, Any] | None:
    """Every arm of ``runs`` against its task's reference, per task and level on the items both
    answered, Holm over all the rows: what the report's comparison section shows. A task's
    reference is the first arm that answered it (the first run's first method and model). None
    when no two arms share an item. At most ``limit`` rows (``nutrireason compare`` does any
    other pair)."""
    merged = merged_samples(runs)
    arms = list(merged.values)  # in the order they first answered
    references: dict[str, Arm] = {}
    for arm in arms:
        for task, _level, _item in merged.values[arm]:
            references.setdefault(task, arm)
    pairs: dict[tuple[str, ...], Pairs] = {}
    for arm in arms:
        for reference in dict.fromkeys(references.values()):
            if reference == arm:
                continue
            found, _ = collect_pairs(only_arm(merged, arm), only_arm(merged, reference),
                                     ("task", "level"), None, None)
            pairs.update({(arm.label, reference.label, *group): value
                          for group, value in found.items() if references[group[0]] == reference})
    if not pairs:
        return None
    chosen = dict(list(pairs.items())[:limit])
    return {"references": {task: arm.label for task, arm in references.items()},
            "alpha": alpha, "groups": compare_groups(
                chosen, ("arm", "reference", "task", "level"), resamples, seed, alpha)}


def pair_arms(a: RunSamples, b: RunSamples) -> list[tuple[Arm, Arm]]:
    """Which arm of A faces which arm of B: the only one of each; else the same method (two
    models compared per method) or the same model (two methods per model); else, when one run
    has a single arm, the other run's only arm with its method (else with its model)."""
    arms_a, arms_b = a.arms, b.arms
    if len(arms_a) == 1 and len(arms_b) == 1:
        return [(arms_a[0], arms_b[0])]
    for shared, other in (("method", "model"), ("model", "method")):
        if len({getattr(x, other) for x in arms_a}) == 1 and \
                len({getattr(x, other) for x in arms_b}) == 1:
            by_a = {getattr(x, shared): x for x in arms_a}
            by_b = {getattr(x, shared): x for x in arms_b}
            if set(by_a) == set(by_b):
                return [(by_a[k], by_b[k]) for k in sorted(by_a)]
    single = _single_arm_pair(arms_a, arms_b)
    if single is not None:
        return [single]
    raise DataError(b.path, "cannot tell which arm to compare with which: A has "
                    f"{', '.join(x.label for x in arms_a)}; B has "
                    f"{', '.join(x.label for x in arms_b)}", field="--a-method / --b-model",
                    expected="one (method, model) per run, or the same methods (or models) on "
                             "both sides; narrow with --a-method, --a-model, --b-method, "
                             "--b-model")


def _single_arm_pair(arms_a: list[Arm], arms_b: list[Arm]) -> tuple[Arm, Arm] | None:
    """A run with one arm faces the other run's only arm of the same method, else of the
    same model; None when there is no such arm."""
    flipped = len(arms_a) != 1
    one, many = (arms_b, arms_a) if flipped else (arms_a, arms_b)
    if len(one) != 1:
        return None
    for shared in ("method", "model"):
        matches = [x for x in many if getattr(x, shared) == getattr(one[0], shared)]
        if len(matches) == 1:
            return (matches[0], one[0]) if flipped else (one[0], matches[0])
    return None


def default_metric(task: str) -> str:
    """The per-sample value a task is compared on: its spec's headline, else the value that
    says whether an answer is right, else ROUGE-L for text answers."""
    found = spec_for_task(task)
    if found and found[1].headline:
        return found[1].headline
    scorer = scorer_of(task) or ""
    return CORRECT_METRIC.get(scorer, "accuracy") or TEXT_METRIC


def _group_values(record: Record, arm_a: Arm, by: Sequence[str]) -> list[tuple[str, ...]]:
    """The groups a pair counts in (a sample counts for every value of a breakdown it has, a
    condition or diet say, and under "" for a breakdown its benchmark lacks)."""
    fixed = {"task": record.task, "level": record.level, "method": arm_a.method,
             "model": arm_a.model}
    found = spec_for_task(record.task)
    declared = {b.name: b for b in found[0].breakdowns} if found else {}
    choices: list[list[str]] = []
    for key in by:
        if key in fixed:
            choices.append([fixed[key]])
        else:
            breakdown = declared.get(key)
            choices.append((breakdown.values(record.meta) if breakdown else []) or [""])
    groups: list[tuple[str, ...]] = [()]
    for options in choices:
        groups = [g + (v,) for g in groups for v in options]
    return groups


@dataclass
class Pairs:
    """The paired values of one group."""

    metric: str
    cluster_by: str
    a: list[float] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    clusters: list[Any] = field(default_factory=list)


def _mean(values: list[dict[str, float]], metric: str, where: Path, key: tuple) -> float:
    found = [v[metric] for v in values if metric in v]
    if not found:
        raise DataError(where, f"sample {key[2]!r} ({key[0]}) has no per-sample {metric!r}",
                        field="--metric", value=metric,
                        expected="a per-sample value of scores.jsonl (e.g. accuracy, "
                                 "subset_accuracy, rougeL, top1_accuracy, mrr)")
    return float(np.mean(found))


def collect_pairs(a: RunSamples, b: RunSamples, by: Sequence[str], metric: str | None,
                  cluster: str | None) -> tuple[dict[tuple[str, ...], Pairs], dict[str, int]]:
    """Paired values per group and the counts of what did not pair."""
    groups: dict[tuple[str, ...], Pairs] = {}
    counts = {"paired": 0, "only_a": 0, "only_b": 0}
    for arm_a, arm_b in pair_arms(a, b):
        left, right = a.values[arm_a], b.values[arm_b]
        counts["only_a"] += len(set(left) - set(right))
        counts["only_b"] += len(set(right) - set(left))
        for key in sorted(set(left) & set(right)):
            record = a.records[key]
            name = metric or default_metric(record.task)
            value_a = _mean(left[key], name, a.path, key)
            value_b = _mean(right[key], name, b.path, key)
            unit = cluster_key(record.task, cluster)
            label = cluster_label(record, unit)
            counts["paired"] += 1
            for group in _group_values(record, arm_a, by):
                pairs = groups.setdefault(group, Pairs(name, unit))
                pairs.a.append(value_a)
                pairs.b.append(value_b)
                pairs.clusters.append(label)
    return groups, counts


def compare_runs(run_a: Path, run_b: Path, by: Sequence[str] = DEFAULT_BY,
                 metric: str | None = None, cluster: str | None = None,
                 resamples: int = 2000, seed: int = 0, alpha: float = S.ALPHA,
                 a_method: str | None = None, a_model: str | None = None,
                 b_method: str | None = None, b_model: str | None = None) -> dict[str, Any]:
    """The comparison of two scored runs as a JSON-ready dict (see the module notes)."""
    check_by(by)
    a = load_samples(run_a, a_method, a_model)
    b = load_samples(run_b, b_method, b_model)
    pairs, counts = collect_pairs(a, b, by, metric, cluster)
    if not counts["paired"]:
        raise DataError(run_b, f"shares no answered item with {run_a} ({counts['only_a']} "
                               f"items only in A, {counts['only_b']} only in B)")
    rows = compare_groups(pairs, by, resamples, seed, alpha)
    return {"a": {"run": str(run_a), "arms": [x.label for x in a.arms], "errors": a.errors},
            "b": {"run": str(run_b), "arms": [x.label for x in b.arms], "errors": b.errors},
            "by": list(by), "alpha": alpha, "correction": "holm", "resamples": resamples,
            **counts, "groups": rows}


def compare_groups(pairs: dict[tuple[str, ...], Pairs], by: Sequence[str], resamples: int,
                   seed: int, alpha: float) -> list[dict[str, Any]]:
    """One row per group: the paired test, Holm over all groups, a Bonferroni interval and
    the verdict at ``alpha``."""
    rows = []
    corrected_level = 1 - alpha / max(len(pairs), 1)
    for group, found in sorted(pairs.items()):
        codes = S.cluster_codes(found.clusters)
        result = S.paired_test(np.array(found.a), np.array(found.b), codes, resamples, seed,
                               1 - alpha, corrected_level)
        rows.append({**dict(zip(by, group, strict=True)), "metric": found.metric,
                     "cluster_by": found.cluster_by, **result.as_dict()})
    for row, adjusted in zip(rows, S.holm([r["p_value"] for r in rows]), strict=True):
        row["p_holm"] = adjusted
        row["verdict"] = verdict(row["difference"], adjusted, alpha)
    return rows


def verdict(difference: float, p_holm: float, alpha: float) -> str:
    if p_holm >= alpha or difference == 0:
        return "no difference found"
    return "A better" if difference > 0 else "B better"


def comparison_csv(comparison: dict[str, Any]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=(*by_keys(), *RESULT_FIELDS),
                            extrasaction="ignore",
                            lineterminator="\n")
    writer.writeheader()
    writer.writerows(comparison["groups"])
    return buffer.getvalue()


def parse_by(text: str | Iterable[str]) -> tuple[str, ...]:
    """``"task,level"`` (or a list of such) as a tuple of group keys."""
    parts = [text] if isinstance(text, str) else list(text)
    return tuple(p.strip() for part in parts for p in part.split(",") if p.strip())


# --------------------------------------------------------------------------- power


def item_values(samples: RunSamples, metric: str | None, by: Sequence[str], cluster: str | None
                ) -> dict[tuple[str, ...], Pairs]:
    """One run's per-item values per group (``Pairs.a`` only), for :func:`power_rows`."""
    groups: dict[tuple[str, ...], Pairs] = {}
    for arm in samples.arms:
        for key, values in sorted(samples.values[arm].items()):
            record = samples.records[key]
            name = metric or default_metric(record.task)
            unit = cluster_key(record.task, cluster)
            for group in _group_values(record, arm, by):
                found = groups.setdefault(group, Pairs(name, unit))
                found.a.append(_mean(values, name, samples.path, key))
                found.clusters.append(cluster_label(record, unit))
    return groups


def power_row(values: np.ndarray, codes: np.ndarray, difference: float, paired: bool,
              correlation: float, alpha: float, power: float) -> dict[str, Any]:
    """Items and clusters needed to detect ``difference``, and the difference this many
    items detect, from one arm's values (``paired`` False: a second arm of the same spread,
    correlated ``correlation`` per item) or from paired differences A - B (``paired``)."""
    codes = S.recode(codes)
    variance = float(np.var(values, ddof=1)) if paired and values.size > 1 else \
        S.difference_variance(values, correlation)
    design = S.design_effect(values, codes)
    needed = S.required_items(variance, difference, design, alpha, power)
    size = values.size / max(S.cluster_count(codes), 1)
    return {"n": int(values.size), "clusters": S.cluster_count(codes),
            "mean_cluster_size": size, "variance": variance, "design_effect": design,
            "required_items": needed, "required_clusters": int(np.ceil(needed / size)),
            "detectable": S.detectable_difference(variance, values.size, design, alpha, power)}


def power_rows(runs: Sequence[Path], difference: float, by: Sequence[str] = DEFAULT_BY,
               metric: str | None = None, cluster: str | None = None,
               correlation: float = 0.0, alpha: float = S.ALPHA, power: float = S.POWER
               ) -> list[dict[str, Any]]:
    """Per group, what a comparison needs to detect ``difference`` with ``power``: from one
    run's own variance and cluster structure, or from the paired differences of two runs."""
    if len(runs) not in (1, 2):
        raise DataError(None, "power reads one run or two", field="--runs", value=len(runs))
    check_by(by)
    if len(runs) == 1:
        groups = item_values(load_samples(runs[0]), metric, by, cluster)
        paired = False
    else:
        groups, counts = collect_pairs(load_samples(runs[0]), load_samples(runs[1]), by, metric,
                                       cluster)
        if not counts["paired"]:
            raise DataError(runs[1], f"shares no answered item with {runs[0]}")
        for found in groups.values():
            found.a = list(np.subtract(found.a, found.b))
        paired = True
    rows = []
    for group, found in sorted(groups.items()):
        rows.append({**dict(zip(by, group, strict=True)), "metric": found.metric,
                     "cluster_by": found.cluster_by,
                     **power_row(np.array(found.a), S.cluster_codes(found.clusters), difference,
                                 paired, correlation, alpha, power)})
    return rows


def baseline_power(baseline: float, difference: float, correlation: float = 0.0,
                   design: float = 1.0, alpha: float = S.ALPHA, power: float = S.POWER
                   ) -> dict[str, Any]:
    """Items needed to tell a 0/1 metric at ``baseline`` from ``baseline + difference``: the
    variance of the per-item difference of two arms correlated ``correlation``."""
    other = baseline + difference
    if not 0 < baseline < 1 or not 0 < other < 1:
        raise DataError(None, "baseline and baseline + difference must lie strictly between 0 "
                              "and 1", field="--baseline", value=baseline)
    spread_a, spread_b = baseline * (1 - baseline), other * (1 - other)
    variance = spread_a + spread_b - 2 * correlation * np.sqrt(spread_a * spread_b)
    return {"baseline": baseline, "variance": float(variance), "design_effect": design,
            "required_items": S.required_items(float(variance), difference, design, alpha,
                                               power)}
