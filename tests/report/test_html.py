"""The self-contained HTML report: no network resources, escaping, and a real headless Chromium."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from pathlib import Path

import pytest

from nutrireason.report import build_report
from tests.report import XSS, page_samples, write_runs

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
    # Record text is JSON in a data block, with < and > as \u escapes.
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in html
    assert html.count("<script") == 2  # the data block and the report's own script
    assert sum(s["question"] == XSS for s in page_samples(page)) == 3


def test_content(page):
    html = page.read_text()
    # The samples are JSON (every one; no cap) that the script renders.
    samples = page_samples(page)
    assert len(samples) == 36
    assert {"error", "incorrect"} <= {s["outcome"] for s in samples}
    assert '<table id="table3"' in html and '<table id="efficiency"' in html
    assert "sentence-transformers/all-MiniLM-L6-v2" in html and "roberta-large" in html
    assert "All 36 samples" in html
    graphs = [call["request"] for s in samples for call in s["calls"]]
    assert any("Below are the extra information: (food 1 has sodium)" in g for g in graphs)


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
    from playwright.sync_api import expect
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
            assert rows.count() == 36  # one page (50 rows per page)

            tab.select_option("#filter-method", "tog_kg")
            assert counter.inner_text() == "18 of 36 samples"
            visible = tab.locator("#samples tbody tr")  # only matching rows exist
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
            # The data block and the report's script; the injected one is text, not a script.
            assert tab.locator("script").count() == 2
            assert tab.locator("#samples td", has_text=XSS).count() == 3  # the question, 3 runs
            rows.first.locator("button.open").click()  # the graph is in the opened details
            assert tab.locator("#samples tr.detail pre", has_text=XSS).count() == 1
            rows.first.locator("button.open").click()
            tab.fill("#filter-text", "ALERT(1)")
            expect(counter).to_have_text("3 of 36 samples")
            tab.fill("#filter-text", "")
            expect(counter).to_have_text("36 of 36 samples")

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
            # The sample browser needs JavaScript (samples are JSON rendered a
            # page at a time); without it the page says so and the tables stay complete.
            assert tab.locator("#samples tbody tr").count() == 0
            assert not tab.locator("#filters").is_visible()
            assert "needs it" in tab.locator("#samples-section").inner_text()
            offline.close()
        finally:
            browser.close()
