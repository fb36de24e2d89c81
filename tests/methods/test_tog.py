"""Think-on-Graph on NGQA question graphs: pruning really prunes, the reasoning step stops the
exploration early, calls are counted, fallbacks are deterministic and recorded."""

from __future__ import annotations

import asyncio
import json
import re
from itertools import islice

import pytest

from nutrireason.methods.base import get_method
from nutrireason.methods.ngqa_prompts import TOG_PROMPT
from nutrireason.methods.tog import TogMethod, parse_choices, parse_sufficient, tog_call_bounds
from nutrireason.models.retry import RetryPolicy
from nutrireason.models.scripted import ScriptedBackend, register
from nutrireason.models.types import ChatRequest, GenerationSettings
from nutrireason.ngqa.spec import NOTES
from nutrireason.paths import builds_dir
from nutrireason.runs.engine import CallProxy

FOOD = "Test soup"
QUESTION = (f'Based on the nutrients the food provides and the user needs, please answer whether '
            f'the food "{FOOD}" is healthy for the user? Please answer with yes or no.')
TAGS = ["high_sodium", "low_sugar", "high_calorie", "low_protein", "low_carb",
        "high_cholesterol"]
HABITS = ["Eats lots of fish", "Adds little to no salt at table", "Drinks lots of water",
          "Ate more food than usual"]
FOOD_TRIPLES = ([(FOOD, "belongs to", "Soups")]
                + [(FOOD, "has", i) for i in ("Salt, table", "Rice, brown", "Carrots, raw")]
                + [(FOOD, "belongs to", t) for t in TAGS])
USER_TRIPLES = ([("user", "has", h) for h in HABITS]
                + [("user", "has", c) for c in ("obesity", "hypertension")])
E1 = ("obesity", "contradict", "high_calorie")
E2 = ("obesity", "match", "low_sugar")
E3 = ("obesity", "match", "low_carb")
E4 = ("hypertension", "contradict", "high_sodium")
E5 = ("hypertension", "match", "low_sugar")
EDGES = [E1, E2, E3, E4, E5]
TOPIC_TRIPLES = FOOD_TRIPLES + USER_TRIPLES
# Iteration 2's candidate relation groups, in the order the method lists them.
GROUPS = ["obesity --contradict--> (1 entity)", "(1 entity) --contradict--> high_calorie",
          "obesity --match--> (2 entities)", "(2 entities) --match--> low_sugar",
          "(1 entity) --match--> low_carb", "hypertension --contradict--> (1 entity)",
          "(1 entity) --contradict--> high_sodium", "hypertension --match--> (1 entity)"]


def supported(edges):
    """The retained paths' triples for these condition-tag edges: the edges, the user's
    condition triples and the food's tag triples they hang from, in graph order."""
    ends = {node for edge in edges for node in (edge[0], edge[2])}
    return [t for t in TOPIC_TRIPLES if t[2] in ends] + list(edges)


def make_item(triples=None, food=FOOD, task="binary"):
    triples = TOPIC_TRIPLES + EDGES if triples is None else triples
    return {"task": task, "question": QUESTION, "food": food,
            "triples": [list(t) for t in triples], "edges": [], "answer": "No"}


def kind(request: ChatRequest) -> str:
    text = request.messages[-1].text()
    if "enough to answer the question?" in text:
        return "reason"
    if "candidate relations" in text:
        return "relation"
    if "candidate triples" in text:
        return "entity"
    return "final"


def numbered(request: ChatRequest) -> dict[str, int]:
    """The candidate lines of a pruning prompt -> their numbers."""
    lines = re.findall(r"^(\d+)\. (.+)$", request.messages[-1].text(), re.M)
    return {line: int(n) for n, line in lines}


class Recorder:
    """A responder: answers pruning prompts with ``pick(kind, candidates)``, reasoning prompts
    with the next of ``verdicts`` ("No": explore on), the final with Yes."""

    def __init__(self, pick, verdicts=()):
        self.pick = pick
        self.verdicts = list(verdicts)
        self.requests: list[ChatRequest] = []

    def __call__(self, request: ChatRequest) -> str:
        self.requests.append(request)
        which = kind(request)
        if which == "reason":
            return self.verdicts.pop(0) if self.verdicts else "No, not yet."
        return "Yes" if which == "final" else self.pick(which, numbered(request))

    def of(self, which: str) -> list[ChatRequest]:
        return [r for r in self.requests if kind(r) == which]


EXTRA = {"tog_pruning_calls": 0, "tog_reasoning_calls": 1, "tog_calls": 0,
         "tog_depth_reached": 2, "tog_stopped_early": False, "fallbacks": 0}


def facts(prediction) -> dict:
    """The prediction's ToG facts without the call bounds and the answer's reading (tested
    on their own)."""
    return {k: v for k, v in prediction.extra.items()
            if k not in ("tog_call_bounds", "reading")}


def run(method, item, responder, name):
    register(name, responder)
    backend = ScriptedBackend(name)
    prediction = asyncio.run(method.answer(item, backend))
    return prediction, backend.calls


def retained(prediction) -> list[tuple]:
    return [tuple(t) for t in prediction.retrieved]


def test_registered_and_described():
    method = get_method("tog", GenerationSettings(max_tokens=300))
    assert isinstance(method, TogMethod)
    assert (method.width, method.depth) == (5, 3)
    assert method.describe()["width"] == 5
    assert method.prune_settings.max_tokens == 64 and method.prune_settings.temperature == 0
    assert method.settings.max_tokens == 300


def test_parse_choices():
    assert parse_choices("3, 1, 3, 99, 0, 2", n=5, width=5) == [2, 0, 1]
    assert parse_choices("Relations 2 and 4 and 5", n=5, width=2) == [1, 3]
    assert parse_choices("none of them", n=5, width=2) is None
    assert parse_choices("7, 8", n=5, width=2) is None
    # ToG's scored format: ranked by score, the decimals never read as candidates
    assert parse_choices("1 (Score: 0.2)\n4 (Score: 0.5)\n2 (Score: 0.3)", n=5, width=2) == [
        3, 1]
    assert parse_choices("1. {obesity --match--> (2 entities) (Score: 0.7)}: relevant\n"
                         "3. {x (Score: 0.3)}", n=5, width=5) == [0, 2]
    assert parse_choices("Score: 0.5, 0.5", n=5, width=2) is None  # scores but no candidate


def test_parse_sufficient():
    assert parse_sufficient("Yes. The paths link the conditions to the tags.") is True
    assert parse_sufficient("{No}, the user's conditions are not linked yet") is False
    assert parse_sufficient("I cannot tell.") is None


def test_the_reasoning_step_stops_early_after_round_1():
    responder = Recorder(lambda which, lines: pytest.fail(f"unexpected {which} call"),
                         verdicts=["Yes, the retrieved triples are enough."])
    prediction, calls = run(TogMethod(), make_item(), responder, "tog-early")
    assert calls == 1 + 1  # one reasoning call, no pruning, the answer
    assert [kind(r) for r in responder.requests] == ["reason", "final"]
    # the answer rests on round 1's paths: every triple touching the user or the food
    assert retained(prediction) == TOPIC_TRIPLES
    assert facts(prediction) == EXTRA | {"tog_calls": 2, "tog_depth_reached": 1,
                                        "tog_stopped_early": True}
    reason_prompt = responder.of("reason")[0]
    assert QUESTION in reason_prompt.messages[-1].text()
    assert "(user has obesity)" in reason_prompt.messages[-1].text()
    assert reason_prompt.settings.max_tokens == 64 and reason_prompt.settings.temperature == 0


def test_the_reasoning_step_can_stop_after_round_2():
    chain = [("user", "has", "a"), ("b", "to", "a"), ("b", "to", "c"), ("c", "to", "d")]
    responder = Recorder(lambda which, lines: pytest.fail(f"unexpected {which} call"),
                         verdicts=["No", "Yes"])
    prediction, calls = run(TogMethod(depth=5), make_item(chain), responder, "tog-stop2")
    assert calls == 2 + 1
    assert retained(prediction) == chain[:2]  # round 2 added (b to a); round 3 never ran
    assert prediction.extra["tog_depth_reached"] == 2
    assert prediction.extra["tog_stopped_early"] is True


def test_an_unclear_reasoning_answer_explores_on_and_is_recorded():
    responder = Recorder(lambda which, lines: pytest.fail(f"unexpected {which} call"),
                         verdicts=["Perhaps."])
    prediction, _ = run(TogMethod(width=50), make_item(), responder, "tog-unclear")
    assert prediction.extra["tog_stopped_early"] is False
    assert prediction.extra["fallbacks"] == 1
    assert retained(prediction) == supported(EDGES)


def test_call_bounds_beside_the_tog_authors():
    assert tog_call_bounds(5, 3) == {"this_implementation": 7, "tog_authors": 34}
    assert TogMethod(width=5, depth=3).describe()["call_bounds"]["tog_authors"] == 34


def test_relation_pruning_prunes_and_calls_are_counted():
    def pick(which, lines):
        assert which == "relation"
        assert list(lines) == GROUPS
        # chosen groups, plus an out-of-range number and a repeat that must be ignored
        chosen = [lines["obesity --match--> (2 entities)"],
                  lines["hypertension --match--> (1 entity)"]]
        return f"{chosen[0]}, 99, {chosen[1]}, {chosen[0]}"

    responder = Recorder(pick)
    prediction, calls = run(TogMethod(), make_item(), responder, "tog-relation")
    # reasoning after round 1 ("No"); relation pruning: 8 groups > 5 -> one call; 3 triples
    # under the kept groups <= 5 -> none; round 2 reaches no new node, so no second reasoning
    assert calls == len(responder.requests) == 1 + 1 + 0 + 1
    assert retained(prediction) == supported([E2, E3, E5])
    assert E1 not in retained(prediction) and E4 not in retained(prediction)  # not chosen
    assert prediction.parsed == "Yes" and prediction.parse_ok
    assert facts(prediction) == EXTRA | {"tog_pruning_calls": 1, "tog_calls": 3}
    relation_prompt = responder.of("relation")[0]
    assert QUESTION in relation_prompt.messages[-1].text()
    assert relation_prompt.settings.max_tokens == 64
    final = responder.of("final")[0].messages[-1].text()
    assert TOG_PROMPT in final and NOTES["binary"] in final
    assert "(obesity contradict high_calorie)" not in final
    assert "(hypertension match low_sugar)" in final


def test_relation_then_entity_pruning():
    def pick(which, lines):
        if which == "relation":
            return (f'{lines["obesity --match--> (2 entities)"]}, '
                    f'{lines["hypertension --match--> (1 entity)"]}')
        assert list(lines) == ["obesity --match--> low_sugar", "obesity --match--> low_carb",
                               "hypertension --match--> low_sugar"]
        return "3, 1"

    responder = Recorder(pick)
    prediction, calls = run(TogMethod(width=2), make_item(), responder, "tog-entity")
    # reasoning; 8 groups > 2 -> relation call; 3 triples under them > 2 -> entity call; answer
    assert calls == 1 + 1 + 1 + 1
    assert retained(prediction) == supported([E2, E5])
    assert facts(prediction) == EXTRA | {"tog_pruning_calls": 2, "tog_calls": 4}
    assert QUESTION in responder.of("entity")[0].messages[-1].text()


def test_wide_enough_means_no_pruning_calls():
    responder = Recorder(lambda which, lines: pytest.fail(f"unexpected {which} call"))
    item = make_item()
    prediction, calls = run(TogMethod(width=50), item, responder, "tog-wide")
    assert calls == 1 + 1  # the reasoning step after round 1, then the answer
    assert retained(prediction) == supported(EDGES)  # unextended paths drop
    assert facts(prediction) == EXTRA | {"tog_pruning_calls": 0, "tog_calls": 2}


def test_depth_bounds_the_walk():
    chain = [("user", "has", "a"), ("b", "to", "a"), ("b", "to", "c"), ("c", "to", "d"),
             ("x", "to", "y")]
    item = make_item(chain)
    responder = Recorder(lambda which, lines: pytest.fail(f"unexpected {which} call"))
    prediction, calls = run(TogMethod(depth=3), item, responder, "tog-chain")
    assert calls == 2 + 1  # reasoning after rounds 1 and 2 (never after the last), answer
    assert retained(prediction) == chain[:3]  # user-a, a-b (stored b->a), b-c; not c-d
    assert prediction.extra["tog_depth_reached"] == 3
    prediction, _ = run(TogMethod(depth=1), item, responder, "tog-chain")
    assert retained(prediction) == chain[:1]
    assert prediction.extra["tog_depth_reached"] == 1


@pytest.mark.parametrize("width, bad, expected, calls", [
    # relation answer unparseable -> the first 5 groups -> E1, E2, E3, E5 (4 <= 5 fit)
    (5, {"relation"}, [E1, E2, E3, E5], 2),
    # relation answer fine; entity answer unparseable -> the first 2 triples under the groups
    (2, {"entity"}, [E2, E3], 3),
])
def test_unparseable_pruning_falls_back_deterministically(width, bad, expected, calls):
    def pick(which, lines):
        if which in bad:
            return "I am not sure which ones matter."
        return (f'{lines["obesity --match--> (2 entities)"]}, '
                f'{lines["hypertension --match--> (1 entity)"]}')

    results = [run(TogMethod(width=width), make_item(), Recorder(pick), "tog-bad")
               for _ in range(2)]
    (first, first_calls), (second, _) = results
    assert first_calls == calls + 1  # and one reasoning call
    assert retained(first) == retained(second) == supported(expected)
    assert first.extra["fallbacks"] == 1
    assert first.extra["tog_pruning_calls"] == calls - 1


def _real_items(n: int) -> list[dict]:
    path = builds_dir() / "ngqa/benchmark/standard/binary.jsonl"
    if not path.is_file():
        pytest.skip("no built NGQA standard binary benchmark")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in islice(handle, n)]


def test_real_items_finish_within_the_call_bound():
    items = _real_items(20)
    register("tog-real", lambda r: {"final": "Yes", "reason": "No"}.get(kind(r), "1, 2"))
    method = TogMethod()
    bound = tog_call_bounds(method.width, method.depth)["this_implementation"]
    for item in items:
        proxy = CallProxy(ScriptedBackend("tog-real"), None, RetryPolicy())
        prediction = asyncio.run(method.answer(item, proxy))
        assert prediction.parsed == "Yes" and prediction.parse_ok
        assert 1 <= proxy.calls <= bound
        assert proxy.calls == prediction.extra["tog_calls"] == (
            prediction.extra["tog_pruning_calls"] + prediction.extra["tog_reasoning_calls"] + 1)
        triples = {tuple(t) for t in item["triples"]}
        assert set(retained(prediction)) <= triples
        assert prediction.extra["fallbacks"] == 0
