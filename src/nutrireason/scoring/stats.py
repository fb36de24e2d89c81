"""Statistics for samples that are not independent: clustered intervals, paired differences
between two runs, the Holm correction and power.

A benchmark asks about one user, recipe or dish set several times, so its samples come in
*clusters*. Every function here takes the cluster of each sample as an integer code
(:func:`cluster_codes`); a sample in a cluster of its own gives the independent-sample answer.

* :func:`clustered_se`: the cluster-robust standard error of a mean, as statsmodels' OLS on a
  constant with ``cov_type="cluster"`` (small-sample factor ``G / (G - 1)``); one sample per
  cluster gives the usual ``s / sqrt(n)``.
* :func:`cluster_rows`: per-cluster column sums plus the cluster size, so that the percentile
  bootstrap of :mod:`nutrireason.scoring.metrics` resamples clusters instead of rows.
* :func:`paired_test`: the difference of a per-sample metric between two arms on the same
  samples, a paired cluster bootstrap interval and a p-value: exact McNemar for 0/1 values
  when every cluster holds one pair, the clustered McNemar statistic (Durkalski et al. 2003,
  ``(sum_g d_g)^2 / sum_g d_g^2`` over per-cluster differences of discordant counts) when
  clusters hold several, and the centred paired bootstrap for other metrics.
* :func:`holm`: Holm's step-down adjusted p-values.
* :func:`required_items` / :func:`detectable_difference`: the two-sided test's sample size and
  minimum detectable difference from a per-sample variance of the difference and a design
  effect (normal approximation).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

ALPHA = 0.05
CHUNK_ELEMENTS = 4_000_000  # bootstrap weights held in memory at once
POWER = 0.80


def cluster_codes(labels: Sequence[Hashable]) -> np.ndarray:
    """Integer cluster codes 0..C-1 in order of first appearance."""
    seen: dict[Hashable, int] = {}
    return np.fromiter((seen.setdefault(label, len(seen)) for label in labels), dtype=np.int64,
                       count=len(labels))


def recode(codes: np.ndarray) -> np.ndarray:
    """The same clusters numbered 0..C-1 (a subset of samples leaves gaps in its codes)."""
    return np.unique(np.asarray(codes, dtype=np.int64), return_inverse=True)[1].reshape(-1)


def cluster_count(codes: np.ndarray) -> int:
    """The number of distinct clusters (codes may have gaps)."""
    return int(np.unique(codes).size)


def singletons(codes: np.ndarray) -> bool:
    """Whether every cluster holds one sample (the independent case)."""
    return cluster_count(codes) == codes.size


def cluster_rows(stats: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """``(C, k + 1)``: the column sums of ``stats`` within each cluster, then its size."""
    codes = recode(codes)
    count = cluster_count(codes)
    out = np.empty((count, stats.shape[1] + 1))
    for column in range(stats.shape[1]):
        out[:, column] = np.bincount(codes, weights=stats[:, column], minlength=count)
    out[:, -1] = np.bincount(codes, minlength=count)
    return out


def naive_se(values: np.ndarray) -> float:
    """``s / sqrt(n)`` with the n - 1 variance; 0 for fewer than two values."""
    values = np.asarray(values, dtype=float)
    if values.size < 2:
        return 0.0
    return float(np.std(values, ddof=1) / np.sqrt(values.size))


def clustered_se(values: np.ndarray, codes: np.ndarray) -> float:
    """Cluster-robust standard error of the mean of ``values`` (statsmodels' ``cluster``
    covariance for OLS on a constant: ``G / (G - 1) * sum_g (sum_i e_i)^2 / n^2``)."""
    values = np.asarray(values, dtype=float)
    codes = recode(codes)
    n = values.size
    groups = cluster_count(codes)
    if n < 2 or groups < 2:
        return 0.0
    residual_sums = np.bincount(codes, weights=values - values.mean(), minlength=groups)
    return float(np.sqrt(groups / (groups - 1) * np.sum(residual_sums ** 2)) / n)


def design_effect(values: np.ndarray, codes: np.ndarray) -> float:
    """The variance of the mean under clustering over its independent-sample variance (1 when
    both are 0)."""
    naive = naive_se(values)
    if naive == 0:
        return 1.0
    return (clustered_se(values, codes) / naive) ** 2


def resampled_sums(stats: np.ndarray, resamples: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Column sums of ``resamples`` bootstrap resamples of the rows of ``stats``: (B, k)."""
    n, k = stats.shape
    out = np.empty((resamples, k))
    step = max(1, CHUNK_ELEMENTS // max(n, 1))
    offsets = np.arange(step)[:, None] * n
    values = np.asarray(stats, dtype=np.float64)
    for start in range(0, resamples, step):
        b = min(step, resamples - start)
        idx = rng.integers(0, n, size=(b, n)) + offsets[:b]
        # Resample counts are small integers: float32 holds them exactly and halves the copy.
        weights = np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float32)
        out[start:start + b] = weights @ values
    return out


# --------------------------------------------------------------------------- paired tests


@dataclass
class PairedResult:
    """One paired comparison of arm A against arm B (``difference`` = A - B)."""

    n: int
    clusters: int
    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    p_value: float
    test: str
    a_only_right: int | None = None  # 0/1 metrics: discordant pairs each way
    b_only_right: int | None = None
    corrected_low: float | None = None  # at ``corrected_level`` (a multiplicity correction)
    corrected_high: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def wilson_interval(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval of ``successes`` in ``n`` trials (scipy's)."""
    interval = sps.binomtest(successes, n).proportion_ci(level, method="wilson")
    return float(interval.low), float(interval.high)


def is_binary(values: np.ndarray) -> bool:
    return bool(np.all((values == 0) | (values == 1)))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Exact McNemar p-value (two-sided binomial on the discordant pairs, statsmodels'
    ``mcnemar(exact=True)``)."""
    total = a_only + b_only
    if total == 0:
        return 1.0
    return float(min(1.0, 2 * sps.binom.cdf(min(a_only, b_only), total, 0.5)))


def mcnemar_clustered(discordance: np.ndarray, codes: np.ndarray) -> float:
    """Clustered McNemar (Durkalski et al.): ``(sum_g d_g)^2 / sum_g d_g^2`` against chi-square
    with one degree of freedom, ``d_g`` the per-cluster count of A-only minus B-only right."""
    per_cluster = np.bincount(recode(codes), weights=discordance)
    denominator = float(np.sum(per_cluster ** 2))
    if denominator == 0:
        return 1.0
    statistic = float(per_cluster.sum()) ** 2 / denominator
    return float(sps.chi2.sf(statistic, 1))


def bootstrap_means(values: np.ndarray, codes: np.ndarray, resamples: int,
                    rng: np.random.Generator) -> np.ndarray:
    """Means of ``values`` over ``resamples`` cluster bootstrap resamples: (B,)."""
    rows = cluster_rows(values.reshape(-1, 1), codes)
    sums = resampled_sums(rows, resamples, rng)
    return np.divide(sums[:, 0], sums[:, 1], out=np.zeros(resamples), where=sums[:, 1] > 0)


def paired_test(a: np.ndarray, b: np.ndarray, codes: np.ndarray, resamples: int = 2000,
                seed: int = 0, level: float = 1 - ALPHA,
                corrected_level: float | None = None) -> PairedResult:
    """Arm A against arm B on the same samples (row i of ``a`` and ``b`` is one sample, in
    cluster ``codes[i]``): the mean difference, its paired cluster bootstrap percentile
    interval at ``level`` (and at ``corrected_level``, from the same resamples) and a
    two-sided p-value (see the module notes for the test)."""
    codes = recode(codes)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    difference = a - b
    mean = float(difference.mean()) if difference.size else 0.0
    result = PairedResult(n=int(a.size), clusters=cluster_count(codes),
                          mean_a=float(a.mean()) if a.size else 0.0,
                          mean_b=float(b.mean()) if b.size else 0.0, difference=mean,
                          low=mean, high=mean, p_value=1.0, test="none")
    if a.size == 0:
        return result
    boot = None
    if resamples > 0 and result.clusters > 1:
        boot = bootstrap_means(difference, codes, resamples, np.random.default_rng(seed))
        result.low, result.high = percentile_interval(boot, level)
        if corrected_level is not None:
            result.corrected_low, result.corrected_high = percentile_interval(boot, corrected_level)
    elif corrected_level is not None:
        result.corrected_low, result.corrected_high = result.low, result.high
    if is_binary(a) and is_binary(b):
        result.a_only_right = int(np.sum(difference > 0))
        result.b_only_right = int(np.sum(difference < 0))
        if singletons(codes):
            result.p_value = mcnemar_exact(result.a_only_right, result.b_only_right)
            result.test = "mcnemar_exact"
        else:
            result.p_value = mcnemar_clustered(difference, codes)
            result.test = "mcnemar_clustered"
    elif boot is not None:
        extreme = np.sum(np.abs(boot - mean) >= abs(mean) - 1e-12)
        result.p_value = float((1 + extreme) / (1 + boot.size))
        result.test = "paired_bootstrap"
    return result


def percentile_interval(values: np.ndarray, level: float) -> tuple[float, float]:
    """The central ``level`` percentile interval of bootstrap ``values``."""
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (statsmodels' ``multipletests(method="holm")``)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p, kind="stable")
    m = p.size
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[index]))
        adjusted[index] = running
    return adjusted.tolist()


# --------------------------------------------------------------------------- power


def _z_total(alpha: float, power: float) -> float:
    return float(sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(power))


def required_items(variance: float, difference: float, design: float = 1.0,
                   alpha: float = ALPHA, power: float = POWER) -> int:
    """Items a two-sided test at ``alpha`` needs to detect a mean ``difference`` with
    ``power``, for a per-item variance of the difference ``variance`` and design effect
    ``design``: ``ceil((z_{1-a/2} + z_power)^2 * variance * design / difference^2)``."""
    if difference <= 0:
        raise ValueError("difference must be positive")
    return int(np.ceil(_z_total(alpha, power) ** 2 * variance * design / difference ** 2))


def detectable_difference(variance: float, n: int, design: float = 1.0,
                          alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest mean difference ``n`` items detect with ``power`` (inverse of
    :func:`required_items`); inf for no items."""
    if n <= 0:
        return float("inf")
    return float(_z_total(alpha, power) * np.sqrt(variance * design / n))


def difference_variance(values: np.ndarray, correlation: float = 0.0) -> float:
    """The per-item variance of the difference between this arm and another of the same
    spread, correlated ``correlation`` per item: ``2 * var * (1 - correlation)``."""
    values = np.asarray(values, dtype=float)
    variance = float(np.var(values, ddof=1)) if values.size > 1 else 0.0
    return 2 * variance * (1 - correlation)
