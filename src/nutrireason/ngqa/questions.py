"""NGQA questions: (user, food) pairs, their subgraphs, levels and gold answers.

For a user, every condition or diet requires tags (Table 7). Against a food, each
(condition, tag) requirement becomes one edge: ``match`` when the food has the tag,
``contradict`` when it has the opposite tag (naming the food's tag), ``need`` otherwise
(DATA.md 6). Levels count match and contradict edges only: sparse = exactly one link, complex =
links in both directions, standard = two or more links in one direction. The paper words the
standard level as "multiple nutrition tags ... several user health conditions" (Section 4.1), so
the default ``strict`` rule also asks for at least two distinct linked tags and, where the user
has two or more conditions/diets, links from at least two of them; the ``loose`` rule (link
count only) stays available. Pairs are chosen by a seeded hash of (user, food), so the
selection does not depend on how the work is chunked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nutrireason.ngqa.config import NgqaConfig
from nutrireason.standards import Standards

USER_NODE = "user"
LINKED = ("match", "contradict")
STANDARD_RULES = ("strict", "loose")
MASK64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def opposite(tag: str) -> str:
    """low_x <-> high_x."""
    direction, _, nutrient = tag.partition("_")
    return f"{'high' if direction == 'low' else 'low'}_{nutrient}"


@dataclass(frozen=True)
class UserProfile:
    """A user's graph-facing facts: condition and diet nodes, habits, requirements in order."""

    user_id: str
    conditions: list[str]
    diets: list[str]
    habits: list[str]
    requirements: list[tuple[str, str]]  # (condition node, required tag)


def user_profiles(users: pd.DataFrame, standards: Standards) -> list[UserProfile]:
    """Profiles for annotated users (``ngqa.users`` output), in (cycle, seqn) order."""
    users = users.sort_values(["cycle", "seqn"]).reset_index(drop=True)
    profiles = []
    flags = {c.id: users[c.id].fillna(False).to_numpy(dtype=bool)
             for c in standards.conditions.conditions}
    for index, row in enumerate(users.itertuples(index=False)):
        conditions, diets, requirements = [], [], []
        for condition in standards.conditions.conditions:
            if not flags[condition.id][index]:
                continue
            target = conditions if condition.kind == "health_condition" else diets
            target.append(condition.node_name)
            requirements += [(condition.node_name, tag) for tag in condition.tags]
        profiles.append(UserProfile(f"{row.cycle}:{row.seqn}", conditions, diets,
                                    [str(h) for h in row.habits], requirements))
    return profiles


def link_edges(requirements: list[tuple[str, str]], food_tags: set[str]
               ) -> list[tuple[str, str, str]]:
    """One (condition, relation, tag) edge per requirement, in requirement order."""
    edges = []
    for node, tag in requirements:
        if tag in food_tags:
            edges.append((node, "match", tag))
        elif opposite(tag) in food_tags:
            edges.append((node, "contradict", opposite(tag)))
        else:
            edges.append((node, "need", tag))
    return edges


def level_of(n_match: int, n_contradict: int) -> str | None:
    """sparse / standard / complex by link counts alone (the loose rule), or None when no edge
    links user and food."""
    total = n_match + n_contradict
    if total == 0:
        return None
    if n_match and n_contradict:
        return "complex"
    return "sparse" if total == 1 else "standard"


@dataclass(frozen=True)
class StandardChecks:
    """What the strict standard rule asks of a one-direction pair with two or more links."""

    two_tags: bool  # at least two distinct food tags linked
    several_nodes: bool  # the user has two or more conditions/diets
    two_nodes: bool  # links come from at least two of them

    @property
    def strict(self) -> bool:
        return self.two_tags and (self.two_nodes or not self.several_nodes)


def standard_checks(edges: list[tuple[str, str, str]], n_user_nodes: int) -> StandardChecks:
    """The strict-rule checks for one question's link edges; ``n_user_nodes`` counts the
    user's conditions and diets."""
    linked = [(node, tag) for node, relation, tag in edges if relation in LINKED]
    return StandardChecks(two_tags=len({t for _, t in linked}) >= 2,
                          several_nodes=n_user_nodes >= 2,
                          two_nodes=len({n for n, _ in linked}) >= 2)


def question_level(edges: list[tuple[str, str, str]], n_user_nodes: int,
                   rule: str = "strict") -> str | None:
    """The level of a (user, food) pair under ``rule`` (``strict`` or ``loose``); None when
    the pair belongs to no level (no link, or a standard pair the strict rule refuses)."""
    level = level_of(sum(r == "match" for _, r, _ in edges),
                     sum(r == "contradict" for _, r, _ in edges))
    if level == "standard" and rule == "strict" and not standard_checks(
            edges, n_user_nodes).strict:
        return None
    return level


def gold_answers(edges: list[tuple[str, str, str]], config: NgqaConfig) -> dict[str, object]:
    """Binary, multi-label and text answers from the link edges (Appendix B.5, DATA.md 6)."""
    match = [t for _, r, t in edges if r == "match"]
    contradict = [t for _, r, t in edges if r == "contradict"]
    verdict = "Yes" if len(match) > len(contradict) else "No"
    labels = order_tags(match + contradict, config)
    return {"binary": verdict, "multi_label": labels,
            "text_generation": text_answer(verdict, edges, config)}


def text_answer(verdict: str, edges: list[tuple[str, str, str]], config: NgqaConfig) -> str:
    """The text-generation gold for ``verdict`` (Yes or No): the verdict because of the linked
    tags that support it (match for Yes, contradict for No). Where none does (an expert's
    corrected answer against every link), the verdict even though the food has the tags it
    overrides."""
    match = [t for _, r, t in edges if r == "match"]
    contradict = [t for _, r, t in edges if r == "contradict"]
    support, against = (match, contradict) if verdict == "Yes" else (contradict, match)
    reasons, joint = (support, "because") if support or not against else (against, "even though")
    phrases = ", ".join(_phrase(t) for t in order_tags(reasons, config))
    return f"{verdict}, {joint} the food is {phrases}."


def order_tags(tags: list[str], config: NgqaConfig) -> list[str]:
    """Each tag once, in the gold answers' nutrient order (``answer_order`` in ngqa.yaml)."""
    rank = {n: i for i, n in enumerate(config.answer_order)}
    unique = list(dict.fromkeys(tags))
    return sorted(unique, key=lambda t: rank.get(t.partition("_")[2], len(rank)))


def _phrase(tag: str) -> str:
    direction, _, nutrient = tag.partition("_")
    return f"{direction} in {nutrient}"


# --------------------------------------------------------------------------- pair selection


def tag_space(config: NgqaConfig) -> list[str]:
    """The tags questions use: low_/high_ of each question nutrient."""
    return [f"{d}_{n}" for n in config.question_nutrients for d in ("low", "high")]


@dataclass(frozen=True)
class UserMatrices:
    """The users' side of pair selection: which condition/diet nodes each user has and which
    tags each node requires. ``requirements = user_nodes @ node_tags`` counts, per user and
    tag, how many of the user's nodes require the tag."""

    user_nodes: np.ndarray  # users x nodes, 1 where the user has the node
    node_tags: np.ndarray  # nodes x tags, 1 where the node requires the tag

    @property
    def requirements(self) -> np.ndarray:
        return self.user_nodes @ self.node_tags


def user_matrices(profiles: list[UserProfile], space: list[str]) -> UserMatrices:
    """Node and requirement matrices for ``profiles`` over the tag ``space``."""
    tag_index = {t: i for i, t in enumerate(space)}
    nodes = list(dict.fromkeys(node for p in profiles for node, _ in p.requirements))
    node_index = {n: i for i, n in enumerate(nodes)}
    user_nodes = np.zeros((len(profiles), len(nodes)), dtype=np.float32)
    node_tags = np.zeros((len(nodes), len(space)), dtype=np.float32)
    for row, profile in enumerate(profiles):
        for node, tag in profile.requirements:
            user_nodes[row, node_index[node]] = 1
            node_tags[node_index[node], tag_index[tag]] = 1
    return UserMatrices(user_nodes, node_tags)


def food_matrix(food_tags: list[list[str]], space: list[str]) -> np.ndarray:
    """foods x tags: 1 where the food carries the tag."""
    index = {t: i for i, t in enumerate(space)}
    matrix = np.zeros((len(food_tags), len(space)), dtype=np.float32)
    for row, tags in enumerate(food_tags):
        for tag in tags:
            if tag in index:
                matrix[row, index[tag]] = 1
    return matrix


def pair_keys(seed: int, users: np.ndarray, foods: np.ndarray, n_foods: int) -> np.ndarray:
    """A seeded 64-bit hash per (user, food) pair (splitmix64)."""
    with np.errstate(over="ignore"):
        x = (np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
             + users.astype(np.uint64) * np.uint64(n_foods) + foods.astype(np.uint64)) & MASK64
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


@dataclass
class Selection:
    """The pairs kept per level, the standard pairs each rule would keep, and how many
    candidate pairs each rule allowed."""

    pairs: dict[str, list[tuple[int, int]]]
    candidates: dict[str, int]  # "sparse", "complex", "standard_loose", "standard_strict"
    standard_by_rule: dict[str, list[tuple[int, int]]]


def select_pairs(users: UserMatrices, foods: np.ndarray, opposite_index: np.ndarray,
                 caps: dict[str, int], seed: int, rule: str = "strict", chunk: int = 2048
                 ) -> Selection:
    """Per level, the ``caps[level]`` (user, food) pairs with the smallest seeded keys, the
    standard level under ``rule`` (see :func:`question_level`)."""
    if rule not in STANDARD_RULES:
        raise ValueError(f"standard-level rule must be one of {STANDARD_RULES}, got {rule!r}")
    names = ("sparse", "standard_loose", "standard_strict", "complex")
    kept = {name: (np.empty(0, np.uint64), np.empty(0, np.int64)) for name in names}
    candidates = dict.fromkeys(names, 0)
    n_foods = foods.shape[0]
    for start in range(0, users.user_nodes.shape[0], chunk):
        for name, mask in _level_masks(users, start, chunk, foods, opposite_index).items():
            candidates[name] += int(mask.sum())
            rows, food_idx = np.nonzero(mask)
            flat = (rows + start).astype(np.int64) * n_foods + food_idx
            keys = pair_keys(seed, rows + start, food_idx, n_foods)
            kept[name] = _smallest(kept[name], keys, flat, caps[name.partition("_")[0]])
    pairs = {name: [(int(f // n_foods), int(f % n_foods)) for f in flat]
             for name, (_, flat) in kept.items()}
    by_rule = {r: pairs.pop(f"standard_{r}") for r in STANDARD_RULES}
    return Selection({"sparse": pairs["sparse"], "standard": by_rule[rule],
                      "complex": pairs["complex"]}, candidates, by_rule)


def _level_masks(users: UserMatrices, start: int, chunk: int, foods: np.ndarray,
                 opposite_index: np.ndarray) -> dict[str, np.ndarray]:
    """users-in-chunk x foods masks for sparse, complex and both standard rules."""
    user_nodes = users.user_nodes[start:start + chunk]
    required = user_nodes @ users.node_tags
    match = (required @ foods.T).astype(np.int32)
    contra = (required @ foods[:, opposite_index].T).astype(np.int32)
    total = match + contra
    loose = (total >= 2) & ((match == 0) | (contra == 0))
    # A food tag is linked when the user requires it or its opposite; a node is linked when
    # it requires a tag the food has or the opposite of one.
    either = np.minimum(required + required[:, opposite_index], 1)
    distinct_tags = either @ foods.T
    node_either = np.minimum(users.node_tags + users.node_tags[:, opposite_index], 1)
    linked_nodes = user_nodes @ ((node_either @ foods.T) > 0).astype(np.float32)
    several = (user_nodes.sum(axis=1) >= 2)[:, None]
    strict = loose & (distinct_tags >= 2) & (~several | (linked_nodes >= 2))
    return {"sparse": total == 1, "standard_loose": loose, "standard_strict": strict,
            "complex": (match > 0) & (contra > 0)}


def _smallest(current, keys, flat, cap: int):
    keys = np.concatenate([current[0], keys])
    flat = np.concatenate([current[1], flat])
    if len(keys) > cap:
        keep = np.argpartition(keys, cap - 1)[:cap] if cap else np.empty(0, np.int64)
        keys, flat = keys[keep], flat[keep]
    order = np.lexsort((flat, keys))
    return keys[order], flat[order]


# --------------------------------------------------------------------------- one question


def question_graph(profile: UserProfile, food: dict, edges: list[tuple[str, str, str]]
                   ) -> list[tuple[str, str, str]]:
    """The question's triples in the case studies' order: food, user, condition-tag edges."""
    name = food["description"]
    triples = [(name, "belongs to", food["category"])]
    triples += [(name, "has", ingredient) for ingredient in food["ingredients"]]
    triples += [(name, "belongs to", tag) for tag in food["question_tags"]]
    triples += [(USER_NODE, "has", habit) for habit in profile.habits]
    triples += [(USER_NODE, "has", node) for node in profile.conditions + profile.diets]
    return triples + list(edges)


def node_list(triples: list[tuple[str, str, str]], profile: UserProfile, food: dict
              ) -> list[dict[str, str]]:
    """Each node once, with its type."""
    types = {food["description"]: "food", food["category"]: "food_category", USER_NODE: "user"}
    types |= {i: "ingredient" for i in food["ingredients"]}
    types |= {t: "nutrient_tag" for t in food["question_tags"]}
    types |= {h: "habit" for h in profile.habits}
    types |= {c: "health_condition" for c in profile.conditions}
    types |= {d: "special_diet" for d in profile.diets}
    nodes: dict[str, str] = {}
    for head, _, tail in triples:
        for node in (head, tail):
            nodes.setdefault(node, types.get(node, "nutrient_tag"))
    return [{"id": node, "type": kind} for node, kind in nodes.items()]


def signal_to_noise(nodes: list[dict[str, str]], edges: list[tuple[str, str, str]],
                    food: dict) -> tuple[float, float]:
    """Node SNR and tag SNR in percent (NGQA Table 2): nodes (tags) that the answer rests on
    over all nodes (the food's tags). Signal nodes: the food, the user, the linked conditions
    and the linked tags."""
    linked = [(c, t) for c, r, t in edges if r in ("match", "contradict")]
    signal = {food["description"], USER_NODE} | {c for c, _ in linked} | {t for _, t in linked}
    tags = set(food["question_tags"])
    node_snr = 100 * len(signal) / len(nodes)
    tag_snr = 100 * len({t for _, t in linked} & tags) / len(tags) if tags else 0.0
    return node_snr, tag_snr
