"""The report's comparison section in a real headless Chromium: the forest plot renders, and
every interval the tables show is the clustered one from metrics.json (not the naive one)."""

from __future__ import annotations

import json
import re

import pytest

from nutrireason.report import build_report
from tests.report.test_html import CHROMIUM, _playwright
from tests.scoring.scripted_pair import make_runs

INTERVAL = re.compile(r"(-?\d\.\d{3}) \[(-?\d\.\d{3}), (-?\d\.\d{3})\]")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("comparison_report")
    a, b = make_runs(root)
    return build_report([a, b], root / "report"), [a, b]


def _clustered_and_naive(runs) -> tuple[set[tuple[str, str, str]], set[tuple[str, str, str]]]:
    """Every (value, low, high) of metrics.json as the tables print them, clustered and naive."""
    clustered, naive = set(), set()
    for run in runs:
        for group in json.loads((run / "metrics.json").read_text())["groups"]:
            for stat in group["metrics"].values():
                clustered.add(tuple(f"{stat[k]:.3f}" for k in ("value", "low", "high")))
                naive.add(tuple(f"{stat[k]:.3f}" for k in ("value", "naive_low",
                                                            "naive_high")))
    return clustered, naive


def test_comparison_tables_and_csv(report):
    page, runs = report
    out = page.parent
    assert (out / "comparison.svg").is_file() and (out / "detectable.csv").is_file()
    header = (out / "table3.csv").read_text().splitlines()[0].split(",")
    assert "binary_accuracy_naive_low" in header and "binary_accuracy_low" in header
    rows = (out / "comparison.md").read_text()
    assert "complex" in rows and "worse" in rows  # B (the arm) is worse than A on complex


def test_in_headless_chromium(report):
    sync_playwright = _playwright()
    page, runs = report
    clustered, naive = _clustered_and_naive(runs)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM),
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            problems: list[str] = []
            tab.on("pageerror", lambda e: problems.append(str(e)))
            tab.goto(page.resolve().as_uri())
            section = tab.locator("#comparison-section")
            assert section.is_visible()
            figure = section.locator("svg").first
            box = figure.bounding_box()
            assert box is not None and box["width"] > 300 and box["height"] > 100
            # one interval line pair and a dot per compared row: 3 levels
            assert tab.locator("#comparison tbody tr").count() == 3
            shown = []
            for table in ("#table3", "#detectable"):
                for cell in tab.locator(f"{table} tbody td").all_inner_texts():
                    shown += INTERVAL.findall(cell)
            assert len(shown) >= 6
            for found in shown:
                assert found in clustered, found
            # the clustered intervals differ from the naive ones here (users repeat mistakes)
            assert any(found not in naive for found in shown)
            assert problems == []
        finally:
            browser.close()
