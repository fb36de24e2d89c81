"""The human baseline: a participant answers 5 held-out dish items in headless Chromium; the
answers are run records that `score` reads and `report` shows beside the paper's human
figures; the desk refuses stale or malformed answers."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from nutrireason.errors import DataError  # noqa: E402
from nutrireason.methods.human_desk import Desk, check_answer  # noqa: E402
from tests.report.test_html import CHROMIUM, _playwright  # noqa: E402
from tests.review.test_browser import ARGS  # noqa: E402

DISH = {"id": "dish-1", "task": "fam_dish", "dish": {"ingredients": ["1 cup rice"]}}


def test_the_desk_hands_the_answer_to_the_waiting_item():
    async def scenario():
        desk = Desk(total=1)
        asked = asyncio.create_task(desk.ask(DISH))
        await desk.wait(1)
        with pytest.raises(DataError, match="another item"):
            desk.submit("dish-2", {"decision": "recommend"})
        desk.submit("dish-1", {"decision": "not_recommend", "ingredients": ["1 cup rice"]})
        return await asked, desk

    answer, desk = asyncio.run(scenario())
    assert answer == {"decision": "not_recommend", "ingredients": ["1 cup rice"]}
    assert desk.answered == 1 and desk.item is None


@pytest.mark.parametrize(("item", "answer", "field"), [
    (DISH, {"decision": "maybe"}, "decision"),
    ({"id": "r", "task": "fam_rank"}, {"ranking": ["A", "A", "B", "C"]}, "ranking"),
    ({"id": "q", "task": "binary"}, "Perhaps", "answer"),
])
def test_malformed_answers_are_refused_by_field(item, answer, field):
    with pytest.raises(DataError) as caught:
        check_answer(item, answer)
    assert caught.value.field == field


def test_a_participant_answers_five_dish_items(real_build, tmp_path):
    sync_playwright = _playwright()
    from playwright.sync_api import expect

    from nutrireason.pipeline.human_session import HumanSession
    from nutrireason.pipeline.score_request import score_runs
    from nutrireason.report import build_report
    from nutrireason.schema import read_records

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out, result = tmp_path / "human-run", {}
    listening = threading.Event()

    def serve():
        try:
            session = HumanSession("Pat", out, task="dish", n=5, seed=0,
                                   benchmark_dir=real_build, port=port)
            result["summary"] = session.serve(ready=lambda server: listening.set())
        except BaseException as exc:  # noqa: BLE001 - reported by the test below
            result["error"] = exc
            listening.set()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert listening.wait(60) and "error" not in result, result.get("error")
    url = f"http://127.0.0.1:{port}/"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            tab = browser.new_page()
            problems: list[str] = []
            tab.on("pageerror", lambda e: problems.append(str(e)))
            tab.goto(url)
            assert tab.title() == "NutriReason human baseline test"
            seen = []
            for index in range(5):
                tab.wait_for_selector("#answer-form")
                seen.append(tab.get_attribute("#answer-form", "data-item"))
                assert tab.locator("#question").inner_text().startswith("Is this dish suitable")
                assert "gold" not in tab.content() and "provenance" not in tab.content()
                expect(tab.locator("#timer")).not_to_have_text("0:00", timeout=5_000)
                tab.locator("input[name=ingredients]").first.check()
                tab.click("#recommend" if index % 2 == 0 else "#not-recommend")
            tab.wait_for_selector("#finished", timeout=30_000)
            assert problems == []
        finally:
            browser.close()
    thread.join(timeout=60)
    assert "error" not in result, result.get("error")
    assert result["summary"].total_ok == 5
    assert len(set(seen)) == 5

    records = read_records(out / "records.jsonl")
    assert [r.item_id for r in records] == seen
    assert {(r.method, r.model, r.status, r.parse_ok) for r in records} == {
        ("human", "human/Pat", "ok", True)}
    assert all(r.wall_s > 1.0 for r in records)  # the timer ran on every item
    for record in records:  # time since first shown; the ticked line as its ingredient name
        assert 1.0 < record.extra["seconds_on_item"] <= record.wall_s
        [ticked] = record.extra["ticked_lines"]
        row = next(r for r in record.gold["ingredients"] if r["line"] == ticked)
        assert record.parsed["ingredients"] == [row["canonical"] or row["food"]]
    assert [r.parsed["decision"] for r in records] == ["recommend", "not_recommend"] * 2 + \
        ["recommend"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["model_specs"] == ["human/Pat"]

    [(run_dir, scores, _, _)] = list(score_runs([out], 0, False, None))
    assert scores["records"] == 5
    metrics = json.loads((out / "metrics.json").read_text())
    [group] = metrics["groups"]
    assert group["model"] == "human/Pat" and group["task"] == "fam_dish" and group["n"] == 5
    page = build_report([out], tmp_path / "report").read_text()
    assert "People beside the paper" in page and "63.0%" in page and "Pat" in page


def test_a_second_start_resumes_the_same_sample(real_build, tmp_path):
    from nutrireason.pipeline.human_session import prepare_items, sample_items, split_file

    items = sample_items(split_file("dish", real_build, "standard"), 5, 0)
    again = sample_items(split_file("dish", real_build, "standard"), 5, 0)
    assert [i["id"] for i in items] == [i["id"] for i in again]
    prepare_items(tmp_path, items)
    with pytest.raises(DataError, match="another sample"):
        prepare_items(tmp_path, sample_items(split_file("dish", real_build, "standard"), 5, 1))


def test_rank_and_yes_no_forms():
    from nutrireason.review.human_app import answer_of

    rank = {"id": "r", "task": "fam_rank"}
    form = {"rank-A": ["3"], "rank-B": ["1"], "rank-C": ["4"], "rank-D": ["2"]}
    assert answer_of(rank, form) == {"ranking": ["B", "D", "A", "C"]}
    with pytest.raises(DataError, match="each place"):
        answer_of(rank, form | {"rank-C": ["1"]})
    with pytest.raises(DataError) as caught:
        answer_of(rank, form | {"rank-D": [""]})
    assert caught.value.field == "rank-D"
    assert answer_of({"id": "q", "task": "binary"}, {"answer": ["No"]}) == "No"
    dish = {"id": "d", "task": "fam_dish", "dish": {"ingredients": ["1 cup rice", "salt"]}}
    cited = answer_of(dish, {"decision": ["recommend"], "ingredients": ["salt", "uranium"]})
    assert cited == {"decision": "recommend", "ingredients": ["salt"]}
