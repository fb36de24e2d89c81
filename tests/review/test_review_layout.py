"""The review app as a dietitian works in it, in headless Chromium on the real annotation pool,
at a laptop's 1366x768 and a phone's 390x844: the entry's title and the decision buttons are in
the window without scrolling; every rule hit shows a number, a threshold and a source; no text
renders under 12 px on the phone; a revisit shows the saved edit and confirming keeps it; keys
work after ticking a box; skip stays within the filter; undo restores the previous decision."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from nutrireason.review.app import ReviewState, create_app  # noqa: E402
from nutrireason.review.items import load_items  # noqa: E402
from nutrireason.review.store import ReviewStore  # noqa: E402
from tests.report.test_html import CHROMIUM, _playwright  # noqa: E402
from tests.review.conftest import served_app  # noqa: E402
from tests.review.test_browser import ARGS  # noqa: E402

SIZES = {"laptop": {"width": 1366, "height": 768}, "phone": {"width": 390, "height": 844}}
PHONE = {"viewport": SIZES["phone"], "is_mobile": True, "has_touch": True,
         "device_scale_factor": 2}
NUMBER = re.compile(r"\d")
# the smallest rendered text on the page, in CSS px as the reader sees them (the computed size
# times the page's zoom: without a viewport tag a phone shows the page at about 0.4)
SMALLEST_TEXT = """() => {
  let smallest = 1000, where = "";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode, element = node.parentElement;
    if (!node.textContent.trim() || !element.getClientRects().length) continue;
    const style = getComputedStyle(element);
    if (style.visibility === "hidden" || style.display === "none") continue;
    const size = parseFloat(style.fontSize) * (window.visualViewport.scale || 1);
    if (size < smallest) { smallest = size; where = node.textContent.trim().slice(0, 40); }
  }
  return [smallest, where];
}"""


@pytest.fixture(scope="module")
def served(fam_pool, recipe_build, tmp_path_factory):
    from nutrireason.pipeline.review_commands import recipe_readers

    names, derived = recipe_readers()
    items = load_items(fam_pool / "annotations.jsonl", recipe_build / "recipes.jsonl", names,
                       derived)
    db = tmp_path_factory.mktemp("layout") / "reviews.sqlite"
    state = ReviewState(items, ReviewStore(db), reviewers={"Dee": "reviewer",
                                                           "Eli": "reviewer"})
    with served_app(create_app(state)) as url:
        yield url, state
    state.store.close()


@pytest.fixture(scope="module")
def browser():
    sync_playwright = _playwright()
    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def _tab(browser, url: str, name: str, **context):
    tab = browser.new_context(**context).new_page()
    tab.goto(url + "/")
    tab.select_option("#name", name)
    tab.click("#start")
    tab.wait_for_selector("#entry")
    tab.wait_for_load_state("load")  # the keys live in review.js
    return tab


def _in_window(tab, selector: str, size: dict[str, int]) -> bool:
    box = tab.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["x"] >= 0 and \
        box["y"] + box["height"] <= size["height"] and box["x"] + box["width"] <= size["width"]


def _rich_entries(state: ReviewState) -> list[int]:
    """Entries whose provenance holds a nutrient limit, a list hit and an overruled hit."""
    wanted, found = ("nutrient limit", "list"), []
    for want in wanted:
        found.append(next(i for i, item in enumerate(state.items)
                          if any(want in row.rule for row in item.rules)))
    found.append(next(i for i, item in enumerate(state.items)
                      if any(row.overruled for row in item.rules)))
    return found


@pytest.mark.slow
@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_title_and_buttons_fit_and_every_rule_hit_shows_its_numbers(served, browser, size,
                                                                    tmp_path):
    url, state = served
    context = PHONE if size == "phone" else {"viewport": SIZES[size]}
    tab = _tab(browser, url, "Dee", **context)
    for index in _rich_entries(state):
        tab.goto(f"{url}/item/{index}")
        assert tab.evaluate("window.scrollY") == 0
        for selector in ("#title", "#confirm", "#correct", "#exclude", "#exclusion"):
            assert _in_window(tab, selector, SIZES[size]), (size, index, selector)
        rows = tab.locator("#rules tr.rule")
        assert rows.count() >= 1
        for row in range(rows.count()):
            cells = rows.nth(row)
            assert NUMBER.search(cells.locator(".value").inner_text()), (index, row)
            assert NUMBER.search(cells.locator(".threshold").inner_text()), (index, row)
            assert len(cells.locator(".source").inner_text().strip()) > 10, (index, row)
        assert "None" not in tab.inner_text("#rules")
    overruled = tab.locator("tr.overruled .overruled-mark")
    assert overruled.count() >= 1 and "overruled" in overruled.first.inner_text()
    tab.screenshot(path=str(tmp_path / f"review-{size}.png"), full_page=True)
    smallest, where = tab.evaluate(SMALLEST_TEXT)
    assert smallest >= 12, f"text at {smallest:.1f} px on the {size}: {where!r}"


@pytest.mark.slow
def test_revisit_confirm_keys_skip_and_undo(served, browser):
    from playwright.sync_api import expect

    url, state = served
    tab = _tab(browser, url, "Eli", viewport=SIZES["laptop"])
    # a saved edit: other ticks and a note, saved with "rationale"
    index = next(i for i, item in enumerate(state.items) if len(item.foods) >= 3
                 and item.ingredients)
    tab.goto(f"{url}/item/{index}")
    boxes = tab.locator("#lines input[type=checkbox]")
    ticked = [boxes.nth(i).is_checked() for i in range(boxes.count())]
    first_unticked = ticked.index(False)
    boxes.nth(first_unticked).check()
    tab.fill("#note", "the sauce carries the sodium")
    tab.click("#rationale")
    tab.wait_for_selector("#entry")
    saved = state.decided("Eli")[state.items[index].key]
    assert saved.action == "rationale" and len(saved.after["ingredients"]) == sum(ticked) + 1
    # the revisit shows it
    tab.goto(f"{url}/item/{index}?status=all")
    now = [boxes.nth(i).is_checked() for i in range(boxes.count())]
    assert now[first_unticked] and sum(now) == sum(ticked) + 1
    assert tab.input_value("#note") == "the sauce carries the sodium"
    assert "rationale" in tab.inner_text("#decided")
    # keys work after ticking a box (the focus is on the box): confirm with "c" keeps the edit
    boxes.nth(first_unticked).click()
    boxes.nth(first_unticked).click()  # ticked again, and focused
    key = state.items[index].key
    tab.keyboard.press("c")
    expect(tab.locator("#entry")).not_to_have_attribute("data-key", key)
    confirmed = state.decided("Eli")[key]
    assert confirmed.action == "confirm"
    assert confirmed.after["ingredients"] == saved.after["ingredients"]
    assert confirmed.after["note"] == "the sauce carries the sodium"
    # undo restores the previous decision (the rationale edit) and shows its entry
    tab.wait_for_load_state("load")  # a key pressed before review.js has run is lost
    tab.keyboard.press("u")
    expect(tab.locator("#entry")).to_have_attribute("data-key", key)
    restored = state.decided("Eli")[key]
    assert restored.id == saved.id and restored.action == "rationale"
    # skip stays within the filter: every entry skipped to has the filter's condition
    condition = state.items[index].condition
    tab.goto(f"{url}/next?condition={condition}&status=all")
    tab.wait_for_selector("#entry")
    seen = []
    for _ in range(3):
        seen.append(tab.get_attribute("#entry", "data-key"))
        assert tab.inner_text("#condition") == condition
        tab.wait_for_load_state("load")
        tab.keyboard.press("j")
        expect(tab.locator("#entry")).not_to_have_attribute("data-key", seen[-1])
    wanted = [item.key for item in state.items if item.condition == condition]
    assert seen == wanted[:3]
    # exclude needs a reason first: "x" focuses the reason list and saves nothing
    before = len(state.store.decisions())
    tab.wait_for_load_state("load")
    tab.keyboard.press("x")
    assert tab.evaluate("document.activeElement.id") == "exclusion"
    assert len(state.store.decisions()) == before
