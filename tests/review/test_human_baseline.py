"""The human baseline as a test a person takes: the page reads as a test, shows one nutrition
basis with units, keeps the time on an item across reloads; the report gives each human figure
its interval and warns of a small sample; ticked recipe lines are scored as the ingredient names
the gold rationale uses."""

from __future__ import annotations

import asyncio
import math
import re
import time

import pandas as pd
import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from nutrireason.fam.report import human_table  # noqa: E402
from nutrireason.methods.human_desk import Desk, HumanMethod, cited_names  # noqa: E402
from nutrireason.pipeline.human_session import make_view, view  # noqa: E402
from nutrireason.review.human_app import create_human_app  # noqa: E402
from nutrireason.scoring.fam_metrics import dish_table  # noqa: E402

PER_SERVING = {"calories": 410.0, "sodium": 1830.4, "protein": 21.25, "vitamin_d": 0.4}
PER_100G = {"calories": 120.0, "sodium": 190.0, "protein": 6.2, "vitamin_d": 0.1}
LINES = [("2 cups whole milk", "whole milk", "milk"), ("1 cup white rice", "white rice", "rice"),
         ("1 tsp salt", "salt", "salt"), ("1 pinch saffron", "saffron", "")]


def _dish(title: str, servings: int | None) -> tuple[dict, dict]:
    """(dish as the model sees it, its evidence): per-serving values only with servings."""
    dish = {"title": title, "ingredients": [line for line, _, _ in LINES]}
    if servings:
        dish["servings"] = servings
    nutrition = {"per_serving": PER_SERVING if servings else None, "per_100g": PER_100G}
    return dish, {"nutrition": nutrition}


def dish_item(item_id: str = "dish-1", servings: int | None = 4) -> dict:
    dish, evidence = _dish("Rice pudding", servings)
    gold = {"decision": "not_recommend", "condition": "hypertension", "rationale": ["milk", "salt"],
            "ingredients": [{"line": line, "food": food, "canonical": canonical}
                            for line, food, canonical in LINES]}
    return {"id": item_id, "task": "fam_dish", "condition_labels": ["Hypertension"],
            "dish": dish, "evidence": evidence, "gold": gold}


def rank_item(servings: list[int | None]) -> dict:
    letters = "ABCD"[:len(servings)]
    pairs = {letter: _dish(f"Dish {letter}", count)
             for letter, count in zip(letters, servings, strict=True)}
    return {"id": "rank-1", "task": "fam_rank", "condition_labels": ["Hypertension"],
            "dishes": {letter: dish for letter, (dish, _) in pairs.items()},
            "evidence": {letter: evidence for letter, (_, evidence) in pairs.items()},
            "gold": {"ranking": ["A", "B", "C", "D"]}}


def client_for(items: list[dict]) -> tuple[TestClient, Desk]:
    """The human app with ``items[0]`` on its desk (as the run engine puts it there)."""
    desk = Desk(total=len(items))
    desk.item = items[0]
    return TestClient(create_human_app(desk, "Pat", make_view(items))), desk


def amounts(page: str) -> list[str]:
    return re.findall(r"<tr><td>[^<]+</td><td>([^<]+)</td></tr>", page)


# --------------------------------------------------------------------------- the page


def test_the_page_reads_as_a_test_and_loads_only_the_human_script():
    client, _ = client_for([dish_item()])
    page = client.get("/").text
    assert "<title>NutriReason human baseline test</title>" in page
    assert re.search(r"<header>\s*<strong>NutriReason human baseline test</strong>", page)
    assert "NutriReason review" not in page
    assert '<script src="/static/human.js" defer></script>' in page
    assert "review.js" not in page
    script = client.get("/static/human.js")
    assert script.status_code == 200 and "data" in script.text and "started" in script.text


def test_a_page_mixing_dishes_with_and_without_servings_shows_all_per_100_g():
    client, _ = client_for([rank_item([4, None, 6, None])])
    page = client.get("/").text
    assert page.count('id="basis"') == 1
    assert "All nutrition values on this test are <strong>per 100 g</strong>" in page
    assert "per serving" not in page
    cells = amounts(page)
    assert len(cells) == 4 * len(PER_100G)
    assert all(re.fullmatch(r"[\d,.]+ (g|mg|kcal|µg)", cell) for cell in cells), cells
    assert cells[:4] == ["120 kcal", "6.20 g", "190 mg", "0.10 µg"]


def test_per_serving_when_every_dish_shown_has_servings():
    shown = view(rank_item([4, 2, 6, 8]))
    assert shown["basis"] == "per serving"
    assert [dish["nutrition"][0] for dish in shown["dishes"]] == [("Calories", "410 kcal")] * 4
    assert dict(shown["dishes"][0]["nutrition"])["Sodium"] == "1,830 mg"


def test_one_basis_across_the_items_of_a_session():
    """A dish with servings and one without in the same session: both pages per 100 g."""
    items = [dish_item("dish-1", servings=4), dish_item("dish-2", servings=None)]
    session = make_view(items)
    assert {session(item)["basis"] for item in items} == {"per 100 g"}
    assert make_view([items[0]])(items[0])["basis"] == "per serving"


# --------------------------------------------------------------------------- the timer


def _started(page: str) -> int:
    return int(re.search(r'id="timer"[^>]*data-started="(\d+)"', page).group(1))


def test_the_timer_start_survives_a_reload():
    client, desk = client_for([dish_item()])
    before = round(time.time() * 1000)
    first = client.get("/").text
    time.sleep(0.05)
    again = client.get("/").text
    assert _started(first) == _started(again) >= before - 1
    assert desk.shown["dish-1"][0] == _started(first)
    served = int(re.search(r'data-now="(\d+)"', again).group(1))
    assert served >= _started(again) + 50


def test_time_on_the_item_counts_from_its_first_showing():
    item = dish_item()

    async def scenario() -> dict:
        desk = Desk(total=1)
        method = HumanMethod(desk)
        asked = asyncio.create_task(method.answer(item, None))
        await desk.wait(1)
        desk.show("dish-1")
        epoch, _ = desk.shown["dish-1"]
        desk.shown["dish-1"] = (epoch, time.monotonic() - 90)  # first shown 90 s ago
        desk.show("dish-1")  # a reload keeps it
        desk.submit("dish-1", {"decision": "recommend", "ingredients": []})
        return (await asked).extra

    extra = asyncio.run(scenario())
    assert 90 <= extra["seconds_on_item"] < 100


def _seconds(text: str) -> int:
    minutes, seconds = text.split(":")
    return int(minutes) * 60 + int(seconds)


@pytest.mark.slow
def test_the_timer_in_the_browser_keeps_counting_across_a_reload():
    from tests.report.test_html import CHROMIUM, _playwright
    from tests.review.conftest import served_app
    from tests.review.test_browser import ARGS

    sync_playwright = _playwright()
    item = dish_item()
    desk = Desk(total=1)
    desk.item = item
    desk.show(item["id"])
    epoch, clock = desk.shown[item["id"]]
    desk.shown[item["id"]] = (epoch - 125_000, clock - 125)  # first shown 2:05 ago
    with served_app(create_human_app(desk, "Pat", make_view([item]))) as url, \
            sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            tab = browser.new_page()
            problems: list[str] = []
            tab.on("pageerror", lambda e: problems.append(str(e)))
            tab.goto(url + "/")
            tab.wait_for_timeout(1_500)
            before = _seconds(tab.inner_text("#timer"))
            tab.reload()
            after = _seconds(tab.inner_text("#timer"))
            tab.wait_for_timeout(1_500)
            later = _seconds(tab.inner_text("#timer"))
            assert problems == []
        finally:
            browser.close()
    assert 126 <= before <= after <= later and later >= 127


# --------------------------------------------------------------------------- the report


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_the_human_table_gives_an_interval_and_a_small_sample_note():
    frame = pd.DataFrame([
        {"model": "human/Pat", "task": "fam_dish", "n": 3, "metric.accuracy": 2 / 3},
        {"model": "human/Lee", "task": "fam_dish", "n": 40, "metric.accuracy": 0.75},
        {"model": "openai/gpt", "task": "fam_dish", "n": 3, "metric.accuracy": 1.0}])
    table = human_table(frame)
    low, high = _wilson(2, 3)
    assert (round(low, 4), round(high, 4)) == (0.2077, 0.9385)  # by hand
    rows = {row[0]: row for row in table.rows}
    assert set(rows) == {"Pat", "Lee"}
    assert rows["Pat"][4] == f"66.7% [{low:.1%}, {high:.1%}]" == "66.7% [20.8%, 93.9%]"
    assert rows["Pat"][6] == "n = 3: fewer than 30 items; the interval is wide, compare with care"
    assert rows["Lee"][6] == ""
    paper_low, paper_high = _wilson(63, 100)
    assert rows["Pat"][5] == f"63.0% [{paper_low:.1%}, {paper_high:.1%}]"
    csv = table.csv_frame.set_index("participant")
    assert csv.loc["Pat", "low"] == pytest.approx(low) and csv.loc["Pat", "high"] == \
        pytest.approx(high)
    assert csv.loc["Lee", ["low", "high"]].tolist() == pytest.approx(list(_wilson(30, 40)))


def test_a_metric_that_is_not_a_proportion_keeps_the_bootstrap_interval(monkeypatch):
    from nutrireason.fam import report as tables

    monkeypatch.setitem(tables.PAPER_HUMAN, "fam_rank", ("mrr", 0.6))
    frame = pd.DataFrame([{"model": "human/Pat", "task": "fam_rank", "n": 12, "metric.mrr": 0.5,
                           "metric.mrr.low": 0.31, "metric.mrr.high": 0.72}])
    [row] = tables.human_table(frame).rows
    assert row[4] == "50.0% [31.0%, 72.0%]" and row[6].startswith("n = 12: fewer than 30")


# --------------------------------------------------------------------------- rationales


def _scores(item: dict, ticked: list[str]) -> dict[str, float]:
    async def scenario():
        desk = Desk(total=1)
        asked = asyncio.create_task(HumanMethod(desk).answer(item, None))
        await desk.wait(1)
        desk.submit(item["id"], {"decision": "not_recommend", "ingredients": ticked})
        return await asked

    prediction = asyncio.run(scenario())
    assert prediction.extra["ticked_lines"] == ticked
    return dish_table([prediction.parsed], [item["gold"]], [prediction.parse_ok]).point()


def test_ticking_the_gold_rationale_lines_scores_rationale_f1_one():
    item = dish_item()
    assert cited_names(item, ["2 cups whole milk", "1 tsp salt"]) == ["milk", "salt"]
    scores = _scores(item, ["1 tsp salt", "2 cups whole milk"])
    assert scores["accuracy"] == 1.0
    for name in ("rationale_micro_f1", "rationale_micro_f1_strict", "rationale_macro_f1",
                 "rationale_macro_f1_strict"):
        assert scores[name] == 1.0, name


def test_ticking_unrelated_lines_scores_rationale_f1_zero():
    scores = _scores(dish_item(), ["1 cup white rice", "1 pinch saffron"])
    assert scores["rationale_micro_f1"] == 0.0 and scores["rationale_micro_f1_strict"] == 0.0
    # a line with no canonical ingredient is cited by its food phrase, as a model would
    assert cited_names(dish_item(), ["1 pinch saffron"]) == ["saffron"]


def test_an_item_without_line_data_keeps_the_lines():
    item = {"id": "d", "task": "fam_dish", "dish": {"ingredients": ["1 cup rice"]}}
    assert cited_names(item, ["1 cup rice", "1 cup rice"]) == ["1 cup rice"]
