"""NGQA questions: (user, food) pairs, their subgraphs, levels and gold answers.

For a user, every condition or diet requires tags (Table 7). Against a food, each
(condition, tag) requirement becomes one edge: ``match`` when the food has the tag,
``contradict`` when it has the opposite tag (naming the food's tag), ``need`` otherwise
(DATA.md 6). Levels count match and contradict edges only: sparse = exactly one, standard = two
or more in one direction, complex = both directions. Pairs are chosen by a seeded hash of
(user, food), so the selection does not depend on how the work is chunked.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from nutrireason.ngqa.config import LEVELS, NgqaConfig
from nutrireason.standards import Standards

USER_NODE = "user"
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
    """sparse / standard / complex, or None when no edge links user and food."""
    total = n_match + n_contradict
    if total == 0:
        return None
    if n_match and n_contradict:
        return "complex"
    return "sparse" if total == 1 else "standard"


def gold_answers(edges: list[tuple[str, str, str]], config: NgqaConfig) -> dict[str, object]:
    """Binary, multi-label and text answers from the link edges (Appendix B.5, DATA.md 6)."""
    match = [t for _, r, t in edges if r == "match"]
    contradict = [t for _, r, t in edges if r == "contradict"]
    verdict = "Yes" if len(match) > len(contradict) else "No"
    labels = order_tags(match + contradict, config)
    reasons = order_tags(match if verdict == "Yes" else contradict, config)
    text = f"{verdict}, because the food is " + ", ".join(_phrase(t) for t in reasons) + "."
    return {"binary": verdict, "multi_label": labels, "text_generation": text}


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


def requirement_matrix(profiles: list[UserProfile], space: list[str]) -> np.ndarray:
    """users x tags: how many of a user's conditions require each tag."""
    index = {t: i for i, t in enumerate(space)}
    matrix = np.zeros((len(profiles), len(space)), dtype=np.float32)
    for row, profile in enumerate(profiles):
        for _, tag in profile.requirements:
            matrix[row, index[tag]] += 1
    return matrix


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


def select_pairs(requirements: np.ndarray, foods: np.ndarray, opposite_index: np.ndarray,
                 caps: dict[str, int], seed: int, chunk: int = 2048
                 ) -> dict[str, list[tuple[int, int]]]:
    """Per level, the ``caps[level]`` (user, food) pairs with the smallest seeded keys."""
    kept = {level: (np.empty(0, np.uint64), np.empty(0, np.int64)) for level in LEVELS}
    n_foods = foods.shape[0]
    contra_foods = foods[:, opposite_index]
    for start in range(0, requirements.shape[0], chunk):
        block = requirements[start:start + chunk]
        match = (block @ foods.T).astype(np.int32)
        contra = (block @ contra_foods.T).astype(np.int32)
        total = match + contra
        masks = {"sparse": total == 1,
                 "standard": (total >= 2) & ((match == 0) | (contra == 0)),
                 "complex": (match > 0) & (contra > 0)}
        for level, mask in masks.items():
            users, food_idx = np.nonzero(mask)
            flat = (users + start).astype(np.int64) * n_foods + food_idx
            keys = pair_keys(seed, users + start, food_idx, n_foods)
            kept[level] = _smallest(kept[level], keys, flat, caps[level])
    return {level: [(int(f // n_foods), int(f % n_foods)) for f in flat]
            for level, (_, flat) in kept.items()}


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
