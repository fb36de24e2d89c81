"""The build against careful independent readings of the same recipes (whole-recipe calories,
protein and sodium, read by hand from SR28 by the protocol in docs/benchmarks/recipes.md,
blind to the build).

Samples drawn with ``benchmarks/reading_sample.py --seed 31203``: 40 random recipes of the
published-nutrition dev split (only the figures are in the repository; the lines stay with the
dev split outside it, and that test skips when the file is absent) and 40 random Wikibooks
recipes; and thirteen more samples of 40 Wikibooks recipes, each drawn and read after the
rules of its time were written (``--seed 120326``, ``--seed 20261204``, ``--seed 20261212``,
``--seed 4122026``, ``--seed 20261205``, ``--seed 20261206``, ``--seed 5122026``, ``--seed
6122026``, ``--seed 7122026``, then ``--seed 8122026`` and ``--seed 9122026``, then ``--seed
10122026`` and ``--seed 11122026``, each pair drawn together). The
Wikibooks readings, lines and all, are in ``fixtures/readings/`` (the lines are the project's
own corpus). For the dev split: the targets (calories median distance at most 2 %, at least 90
% of the kept recipes within 10 %) and the number of recipes this build keeps. For each
Wikibooks sample: the number kept and today's figures (a change that reads recipes worse fails
here), and the targets, as a strict expected failure on the samples that do not reach them yet.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nutrireason.recipes.validation import build_records, read_readings, reading_agreement
from tests.conftest import real_bundle
from tests.recipes.test_published_accuracy import validation_file

READINGS = Path(__file__).with_name("fixtures") / "readings"
# Kept recipes on this build (docs/benchmarks/recipes.md), and the
# targets for the calories median distance and share within 10 %.
KEPT = {"dev": 36, "seed-31203": 28, "seed-120326": 31, "seed-20261204": 34,
        "seed-20261212": 25, "seed-4122026": 32, "seed-20261205": 32, "seed-20261206": 34,
        "seed-5122026": 30, "seed-6122026": 33, "seed-7122026": 29, "seed-8122026": 29,
        "seed-9122026": 33, "seed-10122026": 31, "seed-11122026": 32}
# The Wikibooks samples, today: calories median distance and share within 10 %.
LATER = {"seed-31203": (0.014, 0.89), "seed-120326": (0.012, 0.90),
         "seed-20261204": (0.012, 0.88), "seed-20261212": (0.002, 1.00),
         "seed-4122026": (0.022, 0.75), "seed-20261205": (0.002, 0.87),
         "seed-20261206": (0.008, 0.91), "seed-5122026": (0.003, 0.93),
         "seed-6122026": (0.001, 0.90), "seed-7122026": (0.006, 0.82),
         "seed-8122026": (0.001, 0.96), "seed-9122026": (0.001, 0.90),
         "seed-10122026": (0.007, 0.93), "seed-11122026": (0.002, 0.93)}
# The samples that do not reach the targets yet.
SHORT_OF_TARGETS = {"seed-31203", "seed-20261204", "seed-4122026", "seed-20261205",
                    "seed-7122026"}
TARGETS = {"median": 0.02, "within": 0.90}

pytestmark = pytest.mark.slow


def wikibooks_agreement(name: str, tmp_path_factory, resolver) -> dict:
    from nutrireason.recipes.load import WIKIBOOKS_FILE, _wikibooks_row

    readings = read_readings(READINGS / name)
    data = json.loads((real_bundle("recipes") / WIKIBOOKS_FILE).read_text(encoding="utf-8"))
    records = [dict(_wikibooks_row(key, data[key]), id=key) for key in sorted(readings)]
    return reading_agreement(build_records(records, resolver, tmp_path_factory.mktemp("wiki")),
                             readings)


@pytest.fixture(scope="module", params=sorted(LATER))
def later(request, tmp_path_factory, resolver) -> tuple[str, dict]:
    """A Wikibooks sample."""
    name = request.param
    return name, wikibooks_agreement(f"wikibooks-{name}.json", tmp_path_factory, resolver)


@pytest.fixture(scope="module")
def dev(tmp_path_factory, resolver) -> dict:
    readings = read_readings(READINGS / "dev-seed-31203-figures.json")
    rows = json.loads(validation_file().read_text(encoding="utf-8"))
    records = [row for row in rows if row["id"] in readings]
    rows = build_records(records, resolver, tmp_path_factory.mktemp("dev"))
    return reading_agreement(rows, readings)


def show(name: str, figures: dict) -> tuple[int, float, float]:
    calories = figures["nutrients"]["calories"]
    print(f"\n{name}: kept {figures['kept']} of {figures['read']}; calories median distance "
          f"{calories['median']:.1%}, within 10 % {calories['within']:.0%}; further: "
          f"{[ident for ident, _, _ in calories['further']]}")
    return figures["kept"], calories["median"], calories["within"]


def test_the_build_reads_recipes_as_a_careful_reader_does(dev):
    kept, median, within = show("dev", dev)
    assert kept >= KEPT["dev"]
    assert median <= TARGETS["median"] and within >= TARGETS["within"]


def test_the_later_samples_stay_as_close_as_today(later):
    name, figures = later
    kept, median, within = show(name, figures)
    assert kept >= KEPT[name]
    assert median <= LATER[name][0] and within >= LATER[name][1]


def test_the_later_samples_meet_the_targets(request, later):
    name, figures = later
    if name in SHORT_OF_TARGETS:
        request.applymarker(pytest.mark.xfail(strict=True, reason="not reached on this sample "
                                              "yet: see docs/benchmarks/recipes.md"))
    _, median, within = show(name, figures)
    assert median <= TARGETS["median"] and within >= TARGETS["within"]
