"""FAM-Bench methods end to end: image input over real HTTP (loopback fake server), ranking with
cross-task consistency calls (scripted backend), and the rule-based reference.

Items are built by hand here in the shape of ``nutrireason.fam.instances._dish_item`` and
``_rank_item``; nothing depends on a data home or a built benchmark.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib.util
import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest

from nutrireason.fam.judgement import NOT_REC, REC
from nutrireason.methods.base import get_method
from nutrireason.methods.fam import FamReference
from nutrireason.models.errors import ModelError
from nutrireason.models.scripted import register
from nutrireason.models.types import ChatRequest
from nutrireason.runs import RunConfig, run
from nutrireason.runs.records import RECORDS_FILE

LABELS = {"hypertension": "Hypertension", "chronic_kidney_disease": "Chronic Kidney Disease"}
RANK_SYSTEM_START = "You compare four dishes"
DISH_SYSTEM_START = "You judge whether a dish suits"
needs_openai = pytest.mark.skipif(importlib.util.find_spec("openai") is None,
                                  reason="the openai SDK is not installed")


# --------------------------------------------------------------------------- hand-made items


def row(line: str, canonical: str, concepts: list[str], grams: float,
        foods: tuple[str, ...] = (), **nutrients: float) -> dict[str, Any]:
    """One ``evidence["ingredients"]`` row (``foods``: the knowledge-base foods it is)."""
    return {"line": line, "canonical": canonical, "concepts": sorted(concepts),
            "foods": sorted(foods), "grams": grams, "nutrients": nutrients}


def dish(title: str, rows: list[dict[str, Any]], per_serving: dict[str, float] | None = None,
         servings: int | None = None) -> dict[str, Any]:
    """A dish as the instance builder keeps it: the model's view, the evidence, the lines."""
    view: dict[str, Any] = {"title": title, "ingredients": [r["line"] for r in rows],
                            "dietary_tags": []}
    if servings:
        view["servings"] = servings
    view["nutrition"] = {"basis": "per serving, estimated from USDA SR28",
                         "values": {k: f"{v:.4g} mg" for k, v in (per_serving or {}).items()}}
    nutrition: dict[str, Any] = {"per_serving": per_serving, "per_100g": None}
    if per_serving and servings:  # calories that give the serving its grams (1 kcal/g)
        serving_g = sum(r["grams"] for r in rows) / servings
        nutrition = {"per_serving": {"calories": serving_g} | per_serving,
                     "per_100g": {"calories": 100.0}}
    return {"view": view,
            "evidence": {"ingredients": rows, "nutrition": nutrition},
            "lines": [{"line": r["line"], "food": r["line"].split(" ", 1)[-1],
                       "canonical": r["canonical"]} for r in rows]}


# Utilities for [hypertension, chronic_kidney_disease]: cabbage +2, toast +1, steak -2, hash -3.
CABBAGE = dish("Braised Cabbage", [
    row("1 small head green cabbage, shredded", "cabbage",
        ["cruciferous_vegetables", "non_starchy_vegetables", "vegetables"], 400.0,
        foods=("cabbage",)),
    row("2 tbsp extra-virgin olive oil", "olive oil", ["healthy_unsaturated_fats"], 30.0)])
TOAST = dish("Olive Oil Toast", [
    row("3 tbsp extra-virgin olive oil", "olive oil", ["healthy_unsaturated_fats"], 40.0),
    row("2 slices white sandwich loaf", "white bread", ["refined_grains"], 60.0)])
STEAK = dish("Pan-Seared Sirloin", [
    row("2 sirloin steaks", "beef steak", ["red_meat"], 300.0)])
# "bacon" appears nowhere in the view: the gold rationale must not leak into a prompt.
HASH = dish("Breakfast Hash", [
    row("8 rashers smoked streaky", "pork belly cured", ["processed_meats"], 200.0),
    row("1 onion, diced", "onion", ["non_starchy_vegetables", "vegetables"], 100.0)])
# Neutral for both conditions.
RICE = dish("Steamed Rice", [row("2 cups white rice", "white rice", ["refined_grains"], 370.0)])
# Hypertension: no sodium concept, but the per-serving sodium (800 mg) breaks the 600 mg veto.
STIR_FRY = dish("Tofu Stir-Fry", [
    row("14 oz firm tofu, cubed", "tofu", ["legumes"], 200.0, sodium=7.0),
    row("2 tbsp soy sauce", "soy sauce", [], 30.0, sodium=5493.0)],
    per_serving={"sodium": 800.0}, servings=2)


def dish_item(number: int, made: dict[str, Any], condition: str, decision: str,
              rationale: list[str], image: str | None = None) -> dict[str, Any]:
    """A ``fam_dish`` instance (``instances._dish_item`` shape)."""
    return {
        "id": f"dish-{number:05d}", "task": "fam_dish", "condition": condition,
        "conditions": [condition], "condition_labels": [LABELS[condition]],
        "recipe_id": made["view"]["title"].lower().replace(" ", "-"), "dish": made["view"],
        "image": image,
        "gold": {"decision": decision, "condition": condition, "rationale": rationale,
                 "ingredients": made["lines"]},
        "evidence": made["evidence"],
    }


RANK_DISHES = {"A": STEAK, "B": CABBAGE, "C": HASH, "D": TOAST}
RANK_GOLD = {
    "ranking": ["B", "D", "A", "C"],
    "labels": {"A": NOT_REC, "B": REC, "C": NOT_REC, "D": REC},
    "utility": {"A": -2, "B": 2, "C": -3, "D": 1},
    "avoid_violations": {"A": [], "B": [], "D": [],
                         "C": [{"condition": "chronic_kidney_disease",
                                "concept": "processed_meats", "ingredient": "pork belly cured"}]},
}


def rank_item(number: int = 1, images: dict[str, str | None] | None = None) -> dict[str, Any]:
    """A ``fam_rank`` instance (``instances._rank_item`` shape) for hypertension + CKD."""
    conditions = ["hypertension", "chronic_kidney_disease"]
    return {
        "id": f"rank-{number:05d}", "task": "fam_rank",
        "distractor": "combined_constraint_discrimination", "conditions": conditions,
        "condition_labels": [LABELS[c] for c in conditions],
        "recipe_ids": {k: d["view"]["title"].lower().replace(" ", "-")
                       for k, d in RANK_DISHES.items()},
        "dishes": {k: d["view"] for k, d in RANK_DISHES.items()},
        "images": images or dict.fromkeys(RANK_DISHES),
        "gold": RANK_GOLD,
        "evidence": {k: d["evidence"] for k, d in RANK_DISHES.items()},
    }


def write_bench(path: Path, items: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    return path


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / RECORDS_FILE).read_text().splitlines()]


def user_text(message: dict[str, Any]) -> str:
    content = message["content"]
    return content if isinstance(content, str) else content[0]["text"]


# --------------------------------------------------------------------------- images


def png(seed: str, size: int = 16) -> bytes:
    """A real ``size`` x ``size`` RGB PNG of seeded noise (incompressible, so its data URL is
    longer than the engine's 256-character keep limit)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    noise = b"".join(hashlib.sha256(f"{seed}{i}".encode()).digest() for i in range(size * 2))
    rows = b"".join(b"\x00" + noise[r * size * 3:(r + 1) * size * 3] for r in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


@pytest.fixture
def image_files(tmp_path: Path) -> dict[str, Path]:
    """dish.png and A.png .. D.png, each different noise (so different bytes)."""
    folder = tmp_path / "images"
    folder.mkdir()
    paths = {}
    for name in ("dish", "A", "B", "C", "D"):
        paths[name] = folder / f"{name}.png"
        paths[name].write_bytes(png(name))
    assert len({p.read_bytes() for p in paths.values()}) == 5
    assert all(p.stat().st_size > 256 for p in paths.values())
    return paths


def fake_answer(body: dict[str, Any]) -> str:
    """A valid JSON answer: a ranking for ranking prompts, else a decision."""
    if body["messages"][0]["content"].startswith(RANK_SYSTEM_START):
        return '{"ranking": ["B", "A", "D", "C"]}'
    return '{"decision": "recommend", "rationale_ingredients": []}'


def http_config(tmp_path: Path, url: str, bench: Path, methods: list[str]) -> RunConfig:
    return RunConfig(benchmark=bench, out=tmp_path / "run", methods=methods,
                     models=[f"openai-compatible/fake-vlm@{url}"], concurrency=1, cache=False,
                     progress=False, images=tmp_path / "images")


def image_parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in message["content"] if p["type"] == "image_url"]


def decoded(part: dict[str, Any]) -> bytes:
    url = part["image_url"]["url"]
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    return base64.b64decode(url[len(prefix):], validate=True)


@needs_openai
def test_images_are_sent_as_data_urls_and_image_mode_hides_the_recipe(tmp_path, image_files):
    from tests.models.fake_openai import FakeOpenAI

    dish_one = dish_item(1, CABBAGE, "hypertension", REC, ["cabbage"],
                         image=str(image_files["dish"]))
    rank_one = rank_item(images={k: str(image_files[k]) for k in "ABCD"})
    bench = write_bench(tmp_path / "items.jsonl", [dish_one, rank_one])
    methods = ["fam-baseline[text+image]", "fam-baseline[image]"]
    with FakeOpenAI(fake_answer) as server:
        summary = run(http_config(tmp_path, server.url, bench, methods))
        sent = list(server.requests)
    assert (summary.planned, summary.ok, summary.errors, summary.model_calls) == (4, 4, 0, 12)
    # concurrency 1: dish [text+image], dish [image], rank [text+image] x5, rank [image] x5
    assert len(sent) == 12
    assert all(body["response_format"] == {"type": "json_object"} for body in sent)
    assert all(body["model"] == "fake-vlm" for body in sent)

    # Dish, text+image: the whole recipe view as text, then the one image.
    user = sent[0]["messages"][1]
    assert sent[0]["messages"][0]["content"].startswith(DISH_SYSTEM_START)
    assert [p["type"] for p in user["content"]] == ["text", "image_url"]
    assert json.loads(user["content"][0]["text"]) == {
        "question": "Is this dish suitable for someone managing Hypertension?",
        "conditions": ["Hypertension"], "recipe": CABBAGE["view"]}
    assert decoded(user["content"][1]) == image_files["dish"].read_bytes()

    # Dish, image only: no title, no ingredient line.
    user = sent[1]["messages"][1]
    assert [p["type"] for p in user["content"]] == ["text", "image_url"]
    text = user["content"][0]["text"]
    assert json.loads(text) == {
        "question": "Is this dish suitable for someone managing Hypertension?",
        "conditions": ["Hypertension"], "recipe": "shown in the image"}
    for hidden in ["Braised Cabbage", *CABBAGE["view"]["ingredients"], "cabbage", "olive oil"]:
        assert hidden not in text
    assert decoded(user["content"][1]) == image_files["dish"].read_bytes()

    # Rank, text+image: four labelled images in letter order, then one call per option.
    for start, recipe_shown in ((2, True), (7, False)):
        ranking = sent[start]["messages"]
        assert ranking[0]["content"].startswith(RANK_SYSTEM_START)
        parts = ranking[1]["content"]
        assert [p["type"] for p in parts] == ["text"] + ["text", "image_url"] * 4
        assert [p["text"] for p in parts[1::2]] == [f"Image of dish {k}:" for k in "ABCD"]
        assert [decoded(p) for p in image_parts(ranking[1])] == [
            image_files[k].read_bytes() for k in "ABCD"]
        payload = json.loads(parts[0]["text"])
        if recipe_shown:
            assert payload["dishes"] == {k: {"recipe": d["view"]}
                                         for k, d in RANK_DISHES.items()}
        else:
            assert payload["dishes"] == dict.fromkeys("ABCD", {"recipe": "shown in the image"})
            for made in RANK_DISHES.values():
                assert made["view"]["title"] not in parts[0]["text"]
                assert not any(line in parts[0]["text"] for line in made["view"]["ingredients"])
        for offset, letter in enumerate("ABCD", start=1):
            option = sent[start + offset]["messages"]
            assert option[0]["content"].startswith(DISH_SYSTEM_START)
            assert [p["type"] for p in option[1]["content"]] == ["text", "image_url"]
            assert decoded(option[1]["content"][1]) == image_files[letter].read_bytes()
            shown = json.loads(option[1]["content"][0]["text"])["recipe"]
            assert shown == (RANK_DISHES[letter]["view"] if recipe_shown
                             else "shown in the image")

    # Records: parsed answers, and data URLs stored as sha256 pointers only.
    out = tmp_path / "run"
    got = {(r["item_id"], r["method"]): r for r in records(out)}
    assert set(got) == {(i, m) for i in ("dish-00001", "rank-00001") for m in methods}
    for method in methods:
        dish_record = got["dish-00001", method]
        assert dish_record["status"] == "ok" and dish_record["n_calls"] == 1
        assert dish_record["parsed"] == {"decision": REC, "ingredients": []}
        assert dish_record["extra"]["parse_mode"] == "json"
        rank_record = got["rank-00001", method]
        assert rank_record["n_calls"] == 5 and rank_record["parse_ok"] is True
        assert rank_record["parsed"] == {"ranking": ["B", "A", "D", "C"],
                                         "option_decisions": dict.fromkeys("ABCD", REC)}
    assert "base64," not in (out / RECORDS_FILE).read_text()
    stored = got["rank-00001", "fam-baseline[text+image]"]["requests"][0]["messages"][1]
    expected = [f"sha256:{hashlib.sha256(p['image_url']['url'].encode()).hexdigest()}"
                for p in image_parts(sent[2]["messages"][1])]
    assert [p["image_url"]["url"] for p in image_parts(stored)] == expected
    assert len(set(expected)) == 4


@needs_openai
def test_a_missing_image_is_a_bad_request_error_and_nothing_is_sent(tmp_path, image_files):
    from tests.models.fake_openai import FakeOpenAI

    missing = tmp_path / "images" / "gone.png"
    items = [
        dish_item(1, CABBAGE, "hypertension", REC, ["cabbage"], image=str(missing)),
        dish_item(2, HASH, "chronic_kidney_disease", NOT_REC, ["pork belly cured"], image=None),
        rank_item(images={"A": str(image_files["A"]), "B": str(image_files["B"]),
                          "C": str(missing), "D": str(image_files["D"])}),
    ]
    bench = write_bench(tmp_path / "items.jsonl", items)
    image_methods = ["fam-baseline[text+image]", "fam-cot[image]"]
    with FakeOpenAI(fake_answer) as server:
        summary = run(http_config(tmp_path, server.url, bench, [*image_methods, "fam-baseline"]))
        sent = list(server.requests)
    assert (summary.ok, summary.errors) == (3, 6)
    # Only the text-mode samples reached the server: 1 + 1 + 5 calls, all plain-text.
    assert len(sent) == 7
    assert all(isinstance(body["messages"][1]["content"], str) for body in sent)
    got = {(r["item_id"], r["method"]): r for r in records(tmp_path / "run")}
    for item in items:
        for method in image_methods:
            record = got[item["id"], method]
            assert record["status"] == "error"
            assert record["error"]["kind"] == "bad_request"
            assert record["error"]["status"] is None
            assert record["parsed"] is None and record["parse_ok"] is False
            assert (record["n_calls"], record["attempts"], record["requests"]) == (0, 0, [])
            assert record["extra"] == {}
        assert got[item["id"], "fam-baseline"]["status"] == "ok"
    assert repr(str(missing)) in got["dish-00001", "fam-cot[image]"]["error"]["message"]
    assert "None" in got["dish-00002", "fam-baseline[text+image]"]["error"]["message"]
    assert "rank-00001 dish C" in got["rank-00001", "fam-cot[image]"]["error"]["message"]


# --------------------------------------------------------------------------- rank + CTC


DISH_ANSWERS = {
    "Braised Cabbage": '{"decision": "recommend", "rationale_ingredients": '
                       '[{"condition": "Hypertension", "ingredients": ["cabbage"]}]}',
    "Olive Oil Toast": "On balance I would recommend this dish.",
    "Pan-Seared Sirloin": '```json\n{"decision": "Not recommended"}\n```',
    "Breakfast Hash": '{"decision": "not_recommend", "rationale_ingredients": ["bacon"]}',
}
SEEN: list[ChatRequest] = []


def ctc_responder(request: ChatRequest) -> str:
    SEEN.append(request)
    system, user = request.messages
    if system.text().startswith(RANK_SYSTEM_START):
        return 'Sure.\n```json\n{"ranking": ["Dish B", "D", "A", "C"]}\n```\nDone.'
    return DISH_ANSWERS[json.loads(user.text())["recipe"]["title"]]


register("fam-ctc-test", ctc_responder)


def test_rank_makes_one_ranking_call_and_one_dish_call_per_option(tmp_path):
    SEEN.clear()
    bench = write_bench(tmp_path / "items.jsonl", [rank_item()])
    summary = run(RunConfig(benchmark=bench, out=tmp_path / "run", methods=["fam-baseline"],
                            models=["scripted/fam-ctc-test"], cache=False, progress=False))
    assert (summary.ok, summary.errors, summary.model_calls) == (1, 0, 5)
    (record,) = records(tmp_path / "run")
    assert record["status"] == "ok" and record["parse_ok"] is True
    assert (record["n_calls"], record["attempts"], len(record["responses"])) == (5, 5, 5)
    assert record["parsed"] == {
        "ranking": ["B", "D", "A", "C"],
        "option_decisions": {"A": NOT_REC, "B": REC, "C": NOT_REC, "D": REC}}
    assert record["extra"]["parse_mode"] == "json"
    assert record["extra"]["option_parse_modes"] == {"A": "json", "B": "json", "C": "json",
                                            "D": "fallback"}
    assert record["gold"] == RANK_GOLD
    assert record["meta"]["distractor"] == "combined_constraint_discrimination"
    assert all(r["settings"]["json_mode"] is True for r in record["requests"])
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["methods"][0]["settings"]["json_mode"] is True
    assert manifest["methods"][0]["mode"] == "baseline"
    assert manifest["methods"][0]["input"] == "text"

    # The ranking call first, then options A-D in order, each asked the dish-level question.
    assert len(SEEN) == 5 and SEEN[0].messages[0].text().startswith(RANK_SYSTEM_START)
    ranking_payload = json.loads(SEEN[0].messages[1].text())
    assert ranking_payload == {
        "question": "Rank dishes A, B, C and D from most to least suitable for someone managing "
                    "Hypertension and Chronic Kidney Disease.",
        "conditions": ["Hypertension", "Chronic Kidney Disease"],
        "dishes": {k: {"recipe": d["view"]} for k, d in RANK_DISHES.items()}}
    for request, letter in zip(SEEN[1:], "ABCD", strict=True):
        assert request.messages[0].text().startswith(DISH_SYSTEM_START)
        assert json.loads(request.messages[1].text()) == {
            "question": "Is this dish suitable for someone managing Hypertension and Chronic "
                        "Kidney Disease?",
            "conditions": ["Hypertension", "Chronic Kidney Disease"],
            "recipe": RANK_DISHES[letter]["view"]}


def test_a_dish_item_records_decision_ingredients_and_parse_mode(tmp_path):
    bench = write_bench(tmp_path / "items.jsonl", [
        dish_item(1, CABBAGE, "hypertension", REC, ["cabbage"]),
        dish_item(2, TOAST, "chronic_kidney_disease", REC, ["olive oil"]),
        dish_item(3, HASH, "chronic_kidney_disease", NOT_REC, ["pork belly cured"])])
    summary = run(RunConfig(benchmark=bench, out=tmp_path / "run", methods=["fam-cot"],
                            models=["scripted/fam-ctc-test"], cache=False, progress=False))
    assert (summary.ok, summary.unparsed, summary.model_calls) == (3, 0, 3)
    got = {r["item_id"]: r for r in records(tmp_path / "run")}
    assert got["dish-00001"]["parsed"] == {"decision": REC, "ingredients": ["cabbage"]}
    assert got["dish-00001"]["extra"]["parse_mode"] == "json"
    assert got["dish-00002"]["parsed"] == {"decision": REC, "ingredients": []}
    assert got["dish-00002"]["extra"]["parse_mode"] == "fallback"
    assert got["dish-00003"]["parsed"] == {"decision": NOT_REC, "ingredients": ["bacon"]}
    assert got["dish-00003"]["meta"]["condition"] == "chronic_kidney_disease"
    assert got["dish-00003"]["gold"]["rationale"] == ["pork belly cured"]
    assert all(r["n_calls"] == 1 for r in got.values())


def test_an_unparseable_ranking_is_recorded_as_failed_with_decisions_kept(tmp_path):
    register("fam-no-ranking-test",
             lambda request: "I cannot decide." if request.messages[0].text().startswith(
                 RANK_SYSTEM_START) else '{"decision": "maybe"}')
    bench = write_bench(tmp_path / "items.jsonl", [rank_item()])
    summary = run(RunConfig(benchmark=bench, out=tmp_path / "run", methods=["fam-ki"],
                            models=["scripted/fam-no-ranking-test"], cache=False,
                            progress=False))
    assert (summary.ok, summary.unparsed, summary.model_calls) == (1, 1, 5)
    (record,) = records(tmp_path / "run")
    assert record["parse_ok"] is False and record["extra"]["parse_mode"] == "failed"
    assert record["parsed"] == {"ranking": [], "option_decisions": dict.fromkeys("ABCD")}
    assert record["extra"]["option_parse_modes"] == dict.fromkeys("ABCD", "failed")


def test_a_non_fam_item_is_a_bad_request():
    method = get_method("fam-baseline")
    with pytest.raises(ModelError) as caught:
        asyncio.run(method.answer({"id": "q1", "task": "ngqa_binary"}, None))  # type: ignore[arg-type]
    assert caught.value.kind == "bad_request" and "'q1'" in str(caught.value)


# --------------------------------------------------------------------------- reference


def reference_answer(item: dict[str, Any]):
    method = get_method("fam-reference")
    assert isinstance(method, FamReference) and method.name == "fam-reference"
    return asyncio.run(method.answer(item, None))  # type: ignore[arg-type]


def test_reference_avoid_concept_makes_not_recommend_with_that_ingredient():
    prediction = reference_answer(
        dish_item(1, HASH, "chronic_kidney_disease", NOT_REC, ["pork belly cured"]))
    assert prediction.parsed == {"decision": NOT_REC, "ingredients": ["pork belly cured"]}
    assert prediction.parse_ok is True


@pytest.mark.parametrize(("made", "condition", "expected"), [
    (CABBAGE, "chronic_kidney_disease", {"decision": REC, "ingredients": ["cabbage"]}),
    (CABBAGE, "hypertension", {"decision": REC, "ingredients": ["cabbage"]}),
    (TOAST, "chronic_kidney_disease", {"decision": REC, "ingredients": ["olive oil"]}),
    (STEAK, "hypertension", {"decision": NOT_REC, "ingredients": ["beef steak"]}),
    # No sodium concept fires: the per-serving veto does, naming the top sodium contributors.
    # tofu is a legume, beneficial for hypertension: the sodium veto names the soy sauce only
    (STIR_FRY, "hypertension", {"decision": NOT_REC, "ingredients": ["soy sauce"]}),
])
def test_reference_dish_decisions(made, condition, expected):
    prediction = reference_answer(dish_item(1, made, condition, expected["decision"],
                                            expected["ingredients"]))
    assert prediction.parsed == expected and prediction.parse_ok is True


def test_reference_neutral_dish_has_no_decision():
    prediction = reference_answer(dish_item(1, RICE, "hypertension", REC, []))
    assert prediction.parsed == {"decision": None, "ingredients": []}
    assert prediction.parse_ok is False


def test_reference_ranking_follows_utility():
    prediction = reference_answer(rank_item())
    assert prediction.parsed == {"ranking": ["B", "D", "A", "C"],
                                 "option_decisions": {"A": NOT_REC, "B": REC, "C": NOT_REC,
                                                      "D": REC}}
    assert prediction.parsed["ranking"] == RANK_GOLD["ranking"]
    assert prediction.parse_ok is True


def test_reference_run_through_the_engine_makes_no_calls(tmp_path):
    bench = write_bench(tmp_path / "items.jsonl", [
        rank_item(), dish_item(1, HASH, "chronic_kidney_disease", NOT_REC,
                               ["pork belly cured"])])
    summary = run(RunConfig(benchmark=bench, out=tmp_path / "run", methods=["fam-reference"],
                            models=["scripted/echo"], cache=False, progress=False))
    assert (summary.ok, summary.model_calls) == (2, 0)
    got = {r["item_id"]: r for r in records(tmp_path / "run")}
    assert got["rank-00001"]["parsed"]["ranking"] == ["B", "D", "A", "C"]
    assert got["dish-00001"]["parsed"]["decision"] == NOT_REC
    assert all(r["requests"] == [] for r in got.values())
