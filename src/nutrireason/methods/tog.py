"""Think-on-Graph (ToG, Sun et al. 2024) on NGQA question graphs (paper Appendix C).

ToG explores a knowledge graph in rounds of *search, prune, reason*. Exploration starts at the
topic entities (``user`` and the food) and walks the question graph as if undirected, keeping
every triple in its stored direction. Round 1 expands every topic entity along all its relations
without pruning (NGQA delays pruning to the second round). Rounds 2..``depth`` prune twice, each
with at most one batched model call:

* relation pruning: the candidate ``(entity, relation, direction)`` groups of the frontier; when
  there are more than ``width``, the model chooses at most ``width`` and scores each (ToG's
  relation prompt: scores from 0 to 1 that sum to 1); the highest scores are kept. Only triples
  under the kept groups go on (the NGQA authors' code overwrote the pruned list, so their
  relation pruning kept everything; here it prunes).
* entity pruning: the candidate triples under the kept groups; when there are more than
  ``width``, the model scores them the same way and the ``width`` best are kept.

As in ToG, the model reasons over the retained *paths*: a kept triple extends the path that
reached its endpoint (joining two paths when both endpoints were reached), the kept paths replace
the previous ones, and a path the pruning did not extend is dropped. After every round but the
last, while the frontier is not empty, ToG's *reasoning* step asks the model whether the
retained paths are enough to answer; "Yes" stops the exploration early. A last call answers from
the union of the retained paths' triples (in the question graph's order), with the paper's ToG
method prompt (Tables 16-18).

Model calls per question = relation-pruning calls + entity-pruning calls + reasoning calls + 1,
at most ``3 * (depth - 1) + 1`` (7 at depth 3) because each round's pruning is one batched call
per kind. The ToG authors' bound, with one pruning call per entity and relation, is
``2 * width * depth + depth + 1`` (34 at width 5, depth 3); :func:`tog_call_bounds` gives both.
The paper's Figure 8 (its pruning prompt) is an image the text does not reproduce, so the
prompts follow the original ToG's structure in this project's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nutrireason.methods.base import Generator, MethodInfo, Prediction, register_method
from nutrireason.methods.ngqa import GraphRagMethod, item_triples
from nutrireason.methods.ngqa_prompts import (
    BASE_METHOD_PROMPT,
    SYSTEM_PROMPT,
    TOG_PROMPT,
    Triple,
    reader_for,
    triples_text,
    user_prompt,
)
from nutrireason.methods.reading import final_text, read_response
from nutrireason.models.types import ChatRequest, GenerationSettings, Message
from nutrireason.ngqa.questions import USER_NODE

PRUNE_MAX_TOKENS = 64
REASON_MAX_TOKENS = 64

RELATION_PRUNE_PROMPT = (
    "Question: {question}\n"
    "To answer the question we explore a knowledge graph starting from the entities {topics}. "
    "Below are the candidate relations from the entities reached so far, numbered; each shows "
    "the entity, the relation and how many entities it leads to. Choose at most {width} "
    "relations that contribute to answering the question and score each one's contribution "
    "from 0 to 1, the scores of the chosen relations summing to 1.\n"
    "{candidates}\n"
    "Answer with one chosen relation per line as its number and score, for example:\n"
    "3 (Score: 0.6)\n1 (Score: 0.4)")

ENTITY_PRUNE_PROMPT = (
    "Question: {question}\n"
    "To answer the question we explore a knowledge graph starting from the entities {topics}. "
    "Below are the candidate triples (head --relation--> tail) reached so far, numbered. "
    "Choose at most {width} triples that contribute to answering the question and score each "
    "one's contribution from 0 to 1, the scores of the chosen triples summing to 1.\n"
    "{candidates}\n"
    "Answer with one chosen triple per line as its number and score, for example:\n"
    "3 (Score: 0.6)\n1 (Score: 0.4)")

REASON_PROMPT = (
    "Question: {question}\n"
    "These knowledge-graph triples (head relation tail) were retrieved so far: "
    "{triples}\n"
    "Are these triples enough to answer the question? Start your answer with Yes or No, then "
    "give one short sentence of reasoning.")

_NUMBER = re.compile(r"(?<![\d.])\d+(?!\d|\.\d)")
_SCORE = re.compile(r"score\W{0,3}(\d*\.\d+|\d+)", re.I)
_VERDICT = re.compile(r"\b(yes|no)\b", re.I)


def tog_call_bounds(width: int, depth: int) -> dict[str, int]:
    """Most model calls per question: this implementation (batched pruning, reasoning after
    every round but the last, one answer) and the ToG authors' ``2ND + D + 1``."""
    return {"this_implementation": 3 * (depth - 1) + 1,
            "tog_authors": 2 * width * depth + depth + 1}


@dataclass(frozen=True)
class RelationGroup:
    """The triples leaving (``out``: entity is the head) or entering (``in``: entity is the
    tail) a frontier entity along one relation."""

    entity: str
    relation: str
    direction: str  # "out" or "in"


def group_text(group: RelationGroup, size: int) -> str:
    """``user --has--> (5 entities)`` or ``(2 entities) --contradict--> high_calorie``."""
    others = f"({size} {'entity' if size == 1 else 'entities'})"
    if group.direction == "out":
        return f"{group.entity} --{group.relation}--> {others}"
    return f"{others} --{group.relation}--> {group.entity}"


def triple_text(triple: Triple) -> str:
    head, relation, tail = triple
    return f"{head} --{relation}--> {tail}"


def parse_choices(text: str, n: int, width: int) -> list[int] | None:
    """The 0-based candidate indices the model chose, at most ``width``; None when the text
    names none in range. Each line's first whole number names a candidate and its
    ``Score: x`` (if any) ranks it; lines without a score may list several numbers ("1, 3").
    Scored choices come first, highest score first; ties and unscored ones keep their order."""
    named: list[tuple[int, float | None]] = []
    for line in text.splitlines():
        numbers = [int(t) for t in _NUMBER.findall(_SCORE.sub(" ", line))]
        score = _SCORE.search(line)
        if score and numbers:
            named.append((numbers[0], float(score.group(1))))
        else:
            named += [(number, None) for number in numbers]
    chosen: dict[int, float | None] = {}
    for number, score in named:
        if 1 <= number <= n and number - 1 not in chosen:
            chosen[number - 1] = score
    ranked = sorted(chosen, key=lambda k: -chosen[k] if chosen[k] is not None else 1.0)
    return ranked[:width] or None


def parse_sufficient(text: str) -> bool | None:
    """The reasoning step's verdict: the first yes/no of the final answer; None when there is
    none (a cut-off answer gives an empty final text, so None too)."""
    found = _VERDICT.search(text)
    return None if found is None else found.group(1).lower() == "yes"


class TogMethod(GraphRagMethod):
    """Think-on-Graph: rounds of search, relation and entity pruning and a reasoning step that
    may stop early, then one answering call."""

    name = "tog"
    info = MethodInfo(
        benchmark="ngqa", demo=True, left_out="Think-on-Graph: several model calls per question",
        stats_note="{tog_calls:.2f} model calls per answered question, the reasoning step "
                   "stopping early in {tog_stopped_early:.0%}; at most {tog_bound:.0f} here "
                   "(pruning batched per round), {tog_authors_bound:.0f} by the ToG authors' "
                   "bound 2 x width x depth + depth + 1 (Sun et al. 2024).")
    method_prompt = f"{BASE_METHOD_PROMPT} {TOG_PROMPT}"

    def __init__(self, settings: GenerationSettings | None = None, width: int = 5,
                 depth: int = 3) -> None:
        super().__init__(settings)
        if width < 1 or depth < 1:
            raise ValueError(f"ToG needs width >= 1 and depth >= 1, got {width}, {depth}")
        self.width = width
        self.depth = depth
        self.prune_settings = self.settings.model_copy(
            update={"max_tokens": PRUNE_MAX_TOKENS, "temperature": 0.0})
        self.reason_settings = self.settings.model_copy(
            update={"max_tokens": REASON_MAX_TOKENS, "temperature": 0.0})

    def describe(self) -> dict[str, Any]:
        return super().describe() | {"width": self.width, "depth": self.depth,
                                     "call_bounds": tog_call_bounds(self.width, self.depth)}

    def retrieve(self, item: dict[str, Any]) -> list[Triple]:
        raise NotImplementedError("ToG retrieves with model calls; use `await answer(...)`")

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        triples = item_triples(item)
        topics = [USER_NODE, item["food"]]
        state = _Search(self, item, backend)

        # Round 1, unpruned: every triple touching a topic entity is a one-step path.
        visited = set(topics)
        reach: dict[str, set[int]] = {}  # node -> the triples of the path that reached it
        first = [i for i, (h, _, t) in enumerate(triples) if h in visited or t in visited]
        paths = [{i} for i in first]
        used = set(first)
        frontier = _extend(triples, first, paths, visited, reach)
        depth_reached = 1 if first else 0
        stopped_early = False

        for iteration in range(2, self.depth + 1):
            if not frontier:
                break
            if await state.sufficient(_retained(triples, paths)):
                stopped_early = True
                break
            kept = await state.step(triples, used, frontier)
            if not kept:
                break
            paths = [{i} | reach.get(triples[i][0], set()) | reach.get(triples[i][2], set())
                     for i in kept]
            used.update(kept)
            frontier = _extend(triples, kept, paths, visited, reach)
            depth_reached = iteration

        chosen = _retained(triples, paths)
        text = user_prompt(item["question"], self.method_prompt, self.graph_text(chosen),
                           item["task"])
        messages = [Message(role="system", content=SYSTEM_PROMPT),
                    Message(role="user", content=text)]
        response = await backend.generate(ChatRequest(messages=messages, settings=self.settings))
        reading = read_response(response, reader_for(item["task"]))
        bounds = tog_call_bounds(self.width, self.depth)
        return Prediction(reading.value, reading.ok, retrieved=[list(t) for t in chosen],
                          extra={"reading": reading.audit(),
                                 "tog_pruning_calls": state.calls,
                                 "tog_reasoning_calls": state.reasoning_calls,
                                 "tog_calls": state.calls + state.reasoning_calls + 1,
                                 "tog_depth_reached": depth_reached,
                                 "tog_stopped_early": stopped_early,
                                 "tog_call_bounds": bounds,
                                 "fallbacks": state.fallbacks},
                          stats={"tog_calls": state.calls + state.reasoning_calls + 1,
                                 "tog_stopped_early": stopped_early,
                                 "tog_depth_reached": depth_reached,
                                 "tog_bound": bounds["this_implementation"],
                                 "tog_authors_bound": bounds["tog_authors"]})


def _retained(triples: list[Triple], paths: list[set[int]]) -> list[Triple]:
    """The union of the paths' triples, in the question graph's order."""
    return [triples[i] for i in sorted(set().union(*paths))] if paths else []


def _extend(triples: list[Triple], kept: list[int], paths: list[set[int]], visited: set[str],
            reach: dict[str, set[int]]) -> list[str]:
    """The kept triples' endpoints not seen before, in order: the next frontier. Each is
    marked visited and remembers the path (``paths[k]`` for ``kept[k]``) that reached it."""
    frontier: list[str] = []
    for i, path in zip(kept, paths, strict=True):
        head, _, tail = triples[i]
        for node in (head, tail):
            if node not in visited:
                visited.add(node)
                reach[node] = path
                frontier.append(node)
    return frontier


class _Search:
    """One question's exploration state: the calls made and the fallbacks taken."""

    def __init__(self, method: TogMethod, item: dict[str, Any], backend: Generator) -> None:
        self.method = method
        self.question = item["question"]
        self.topics = f'"{USER_NODE}" and "{item["food"]}"'
        self.backend = backend
        self.calls = 0
        self.reasoning_calls = 0
        self.fallbacks = 0

    async def sufficient(self, retained: list[Triple]) -> bool:
        """ToG's reasoning step: are the retained paths enough to answer? One call; an
        answer without a yes/no counts as "not yet" and as a fallback."""
        prompt = REASON_PROMPT.format(question=self.question, triples=triples_text(retained))
        request = ChatRequest(messages=[Message(role="system", content=SYSTEM_PROMPT),
                                        Message(role="user", content=prompt)],
                              settings=self.method.reason_settings)
        self.reasoning_calls += 1
        verdict = parse_sufficient(final_text(await self.backend.generate(request)))
        if verdict is None:
            self.fallbacks += 1
        return bool(verdict)

    async def step(self, triples: list[Triple], retained: set[int],
                   frontier: list[str]) -> list[int]:
        """One pruned iteration: the indices of the triples it keeps, in graph order."""
        on_frontier = set(frontier)
        groups: dict[RelationGroup, list[int]] = {}
        for i, (head, relation, tail) in enumerate(triples):
            if i in retained:
                continue
            if head in on_frontier:
                groups.setdefault(RelationGroup(head, relation, "out"), []).append(i)
            if tail in on_frontier:
                groups.setdefault(RelationGroup(tail, relation, "in"), []).append(i)
        if not groups:
            return []

        candidates = list(groups)
        lines = [group_text(g, len(groups[g])) for g in candidates]
        picked = await self.prune(RELATION_PRUNE_PROMPT, lines)
        under = sorted({i for k in picked for i in groups[candidates[k]]})

        lines = [triple_text(triples[i]) for i in under]
        picked = await self.prune(ENTITY_PRUNE_PROMPT, lines)
        return sorted(under[k] for k in picked)

    async def prune(self, template: str, lines: list[str]) -> list[int]:
        """Indices of the candidates kept: all when they fit the width, else the model's
        choice (one call), else the first ``width`` as a recorded fallback."""
        width = self.method.width
        if len(lines) <= width:
            return list(range(len(lines)))
        numbered = "\n".join(f"{n}. {line}" for n, line in enumerate(lines, 1))
        prompt = template.format(question=self.question, topics=self.topics, width=width,
                                 candidates=numbered)
        request = ChatRequest(messages=[Message(role="system", content=SYSTEM_PROMPT),
                                        Message(role="user", content=prompt)],
                              settings=self.method.prune_settings)
        self.calls += 1
        response = await self.backend.generate(request)
        chosen = parse_choices(final_text(response), len(lines), width)
        if chosen is None:
            self.fallbacks += 1
            return list(range(width))
        return chosen


register_method(TogMethod.name, TogMethod)
