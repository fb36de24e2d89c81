"""The whole dev split of real web recipes with published nutrition, through the same code as
`nutrireason recipes build --recipes FILE`.

The file lives outside the repository (`../shared/validation/published-nutrition-dev.json`, or
`$NUTRIREASON_VALIDATION_DIR`) and must not be copied into it; the tests skip, saying why, when
it is absent. Two tests: the floors this build reaches today (a change that makes recipe
nutrition worse fails here), and the issue's targets, which are not reached and are marked as a
strict expected failure (reaching them makes the test fail until the marker is removed).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nutrireason.recipes.validation import compare_build, read_published, summary

FILE = "published-nutrition-dev.json"
# Measured on this build (see docs/benchmarks/recipes.md); the
# floors sit a little under the measured figures.
FLOORS = {"kept_share": 0.90, "calories": (0.125, 0.59), "protein": 0.155, "sodium": 0.165}
TARGETS = {"kept_share": 0.90, "calories": (0.10, 0.70), "protein": 0.12, "sodium": 0.15}


def validation_file() -> Path:
    folder = os.environ.get("NUTRIREASON_VALIDATION_DIR")
    base = Path(folder) if folder else Path(__file__).resolve().parents[3] / "shared" / \
        "validation"
    path = base / FILE
    if not path.is_file():
        pytest.skip(f"{path} not present (the published-nutrition dev split lives outside the "
                    "repository; set NUTRIREASON_VALIDATION_DIR to its folder)")
    return path


@pytest.fixture(scope="module")
def figures(tmp_path_factory, resolver):
    from nutrireason.recipes.build import build_corpus, build_inputs
    from nutrireason.recipes.load import load_corpus

    path = validation_file()
    out = tmp_path_factory.mktemp("published")
    build_corpus(load_corpus(path), resolver, out, build_inputs(path), workers=2)
    result = summary(compare_build(out, read_published(path)))
    nutrients = result["nutrients"]
    print(f"\nkept {result['kept_share']:.1%}; calories median "
          f"{nutrients['calories']['median_error']:.1%}, within 20 % "
          f"{nutrients['calories']['within_20']:.1%}; protein "
          f"{nutrients['protein']['median_error']:.1%}; sodium "
          f"{nutrients['sodium']['median_error']:.1%}; beyond 2x unflagged "
          f"{result['over_2x_unflagged']}")
    return result


def meets(result: dict, bounds: dict) -> list[str]:
    """The bounds ``result`` misses, named."""
    nutrients = result["nutrients"]
    misses = []
    if result["kept_share"] < bounds["kept_share"]:
        misses.append(f"kept {result['kept_share']:.3f}")
    median, within = bounds["calories"]
    if nutrients["calories"]["median_error"] > median:
        misses.append(f"calories median {nutrients['calories']['median_error']:.3f}")
    if nutrients["calories"]["within_20"] < within:
        misses.append(f"calories within 20 % {nutrients['calories']['within_20']:.3f}")
    for name in ("protein", "sodium"):
        if nutrients[name]["median_error"] > bounds[name]:
            misses.append(f"{name} median {nutrients[name]['median_error']:.3f}")
    return misses


@pytest.mark.slow
def test_dev_split_holds_todays_floors(figures):
    assert meets(figures, FLOORS) == []


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the published-figure targets are not reached; an "
                   "independent hand reading of the same lines scores no better against the "
                   "pages (docs/benchmarks/recipes.md)")
def test_dev_split_reaches_the_issue_targets(figures):
    assert meets(figures, TARGETS) == []
    assert figures["over_2x_unflagged"] == 0
