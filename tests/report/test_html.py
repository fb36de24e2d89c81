"""The self-contained HTML report: no network resources, escaping, and a real headless Chromium."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

import pytest

from nutrireason.report import build_report
from tests.report import XSS, write_runs

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT_COPY = Path("/tmp/report_screenshot.png")
RESOURCE = re.compile(r"""\b(?:src|href)\s*=\s*["']?\s*([^"'\s>]*)""", re.I)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("html")
    return build_report(write_runs(root / "runs", bertscore=True, xss=True), root / "out")


def test_self_contained(page):
    html = page.read_text()
    targets = RESOURCE.findall(html)
    remote = [t for t in targets if re.match(r"(?:[a-z][a-z0-9+.-]*:)?//", t, re.I)]
    assert remote == []
    assert "<link" not in html and "@import" not in html
    assert re.findall(r"url\(\s*['\"]?(?!#)", html) == []  # only local url(#clip) refs
    assert "<svg" in html and "<?xml" not in html and "<!DOCTYPE svg" not in html
    assert "default-src 'none'" in html  # the CSP forbids loading anything


def test_record_text_is_escaped(page):
    html = page.read_text()
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<script") == 1  # only the report's own inline script


def test_content(page):
    html = page.read_text()
    assert html.count('<tr data-method="') == 36
    assert 'data-outcome="error"' in html and 'data-outcome="incorrect"' in html
    assert '<table id="table3"' in html and '<table id="efficiency"' in html
    assert "sentence-transformers/all-MiniLM-L6-v2" in html and "roberta-large" in html
    assert "36 of 36 samples" in html
    assert "Below are the extra information: (food 1 has sodium)" in html  # the graph


def test_cap(tmp_path):
    page = build_report(write_runs(tmp_path / "runs"), tmp_path / "out", max_samples=10)
    html = page.read_text()
    assert html.count('<tr data-method="') == 10
    assert "Showing the first 10 of 36 samples" in html


def _playwright():
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright, reason = None, "playwright is not installed (pip install playwright)"
    if reason is None and not CHROMIUM.exists():
        reason = f"{CHROMIUM} is missing (apt-get install chromium)"
    if reason is not None:
        if os.environ.get("NUTRIREASON_REQUIRE_BROWSER") == "1":
            pytest.fail(f"NUTRIREASON_REQUIRE_BROWSER=1 but {reason}")
        pytest.skip(reason)
    return sync_playwright


def test_in_headless_chromium(page, tmp_path):
    sync_playwright = _playwright()
    url = page.resolve().as_uri()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"])
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            tab = context.new_page()
            problems: list[str] = []
            tab.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            tab.on("pageerror", lambda e: problems.append(str(e)))
            requests: list[str] = []
            tab.on("request", lambda r: requests.append(r.url))
            tab.goto(url)
            rows = tab.locator("#samples tbody tr")
            counter = tab.locator("#sample-count")
            assert counter.inner_text() == "36 of 36 samples"
            assert tab.locator("#filters").is_visible()
            assert rows.count() == 36

            tab.select_option("#filter-method", "tog_kg")
            assert counter.inner_text() == "18 of 36 samples"
            visible = tab.locator("#samples tbody tr:visible")
            assert visible.count() == 18
            assert set(visible.evaluate_all("rs => rs.map(r => r.dataset.method)")) == {"tog_kg"}

            tab.select_option("#filter-level", "complex")
            tab.select_option("#filter-outcome", "correct")
            assert counter.inner_text() == "4 of 36 samples"  # binary and multi-label
            tab.select_option("#filter-outcome", "scored")
            assert counter.inner_text() == "2 of 36 samples"  # text generation: no verdict
            tab.select_option("#filter-method", "plain")
            tab.select_option("#filter-outcome", "error")
            assert counter.inner_text() == "1 of 36 samples"
            for select in ("#filter-method", "#filter-level", "#filter-outcome"):
                tab.select_option(select, "")
            assert counter.inner_text() == "36 of 36 samples"
            assert tab.locator("script").count() == 1  # the injected one is text, not a script
            assert tab.locator("#samples td", has_text=XSS).count() == 6  # question + graph, 3 runs

            tab.select_option("#filter-method", "tog_kg")
            shot = tmp_path / "report.png"
            tab.screenshot(path=str(shot), full_page=True)
            assert shot.read_bytes()[:4] == b"\x89PNG"
            with contextlib.suppress(OSError):  # a copy for people; not part of the test
                shutil.copyfile(shot, SCREENSHOT_COPY)
            assert problems == []
            assert [r for r in requests if r != url] == []  # nothing else was fetched
            context.close()

            offline = browser.new_context(java_script_enabled=False)
            tab = offline.new_page()
            tab.goto(url)
            assert tab.locator("#table3 tbody tr").count() == 6
            assert tab.locator("#table3 thead th", has_text="Binary").count() == 1
            assert tab.locator("#samples tbody tr:visible").count() == 36
            assert not tab.locator("#filters").is_visible()
            assert tab.locator("#sample-count").inner_text() == "36 of 36 samples"
            offline.close()
        finally:
            browser.close()
