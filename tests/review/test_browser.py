"""End to end in headless Chromium (Debian's package, through Playwright): two reviewers at once
on the real annotation pool; one confirms, corrects and excludes with the buttons and the
keyboard; an adjudicator settles one disagreement after reading both decisions; the export
feeds a FAM-Bench build that applies the adjudicated label, excludes the unsettled entry and
names the reviews file; the inter-reviewer kappa equals scikit-learn's on the same
decisions."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
from sklearn.metrics import cohen_kappa_score  # noqa: E402

from nutrireason.fam.reviews import apply_reviews  # noqa: E402
from nutrireason.review.app import ReviewState, create_app  # noqa: E402
from nutrireason.review.export import export_reviews  # noqa: E402
from nutrireason.review.items import load_items  # noqa: E402
from nutrireason.review.stats import review_stats  # noqa: E402
from nutrireason.review.store import ReviewStore  # noqa: E402
from nutrireason.reviewfile import UNSETTLED, read_reviews  # noqa: E402
from tests.report.test_html import CHROMIUM, _playwright  # noqa: E402
from tests.review.conftest import served_app  # noqa: E402

ACCOUNTS = {"Ana": "reviewer", "Ben": "reviewer", "Cy": "adjudicator"}
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def served(fam_pool, recipe_build, tmp_path_factory):
    """The app over the real pool on 127.0.0.1 (a free port), stopped after the module."""
    from nutrireason.pipeline.review_commands import canonical_namer

    items = load_items(fam_pool / "annotations.jsonl", recipe_build / "recipes.jsonl",
                       canonical_namer())
    db = tmp_path_factory.mktemp("review") / "reviews.sqlite"
    state = ReviewState(items, ReviewStore(db), reviewers=ACCOUNTS)
    with served_app(create_app(state)) as url:
        yield url, state
    state.store.close()


def _sign_in(context, url: str, name: str):
    tab = context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda e: problems.append(str(e)))
    tab.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    tab.goto(url + "/")
    tab.select_option("#name", name)
    tab.click("#start")
    tab.wait_for_selector("#entry")
    return tab, problems


@pytest.mark.slow
def test_two_reviewers_export_build_and_kappa(served, fam_pool, recipe_build, sr28, real_build,
                                              tmp_path):
    sync_playwright = _playwright()
    from playwright.sync_api import expect

    url, state = served
    first_three = [item.key for item in state.items[:3]]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            ben, ben_problems = _sign_in(browser.new_context(), url, "Ben")
            ana, ana_problems = _sign_in(browser.new_context(), url, "Ana")
            # Ben confirms the first three entries with the keyboard
            for key in first_three:
                assert ben.get_attribute("#entry", "data-key") == key
                # the shortcuts live in review.js: a key pressed before it has run is lost
                ben.wait_for_load_state("load")
                ben.keyboard.press("c")
                expect(ben.locator("#entry")).not_to_have_attribute("data-key", key)
            # Ana, at the same time in another browser: confirm, correct, exclude
            assert ana.get_attribute("#entry", "data-key") == first_three[0]
            ana.click("#confirm")
            expect(ana.locator("#entry")).to_have_attribute("data-key", first_three[1])
            ana.fill("#note", "the rule misses the sauce")
            ana.keyboard.press("Tab")  # leave the note: shortcuts are off while typing
            ana.click("#correct")
            expect(ana.locator("#entry")).to_have_attribute("data-key", first_three[2])
            ana.wait_for_load_state("load")
            ana.select_option("#exclusion", "hidden ingredient")
            ana.click("#exclude")
            ana.wait_for_selector("#entry")
            condition = state.items[0].condition
            row = ana.locator(f'#progress tr[data-condition="{condition}"] .done')
            assert int(row.text_content()) >= 1  # folded under the one-line summary
            # the disagreement filter shows the entries the two decided differently
            ana.click("#filters-box summary")  # the filters fold open
            ana.select_option("#filter-status", "disagreements")
            ana.click("#filters button")
            ana.wait_for_selector("#entry")
            assert ana.get_attribute("#entry", "data-key") in first_three[1:]
            # the adjudicator reads both decisions and Ana's note, then settles the second
            cy, cy_problems = _sign_in(browser.new_context(), url, "Cy")
            cy.goto(f"{url}/item/1?status=disagreements")
            expect(cy.locator("#others tr.other")).to_have_count(2)
            assert "the rule misses the sauce" in cy.inner_text("#others")
            cy.click("#correct")
            cy.wait_for_selector("#entry")
            assert ana_problems == [] and ben_problems == [] and cy_problems == []
        finally:
            browser.close()

    decisions = state.store.decisions("fam")
    assert [(d.reviewer, d.action) for d in decisions] == [
        ("Ben", "confirm"), ("Ben", "confirm"), ("Ben", "confirm"),
        ("Ana", "confirm"), ("Ana", "correct"), ("Ana", "exclude"), ("Cy", "correct")]
    assert decisions[-1].role == "adjudicator" and decisions[-1].item == first_three[1]
    assert decisions[4].after["note"] == "the rule misses the sauce"

    # the export, and kappa against scikit-learn on the same (exported) decisions
    manifest = export_reviews(state.store, tmp_path / "reviews")
    rows = [json.loads(line) for line in (tmp_path / "reviews" / "reviews.jsonl").open()]
    by = {(r["item"], r["reviewer"]): r["label"] or "excluded" for r in rows}
    ana_labels = [by[(k, "Ana")] for k in first_three]
    ben_labels = [by[(k, "Ben")] for k in first_three]
    pair = review_stats(state.store.latest("fam"))["inter_reviewer"]["pairs"][0]
    assert pair["reviewers"] == ["Ana", "Ben"] and pair["items"] == 3
    assert pair["cohen_kappa"] == pytest.approx(cohen_kappa_score(ana_labels, ben_labels))

    # the build: the adjudicated correction is applied; the third entry, on which Ana and Ben
    # disagree and nobody adjudicated, is excluded with that reason
    from nutrireason.fam.build import build_fam, read_annotations

    pool = read_annotations(fam_pool / "annotations.jsonl")
    applied = apply_reviews(pool, read_reviews(tmp_path / "reviews"))
    before, after = _entries(pool), _entries(applied)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    assert changed == set(first_three[1:])
    corrected = first_three[1]
    assert after[corrected] != before[corrected] and first_three[2] not in after
    reasons = {f"{row['recipe_id']}::{e['condition']}": e["reason"] for row in applied
               for e in row["excluded_entries"]}
    assert reasons[first_three[2]] == f"expert: {UNSETTLED}"

    out = tmp_path / "fam"
    built = build_fam(fam_pool / "annotations.jsonl", recipe_build / "recipes.jsonl", sr28, out,
                      reviews=tmp_path / "reviews")
    assert built["reviews"]["sha256"] == manifest["sha256"]
    assert built["reviews"]["file"].endswith("reviews.jsonl")
    assert any(entry["name"] == "reviews.jsonl" for entry in built["inputs"])
    old, new = _dish_labels(real_build), _dish_labels(out)  # the same pool without reviews
    moved = {k for k in old.keys() & new.keys() if old[k] != new[k]}
    assert moved <= {corrected}
    assert first_three[2] not in new
    if corrected in new:
        assert new[corrected] == after[corrected]


def _entries(pool: list[dict]) -> dict[str, str]:
    return {f"{row['recipe_id']}::{e['condition']}": side
            for row in pool for side in ("rec", "not_rec") for e in row[side]}


def _dish_labels(folder) -> dict[str, str]:
    labels = {}
    for line in (folder / "dish.jsonl").open():
        row = json.loads(line)
        side = "rec" if row["gold"]["decision"] == "recommend" else "not_rec"
        labels[f"{row['recipe_id']}::{row['condition']}"] = side
    return labels


def test_a_killed_server_keeps_what_the_browser_saved_and_a_token_is_required(
        fam_pool, recipe_build, tmp_path):
    """`review serve` as a process with --token: the browser without the token is refused;
    with it, three decisions, then SIGKILL: all three are in the database."""
    from tests.review.test_app import _free_port, review_server

    sync_playwright = _playwright()
    from playwright.sync_api import expect

    from nutrireason.review.accounts import write_reviewers

    token, port, db = "browser-test-token-123", _free_port(), tmp_path / "reviews.sqlite"
    write_reviewers(tmp_path, {"Kim": "reviewer"})
    args = ["--token", token, "--annotations", str(fam_pool), "--recipes", str(recipe_build),
            "--db", str(db)]
    with review_server(args, port, seconds=120), sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            tab = browser.new_page()
            refused = tab.goto(f"http://127.0.0.1:{port}/")
            assert refused.status == 403 and "token" in tab.content()
            tab.goto(f"http://127.0.0.1:{port}/?token={token}")
            tab.select_option("#name", "Kim")
            tab.click("#start")
            for _ in range(3):
                key = tab.get_attribute("#entry", "data-key")
                tab.click("#confirm")
                expect(tab.locator("#entry")).not_to_have_attribute("data-key", key)
        finally:
            browser.close()
    store = ReviewStore(db)
    assert [(d.reviewer, d.action) for d in store.decisions()] == [("Kim", "confirm")] * 3
    store.close()
