"""The build against careful independent readings of the same recipes (whole-recipe calories,
protein and sodium, read by hand from SR28 by the README's protocol, blind to the build).

Two samples drawn with ``benchmarks/reading_sample.py --seed 31203``: 40 random Wikibooks
recipes (the readings, lines and all, are in ``fixtures/readings/``: the lines are the project's
own corpus) and 40 random recipes of the published-nutrition dev split (only the figures are in
the repository; the lines stay with the dev split outside it, and that half skips when the file
is absent). For each: the floors this build reaches today (a change that reads recipes worse
fails here), and the targets, not reached yet, as a strict expected failure.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nutrireason.recipes.validation import build_records, read_readings, reading_agreement
from tests.conftest import real_bundle
from tests.recipes.test_published_accuracy import validation_file

READINGS = Path(__file__).with_name("fixtures") / "readings"
# Measured on this build (README, "Recipe nutrition against careful readings"): kept recipes,
# calories median distance and share within 10 %.
FLOORS = {"wikibooks": (27, 0.015, 0.80), "dev": (36, 0.02, 0.83)}
TARGETS = {"median": 0.02, "within": 0.90}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wikibooks(tmp_path_factory, resolver) -> dict:
    from nutrireason.recipes.load import WIKIBOOKS_FILE, _wikibooks_row

    readings = read_readings(READINGS / "wikibooks-seed-31203.json")
    data = json.loads((real_bundle("recipes") / WIKIBOOKS_FILE).read_text(encoding="utf-8"))
    records = [dict(_wikibooks_row(key, data[key]), id=key) for key in sorted(readings)]
    return reading_agreement(build_records(records, resolver, tmp_path_factory.mktemp("wiki")),
                             readings)


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


@pytest.mark.parametrize("name", ["wikibooks", "dev"])
def test_the_build_stays_as_close_to_the_readings_as_today(request, name):
    kept, median, within = show(name, request.getfixturevalue(name))
    least_kept, most_median, least_within = FLOORS[name]
    assert kept >= least_kept and median <= most_median and within >= least_within


@pytest.mark.xfail(strict=True, reason="the targets are not reached yet: see the README")
@pytest.mark.parametrize("name", ["wikibooks", "dev"])
def test_the_readings_targets(request, name):
    _, median, within = show(name, request.getfixturevalue(name))
    assert median <= TARGETS["median"] and within >= TARGETS["within"]
