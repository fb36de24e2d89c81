"""Clustered statistics: agreement with statsmodels, hand-computed cases and seeded simulations
of the paired tests' false-positive rate and of the power formulas."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
import statsmodels.api as sm
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from nutrireason.scoring import metrics as M
from nutrireason.scoring import stats as S

# ----------------------------------------------------------------------------- helpers


def sm_cluster_se(values: np.ndarray, codes: np.ndarray) -> float:
    """statsmodels' cluster-robust standard error of the mean (OLS on a constant)."""
    y = np.asarray(values, dtype=float)
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": codes})
    return float(fit.bse[0])


def clustered_data(rng: np.random.Generator, clusters: int, max_size: int = 8,
                   sd: float = 1.0, base: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """0/1 values in clusters of random size 1..max_size with a logit-normal cluster effect."""
    sizes = rng.integers(1, max_size + 1, size=clusters)
    codes = np.repeat(np.arange(clusters), sizes)
    p = 1 / (1 + np.exp(-(base + sd * rng.normal(size=clusters))))
    return (rng.random(codes.size) < p[codes]).astype(float), codes


def two_by_two(a: np.ndarray, b: np.ndarray) -> list[list[int]]:
    """[[both right, A only], [B only, both wrong]] counted pair by pair."""
    table = [[0, 0], [0, 0]]
    for x, y in zip(a, b, strict=True):
        table[1 - int(x)][1 - int(y)] += 1
    return table


def random_arms(seed: int, sizes: tuple[int, int], rates: tuple[float, float]
                ) -> tuple[np.ndarray, np.ndarray]:
    """Two independent 0/1 arms of a random length in ``sizes`` with right-rates ``rates``."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(*sizes))
    return ((rng.random(n) < rates[0]).astype(float), (rng.random(n) < rates[1]).astype(float))


# --------------------------------------------------------------------------- clustered SE


def test_clustered_se_by_hand():
    """Hand arithmetic of the cluster-robust SE (and statsmodels on the same data)."""
    values = np.array([1, 0, 1, 1, 0, 0], dtype=float)
    codes = np.array([0, 0, 1, 1, 2, 2])
    # mean 0.5; residuals +.5 -.5 | +.5 +.5 | -.5 -.5; per-cluster sums s_g = 0, 1, -1
    # G/(G-1) * sum s_g^2 / n^2 = 3/2 * 2 / 36 = 1/12; SE = sqrt(1/12)
    expected = math.sqrt(1 / 12)
    assert S.clustered_se(values, codes) == pytest.approx(expected, rel=1e-12)
    assert sm_cluster_se(values, codes) == pytest.approx(expected, rel=1e-12)
    # naive: s^2 = 6 * 0.25 / 5 = 0.3, SE = sqrt(0.3 / 6) = sqrt(0.05); design = (1/12) / 0.05
    assert S.naive_se(values) == pytest.approx(math.sqrt(0.05), rel=1e-12)
    assert S.design_effect(values, codes) == pytest.approx((1 / 12) / 0.05, rel=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_clustered_se_matches_statsmodels(seed):
    """Random clustered data (unequal sizes, 0/1 and continuous) against statsmodels."""
    rng = np.random.default_rng(seed)
    binary, codes = clustered_data(rng, clusters=int(rng.integers(3, 60)))
    continuous = rng.normal(size=codes.size) + rng.normal(size=codes.max() + 1)[codes]
    for values in (binary, continuous):
        assert S.clustered_se(values, codes) == pytest.approx(sm_cluster_se(values, codes),
                                                              rel=1e-9)


@pytest.mark.parametrize("seed", range(4))
def test_singleton_clusters_give_the_naive_se(seed):
    """One sample per cluster: std(ddof=1)/sqrt(n), statsmodels' cluster SE and design 1."""
    rng = np.random.default_rng(seed)
    values = rng.normal(size=int(rng.integers(2, 200)))
    codes = np.arange(values.size)
    naive = np.std(values, ddof=1) / np.sqrt(values.size)
    assert S.naive_se(values) == pytest.approx(naive, rel=1e-12)
    assert S.clustered_se(values, codes) == pytest.approx(naive, rel=1e-9)
    assert S.clustered_se(values, codes) == pytest.approx(sm_cluster_se(values, codes), rel=1e-9)
    assert S.design_effect(values, codes) == pytest.approx(1.0, rel=1e-9)


def test_design_effect_is_the_variance_ratio_and_grows_with_a_cluster_effect():
    """(statsmodels cluster SE / naive SE)^2; well above 1 under a strong random effect."""
    rng = np.random.default_rng(11)
    values, codes = clustered_data(rng, clusters=300, sd=2.0)
    naive = np.std(values, ddof=1) / np.sqrt(values.size)
    expected = (sm_cluster_se(values, codes) / naive) ** 2
    assert S.design_effect(values, codes) == pytest.approx(expected, rel=1e-9)
    assert S.design_effect(values, codes) > 1.5


# ----------------------------------------------------------------------------- with_ci


def test_with_ci_singleton_clusters_equal_the_naive_bootstrap():
    """clusters=arange(n) gives exactly the independent-sample bootstrap and design 1."""
    rng = np.random.default_rng(5)
    y = (rng.random(250) < 0.6).astype(float)
    table = M.mean_table({"accuracy": y})
    naive = M.with_ci(table, 500, 7)["accuracy"]
    clustered = M.with_ci(table, 500, 7, clusters=np.arange(y.size))["accuracy"]
    assert clustered["low"] == naive["low"] and clustered["high"] == naive["high"]
    assert clustered["naive_low"] == clustered["low"]
    assert clustered["naive_high"] == clustered["high"]
    assert clustered["design_effect"] == pytest.approx(1.0, rel=1e-9)
    assert clustered["se"] == pytest.approx(np.std(y, ddof=1) / np.sqrt(y.size), rel=1e-9)


def test_with_ci_widths_follow_the_statsmodels_standard_errors():
    """Cluster bootstrap width ~ 2*1.96*statsmodels cluster SE; naive width ~ 2*1.96*s/sqrt(n)."""
    rng = np.random.default_rng(21)
    y, codes = clustered_data(rng, clusters=400, sd=1.5)
    out = M.with_ci(M.mean_table({"accuracy": y}), 4000, 3, clusters=codes)["accuracy"]
    cluster_se = sm_cluster_se(y, codes)
    naive_se = np.std(y, ddof=1) / np.sqrt(y.size)
    z = NormalDist().inv_cdf(0.975)
    assert out["value"] == pytest.approx(y.mean())
    assert (out["high"] - out["low"]) / (2 * z * cluster_se) == pytest.approx(1, abs=0.15)
    assert (out["naive_high"] - out["naive_low"]) / (2 * z * naive_se) == pytest.approx(1,
                                                                                         abs=0.15)
    assert out["se"] == pytest.approx(cluster_se, rel=1e-9)
    assert out["naive_se"] == pytest.approx(naive_se, rel=1e-9)
    assert out["design_effect"] == pytest.approx((cluster_se / naive_se) ** 2, rel=1e-9)
    assert out["design_effect"] > 1.3  # the cluster effect makes the clustered interval wider
    assert out["high"] - out["low"] > out["naive_high"] - out["naive_low"]


def test_with_ci_codes_with_gaps_equal_compact_codes():
    """Codes [5,5,9,9,12] are the clusters [0,0,1,1,2]; se against statsmodels on them."""
    y = np.array([1, 0, 1, 1, 0], dtype=float)
    table = M.mean_table({"accuracy": y})
    gapped = M.with_ci(table, 300, 1, clusters=np.array([5, 5, 9, 9, 12]))
    compact = M.with_ci(table, 300, 1, clusters=np.array([0, 0, 1, 1, 2]))
    assert gapped == compact
    assert gapped["accuracy"]["se"] == pytest.approx(sm_cluster_se(y, [0, 0, 1, 1, 2]), rel=1e-9)


def test_with_ci_without_resamples_keeps_the_point_value():
    """resamples=0: every bound is the plain mean; se still statsmodels'."""
    y = np.array([1, 1, 0, 1, 0, 1], dtype=float)
    codes = np.array([0, 0, 0, 1, 1, 2])
    out = M.with_ci(M.mean_table({"accuracy": y}), 0, 0, clusters=codes)["accuracy"]
    assert out["low"] == out["high"] == out["naive_low"] == out["naive_high"] == y.mean()
    assert out["se"] == pytest.approx(sm_cluster_se(y, codes), rel=1e-9)


# ----------------------------------------------------------------------------- McNemar


@pytest.mark.parametrize("a_only", [0, 1, 2, 3, 5, 8, 13, 21, 40])
def test_mcnemar_exact_matches_statsmodels(a_only):
    """Exact McNemar on a grid of discordant counts (zeros included) against statsmodels."""
    for b_only in [0, 1, 2, 4, 7, 12, 20, 33, 60]:
        table = [[17, a_only], [b_only, 9]]
        expected = mcnemar(table, exact=True).pvalue
        assert S.mcnemar_exact(a_only, b_only) == pytest.approx(expected, rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("seed", range(5))
def test_clustered_mcnemar_with_singletons_is_the_asymptotic_mcnemar(seed):
    """One pair per cluster: statsmodels' mcnemar(exact=False, correction=False)."""
    a, b = random_arms(seed, (20, 300), (0.7, 0.6))
    n = a.size
    expected = mcnemar(two_by_two(a, b), exact=False, correction=False).pvalue
    assert S.mcnemar_clustered(a - b, np.arange(n)) == pytest.approx(expected, rel=1e-9)


def test_clustered_mcnemar_by_hand():
    """Durkalski statistic written out: d_g = (A only - B only) per cluster."""
    diff = np.array([1, 1, 0, -1, 1, 0, 0, 1, 1, -1], dtype=float)
    codes = np.array([0, 0, 0, 1, 1, 2, 3, 3, 3, 4])
    # d_g = 2, 0, 0, 2, -1: (sum d_g)^2 / sum d_g^2 = 9 / 9 = 1 -> chi2(1) tail at 1
    expected = math.erfc(math.sqrt(1 / 2))  # P(chi2_1 > 1) = P(|Z| > 1)
    assert S.mcnemar_clustered(diff, codes) == pytest.approx(expected, rel=1e-12)


# --------------------------------------------------------------------------- paired_test


@pytest.mark.parametrize("seed", range(4))
def test_paired_test_binary_singletons_is_the_exact_mcnemar(seed):
    """0/1 arms, one pair per cluster: statsmodels' exact McNemar and the discordant counts."""
    a, b = random_arms(seed, (30, 200), (0.75, 0.65))
    n = a.size
    result = S.paired_test(a, b, np.arange(n), resamples=500, seed=seed)
    table = two_by_two(a, b)
    assert result.test == "mcnemar_exact"
    assert result.a_only_right == table[0][1] and result.b_only_right == table[1][0]
    assert result.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
    assert result.difference == pytest.approx(np.mean(a - b))
    assert result.low <= result.difference <= result.high
    assert (result.n, result.clusters) == (n, n)


def test_paired_test_binary_clusters_is_the_clustered_mcnemar():
    """0/1 arms in clusters: Durkalski's statistic from an explicit loop over the clusters."""
    rng = np.random.default_rng(8)
    _, codes = clustered_data(rng, clusters=60)
    codes = codes * 3 + 7  # labels with gaps: paired_test must renumber them
    a = (rng.random(codes.size) < 0.7).astype(int)
    b = (rng.random(codes.size) < 0.6).astype(int)
    per_cluster: dict[int, int] = {}
    for code, x, y in zip(codes, a, b, strict=True):
        per_cluster[int(code)] = per_cluster.get(int(code), 0) + int(x) - int(y)
    statistic = sum(per_cluster.values()) ** 2 / sum(d * d for d in per_cluster.values())
    expected = math.erfc(math.sqrt(statistic / 2))  # chi-square(1) upper tail
    result = S.paired_test(a, b, codes, resamples=500, seed=2)
    assert result.test == "mcnemar_clustered"
    assert result.clusters == 60
    assert result.p_value == pytest.approx(expected, rel=1e-9)
    table = two_by_two(a, b)
    assert result.a_only_right == table[0][1] and result.b_only_right == table[1][0]
    assert result.difference == pytest.approx(np.mean(a - b))
    assert result.low <= result.difference <= result.high


def test_paired_test_continuous_is_the_paired_bootstrap():
    """Continuous metric: centred paired bootstrap, p in (0, 1], interval brackets mean(a-b)."""
    rng = np.random.default_rng(4)
    _, codes = clustered_data(rng, clusters=80)
    a = rng.random(codes.size)
    b = np.clip(a - 0.05 + 0.2 * rng.normal(size=codes.size), 0, 1)
    for clusters in (codes, np.arange(codes.size)):
        result = S.paired_test(a, b, clusters, resamples=999, seed=1)
        assert result.test == "paired_bootstrap"
        assert 0 < result.p_value <= 1
        assert result.difference == pytest.approx(np.mean(a - b))
        assert result.low <= result.difference <= result.high
        assert result.a_only_right is None and result.b_only_right is None
    shifted = S.paired_test(a, b, codes, resamples=999, seed=1)
    assert shifted.p_value < 0.01  # a 0.05 shift over ~360 samples with sd 0.2 is clear


# ----------------------------------------------------------------------------- Holm


@pytest.mark.parametrize("seed", range(8))
def test_holm_matches_statsmodels(seed):
    """Holm step-down adjusted p-values against multipletests(method="holm"), ties included."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 25))
    p = np.round(rng.random(m) ** 2, 2)  # rounding to 2 decimals makes ties likely
    if m > 2:
        p[1] = p[0]
    expected = multipletests(p, method="holm")[1]
    assert np.allclose(S.holm(p.tolist()), expected, rtol=1e-12, atol=0)


# ------------------------------------------------------------------------------ power


@pytest.mark.parametrize(("variance", "difference", "design"),
                         [(1.0, 0.5, 1.0), (0.3975, 0.05, 1.0), (0.25, 0.03, 1.7),
                          (2.0, 0.2, 3.0)])
def test_required_items_is_the_normal_formula(variance, difference, design):
    """ceil((z_.975 + z_.80)^2 * var * design / d^2) from the standard library's NormalDist;
    detectable_difference inverts it."""
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.80)
    exact = z ** 2 * variance * design / difference ** 2
    n = S.required_items(variance, difference, design)
    assert n == math.ceil(exact)
    assert S.detectable_difference(variance, exact, design) == pytest.approx(difference)
    assert S.detectable_difference(variance, n, design) <= difference
    assert S.detectable_difference(variance, n - 1, design) > difference


def test_required_items_known_value():
    """Textbook: sigma = 1, delta = 0.5, alpha .05, power .8 -> 7.849 / 0.25 = 31.4 -> 32."""
    assert S.required_items(1.0, 0.5) == 32
    assert S.detectable_difference(1.0, 0) == math.inf
    with pytest.raises(ValueError):
        S.required_items(1.0, 0.0)


# ------------------------------------------------------------------------- simulations


@pytest.mark.parametrize("interaction", [0.0, 1.0])
def test_clustered_mcnemar_keeps_its_false_positive_rate(interaction):
    """300 null experiments, 150 clusters of 1-8, a shared logit-normal (sd 1) cluster effect
    (plus, second case, a symmetric arm-by-cluster effect): rate <= 5% + 3 SE."""
    rng = np.random.default_rng(2024)
    repetitions = 300
    clustered_hits = naive_hits = 0
    for _ in range(repetitions):
        sizes = rng.integers(1, 9, size=150)
        codes = np.repeat(np.arange(150), sizes)
        shared = 0.8 + rng.normal(size=150)
        arm = interaction * rng.normal(size=150)  # +arm for A, -arm for B: no mean difference
        p_a = 1 / (1 + np.exp(-(shared + arm)))[codes]
        p_b = 1 / (1 + np.exp(-(shared - arm)))[codes]
        a = (rng.random(codes.size) < p_a).astype(int)
        b = (rng.random(codes.size) < p_b).astype(int)
        result = S.paired_test(a, b, codes, resamples=0)
        assert result.test == "mcnemar_clustered"
        clustered_hits += result.p_value < 0.05
        # for contrast only (not asserted): the exact McNemar that ignores the clusters; with
        # the arm-by-cluster effect it rejects in roughly 15-20% of these null experiments
        naive_hits += mcnemar(two_by_two(a, b), exact=True).pvalue < 0.05
    limit = 0.05 + 3 * math.sqrt(0.05 * 0.95 / repetitions)
    assert clustered_hits / repetitions <= limit, (clustered_hits, naive_hits)


def test_required_items_gives_the_nominal_power_for_independent_items():
    """p = 0.70 vs 0.75, independent arms: n = required_items(...) reaches ~80% power
    with the exact McNemar of paired_test over 400 simulated experiments."""
    rng = np.random.default_rng(7)
    p_b, d = 0.70, 0.05
    variance = p_b * (1 - p_b) + (p_b + d) * (1 - p_b - d)
    n = S.required_items(variance, d)
    codes = np.arange(n)
    hits = 0
    for _ in range(400):
        a = (rng.random(n) < p_b + d).astype(int)
        b = (rng.random(n) < p_b).astype(int)
        result = S.paired_test(a, b, codes, resamples=0)
        assert result.test == "mcnemar_exact"
        hits += result.p_value < 0.05
    assert hits / 400 == pytest.approx(0.80, abs=0.08)


def test_required_items_gives_the_nominal_power_for_clusters():
    """Clusters of 4 with a shared effect and a cluster-level effect on the difference:
    n = required_items(var, d, 1 + (m - 1) * icc) reaches ~80% power with the clustered
    McNemar; the analytic design effect agrees with stats.design_effect on a large pilot."""
    rng = np.random.default_rng(12)
    m, d = 4, 0.05
    shared = np.array([-0.1, 0.1])  # arm B: 0.6 or 0.8 (mean 0.7), shared by arm A
    extra = np.array([-0.15, 0.15])  # arm A - arm B per cluster: d -0.15 or d + 0.15

    def experiment(clusters: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        codes = np.repeat(np.arange(clusters), m)
        pb = 0.7 + rng.choice(shared, size=clusters)
        pa = pb + d + rng.choice(extra, size=clusters)
        a = (rng.random(codes.size) < pa[codes]).astype(int)
        b = (rng.random(codes.size) < pb[codes]).astype(int)
        return a, b, codes

    # per-item variance of a - b: E[pa(1-pa) + pb(1-pb)] + Var(pa - pb)
    pbs = 0.7 + shared
    pas = (pbs[:, None] + d + extra[None, :]).ravel()
    within = np.mean(pas * (1 - pas)) + np.mean(pbs * (1 - pbs))
    between = np.var(extra)
    variance = within + between
    design = 1 + (m - 1) * between / variance
    a, b, codes = experiment(20_000)
    assert np.var(a - b) == pytest.approx(variance, rel=0.03)
    assert S.design_effect(a - b, codes) == pytest.approx(design, rel=0.05)

    n = S.required_items(variance, d, design)
    clusters = math.ceil(n / m)
    hits = 0
    for _ in range(400):
        a, b, codes = experiment(clusters)
        result = S.paired_test(a, b, codes, resamples=0)
        assert result.test == "mcnemar_clustered"
        hits += result.p_value < 0.05
    assert hits / 400 == pytest.approx(0.80, abs=0.08)


def test_codes_with_gaps_count_their_clusters():
    """A subset's raw codes (gaps) give statsmodels' SE: G is the number of distinct codes."""
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    codes = np.array([5, 5, 9, 9, 12])
    fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": codes})
    assert S.clustered_se(y, codes) == pytest.approx(fit.bse[0])
    assert S.singletons(np.array([3, 7])) and S.cluster_count(codes) == 3
