"""Full-scale synthetic NHANES benchmark: write a raw XPT tree, then time reading and annotation.

    python benchmarks/nhanes_scale.py [--out DIR] [--participants 100000]
        [--food-records 2000000] [--seed 0] [--keep] [--narrow] [--cores 2] [--profile]

1. Writes a synthetic raw NHANES tree in SAS transport v5 (XPT), the real file and variable
   names of 9 cycles (C D E F G H I J P), one folder per cycle plus ``RXQ_DRUG.XPT`` at the root.
   Values are drawn to resemble the real 2017-18 bundle loosely (ages 0-80 with about 2/3
   adults, BMI lognormal around 28, BP around 120/70 with some 0 diastolic, HbA1c around 5.6 %,
   fasting glucose around 6 mmol/L, coded answers with their refused / don't-know codes such as
   7/9, 7777/9999, 5555/6666, 777777/999999, 77777/99999). Tables carry filler columns so that
   each file has about its real width (DR1IFF 84 variables, DR1TOT 168, ...); ``--narrow``
   writes only the variables the reader uses. Writing is timed on its own. A tree in ``--out``
   whose marker file (``nhanes_scale.json``) records the same parameters is reused.
2. In a fresh subprocess (pinned to ``--cores`` CPUs, so that peak RSS and the timings are its
   own), times ``read_nhanes_dir`` and ``annotate_users`` separately.
3. Prints the rows of each tidy table, read / annotate / total seconds, peak RSS (GB) and the
   ratios to the targets (60 s, 4 GB on 2 cores). Not a pass/fail test: the exit status is 0
   unless something failed (including a read that does not give the designed row counts).

Design: exactly ``--participants`` participants and ``--food-records`` DR1IFF rows are read.
As in the real data, the 2017-Mar 2020 (P) files *contain* the 2017-18 (J) participants: the
participants are split over C, D, E, F, G, H, I, J and "P only" in proportion to the real cycle
sizes; J's participants are written in the ``*_J.XPT`` files and again, with the same values of
the variables the reader uses, in the ``P_*.XPT`` files (P has no BPX, CBQ or DUQ file, as in
the real release). The tree is read with ``prefer="P"``: the reader drops the J files, reads
C..I plus P and sees every participant once (C..I + J + P-only = N). The reader refuses J and P
together without ``prefer`` or ``cycles`` and rejects a participant found in two cycles, so
reading both is not an option. The food records are spread over the participants who did the
day-1 recall (DR1DRSTZ 1, 2 or 4), so the files read hold exactly ``--food-records`` DR1IFF
rows; DR1IFF_J repeats J's rows and is written but not read.

The default output is a temporary directory, removed at the end unless ``--keep``; a directory
given with ``--out`` is kept (it can be reused by the next run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

GENERATOR_VERSION = 3
TARGET_SECONDS = 60.0
TARGET_GB = 4.0
MARKER = "nhanes_scale.json"
ROOT = Path(__file__).resolve().parents[1]

# Participant groups in SEQN order; "P" is the P-only group (P files hold J + P-only).
GROUPS = "CDEFGHIJP"
REAL_SIZES = {"C": 10122, "D": 10348, "E": 10149, "F": 10537, "G": 9756, "H": 10175,
              "I": 9971, "J": 9254, "P": 6306}
SEQN_START = {"C": 21005, "D": 31127, "E": 41475, "F": 51624, "G": 62161, "H": 73557,
              "I": 83732, "J": 93703, "P": 109263}
RELEASE = {"C": 3, "D": 4, "E": 5, "F": 6, "G": 7, "H": 8, "I": 9, "J": 10, "P": 66}
FOLDER = {"C": "2003-2004", "D": "2005-2006", "E": "2007-2008", "F": "2009-2010",
          "G": "2011-2012", "H": "2013-2014", "I": "2015-2016", "J": "2017-2018",
          "P": "2017-2020"}
C_LAB_STEMS = {"GLU": "L10AM_C", "GHB": "L10_C", "BIOPRO": "L40_C", "TRIGLY": "L13AM_C",
               "CBC": "L25_C"}
# About the real number of variables per file (2017-18); filler columns make up the rest.
WIDTH = {"DEMO": 46, "BMX": 21, "BPX": 21, "BPXO": 12, "GLU": 4, "GHB": 2, "BIOPRO": 38,
         "TRIGLY": 9, "CBC": 22, "DIQ": 54, "DR1TOT": 168, "DR1IFF": 84, "DBQ": 57, "CBQ": 30,
         "RXQ_RX": 12, "DUQ": 60, "OSQ": 40}
DRUGS_PER_USER = 1.5
N_DRUGS = 1400
N_FOOD_CODES = 8000
CBQ_NEW = ["CBD071", "CBD091", "CBD111", "CBD121", "CBD131"]
CBQ_OLD = ["CBD070", "CBD090", "CBD110", "CBD120", "CBD130"]
NAN = np.nan
TINY = 5.397605e-79  # how some exact zeros come out of real NHANES files


# ------------------------------------------------------------------------------ participants


def _split(total: int, weights: dict[str, int]) -> dict[str, int]:
    """Split ``total`` over the keys in proportion to ``weights`` (largest remainder)."""
    raw = np.array(list(weights.values()), dtype=float) * total / sum(weights.values())
    counts = np.floor(raw).astype(int)
    for i in np.argsort(raw - counts)[::-1][: total - counts.sum()]:
        counts[i] += 1
    return dict(zip(weights, counts.tolist(), strict=True))


def _codes(rng, n: int, shares: dict[float, float]) -> np.ndarray:
    """Coded answers drawn with the given shares (normalised)."""
    values = np.array(list(shares), dtype=float)
    p = np.array(list(shares.values()), dtype=float)
    return rng.choice(values, size=n, p=p / p.sum())


def _with_codes(rng, values: np.ndarray, codes: dict[float, float]) -> np.ndarray:
    """Replace a share of ``values`` by special codes ({code: share})."""
    out = values.astype(float).copy()
    u = rng.random(len(out))
    edge = 0.0
    for code, share in codes.items():
        out[(u >= edge) & (u < edge + share)] = code
        edge += share
    return out


def _lognormal(rng, median: float, sigma: float, n: int) -> np.ndarray:
    return median * np.exp(sigma * rng.standard_normal(n))


def make_people(n: int, rng) -> dict[str, np.ndarray]:
    """Per-participant variables for all N participants, in SEQN order."""
    sizes = _split(n, REAL_SIZES)
    group, seqn, end = [], [], 0
    for g in GROUPS:
        start = max(SEQN_START[g], end + 1)
        seqn.append(start + np.arange(sizes[g]))
        group.append(np.full(sizes[g], g))
        end = start + sizes[g] - 1
    p: dict[str, np.ndarray] = {"group": np.concatenate(group),
                                "seqn": np.concatenate(seqn).astype(float)}
    adult = rng.random(n) < 0.66
    p["age"] = np.where(adult, np.minimum(rng.integers(18, 84, n), 80),
                        rng.integers(0, 18, n)).astype(float)
    age = p["age"]
    p["sex"] = rng.integers(1, 3, n).astype(float)
    p["examined"] = rng.random(n) < 0.95
    p["fasting"] = p["examined"] & (age >= 12) & (rng.random(n) < 0.45)
    p["weight_int"] = np.round(_lognormal(rng, 25000, 0.8, n), 6)
    p["weight_mec"] = np.where(p["examined"], p["weight_int"] * 1.05, 0.0)

    # DIQ010: 1 yes (rising with age), 2 no, 3 borderline, 7 refused, 9 don't know.
    u = rng.random(n)
    p_yes = np.where(age >= 18, 0.01 + 0.24 * (age - 18) / 62, 0.003)
    diq = np.full(n, 2.0)
    diq[u < p_yes] = 1.0
    diq[(u >= p_yes) & (u < p_yes + np.where(age >= 18, 0.025, 0.002))] = 3.0
    v = rng.random(n)
    diq[v < 0.0004] = 7.0
    diq[(v >= 0.0004) & (v < 0.004)] = 9.0
    p["diq010"] = diq
    diabetic = diq == 1.0

    # Body measures: BMI lognormal around 28 for adults, lower for children, none under 2.
    child_bmi = 15.5 + 0.45 * np.clip(age - 5, 0, None)
    bmi = np.where(age >= 18, _lognormal(rng, 28.0, 0.21, n),
                   child_bmi * _lognormal(rng, 1.0, 0.15, n))
    bmi = np.round(bmi, 1)
    bmi[(age < 2) | (rng.random(n) < 0.03)] = NAN
    p["bmi"] = bmi
    p["waist"] = np.round(np.where(age >= 18, 40 + 2.0 * bmi, 30 + 1.4 * bmi + 1.2 * age)
                          + 6 * rng.standard_normal(n), 1)

    # Blood pressure (age 8+): person means, per-reading noise added per file.
    p["sbp"] = 95 + 0.45 * age + 14 * rng.standard_normal(n)
    p["dbp"] = np.clip(58 + 0.3 * np.minimum(age, 50) + 10 * rng.standard_normal(n), 30, None)

    # Labs: HbA1c around 5.6 %, fasting glucose around 6 mmol/L (diabetics higher).
    p["hba1c"] = np.round(np.where(diabetic, 4.3 + _lognormal(rng, 2.8, 0.35, n),
                                   4.3 + _lognormal(rng, 1.2, 0.25, n)), 1)
    glu = np.where(diabetic, _lognormal(rng, 150, 0.3, n), _lognormal(rng, 100, 0.14, n))
    p["glu_mg"] = np.round(glu)
    p["glu_si"] = np.round(p["glu_mg"] * 0.05551, 2)
    p["bun_mg"] = np.round(_lognormal(rng, 14, 0.35, n))
    p["bun_si"] = np.round(p["bun_mg"] * 0.357, 2)
    p["ldl_mg"] = np.round(_lognormal(rng, 108, 0.3, n))
    p["rbc"] = np.round(4.7 + 0.45 * rng.standard_normal(n), 2)
    p["hgb"] = np.round(13.8 + 1.4 * rng.standard_normal(n), 1)

    # Day-1 recall: DR1DRSTZ 1 reliable, 2 not reliable, 4 breast-fed infant, 5 not done.
    status = _codes(rng, n, {1.0: 0.87, 2.0: 0.03, 5.0: 0.10})
    status[(age < 2) & (status == 1.0) & (rng.random(n) < 0.25)] = 4.0
    p["recall"] = status
    return p


# ------------------------------------------------------------------------------- row tables


def make_foods(people: dict[str, np.ndarray], n_rows: int, rng) -> dict[str, np.ndarray]:
    """DR1IFF rows: exactly ``n_rows`` spread over the recall respondents, in SEQN order."""
    n = len(people["seqn"])
    respondents = np.flatnonzero(np.isin(people["recall"], (1.0, 2.0, 4.0)))
    counts = np.zeros(n, dtype=np.int64)
    if n_rows >= len(respondents):
        weight = _lognormal(rng, 1.0, 0.45, len(respondents))
        counts[respondents] = 1 + rng.multinomial(n_rows - len(respondents), weight / weight.sum())
    else:
        counts[rng.choice(respondents, n_rows, replace=False)] = 1
    person = np.repeat(np.arange(n), counts)
    starts = np.cumsum(counts) - counts
    pool = np.sort(rng.choice(np.arange(11_000_000, 99_999_999, 997), N_FOOD_CODES,
                              replace=False)).astype(float)
    popularity = 1.0 / np.arange(1, N_FOOD_CODES + 1) ** 1.05
    popularity = rng.permutation(popularity / popularity.sum())
    grams = np.round(_lognormal(rng, 110, 1.0, n_rows), 2)
    grams[rng.random(n_rows) < 0.02] = 0.0
    return {
        "person": person,
        "line": (np.arange(n_rows) - starts[person] + 1).astype(float),
        "code": rng.choice(pool, size=n_rows, p=popularity),
        "grams": grams,
    }


def make_drugs(rng) -> dict[str, np.ndarray]:
    """The Multum drug table (RXQ_DRUG): ids, names, up to four category paths."""
    numbers = np.sort(rng.choice(np.arange(1, 9999), N_DRUGS, replace=False))
    prefix = rng.choice(np.array(["d", "a", "c", "h"]), N_DRUGS, p=[0.94, 0.03, 0.02, 0.01])
    ids = np.array([f"{a}{b:05d}" for a, b in zip(prefix, numbers, strict=True)], dtype=object)
    names = np.array([f"SYNTHETIC DRUG {i:04d}" for i in range(N_DRUGS)], dtype=object)
    known = ["LISINOPRIL", "METFORMIN", "ATORVASTATIN", "LEVOTHYROXINE", "AMLODIPINE",
             "OMEPRAZOLE", "SIMVASTATIN", "METOPROLOL", "ALBUTEROL", "GABAPENTIN"]
    names[: len(known)] = known
    # Non-opioid category paths (level 1 > 2 > 3); 57 > 58 > 59/61 are non-opioid analgesics.
    paths = np.array([(40, 42, 56), (40, 47, NAN), (358, 99, 213), (358, 19, 173),
                      (97, 98, NAN), (57, 58, 59), (57, 58, 61), (242, 249, 208),
                      (87, 272, NAN), (122, 130, NAN), (1, 9, NAN), (115, 116, NAN),
                      (57, 64, 67), (105, 106, NAN), (218, 361, NAN)], dtype=float)
    cats = np.full((N_DRUGS, 4, 3), NAN)
    cats[:, 0] = paths[rng.integers(0, len(paths), N_DRUGS)]
    for k, share in ((1, 0.25), (2, 0.05), (3, 0.01)):
        more = rng.random(N_DRUGS) < share
        cats[more, k] = paths[rng.integers(0, len(paths), more.sum())]
    # About 3 % opioids: 57 > 58 > 60 (narcotic analgesics) or 191 (combinations).
    opioid = rng.choice(np.arange(len(known), N_DRUGS), int(0.03 * N_DRUGS), replace=False)
    cats[opioid, 0] = np.where(rng.random(len(opioid))[:, None] < 0.65, [57, 58, 60],
                               [57, 58, 191])
    names[opioid[:3]] = ["OXYCODONE", "HYDROCODONE; ACETAMINOPHEN", "TRAMADOL"]
    # Popularity by rank: the known names first, the rest (opioids included) at random ranks.
    rank = np.concatenate([np.arange(len(known)),
                           len(known) + rng.permutation(N_DRUGS - len(known))])
    popularity = 1.0 / (1.0 + rank) ** 1.1
    return {"ids": ids, "names": names, "cats": cats, "opioid": opioid,
            "p": popularity / popularity.sum()}


def make_prescriptions(people, drugs, rng) -> dict[str, np.ndarray]:
    """RXQ_RX rows: one per drug for users (RXDUSE 1), one blank row for everyone else."""
    age = people["age"]
    n = len(age)
    use = np.where(rng.random(n) < 0.15 + 0.75 * age / 80, 1.0, 2.0)
    use = _with_codes(rng, use, {7.0: 0.0005, 9.0: 0.001})
    extra = rng.poisson(np.clip((DRUGS_PER_USER - 1) * (0.4 + 1.2 * age / 80), 0, None))
    rows = np.where(use == 1.0, 1 + extra, 1)
    person = np.repeat(np.arange(n), rows)
    is_user = use[person] == 1.0
    m = len(person)
    drug = np.where(is_user, rng.choice(N_DRUGS, m, p=drugs["p"]), -1)
    unknown = is_user & (rng.random(m) < 0.01)  # RXDDRUG "99999", no id
    drug_id = np.where(is_user & ~unknown, drugs["ids"][drug], "")
    drug_name = np.where(unknown, "99999", np.where(is_user, drugs["names"][drug], ""))
    days = np.clip(np.round(_lognormal(rng, 900, 1.4, m)), 1, 30000)
    days = _with_codes(rng, days, {77777.0: 0.001, 99999.0: 0.015})
    days[~is_user] = NAN
    return {"person": person, "use": use[person], "drug_id": drug_id.astype(object),
            "drug_name": drug_name.astype(object), "days": days}


# ------------------------------------------------------------------------------------ tables


def _filler(rng, n: int, table: str, have: int, wide: bool) -> dict[str, np.ndarray]:
    """Extra columns up to the table's real width: coded answers or amounts, some missing."""
    if not wide:
        return {}
    out = {}
    for i in range(max(0, WIDTH.get(table, have) - have)):
        if table in ("DR1IFF", "DR1TOT"):
            values = np.round(_lognormal(rng, 20.0, 1.2, n), 2)
        else:
            values = rng.integers(1, 3, n).astype(float)
            values[rng.random(n) < 0.3] = NAN
        out[f"{table[:3]}Z{i:03d}"] = values
    return out


def _bp_readings(rng, mean: np.ndarray, k: int, even: bool, missing: float) -> list[np.ndarray]:
    out = []
    for _ in range(k):
        x = mean + 5 * rng.standard_normal(len(mean))
        x = 2 * np.round(x / 2) if even else np.round(x)
        x[rng.random(len(x)) < missing] = NAN
        out.append(x)
    return out


def _diet_columns(letter: str) -> list[int]:
    """DRQSDTk present in a cycle: 1-8 always, 9-10 from E, 11-12 from F, and 91."""
    codes = list(range(1, 9))
    if letter not in "CD":
        codes += [9, 10]
    if letter not in "CDE":
        codes += [11, 12]
    return [*codes, 91]


DIET_SHARES = {1: 0.50, 2: 0.10, 3: 0.08, 4: 0.06, 5: 0.01, 6: 0.01, 7: 0.15, 8: 0.02, 9: 0.06,
               10: 0.03, 11: 0.02, 12: 0.01, 91: 0.08}


def _dr1tot(rng, people) -> dict[str, np.ndarray]:
    status, age = people["recall"], people["age"]
    n = len(age)
    answered = np.isin(status, (1.0, 2.0, 4.0))
    cols: dict[str, np.ndarray] = {"DR1DRSTZ": status}
    diet = np.where(rng.random(n) < np.where(age >= 18, 0.13, 0.03), 1.0, 2.0)
    diet = _with_codes(rng, diet, {9.0: 0.001})
    diet[~answered] = NAN
    cols["DRQSDIET"] = diet
    codes = list(DIET_SHARES)
    shares = np.array(list(DIET_SHARES.values()))
    first = rng.choice(codes, n, p=shares / shares.sum())
    second = np.where(rng.random(n) < 0.15, rng.choice(codes, n, p=shares / shares.sum()), 0)
    for k in codes:
        cols[f"DRQSDT{k}"] = np.where((diet == 1.0) & ((first == k) | (second == k)), float(k),
                                      NAN)
    kcal = _lognormal(rng, 1850, 0.45, n)

    def ratio(scale, sigma=0.25):
        return scale * _lognormal(rng, 1.0, sigma, n)

    carb = kcal * ratio(0.12)
    tfat = kcal * ratio(0.04)
    totals = {
        "DR1TKCAL": np.round(kcal), "DR1TPROT": np.round(kcal * ratio(0.036), 2),
        "DR1TCARB": np.round(carb, 2), "DR1TSUGR": np.round(carb * ratio(0.43), 2),
        "DR1TFIBE": np.round(carb * ratio(0.065), 1), "DR1TTFAT": np.round(tfat, 2),
        "DR1TSFAT": np.round(tfat * ratio(0.33), 3),
        "DR1TCHOL": np.round(_lognormal(rng, 210, 0.7, n)),
        "DR1TSODI": np.round(kcal * ratio(1.7)),
        "DR1TALCO": np.where(rng.random(n) < 0.75, 0.0, np.round(_lognormal(rng, 15, 1.0, n), 1)),
        "DR1TCAFF": np.where(rng.random(n) < 0.2, 0.0, np.round(_lognormal(rng, 120, 0.9, n))),
        "DR1_320Z": np.where(rng.random(n) < 0.25, 0.0, np.round(_lognormal(rng, 900, 0.8, n))),
        "DBD100": _codes(rng, n, {1.0: 0.55, 2.0: 0.28, 3.0: 0.15, 7.0: 0.001, 9.0: 0.02}),
        "DRQSPREP": _codes(rng, n, {1.0: 0.12, 2.0: 0.22, 3.0: 0.38, 4.0: 0.27, 9.0: 0.01}),
    }
    for name, values in totals.items():
        values[~answered] = NAN
        cols[name] = values
    return cols


def _dbq(rng, people) -> dict[str, np.ndarray]:
    age = people["age"]
    n = len(age)
    milk = {0.0: 0.08, 1.0: 0.15, 2.0: 0.25, 3.0: 0.45, 4.0: 0.05, 7.0: 0.001, 9.0: 0.02}
    cols = {
        "DBQ700": np.where(age >= 16, _codes(rng, n, {1.0: 0.09, 2.0: 0.24, 3.0: 0.42, 4.0: 0.19,
                                                      5.0: 0.06, 7.0: 0.0005, 9.0: 0.0015}), NAN),
        "DBQ197": _codes(rng, n, {0.0: 0.12, 1.0: 0.17, 2.0: 0.31, 3.0: 0.38, 4.0: 0.015,
                                  9.0: 0.005}),
        "DBQ229": np.where(age >= 20, _codes(rng, n, {1.0: 0.5, 2.0: 0.25, 3.0: 0.24, 9.0: 0.01}),
                           NAN),
    }
    for item in "ABC":
        cols[f"DBQ235{item}"] = np.where(age >= 20, _codes(rng, n, milk), NAN)
    # DBD895-910 (from 2007-08 on): counts with 5555 / 6666 top codes, 7777 / 9999.
    meals = np.minimum(rng.negative_binomial(2, 2 / (2 + 3.5), n), 21).astype(float)
    cols["DBD895"] = _with_codes(rng, meals, {5555.0: 0.002, 7777.0: 0.0002, 9999.0: 0.002})
    fast = np.minimum(rng.negative_binomial(1.5, 1.5 / (1.5 + 2), n), 21).astype(float)
    cols["DBD900"] = _with_codes(rng, fast, {5555.0: 0.001, 9999.0: 0.001})
    for name in ("DBD905", "DBD910"):
        ready = np.minimum(rng.negative_binomial(0.5, 0.5 / (0.5 + 3), n), 90).astype(float)
        cols[name] = _with_codes(rng, ready, {6666.0: 0.0003, 7777.0: 0.0001, 9999.0: 0.003})
    return cols


def _cbq(rng, people) -> dict[str, np.ndarray]:
    """Monthly spending in the I-J names (renamed to CBD070... for E-H when written)."""
    n = len(people["age"])
    spend = [(450, 0.6, 0.0), (60, 1.0, 0.2), (80, 0.9, 0.4), (150, 0.8, 0.15), (60, 0.9, 0.3)]
    cols = {}
    for name, (median, sigma, zero) in zip(CBQ_NEW, spend, strict=True):
        amount = np.round(_lognormal(rng, median, sigma, n), -1)
        amount[rng.random(n) < zero] = 0.0
        cols[name] = _with_codes(rng, amount, {777777.0: 0.001, 999999.0: 0.015})
    return cols


def _duq(rng, people) -> dict[str, np.ndarray]:
    n = len(people["age"])
    ever = _codes(rng, n, {1.0: 0.018, 2.0: 0.975, 7.0: 0.002, 9.0: 0.005})
    yes = ever == 1.0
    unit = _codes(rng, n, {1.0: 0.08, 2.0: 0.07, 3.0: 0.15, 4.0: 0.70})
    qty = np.where(unit == 4.0, rng.integers(1, 30, n), rng.integers(1, 12, n)).astype(float)
    qty = _with_codes(rng, qty, {7777.0: 0.01, 9999.0: 0.02})
    recent = (unit == 1.0) | ((unit == 2.0) & (qty <= 4))
    days = np.where(recent, rng.integers(1, 31, n), 0).astype(float)
    return {
        "DUQ290": ever,
        "DUQ300": np.where(yes, rng.integers(14, 40, n), NAN).astype(float),
        "DUQ310Q": np.where(yes, qty, NAN),
        "DUQ310U": np.where(yes & (qty < 7777), unit, NAN),
        "DUQ320": np.where(yes, days, NAN),
    }


def make_tables(people, rng) -> dict[str, dict[str, np.ndarray]]:
    """Per-participant values of every one-row-per-participant table, for all participants.

    Drawn once, so a participant's values are the same in every file that holds them (J's
    participants appear in the J and the P files). Which rows and columns a cycle's file has
    is decided when it is written (``_eligible``, ``_cycle_columns``).
    """
    n = len(people["seqn"])
    bpx_sys = _bp_readings(rng, people["sbp"], 4, True, 0.05)
    bpx_dia = _bp_readings(rng, people["dbp"], 4, True, 0.05)
    fourth = rng.random(n) < 0.08  # a 4th reading only when one of the first three failed
    bpx_sys[3][~fourth], bpx_dia[3][~fourth] = NAN, NAN
    for d in bpx_dia:
        zero = rng.random(n) < 0.015
        d[zero] = np.where(rng.random(zero.sum()) < 0.5, 0.0, TINY)
    bpxo_sys = _bp_readings(rng, people["sbp"], 3, False, 0.03)
    bpxo_dia = _bp_readings(rng, people["dbp"], 3, False, 0.03)
    glu_missing = rng.random(n) < 0.05
    ldl = np.where(rng.random(n) < 0.08, NAN, people["ldl_mg"])
    osq = _codes(rng, n, {1.0: 0.07, 2.0: 0.92, 9.0: 0.01})
    older_women = (people["sex"] == 2) & (people["age"] >= 60)
    osq[(osq == 2.0) & older_women & (rng.random(n) < 0.15)] = 1.0
    return {
        "DEMO": {"RIDSTATR": np.where(people["examined"], 2.0, 1.0), "RIAGENDR": people["sex"],
                 "RIDAGEYR": people["age"], "WTINT": people["weight_int"],
                 "WTMEC": people["weight_mec"]},
        "BMX": {"BMXBMI": people["bmi"], "BMXWAIST": people["waist"]},
        "BPX": {**{f"BPXSY{k + 1}": s for k, s in enumerate(bpx_sys)},
                **{f"BPXDI{k + 1}": d for k, d in enumerate(bpx_dia)}},
        "BPXO": {**{f"BPXOSY{k + 1}": s for k, s in enumerate(bpxo_sys)},
                 **{f"BPXODI{k + 1}": d for k, d in enumerate(bpxo_dia)}},
        "GLU": {"LBXGLU": np.where(glu_missing, NAN, people["glu_mg"]),
                "LBDGLUSI": np.where(glu_missing, NAN, people["glu_si"])},
        "TRIGLY": {"LBDLDL": ldl, "LBDLDLSI": np.round(ldl * 0.02586, 3),
                   "LBDLDLM": ldl + np.round(4 * rng.standard_normal(n)),
                   "LBDLDLN": ldl + np.round(3 * rng.standard_normal(n))},
        "GHB": {"LBXGH": np.where(rng.random(n) < 0.05, NAN, people["hba1c"])},
        "BIOPRO": {"LBXSBU": people["bun_mg"], "LBDSBUSI": people["bun_si"]},
        "CBC": {"LBXRBCSI": people["rbc"], "LBXHGB": people["hgb"]},
        "DIQ": {"DIQ010": people["diq010"]},
        "DR1TOT": _dr1tot(rng, people),
        "DBQ": _dbq(rng, people),
        "CBQ": _cbq(rng, people),
        "DUQ": _duq(rng, people),
        "OSQ": {"OSQ060": osq},
    }


def _eligible(table: str, letter: str, people) -> np.ndarray | None:
    """Rows of ``table`` in ``letter``'s file (a participant mask), or None: no such file."""
    age, examined = people["age"], people["examined"]
    everyone = np.ones(len(age), dtype=bool)
    if table in ("DEMO", "DIQ", "DR1TOT", "DBQ"):
        return everyone
    if table == "BMX":
        return examined
    if table in ("BPX", "BPXO"):
        in_cycle = letter != "P" if table == "BPX" else letter in "JP"
        return examined & (age >= 8) if in_cycle else None
    if table in ("GLU", "TRIGLY"):
        return people["fasting"]
    if table in ("GHB", "BIOPRO"):
        return examined & (age >= 12)
    if table == "CBC":
        return examined & (age >= 1)
    if table == "CBQ":
        return everyone if letter in "EFGHIJ" else None
    if table == "DUQ":
        if letter not in "DEFGHIJ":
            return None
        low, high = (20, 59) if letter in "DEF" else (18, 69)
        return examined & (age >= low) & (age <= high)
    if table == "OSQ":
        return None if letter in "GI" else age >= (20 if letter in "CDEF" else 40)
    raise ValueError(table)


def _cycle_columns(table: str, letter: str, cols: dict[str, np.ndarray]) -> dict:
    """The variables ``letter``'s file of ``table`` has, under that cycle's names."""
    if table == "DEMO":
        suffix = "PRP" if letter == "P" else "2YR"
        return {(f"{k}{suffix}" if k in ("WTINT", "WTMEC") else k): v for k, v in cols.items()}
    if table == "TRIGLY" and letter not in "JP":
        return {k: v for k, v in cols.items() if k not in ("LBDLDLM", "LBDLDLN")}
    if table == "DR1TOT":
        present = {f"DRQSDT{k}" for k in _diet_columns(letter)}
        return {k: v for k, v in cols.items() if not k.startswith("DRQSDT") or k in present}
    if table == "DBQ" and letter in "CD":
        return {k: v for k, v in cols.items() if not k.startswith("DBD")}
    if table == "CBQ" and letter not in "IJ":
        old = dict(zip(CBQ_NEW, CBQ_OLD, strict=True))
        return {old[k]: v for k, v in cols.items()}
    return cols


def _stem(table: str, letter: str) -> str:
    if letter == "P":
        return f"P_{table}"
    if letter == "C" and table in C_LAB_STEMS:
        return C_LAB_STEMS[table]
    return f"{table}_{letter}"


def cycle_tables(letter, members, people, tables, foods, rx, rng, wide):
    """Yield (table, {column: values}) for one cycle's files; ``members``: participant indices."""
    seqn = people["seqn"]
    for table, cols in tables.items():
        mask = _eligible(table, letter, people)
        if mask is None:
            continue
        idx = members[mask[members]]
        data = {"SEQN": seqn[idx]}
        if table == "DEMO":
            data["SDDSRVYR"] = np.full(len(idx), float(RELEASE[letter]))
        data.update({k: v[idx] for k, v in _cycle_columns(table, letter, cols).items()})
        data.update(_filler(rng, len(idx), table, len(data), wide))
        yield table, data
    # Row tables: participants are in SEQN order and a cycle's members are contiguous.
    lo, hi = np.searchsorted(rx["person"], [members[0], members[-1] + 1])
    rows = slice(lo, hi)
    yield "RXQ_RX", {"SEQN": seqn[rx["person"][rows]], "RXDUSE": rx["use"][rows],
                     "RXDDRUG": rx["drug_name"][rows], "RXDDRGID": rx["drug_id"][rows],
                     "RXDDAYS": rx["days"][rows],
                     **_filler(rng, hi - lo, "RXQ_RX", 5, wide)}
    lo, hi = np.searchsorted(foods["person"], [members[0], members[-1] + 1])
    rows = slice(lo, hi)
    person = foods["person"][rows]
    yield "DR1IFF", {"SEQN": seqn[person], "DR1ILINE": foods["line"][rows],
                     "DR1DRSTZ": people["recall"][person], "DR1IFDCD": foods["code"][rows],
                     "DR1IGRMS": foods["grams"][rows],
                     **_filler(rng, hi - lo, "DR1IFF", 5, wide)}


def drug_table(drugs) -> dict[str, np.ndarray]:
    cols = {"RXDDRGID": drugs["ids"], "RXDDRUG": drugs["names"],
            "RXDINGFL": np.where(np.char.find(drugs["names"].astype(str), ";") >= 0, 2.0, 1.0)}
    for k in range(4):
        for j, level in enumerate("ABC"):
            cols[f"RXDDCI{k + 1}{level}"] = drugs["cats"][:, k, j]
    return cols


# ------------------------------------------------------------------------------------ writing


def write_xpt(path: Path, data: dict[str, np.ndarray]) -> int:
    import pyreadstat

    path.parent.mkdir(parents=True, exist_ok=True)
    frame = pd.DataFrame(data)
    pyreadstat.write_xport(frame, str(path), file_format_version=5,
                           table_name=path.stem.upper()[:8])
    return len(frame)


def write_tree(root: Path, participants: int, food_records: int, seed: int,
               wide: bool) -> dict[str, int]:
    """Write every file; return {relative path: rows}."""
    rng = np.random.default_rng(seed)
    people = make_people(participants, rng)
    foods = make_foods(people, food_records, rng)
    drugs = make_drugs(rng)
    rx = make_prescriptions(people, drugs, rng)
    tables = make_tables(people, rng)
    written = {}
    for letter in GROUPS:
        groups = ("J", "P") if letter == "P" else (letter,)
        members = np.flatnonzero(np.isin(people["group"], groups))
        if len(members) == 0:
            continue
        for table, data in cycle_tables(letter, members, people, tables, foods, rx, rng, wide):
            path = root / FOLDER[letter] / f"{_stem(table, letter)}.XPT"
            written[str(path.relative_to(root))] = write_xpt(path, data)
    written["RXQ_DRUG.XPT"] = write_xpt(root / "RXQ_DRUG.XPT", drug_table(drugs))
    return written


def params_of(args) -> dict:
    return {"generator": GENERATOR_VERSION, "participants": args.participants,
            "food_records": args.food_records, "seed": args.seed, "wide": not args.narrow}


def ensure_tree(root: Path, args) -> tuple[float | None, dict]:
    """Reuse the tree in ``root`` if its marker matches, else write it.

    Returns (write seconds, or None when reused; the marker).
    """
    marker_path = root / MARKER
    params = params_of(args)
    if marker_path.exists():
        marker = json.loads(marker_path.read_text())
        if marker.get("params") == params:
            return None, marker
        for rel in marker.get("files", {}):  # our own files from other parameters
            (root / rel).unlink(missing_ok=True)
        marker_path.unlink()
    elif root.exists() and any(root.rglob("*.XPT")):
        raise SystemExit(f"{root} holds XPT files but no {MARKER}: refusing to write there")
    root.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    files = write_tree(root, args.participants, args.food_records, args.seed, not args.narrow)
    seconds = time.perf_counter() - start
    marker = {"params": params, "files": files, "write_seconds": round(seconds, 2),
              "bytes": sum((root / rel).stat().st_size for rel in files)}
    marker_path.write_text(json.dumps(marker, indent=1))
    return seconds, marker


# ------------------------------------------------------------------------------------- worker


def _rss_gb() -> float:
    """Peak resident set size of this process so far, in GB.

    Linux: VmHWM of /proc/self/status, the high-water mark of this process's own memory since
    exec. (``ru_maxrss`` is not used there: at exec Linux folds the RSS of the memory image being
    replaced, i.e. the parent that spawned us, into it, so a worker started by a parent that
    has just generated the tree would report the parent's peak.) Elsewhere ``ru_maxrss``.
    """
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024 / 1e9
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 1e9


def worker(root: str, result_path: str, cores: int, profile: bool) -> None:
    """Runs in the subprocess: time the read and the annotation, write a JSON result."""
    if cores and hasattr(os, "sched_setaffinity"):
        available = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, available[:cores])
    start = time.perf_counter()
    sys.path.insert(0, str(ROOT / "src"))
    from nutrireason.ngqa.users import annotate_users
    from nutrireason.sources.nhanes import read_nhanes_dir
    from nutrireason.standards import load_standards

    result = {"import_s": time.perf_counter() - start, "rss_after_import_gb": _rss_gb(),
              "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None}
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    start = time.perf_counter()
    tables = read_nhanes_dir(root, prefer="P")
    result["read_s"] = time.perf_counter() - start
    result["rss_after_read_gb"] = _rss_gb()
    result["rows"] = {name: len(frame) for name, frame in tables.tables.items()}
    result["food_rows_by_cycle"] = tables["food_records"]["cycle"].value_counts().to_dict()
    start = time.perf_counter()
    standards = load_standards()
    annotation = annotate_users(tables, standards)
    result["annotate_s"] = time.perf_counter() - start
    result["rss_after_annotate_gb"] = _rss_gb()
    result["adults"] = len(annotation.users)
    result["positives"] = {r.rule: r.positive for r in annotation.rules}
    if profiler is not None:
        import io
        import pstats

        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(30)
        result["profile"] = text.getvalue()
    Path(result_path).write_text(json.dumps(result))


def run_worker(root: Path, args) -> dict:
    """Run the timed part in a fresh interpreter (its own peak memory); return its result."""
    with tempfile.TemporaryDirectory() as tmp:
        result_path = Path(tmp) / "result.json"
        env = {**os.environ, "OMP_NUM_THREADS": str(args.cores or ""),
               "OPENBLAS_NUM_THREADS": str(args.cores or ""), "PYTHONWARNINGS": "ignore"}
        if not args.cores:
            env.pop("OMP_NUM_THREADS")
            env.pop("OPENBLAS_NUM_THREADS")
        command = [sys.executable, __file__, "--worker", str(root), str(result_path),
                   "--cores", str(args.cores)]
        if args.profile:
            command.append("--profile")
        subprocess.run(command, check=True, env=env)
        return json.loads(result_path.read_text())


# --------------------------------------------------------------------------------------- main


def report(args, write_seconds, marker, result) -> bool:
    """Print the figures; return False when the read does not have the designed row counts."""
    files = marker["files"]
    print(f"tree: {len(files)} XPT files, {marker['bytes'] / 1e9:.2f} GB on disk, "
          f"{'wide' if marker['params']['wide'] else 'narrow'} columns")
    if write_seconds is None:
        print(f"write: reused existing tree (it took {marker['write_seconds']:.1f} s)")
    else:
        print(f"write: {write_seconds:.1f} s")
    print("rows read per tidy table:")
    for name, rows in result["rows"].items():
        print(f"  {name:24s} {rows:>10,d}")
    total = result["read_s"] + result["annotate_s"]
    peak = result["rss_after_annotate_gb"]
    print(f"worker CPUs: {result['cpus']}  import: {result['import_s']:.2f} s  "
          f"adults annotated: {result['adults']:,d}")
    print(f"positives: {result['positives']}")
    print(f"read:     {result['read_s']:8.2f} s   (peak RSS after read "
          f"{result['rss_after_read_gb']:.2f} GB, after import "
          f"{result['rss_after_import_gb']:.2f} GB)")
    print(f"annotate: {result['annotate_s']:8.2f} s")
    print(f"total:    {total:8.2f} s   ratio to {TARGET_SECONDS:.0f} s target: "
          f"{total / TARGET_SECONDS:.2f}")
    print(f"peak RSS: {peak:8.2f} GB  ratio to {TARGET_GB:.0f} GB target: {peak / TARGET_GB:.2f}")
    if "profile" in result:
        print(result["profile"])
    ok = True
    expected = {"demographics": args.participants, "food_records": args.food_records}
    for name, want in expected.items():
        if result["rows"][name] != want:
            print(f"MISMATCH: {name} has {result['rows'][name]:,d} rows, designed {want:,d}")
            ok = False
    return ok


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="tree directory (kept; reused if it matches)")
    parser.add_argument("--participants", type=int, default=100_000)
    parser.add_argument("--food-records", type=int, default=2_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", action="store_true", help="keep the temporary tree")
    parser.add_argument("--narrow", action="store_true",
                        help="write only the variables the reader uses (no filler columns)")
    parser.add_argument("--cores", type=int, default=2,
                        help="CPUs the timed subprocess is pinned to (0: no pinning)")
    parser.add_argument("--profile", action="store_true", help="cProfile the timed part")
    parser.add_argument("--worker", nargs=2, metavar=("ROOT", "RESULT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.participants < len(GROUPS) or args.food_records < 0:
        parser.error("--participants must be at least 9 and --food-records at least 0")
    return args


def main(argv=None) -> int:
    args = parse(argv)
    if args.worker:
        worker(*args.worker, cores=args.cores, profile=args.profile)
        return 0
    temporary = args.out is None
    root = Path(tempfile.mkdtemp(prefix="nhanes_scale_")) if temporary else args.out.resolve()
    try:
        print(f"tree: {root}  participants {args.participants:,d}  "
              f"food records {args.food_records:,d}  seed {args.seed}", flush=True)
        write_seconds, marker = ensure_tree(root, args)
        if write_seconds is not None:
            print(f"written in {write_seconds:.1f} s; timing read + annotate ...", flush=True)
        result = run_worker(root, args)
        ok = report(args, write_seconds, marker, result)
    finally:
        if temporary and not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        elif temporary:
            print(f"kept: {root}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
