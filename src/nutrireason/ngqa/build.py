"""Build the NGQA benchmark files: knowledge graph tables, questions per level and task,
statistics and a manifest. Same inputs and seed give byte-identical files.

Layout under ``out``::

    graph/nodes.parquet, graph/edges.parquet     the whole knowledge graph
    <level>/<task>.jsonl and .parquet              one record per question
    questions.parquet                              every question with all three gold answers
    food_tags.parquet, user_measures.parquet       the values and thresholds behind each food
                                                   tag and user condition (ngqa/evidence.py)
    stats.json, manifest.json
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from nutrireason import __version__
from nutrireason.ngqa.config import LEVELS, TASKS, NgqaConfig, load_ngqa_config
from nutrireason.ngqa.evidence import FOOD_TAGS, USER_MEASURES, food_tag_table, user_measure_table
from nutrireason.ngqa.foods import question_foods
from nutrireason.ngqa.questions import (
    USER_NODE,
    Selection,
    UserProfile,
    food_matrix,
    gold_answers,
    link_edges,
    node_list,
    opposite,
    question_graph,
    question_level,
    select_pairs,
    signal_to_noise,
    standard_checks,
    tag_space,
    text_answer,
    user_matrices,
    user_profiles,
)
from nutrireason.recipes.foods import FoodTables
from nutrireason.reviewfile import Verdict, item_key, load_reviews, reviews_file
from nutrireason.standards import Standards, load_standards
from nutrireason.storage import (
    atomic_path,
    input_fingerprints,
    write_json_atomic,
    write_parquet_atomic,
)

GENERATOR = f"nutrireason {__version__} ngqa-build 3"
# Standards files an NGQA build depends on besides its data inputs.
RULE_FILES = ("ngqa.yaml", "conditions.yaml", "nutrients.yaml")


@dataclass
class NgqaBuild:
    out: Path
    stats: dict[str, Any]
    questions: pd.DataFrame


def build_benchmark(users: pd.DataFrame, foods: FoodTables, out: Path, seed: int = 0,
                    inputs: list[Path] | None = None, caps: dict[str, int] | None = None,
                    config: NgqaConfig | None = None, standards: Standards | None = None,
                    standard_rule: str | None = None, reviews: Path | None = None,
                    reviewed_only: bool = False) -> NgqaBuild:
    """Sample questions for every level, write all files, return the statistics.
    ``standard_rule`` (``strict`` or ``loose``) defaults to ``standard_rule`` in ngqa.yaml;
    ``reviews`` (a ``review export`` of NGQA questions) is applied to the sampled questions."""
    config = config or load_ngqa_config()
    standards = standards or load_standards()
    rule = standard_rule or config.standard_rule
    caps = caps or {level: config.levels[level].max_questions for level in LEVELS}
    everyone = user_profiles(users, standards)
    profiles = [p for p in everyone if p.requirements]
    qfoods = question_foods(foods, config, standards)
    selection = select_questions(profiles, qfoods, config, seed, caps, rule)
    questions = make_questions(profiles, qfoods, config, selection, rule)
    verdicts, manifest_reviews = load_reviews(reviews, "ngqa", reviewed_only)
    if verdicts is not None:
        questions, changes = reviewed_questions(questions, verdicts, reviewed_only, config)
        manifest_reviews = {**manifest_reviews, **changes}
    stats = statistics(questions, len(profiles), len(qfoods))
    stats["level_rule"] = level_rule_stats(questions, rule, selection, profiles, qfoods)
    manifest = _manifest(seed, caps, rule, (inputs or []) +
                         ([reviews_file(reviews)] if reviews is not None else []), stats)
    if manifest_reviews is not None:
        manifest["reviews"] = manifest_reviews
    evidence = {FOOD_TAGS: food_tag_table(foods.foods, qfoods, standards),
                USER_MEASURES: user_measure_table(users, standards)}
    _write(out, questions, graph_tables(everyone, qfoods, standards), evidence, stats, manifest)
    return NgqaBuild(out, stats, questions)


def reviewed_questions(questions: pd.DataFrame, verdicts: dict[str, Verdict],
                       reviewed_only: bool, config: NgqaConfig | None = None
                       ) -> tuple[pd.DataFrame, dict[str, int]]:
    """The questions with expert decisions applied by (user, food): an exclusion drops the
    pair's questions (all three tasks), a correction flips its binary answer and the text
    answer is generated again for the corrected one (:func:`text_answer`); the multi-label
    answer names the linked tags whatever the verdict, so it is kept. With ``reviewed_only``
    only reviewed pairs stay. Question ids keep their sample positions. Also the counts the
    manifest records."""
    config = config or load_ngqa_config()
    keep, answers = [], []
    for user, food, answer in zip(questions["user_id"], questions["food_id"],
                                  questions["answer_binary"], strict=True):
        verdict = verdicts.get(item_key(str(user), str(food)))
        excluded = verdict is not None and verdict.label is None
        keep.append(not excluded and (verdict is not None or not reviewed_only))
        answers.append(verdict.label if verdict is not None and verdict.label else answer)
    texts = [text if new == old else text_answer(new, _link_edges(triples), config)
             for new, old, text, triples in zip(answers, questions["answer_binary"],
                                                questions["answer_text_generation"],
                                                questions["triples"], strict=True)]
    changed = sum(new != old for new, old, kept in zip(answers, questions["answer_binary"], keep,
                                                        strict=True) if kept)
    reviewed = questions.assign(answer_binary=answers, answer_text_generation=texts)[keep]
    return reviewed.reset_index(drop=True), {"questions_dropped": len(keep) - sum(keep),
                                             "answers_changed": changed}


def select_questions(profiles: list[UserProfile], qfoods: pd.DataFrame, config: NgqaConfig,
                     seed: int, caps: dict[str, int], rule: str) -> Selection:
    """The (user, food) pairs of every level, by the seeded hash."""
    space = tag_space(config)
    opposite_index = np.array([space.index(opposite(t)) for t in space])
    return select_pairs(user_matrices(profiles, space),
                        food_matrix(list(qfoods["question_tags"]), space),
                        opposite_index, caps, seed, rule)


def make_questions(profiles: list[UserProfile], qfoods: pd.DataFrame, config: NgqaConfig,
                   selection: Selection, rule: str) -> pd.DataFrame:
    """One row per question: ids, level, triples, nodes, edges, gold answers, SNR."""
    food_rows = qfoods.to_dict(orient="records")
    rows = []
    for level in LEVELS:
        for number, (u, f) in enumerate(selection.pairs[level]):
            rows.append(_question(f"ngqa-{level}-{number:05d}", level, profiles[u],
                                  food_rows[f], config, rule))
    return pd.DataFrame(rows)


def _question(qid: str, level: str, profile: UserProfile, food: dict,
              config: NgqaConfig, rule: str) -> dict[str, Any]:
    edges = link_edges(profile.requirements, set(food["question_tags"]))
    n_match = sum(r == "match" for _, r, _ in edges)
    n_contra = sum(r == "contradict" for _, r, _ in edges)
    n_nodes = len(profile.conditions) + len(profile.diets)
    assert question_level(edges, n_nodes, rule) == level, (qid, edges)
    triples = question_graph(profile, food, edges)
    nodes = node_list(triples, profile, food)
    node_snr, tag_snr = signal_to_noise(nodes, edges, food)
    gold = gold_answers(edges, config)
    return {
        "id": qid, "level": level, "user_id": profile.user_id, "food_id": food["food_id"],
        "food": food["description"],
        "triples": [list(t) for t in triples], "nodes": nodes,
        "edges": [{"source": h, "relation": r, "target": t} for h, r, t in triples],
        "links": {"match": n_match, "contradict": n_contra,
                  "need": sum(r == "need" for _, r, _ in edges)},
        "signal": [list(t) for t in signal_triples(triples, edges)],
        "conditions": profile.conditions, "diets": profile.diets,
        "node_snr": node_snr, "tag_snr": tag_snr,
        **{f"answer_{task}": gold[task] for task in TASKS},
        **{f"question_{task}": getattr(config.questions, task).format(food=food["description"])
           for task in TASKS},
    }


def signal_triples(triples: list[tuple[str, str, str]], edges: list[tuple[str, str, str]]
                   ) -> list[tuple[str, str, str]]:
    """The triples the answer rests on (paper Figure 5's retrieval target): the match and
    contradict edges, the user's links to those conditions and the food's links to those tags,
    in graph order."""
    linked = [(c, t) for c, r, t in edges if r in ("match", "contradict")]
    conditions, tags = {c for c, _ in linked}, {t for _, t in linked}
    keep = set()
    for triple in triples:
        head, relation, tail = triple
        if relation in ("match", "contradict") or (head == USER_NODE and tail in conditions) or (
                relation == "belongs to" and tail in tags):
            keep.add(triple)
    return [t for t in triples if t in keep]


def task_records(questions: pd.DataFrame, level: str, task: str) -> list[dict[str, Any]]:
    """The records of one level and task: id, question, graph (triples, nodes, edges), answer."""
    subset = questions[questions["level"] == level]
    return [{"id": f"{row['id']}-{task}", "question_id": row["id"], "level": level,
             "task": task, "user_id": row["user_id"], "food_id": row["food_id"],
             "food": row["food"], "question": row[f"question_{task}"],
             "triples": row["triples"], "nodes": row["nodes"], "edges": row["edges"],
             "signal": row["signal"], "conditions": row["conditions"], "diets": row["diets"],
             "answer": row[f"answer_{task}"]} for row in subset.to_dict(orient="records")]


def statistics(questions: pd.DataFrame, n_users: int, n_foods: int) -> dict[str, Any]:
    """Tables 1 and 2 per level, label balance and tag frequencies."""
    levels = {}
    for level in LEVELS:
        subset = questions[questions["level"] == level] if len(questions) else questions
        if subset.empty:
            levels[level] = {"records": 0}
            continue
        tags = Counter(t for labels in subset["answer_multi_label"] for t in labels)
        levels[level] = {
            "records": len(subset),
            "avg_nodes": round(float(subset["nodes"].map(len).mean()), 2),
            "avg_edges": round(float(subset["edges"].map(len).mean()), 2),
            "avg_node_snr": round(float(subset["node_snr"].mean()), 2),
            "avg_tag_snr": round(float(subset["tag_snr"].mean()), 2),
            "yes_share": round(float((subset["answer_binary"] == "Yes").mean()), 4),
            "tag_frequencies": dict(sorted(tags.items())),
        }
    return {"users_with_conditions": n_users, "foods": n_foods, "levels": levels}


def level_rule_stats(questions: pd.DataFrame, rule: str, selection: Selection,
                     profiles: list[UserProfile], qfoods: pd.DataFrame) -> dict[str, Any]:
    """The standard level against the strict rule's checks: shares of its questions with two
    distinct tags, with links from two conditions/diets (among users with two or more) and
    meeting the whole strict rule, for this build (``standard``) and for the standard pairs
    each rule would draw (``by_rule``); and the candidate pairs each rule allowed."""
    standard = questions[questions["level"] == "standard"] if len(questions) else questions
    built = [standard_checks(_link_edges(row["triples"]),
                             len(row["conditions"]) + len(row["diets"]))
             for row in standard.to_dict(orient="records")]
    tags = list(qfoods["question_tags"])
    by_rule = {}
    for name, pairs in selection.standard_by_rule.items():
        by_rule[name] = _check_shares([
            standard_checks(link_edges(profiles[u].requirements, set(tags[f])),
                            len(profiles[u].conditions) + len(profiles[u].diets))
            for u, f in pairs])
    return {"rule": rule, "standard": _check_shares(built), "by_rule": by_rule,
            "candidates": {"loose": selection.candidates["standard_loose"],
                           "strict": selection.candidates["standard_strict"]}}


def _check_shares(checks: list) -> dict[str, Any]:
    several = [c for c in checks if c.several_nodes]
    return {"questions": len(checks), "two_tags": _share(c.two_tags for c in checks),
            "two_conditions": _share(c.two_nodes for c in several),
            "strict": _share(c.strict for c in checks)}


def _link_edges(triples: list) -> list[tuple[str, str, str]]:
    return [(h, r, t) for h, r, t in triples if r in ("match", "contradict", "need")]


def _share(flags) -> float:
    flags = list(flags)
    return round(sum(flags) / len(flags), 4) if flags else 0.0


def graph_tables(profiles: list[UserProfile], qfoods: pd.DataFrame, standards: Standards
                 ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The whole knowledge graph as node and edge tables (ids are type-prefixed). A node's
    label is the name questions use: a food's description (its id is the recipe or SR28 id),
    every other node's own name."""
    nodes: dict[str, tuple[str, str]] = {}
    edges: list[tuple[str, str, str]] = []

    def node(kind: str, name: str, label: str | None = None) -> str:
        key = f"{kind}:{name}"
        nodes.setdefault(key, (kind, name if label is None else label))
        return key

    for condition in standards.conditions.conditions:
        kind = "health_condition" if condition.kind == "health_condition" else "special_diet"
        source = node(kind, condition.node_name)
        edges += [(source, "need", node("nutrient_tag", tag)) for tag in condition.tags]
    for food in qfoods.to_dict(orient="records"):
        source = node("food", food["food_id"], food["description"])
        edges.append((source, "belongs to", node("food_category", food["category"])))
        edges += [(source, "has", node("ingredient", i)) for i in food["ingredients"]]
        edges += [(source, "belongs to", node("nutrient_tag", t)) for t in food["tags"]]
    for profile in profiles:
        source = node("user", profile.user_id)
        edges += [(source, "has", node("habit", h)) for h in profile.habits]
        edges += [(source, "has", node("health_condition", c)) for c in profile.conditions]
        edges += [(source, "has", node("special_diet", d)) for d in profile.diets]
    node_table = pd.DataFrame([(k, kind, label) for k, (kind, label) in sorted(nodes.items())],
                              columns=["node_id", "type", "label"])
    edge_table = pd.DataFrame(edges, columns=["source", "relation", "target"])
    return node_table, edge_table


def load_graph(out: str | Path) -> nx.MultiDiGraph:
    """The built knowledge graph as a networkx MultiDiGraph (node attrs type, label)."""
    out = Path(out).expanduser()
    nodes = pd.read_parquet(out / "graph" / "nodes.parquet")
    edges = pd.read_parquet(out / "graph" / "edges.parquet")
    graph = nx.MultiDiGraph()
    graph.add_nodes_from((n, {"type": t, "label": label})
                         for n, t, label in nodes.itertuples(index=False))
    graph.add_edges_from((s, t, {"relation": r}) for s, r, t in edges.itertuples(index=False))
    return graph


def _manifest(seed: int, caps: dict[str, int], rule: str, inputs: list[Path], stats: dict
              ) -> dict:
    return {"artifact": "ngqa", "generator": GENERATOR, "seed": seed, "caps": caps,
            "standard_rule": rule,
            "inputs": input_fingerprints(inputs),
            "counts": {level: stats["levels"][level]["records"] for level in LEVELS}}


def _write(out: Path, questions: pd.DataFrame, graph: tuple[pd.DataFrame, pd.DataFrame],
           evidence: dict[str, pd.DataFrame], stats: dict, manifest: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_parquet_atomic(out / "graph" / "nodes.parquet", graph[0])
    write_parquet_atomic(out / "graph" / "edges.parquet", graph[1])
    for name, table in evidence.items():
        write_parquet_atomic(out / name, table)
    for level in LEVELS:
        for task in TASKS:
            records = task_records(questions, level, task)
            with atomic_path(out / level / f"{task}.jsonl") as tmp:
                tmp.write_text("".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n"
                                       for r in records), encoding="utf-8")
            write_parquet_atomic(out / level / f"{task}.parquet", pd.DataFrame(records))
    write_parquet_atomic(out / "questions.parquet", questions)
    write_json_atomic(out / "stats.json", stats)
    write_json_atomic(out / "manifest.json", manifest)
