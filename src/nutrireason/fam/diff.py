"""Label diff between two FAM-Bench builds: which (recipe, condition) labels moved, and why.

A build is an annotation pool from ``nutrireason fam annotate`` (``annotations.jsonl``), given
as the pool folder, the ``annotations.jsonl`` file itself, or a folder holding ``ann/`` (the pool)
and ``fam/`` (``nutrireason fam build``, whose ``dish.jsonl`` is diffed when both builds have it).

Every (recipe, condition) has one *state*: ``Rec``, ``NotRec``, ``neutral`` (no entry),
``excluded-entry: <reason>`` (an ``excluded_entries`` item) or ``recipe-excluded`` (the whole
recipe is excluded). For recipes in both builds an entry changed its

* label: the state differs (``Rec -> NotRec``, ``NotRec -> neutral``, ...);
* rationale: same ``Rec``/``NotRec`` side, other evidence ingredients;
* provenance: same state and ingredients, other rules behind them.

Moves between ``neutral`` and ``recipe-excluded`` (no entry in either build) stay in the state
matrix but are not changes of the condition; recipe-level exclusions are summed up once instead.

Why: each provenance item gives a rule key, ``<rule>:<name>`` with the rule shortened
(``concept``, ``veto``, ``portion``, ``fallback``, ``food``; an unknown rule keeps its own name)
and the name its ``concept``, ``food`` or ``nutrient``; ``overruled`` items count like the others.
A change's reason class lists the keys only the old build fired (``-``) and only the new one
(``+``), e.g. ``-concept:added_sugars +veto:saturated_fat``. When those agree the finer keys are
compared (plus ``[kb_side]`` and ``<-ingredients``), e.g. ``+concept:added_sugars[limit]<-honey``;
when those agree too the class is ``(same rules)``. A change to or from ``recipe-excluded`` has the
class ``+recipe-excluded:<reason>`` (or ``-``) alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from nutrireason.errors import DataError
from nutrireason.storage import read_jsonl

REC, NOT_REC, NEUTRAL = "Rec", "NotRec", "neutral"
EXCLUDED_ENTRY, RECIPE_EXCLUDED = "excluded-entry", "recipe-excluded"
NO_ENTRY = frozenset({NEUTRAL, RECIPE_EXCLUDED})
SIDES = (("rec", REC), ("not_rec", NOT_REC), ("excluded_entries", EXCLUDED_ENTRY))
RULE_PREFIX = {"ingredient_concept": "concept", "nutrient_veto": "veto",
               "portion_undecidable": "portion", "ingredient_fallback": "fallback",
               "food_list": "food"}
NAME_KEYS = ("concept", "food", "nutrient")
SAME_RULES = "(same rules)"
KINDS = ("label", "rationale", "provenance")
EXAMPLES = 5
POOL_HINT = ("run `nutrireason fam annotate --out DIR` first, or give a folder holding ann/ "
             "and fam/")


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class BuildFiles:
    """Where one build's files are: the annotation pool and, when present, ``dish.jsonl``."""

    root: Path
    annotations: Path
    dish: Path | None


def locate(path: str | Path) -> BuildFiles:
    """The files of the build at ``path`` (pool folder, ``annotations.jsonl``, or ann/+fam/)."""
    path = Path(path)
    if not path.exists():
        raise DataError(path, "FAM build not found", expected="a folder from `fam annotate`")
    if path.is_file():
        return BuildFiles(path, path, None)
    if not (path / "annotations.jsonl").is_file() and (path / "ann").is_dir():
        return BuildFiles(path, path / "ann" / "annotations.jsonl",
                          _present(path / "fam" / "dish.jsonl"))
    return BuildFiles(path, path / "annotations.jsonl", _present(path / "dish.jsonl"))


def _present(path: Path) -> Path | None:
    return path if path.is_file() else None


@dataclass(frozen=True)
class Entry:
    """One (recipe, condition): its state, evidence ingredients and rule keys."""

    state: str
    ingredients: frozenset[str] = frozenset()
    keys: frozenset[str] = frozenset()
    detail: frozenset[str] = frozenset()


NEUTRAL_ENTRY = Entry(NEUTRAL)


@dataclass(frozen=True)
class Recipe:
    """A recipe of a pool: its entries by condition, or the entry standing for its exclusion."""

    excluded: Entry | None
    entries: dict[str, Entry]

    def entry(self, condition: str) -> Entry:
        if self.excluded is not None:
            return self.excluded
        return self.entries.get(condition, NEUTRAL_ENTRY)


def reason_class(text: str) -> str:
    """A free-text exclusion reason cut to its class: the first two ``: ``-separated parts, the
    second up to its first digit, quote, parenthesis or comma."""
    parts = text.split(": ", 2)
    head = parts[0].strip()
    if len(parts) == 1:
        return head
    tail = parts[1]
    for index, char in enumerate(tail):
        if char.isdigit() or char in "'\"(,":
            tail = tail[:index]
            break
    tail = tail.strip()
    return f"{head}: {tail}" if tail else head


def rule_key(item: dict[str, Any]) -> str:
    """``<rule>:<concept|food|nutrient>`` for one provenance item (the rule alone without one)."""
    rule = str(item.get("rule") or "unknown")
    prefix = RULE_PREFIX.get(rule, rule)
    for name in NAME_KEYS:
        if item.get(name):
            return f"{prefix}:{item[name]}"
    return prefix


def rule_detail(item: dict[str, Any], key: str | None = None) -> str:
    """The rule key (``key`` when already known) with the knowledge-base side and the
    ingredients it names."""
    key = key or rule_key(item)
    if item.get("kb_side"):
        key += f"[{item['kb_side']}]"
    names = item.get("ingredients")
    if not isinstance(names, list):
        names = [item["ingredient"]] if item.get("ingredient") else []
    return key + ("<-" + ",".join(sorted(map(str, names))) if names else "")


def _entry(item: dict[str, Any], state: str) -> Entry:
    if state == EXCLUDED_ENTRY:
        state = f"{EXCLUDED_ENTRY}: {reason_class(str(item.get('reason') or 'no reason'))}"
    provenance = [p for p in item.get("provenance") or [] if isinstance(p, dict)]
    keys = [rule_key(p) for p in provenance]
    return Entry(state, frozenset(map(str, item.get("ingredients") or [])), frozenset(keys),
                 frozenset(map(rule_detail, provenance, keys)))


def _recipe(row: dict[str, Any], path: Path, number: int) -> tuple[str, Recipe]:
    recipe_id = row.get("recipe_id")
    if not isinstance(recipe_id, str) or not recipe_id:
        raise DataError(path, f"record {number} has no recipe id", field="recipe_id",
                        value=recipe_id)
    if row.get("excluded"):
        key = f"{RECIPE_EXCLUDED}:{reason_class(str(row['excluded']))}"
        return recipe_id, Recipe(Entry(RECIPE_EXCLUDED, keys=frozenset([key]),
                                       detail=frozenset([key])), {})
    entries: dict[str, Entry] = {}
    for name, state in SIDES:
        for item in row.get(name) or []:
            condition = item.get("condition") if isinstance(item, dict) else None
            if not isinstance(condition, str):
                raise DataError(path, f"recipe {recipe_id!r} has an entry without a condition",
                                field=name, value=item)
            if condition in entries:
                raise DataError(path, f"recipe {recipe_id!r} lists condition {condition!r} "
                                "twice", field=name)
            entries[condition] = _entry(item, state)
    return recipe_id, Recipe(None, entries)


def read_pool(path: str | Path) -> dict[str, Recipe]:
    """The recipes of an ``annotations.jsonl``, by recipe id."""
    path = Path(path)
    recipes: dict[str, Recipe] = {}
    rows = read_jsonl(path, "FAM annotation pool", POOL_HINT)
    for number, row in enumerate(rows, start=1):
        recipe_id, recipe = _recipe(row, path, number)
        if recipe_id in recipes:
            raise DataError(path, f"recipe id {recipe_id!r} appears twice",
                            field="recipe_id")
        recipes[recipe_id] = recipe
    return recipes


# --------------------------------------------------------------------------- comparing


def change_kind(old: Entry, new: Entry) -> str | None:
    """``label``, ``rationale``, ``provenance`` or None (see the module docstring); None too
    when neither build has an entry (``neutral``, ``recipe-excluded``)."""
    if old.state in NO_ENTRY and new.state in NO_ENTRY:
        return None
    if old.state != new.state:
        return "label"
    if old.state in (REC, NOT_REC) and old.ingredients != new.ingredients:
        return "rationale"
    return "provenance" if old.detail != new.detail else None


def why(old: Entry, new: Entry) -> str:
    """The reason class of a change: rule keys fired only in ``old`` (-) and only in ``new`` (+)."""
    if (old.state == RECIPE_EXCLUDED) != (new.state == RECIPE_EXCLUDED):
        gone = old.state == RECIPE_EXCLUDED
        return ("-" if gone else "+") + min((old if gone else new).keys)
    for before, after in ((old.keys, new.keys), (old.detail, new.detail)):
        signed = [f"-{k}" for k in sorted(before - after)] + [f"+{k}" for k in
                                                              sorted(after - before)]
        if signed:
            return " ".join(signed)
    return SAME_RULES


@dataclass
class ConditionDiff:
    """One condition's figures, filled recipe by recipe."""

    old: Counter[str] = field(default_factory=Counter)
    new: Counter[str] = field(default_factory=Counter)
    matrix: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    reasons: dict[str, Counter[str]] = field(default_factory=dict)
    examples: dict[str, dict[str, list[str]]] = field(
        default_factory=lambda: {"transitions": {}, "reasons": {}})
    only_old: Counter[str] = field(default_factory=Counter)
    only_new: Counter[str] = field(default_factory=Counter)

    def add(self, recipe_id: str, old: Entry, new: Entry) -> None:
        transition = f"{old.state} -> {new.state}"
        self.matrix[transition] += 1
        kind = change_kind(old, new)
        if kind is None:
            return
        self.kinds[kind] += 1
        reason = why(old, new)
        self.reasons.setdefault(reason, Counter())[kind] += 1
        _example(self.examples["reasons"], reason, recipe_id)
        if kind == "label":
            _example(self.examples["transitions"], transition, recipe_id)

    def to_json(self) -> dict[str, Any]:
        changed = {k: v for k, v in self.matrix.items() if _changed(*_sides(k))}
        reasons = sorted(self.reasons.items(), key=lambda kv: (-kv[1].total(), kv[0]))
        return {
            "counts": {"old": dict(sorted(self.old.items())),
                       "new": dict(sorted(self.new.items()))},
            "shared": sum(self.matrix.values()),
            "matrix": _by_count(self.matrix), "transitions": _by_count(changed),
            "transition_examples": self.examples["transitions"],
            "labels_changed": self.kinds["label"],
            "rationales_changed": self.kinds["rationale"],
            "provenance_changed": self.kinds["provenance"],
            "reasons": [{"class": k, "total": v.total(), **{n: v[n] for n in KINDS},
                         "examples": self.examples["reasons"][k]} for k, v in reasons],
            "only_old": dict(sorted(self.only_old.items())),
            "only_new": dict(sorted(self.only_new.items())),
        }


def _example(found: dict[str, list[str]], key: str, recipe_id: str) -> None:
    ids = found.setdefault(key, [])
    if len(ids) < EXAMPLES:
        ids.append(recipe_id)


def _sides(transition: str) -> tuple[str, str]:
    old, new = transition.split(" -> ", 1)
    return old, new


def _changed(old: str, new: str) -> bool:
    return old != new and not (old in NO_ENTRY and new in NO_ENTRY)


def _by_count(counts: Counter[str]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def conditions_of(*pools: dict[str, Recipe]) -> list[str]:
    """Every condition with an entry in any of the pools, sorted."""
    return sorted({c for pool in pools for r in pool.values() for c in r.entries})


def diff_pools(old: dict[str, Recipe], new: dict[str, Recipe]) -> dict[str, Any]:
    """Per-condition states, transitions, rationale changes and reason classes (JSON-able)."""
    conditions = conditions_of(old, new)
    diffs = {c: ConditionDiff() for c in conditions}
    shared = sorted(old.keys() & new.keys())
    only_old, only_new = sorted(old.keys() - new.keys()), sorted(new.keys() - old.keys())
    for condition, figures in diffs.items():
        _count(figures.old, old.values(), condition)
        _count(figures.new, new.values(), condition)
        _count(figures.only_old, (old[r] for r in only_old), condition)
        _count(figures.only_new, (new[r] for r in only_new), condition)
        for recipe_id in shared:
            figures.add(recipe_id, old[recipe_id].entry(condition),
                        new[recipe_id].entry(condition))
    return {"recipes": {"old": len(old), "new": len(new), "both": len(shared),
                        "only_old": only_old, "only_new": only_new,
                        "excluded": _exclusions(old, new, shared)},
            "conditions": {c: d.to_json() for c, d in diffs.items()}}


def _exclusions(old: dict[str, Recipe], new: dict[str, Recipe],
                shared: list[str]) -> dict[str, Any]:
    """Recipe-level exclusions: in each pool, and how they moved for recipes in both."""
    moves: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for recipe_id in shared:
        before = old[recipe_id].excluded or NEUTRAL_ENTRY
        after = new[recipe_id].excluded or NEUTRAL_ENTRY
        if before.keys != after.keys:
            moves[f"{before.state} -> {after.state}"] += 1
            reasons[why(before, after)] += 1
    return {"old": sum(r.excluded is not None for r in old.values()),
            "new": sum(r.excluded is not None for r in new.values()),
            "newly_excluded": moves[f"{NEUTRAL} -> {RECIPE_EXCLUDED}"],
            "no_longer_excluded": moves[f"{RECIPE_EXCLUDED} -> {NEUTRAL}"],
            "reason_changed": moves[f"{RECIPE_EXCLUDED} -> {RECIPE_EXCLUDED}"],
            "reasons": _by_count(reasons)}


def _count(counts: Counter[str], recipes: Iterable[Recipe], condition: str) -> None:
    counts.update(r.entry(condition).state for r in recipes)


def summary_lines(conditions: dict[str, dict[str, Any]]) -> list[str]:
    """One README line per condition: Rec/NotRec counts old -> new, labels and rationales."""
    lines = []
    for condition, figures in conditions.items():
        old, new = figures["counts"]["old"], figures["counts"]["new"]
        lines.append(f"- {condition}: Rec {old.get(REC, 0):,} -> {new.get(REC, 0):,}, "
                     f"NotRec {old.get(NOT_REC, 0):,} -> {new.get(NOT_REC, 0):,}; "
                     f"labels changed {figures['labels_changed']:,}, "
                     f"rationales changed {figures['rationales_changed']:,}")
    return lines


# --------------------------------------------------------------------------- dish level


def read_dish(path: str | Path) -> list[dict[str, Any]]:
    """The dish-level instances of a ``fam build`` (``dish.jsonl``)."""
    return read_jsonl(path, "FAM-Bench dish-level instances", "run `nutrireason fam build` first")


@dataclass(frozen=True)
class Instance:
    """One dish-level instance as the diff sees it."""

    id: str
    pair: tuple[str, str]
    label: str
    rationale: tuple[str, ...]


def _instance(row: dict[str, Any], path: Path, number: int) -> Instance:
    gold = row.get("gold") if isinstance(row.get("gold"), dict) else {}
    condition = row.get("condition") or gold.get("condition")
    recipe_id = row.get("recipe_id")
    for name, value in (("recipe_id", recipe_id), ("condition", condition)):
        if not isinstance(value, str) or not value:
            raise DataError(path, f"record {number} has no {name}", field=name, value=value)
    label = gold.get("decision", gold.get("label"))
    if not isinstance(label, str):
        raise DataError(path, f"record {number} has no gold label", field="gold.decision",
                        value=label)
    rationale = gold.get("rationale")
    return Instance(str(row.get("id") or f"#{number}"), (recipe_id, condition), label,
                    tuple(sorted(map(str, rationale))) if isinstance(rationale, list) else ())


def instances(rows: Iterable[dict[str, Any]], path: str | Path) -> list[Instance]:
    """The rows of a ``dish.jsonl`` as :class:`Instance` (a row without a pair or label is a
    DataError naming ``path``)."""
    return [_instance(row, Path(path), n) for n, row in enumerate(rows, start=1)]


def diff_dish(old: list[Instance], new: list[Instance]) -> dict[str, Any]:
    """Instances per condition and label in each build; ids and (recipe, condition) pairs both
    builds share, and how many keep the same gold label (and rationale)."""
    old_ids, new_ids = {i.id: i for i in old}, {i.id: i for i in new}
    old_pairs, new_pairs = {i.pair: i for i in old}, {i.pair: i for i in new}
    ids = old_ids.keys() & new_ids.keys()
    pairs = old_pairs.keys() & new_pairs.keys()
    rows: dict[str, dict[str, Any]] = {}
    for condition in sorted({i.pair[1] for i in [*old, *new]}):
        mine = [p for p in pairs if p[1] == condition]
        rows[condition] = {
            "old": dict(sorted(Counter(i.label for i in old if i.pair[1] == condition).items())),
            "new": dict(sorted(Counter(i.label for i in new if i.pair[1] == condition).items())),
            **_pair_figures(mine, old_pairs, new_pairs)}
    return {"old": len(old), "new": len(new), "ids_shared": len(ids),
            "ids_same_gold": sum(old_ids[i].pair == new_ids[i].pair
                                 and old_ids[i].label == new_ids[i].label for i in ids),
            **_pair_figures(list(pairs), old_pairs, new_pairs), "conditions": rows}


def _pair_figures(pairs: list[tuple[str, str]], old: dict[tuple[str, str], Instance],
                  new: dict[tuple[str, str], Instance]) -> dict[str, int]:
    same = [p for p in pairs if old[p].label == new[p].label]
    return {"pairs_shared": len(pairs), "pairs_same_label": len(same),
            "pairs_same_rationale": sum(old[p].rationale == new[p].rationale for p in same)}


# --------------------------------------------------------------------------- the report


def label_diff(old: str | Path, new: str | Path) -> dict[str, Any]:
    """The whole diff of two FAM builds (see the module docstring), JSON-able."""
    files = {"old": locate(old), "new": locate(new)}
    pools = {k: read_pool(f.annotations) for k, f in files.items()}
    report = {k: {"path": str(f.root), "annotations": str(f.annotations),
                  "dish": None if f.dish is None else str(f.dish)} for k, f in files.items()}
    report |= diff_pools(pools["old"], pools["new"])
    report["summary_lines"] = summary_lines(report["conditions"])
    report["dish"] = None
    if files["old"].dish and files["new"].dish:
        report["dish"] = diff_dish(*(instances(read_dish(f.dish), f.dish)
                                     for f in (files["old"], files["new"]) if f.dish))
    return report


def console(width: int = 150, **kwargs: Any) -> Console:
    """A Console of fixed width (no markup, no highlighting), so output never depends on the
    terminal."""
    return Console(width=width, markup=False, highlight=False, emoji=False, **kwargs)


def print_report(report: dict[str, Any], out: Console, top: int = 5) -> None:
    """Readable tables of a :func:`label_diff` report."""
    recipes = report["recipes"]
    out.print(f"OLD {report['old']['annotations']}\nNEW {report['new']['annotations']}")
    out.print(f"recipes: OLD {recipes['old']:,}, NEW {recipes['new']:,}, in both "
              f"{recipes['both']:,}, only OLD {len(recipes['only_old']):,}, only NEW "
              f"{len(recipes['only_new']):,}")
    excluded = recipes["excluded"]
    out.print(f"recipes excluded: OLD {excluded['old']:,}, NEW {excluded['new']:,}; of those in "
              f"both, newly excluded {excluded['newly_excluded']:,}, no longer excluded "
              f"{excluded['no_longer_excluded']:,}, other reason "
              f"{excluded['reason_changed']:,}", soft_wrap=True)
    for reason, count in list(excluded["reasons"].items())[:top]:
        out.print(f"  {count:>6,}  {reason}", soft_wrap=True)
    conditions = report["conditions"]
    out.print(_overview(conditions))
    changed = {c: f for c, f in conditions.items() if f["transitions"] or f["reasons"]}
    if not changed:
        out.print("no label, rationale or provenance changes in recipes in both builds")
    else:
        out.print(_transitions(changed))
        out.print(_reasons(changed, top))
    if report["dish"] is not None:
        dish = report["dish"]
        out.print(f"dish-level instances: OLD {dish['old']:,}, NEW {dish['new']:,}; ids in both "
                  f"{dish['ids_shared']:,} (same pair and label {dish['ids_same_gold']:,}); "
                  f"(recipe, condition) pairs in both {dish['pairs_shared']:,}, same label "
                  f"{dish['pairs_same_label']:,}, same rationale too "
                  f"{dish['pairs_same_rationale']:,}")
        out.print(_dish(dish))
    else:
        out.print("dish level: not compared (dish.jsonl not in both builds)")
    out.print("summary:")
    for line in report["summary_lines"]:
        out.print(line, soft_wrap=True)


def _table(title: str, columns: list[str], left: int = 2) -> Table:
    table = Table(title=title, title_justify="left")
    for number, name in enumerate(columns):
        table.add_column(name, justify="left" if number < left else "right",
                         no_wrap=number == 0, overflow="fold")
    return table


def _moved(old: int, new: int) -> str:
    return f"{old:,}" if old == new else f"{old:,} -> {new:,}"


def _overview(conditions: dict[str, dict[str, Any]]) -> Table:
    table = _table("per condition: counts in each whole pool (OLD -> NEW); changes in recipes "
                   "in both builds; entries of recipes in one build only",
                   ["condition", "Rec", "NotRec", "excl. entries", "labels chg", "rationales chg",
                    "provenance chg", "only OLD", "only NEW"], left=1)
    for condition, f in conditions.items():
        old, new = f["counts"]["old"], f["counts"]["new"]
        excluded = [sum(v for k, v in side.items() if k.startswith(EXCLUDED_ENTRY))
                    for side in (old, new)]
        table.add_row(condition, _moved(old.get(REC, 0), new.get(REC, 0)),
                      _moved(old.get(NOT_REC, 0), new.get(NOT_REC, 0)), _moved(*excluded),
                      f"{f['labels_changed']:,}", f"{f['rationales_changed']:,}",
                      f"{f['provenance_changed']:,}", _states(f["only_old"]),
                      _states(f["only_new"]))
    return table


def _states(counts: dict[str, int]) -> str:
    sides = [f"{k} {counts[k]:,}" for k in (REC, NOT_REC) if counts.get(k)]
    return ", ".join(sides) or "-"


def _transitions(conditions: dict[str, dict[str, Any]]) -> Table:
    table = _table("label transitions (recipes in both builds)",
                   ["condition", "transition", "entries", "e.g."])
    table.columns[-1].justify = "left"
    for condition, f in conditions.items():
        for number, (transition, count) in enumerate(f["transitions"].items()):
            table.add_row(condition if number == 0 else "", Text(transition), f"{count:,}",
                          Text(", ".join(f["transition_examples"].get(transition, [])[:3])))
    return table


def _reasons(conditions: dict[str, dict[str, Any]], top: int) -> Table:
    table = _table(f"top {top} reason classes per condition (- fired only in OLD, + only in NEW)",
                   ["condition", "reason class", *KINDS, "total"])
    for condition, f in conditions.items():
        for number, reason in enumerate(f["reasons"][:top]):
            table.add_row(condition if number == 0 else "", Text(reason["class"]),
                          *(f"{reason[k]:,}" for k in (*KINDS, "total")))
        if len(f["reasons"]) > top:
            table.add_row("", Text(f"... {len(f['reasons']) - top:,} more classes"),
                          *[""] * (len(KINDS) + 1))
    return table


def _dish(dish: dict[str, Any]) -> Table:
    labels = sorted({k for f in dish["conditions"].values() for k in (*f["old"], *f["new"])})
    table = _table("dish-level instances per condition and gold label (OLD -> NEW)",
                   ["condition", *labels, "pairs in both", "same label", "same rationale"],
                   left=1)
    for condition, f in dish["conditions"].items():
        table.add_row(condition, *(_moved(f["old"].get(k, 0), f["new"].get(k, 0))
                                   for k in labels),
                      *(f"{f[k]:,}" for k in ("pairs_shared", "pairs_same_label",
                                              "pairs_same_rationale")))
    return table
