"""Think-on-Graph (ToG, Sun et al. 2024) on NGQA question graphs (paper Appendix C).

Exploration starts at the topic entities (``user`` and the food) and walks the question graph as
if undirected, keeping every triple in its stored direction. Iteration 1 expands every topic
entity along all its relations without pruning (NGQA delays pruning to the second iteration).
Iterations 2..``depth`` prune twice, each with at most one batched model call:

* relation pruning: the candidate ``(entity, relation, direction)`` groups of the frontier; when
  there are more than ``width``, the model picks at most ``width`` of them. Only triples under
  the picked groups go on (the NGQA authors' code overwrote the pruned list, so their relation
  pruning kept everything; here it prunes).
* entity pruning: the candidate triples under the kept groups; when there are more than
  ``width``, the model picks at most ``width``.

As in ToG, the model reasons over the retained *paths*: a kept triple extends the path that
reached its endpoint (joining two paths when both endpoints were reached), the kept paths replace
the previous ones, and a path the pruning did not extend is dropped. So after iteration 2 the
context holds at most ``width`` paths such as (user has obesity), (obesity contradict
high_calorie), (food belongs to high_calorie), not the user's habits or the food's
ingredients. Exploration stops early when the frontier is empty; a last call answers from the
union of the retained paths' triples (in the question graph's order), with the paper's ToG
method prompt (Tables 16-18).

Model calls per question = relation-pruning calls + entity-pruning calls + 1. The pruning
prompts are ours: the paper's Figure 8 is an image the text does not reproduce.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nutrireason.methods.base import Generator, Prediction, register_method
from nutrireason.methods.ngqa import GraphRagMethod, item_triples
from nutrireason.methods.ngqa_prompts import (
    BASE_METHOD_PROMPT,
    SYSTEM_PROMPT,
    TOG_PROMPT,
    Triple,
    parse_answer,
    user_prompt,
)
from nutrireason.models.types import ChatRequest, GenerationSettings, Message
from nutrireason.ngqa.questions import USER_NODE

PRUNE_MAX_TOKENS = 64

RELATION_PRUNE_PROMPT = (
    "Question: {question}\n"
    "To answer the question we explore a knowledge graph starting from the entities {topics}. "
    "Below are the candidate relations from the entities reached so far, numbered; each shows "
    "the entity, the relation and how many entities it leads to. Choose at most {width} "
    "relations that are most useful to answer the question.\n"
    "{candidates}\n"
    "Answer only with the numbers of the chosen relations, separated by commas (for example: "
    "1, 3).")

ENTITY_PRUNE_PROMPT = (
    "Question: {question}\n"
    "To answer the question we explore a knowledge graph starting from the entities {topics}. "
    "Below are the candidate triples (head --relation--> tail) reached so far, numbered. "
    "Choose at most {width} triples that are most useful to answer the question.\n"
    "{candidates}\n"
    "Answer only with the numbers of the chosen triples, separated by commas (for example: "
    "1, 3).")

_NUMBER = re.compile(r"\d+")


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
    """The 0-based candidate indices the model chose: numbers 1..``n`` in the order named,
    deduplicated, at most ``width``; None when the text names none in range."""
    chosen: list[int] = []
    for token in _NUMBER.findall(text):
        number = int(token)
        if 1 <= number <= n and number - 1 not in chosen:
            chosen.append(number - 1)
    return chosen[:width] or None


class TogMethod(GraphRagMethod):
    """Think-on-Graph: iterative relation and entity pruning, then one answering call."""

    name = "tog"
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

    def describe(self) -> dict[str, Any]:
        return super().describe() | {"width": self.width, "depth": self.depth}

    def retrieve(self, item: dict[str, Any]) -> list[Triple]:
        raise NotImplementedError("ToG retrieves with model calls; use `await answer(...)`")

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        triples = item_triples(item)
        topics = [USER_NODE, item["food"]]
        state = _Search(self, item, backend)

        # Iteration 1, unpruned: every triple touching a topic entity is a one-step path.
        visited = set(topics)
        reach: dict[str, set[int]] = {}  # node -> the triples of the path that reached it
        first = [i for i, (h, _, t) in enumerate(triples) if h in visited or t in visited]
        paths = [{i} for i in first]
        used = set(first)
        frontier = _extend(triples, first, paths, visited, reach)
        depth_reached = 1 if first else 0

        for iteration in range(2, self.depth + 1):
            if not frontier:
                break
            kept = await state.step(triples, used, frontier)
            if not kept:
                break
            paths = [{i} | reach.get(triples[i][0], set()) | reach.get(triples[i][2], set())
                     for i in kept]
            used.update(kept)
            frontier = _extend(triples, kept, paths, visited, reach)
            depth_reached = iteration

        retained = set().union(*paths) if paths else set()
        chosen = [triples[i] for i in sorted(retained)]
        text = user_prompt(item["question"], self.method_prompt, self.graph_text(chosen),
                           item["task"])
        messages = [Message(role="system", content=SYSTEM_PROMPT),
                    Message(role="user", content=text)]
        response = await backend.generate(ChatRequest(messages=messages, settings=self.settings))
        parsed = parse_answer(item["task"], response.text)
        return Prediction(parsed.value, parsed.ok, retrieved=[list(t) for t in chosen],
                          extra={"tog_pruning_calls": state.calls,
                                 "tog_depth_reached": depth_reached,
                                 "fallbacks": state.fallbacks})


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
    """One question's pruning state: the calls made and the fallbacks taken."""

    def __init__(self, method: TogMethod, item: dict[str, Any], backend: Generator) -> None:
        self.method = method
        self.question = item["question"]
        self.topics = f'"{USER_NODE}" and "{item["food"]}"'
        self.backend = backend
        self.calls = 0
        self.fallbacks = 0

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
        chosen = parse_choices(response.text, len(lines), width)
        if chosen is None:
            self.fallbacks += 1
            return list(range(width))
        return chosen


register_method(TogMethod.name, TogMethod)
