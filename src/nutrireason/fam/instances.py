"""FAM-Bench instances (paper section 3.3, "Benchmark instantiation"; Appendix G).

From the annotation pool and the resolved recipes:

* **dish-level** instances ``(recipe, focal condition)`` labelled recommend / not_recommend, the
  gold rationale (the decision's canonical ingredients) kept in ``gold`` and never shown to the
  model; balanced across the 13 conditions first (equal quotas, water-filled where a condition's
  pool is short) and then across labels (each condition as close to half and half as its pool
  allows, the remainder moved to conditions with room so the whole split is balanced);
* **comparative** instances: one to three target conditions and four dishes with strictly
  different utilities (:mod:`nutrireason.fam.judgement`), so the gold full ranking follows from
  the annotations; four distractor types; the best dish's position cycles over A-D; target
  conditions are planned least-mentioned first so mentions stay balanced; no option has an
  excluded entry (annotator's or expert's) for a target: it is Rec, NotRec or neutral for each.

Sampling is stable: every pick is "the candidate with the smallest hash" (:func:`stable_key`, a
sha256 of the seed, the slot and the candidate), never a draw from a shared random stream, and
the dish-level draw reads the annotation's labels, not the experts'. A label an expert changed
for one (recipe, condition) entry therefore changes only the instances that hold it, not the
rest of the sample; an excluded entry's instance gives its place to the next entry in order.

Every instance carries ``evidence``: the recipe's weighed, canonical ingredients with the
nutrients the knowledge base's vetoes read, and its nutrition, so the rule-based reference method
can re-derive the gold from the knowledge base alone.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.fam.annotate import Ingredient, recipe_ingredients
from nutrireason.fam.dish import DishProfile, dish_profile
from nutrireason.fam.judgement import NOT_REC, REC, Standing
from nutrireason.fam.kb import CONDITION_IDS, DERIVED_FROM, ConditionKB
from nutrireason.fam.reviews import ANNOTATED
from nutrireason.fam.spec import TASK_DISH, TASK_RANK
from nutrireason.fam.vocabulary import Vocabulary
from nutrireason.standards import load_standards, standards_dir
from nutrireason.standards.loader import Number, RuleValue, Source, StrictModel, load_model

LETTERS = ("A", "B", "C", "D")
DISTRACTORS = ("condition_discrimination", "eligible_dish_ranking",
               "ingredient_coverage_discrimination", "combined_constraint_discrimination")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")


class _Share(StrictModel):
    value: Number
    source: Source


class _BenchFile(StrictModel):
    version: int
    source: Source
    dish_size: RuleValue
    rank_size: RuleValue
    seed: RuleValue
    distractor_shares: dict[str, _Share]
    min_shared_ingredients: RuleValue
    common_ingredients: RuleValue
    min_minority_share: RuleValue


@dataclass(frozen=True)
class BenchConfig:
    """Sizes and sampling choices (``standards/data/fam_bench.yaml``)."""

    dish_size: int
    rank_size: int
    seed: int
    shares: dict[str, float]
    min_shared: int
    common: int
    min_minority_share: float = 0.0


def load_bench_config(path: Path | None = None) -> BenchConfig:
    """The packaged (or given) ``fam_bench.yaml``; the four distractor types must be listed."""
    path = path or standards_dir() / "fam_bench.yaml"
    data = load_model(path, _BenchFile)
    if set(data.distractor_shares) != set(DISTRACTORS):
        raise DataError(path, "distractor types do not match", field="distractor_shares",
                        value=sorted(data.distractor_shares), expected=", ".join(DISTRACTORS))
    return BenchConfig(int(data.dish_size.value), int(data.rank_size.value), int(data.seed.value),
                       {k: data.distractor_shares[k].value for k in DISTRACTORS},
                       int(data.min_shared_ingredients.value), int(data.common_ingredients.value),
                       float(data.min_minority_share.value))


@dataclass
class Dish:
    """One annotated, resolved recipe ready to become an option or a dish-level instance.
    ``excluded``: the conditions whose entry the annotator or the experts excluded (no side,
    and not neutral either: the dish is never an option for a target among them).
    ``annotated``: the side the rule-grounded annotation gave each entry, before any expert
    decision (the experts' excluded entries included); the dish-level draw reads it."""

    recipe_id: str
    standing: Standing
    canonicals: frozenset[str]
    view: dict[str, Any]
    evidence: dict[str, Any]
    lines: list[dict[str, str]]
    image: str | None = None
    images_root: str | None = None
    excluded: frozenset[str] = frozenset()
    annotated: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.annotated:
            self.annotated = dict(self.standing.side)

    def option_for(self, targets: Iterable[str]) -> bool:
        """The dish can be an option for ``targets``: no target is an excluded entry (each
        is Rec, NotRec or neutral, i.e. without any entry)."""
        return all(c in self.standing.side or c not in self.excluded for c in targets)


# --------------------------------------------------------------------------- dishes


def veto_nutrients(kb: dict[str, ConditionKB]) -> list[str]:
    """The nutrients any condition's vetoes and recommend requirements read (kept per
    ingredient in ``evidence``)."""
    return sorted({DERIVED_FROM.get(limit.nutrient, limit.nutrient) for entry in kb.values()
                   for limit in [*entry.nutrient_limits, *entry.recommend_requires]})


def dish_view(record: dict[str, Any], nutrition: dict[str, Any] | None) -> dict[str, Any]:
    """What the model sees of a recipe: title, ingredient lines, tags and estimated nutrition."""
    view: dict[str, Any] = {"title": record["title"], "ingredients": list(record["ingredients"]),
                            "dietary_tags": list(record.get("dietary_tags") or [])}
    if record.get("servings"):
        view["servings"] = record["servings"]
    if nutrition:
        per_serving = nutrition.get("per_serving")
        basis, values = ("per serving", per_serving) if per_serving else (
            "per 100 g", nutrition.get("per_100g") or {})
        units = {n.id: n.unit for n in load_standards().nutrients.nutrients}
        view["nutrition"] = {"basis": f"{basis}, estimated from USDA SR28",
                             "values": {k: f"{v:.4g} {units.get(k, '')}".strip()
                                        for k, v in sorted(values.items()) if v is not None}}
    return view


def _evidence(items: list[Ingredient], nutrition: dict[str, Any] | None,
              nutrients: list[str], profile: DishProfile) -> dict[str, Any]:
    rows = [i.evidence_row(nutrients) for i in items]
    kept = {k: (nutrition or {}).get(k) for k in ("per_serving", "per_100g")}
    return {"ingredients": rows, "nutrition": kept, "profile": profile.as_evidence()}


def _lines(recipe: dict[str, Any], items: list[Ingredient]) -> list[dict[str, str]]:
    """Every ingredient line with its parsed food phrase and canonical name ("" if unmatched);
    ``items`` are the recipe's matched ingredients, in line order."""
    matched = iter(items)
    rows = []
    for item in recipe["ingredients"]:
        canonical = next(matched).canonical if item.get("ndb_no") else ""
        rows.append({"line": item["line"], "food": item.get("food") or "",
                     "canonical": canonical})
    return rows


class ImageRefused(ValueError):
    """An instance's image that is not a local file inside its images folder (never read)."""


_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:")  # http:, file:, data:, ... (not a drive letter)


def is_url(value: str) -> bool:
    """A URL (``http://``, ``file://``, ``data:``, anything with ``://``): never fetched."""
    return "://" in value or bool(_SCHEME.match(value))


def _confine(path: Path, root: Path) -> Path | None:
    """``path`` resolved (symlinks followed) if it lies inside the resolved ``root``."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError, ValueError):  # a symlink loop, a NUL byte ...
        return None
    return resolved if resolved.is_relative_to(root) else None


def find_image(recipe_id: str, record: dict[str, Any], images: Path | None) -> str | None:
    """The recipe's image inside the images folder (an absolute path): ``<id>.<jpg|jpeg|png|
    webp>``, else the file the record's ``image`` names (relative to the folder).

    Only files inside the folder are used: an id or an ``image`` path that resolves outside it
    (``..``, an absolute path, a symlink leading out) is a DataError naming the recipe and the
    value. URLs are never fetched (the ``image`` is then ignored). Without a folder: no image."""
    if images is None:
        return None
    root = images.resolve()
    for suffix in IMAGE_SUFFIXES:
        candidate = _confine(root / f"{recipe_id}{suffix}", root)
        if candidate is None:
            raise DataError(images, f"recipe {recipe_id!r}: its id names an image file outside "
                            "the images folder", field="id", value=recipe_id,
                            expected=f"<recipe id>.jpg/.png/.webp files inside {root}")
        if candidate.is_file():
            return str(candidate)
    named = record.get("image")
    if not isinstance(named, str) or not named.strip() or is_url(named):
        return None
    candidate = _confine(root / named, root)
    if candidate is None:
        raise DataError(images, f"recipe {recipe_id!r}: its image is outside the images folder",
                        field="image", value=named,
                        expected=f"a file inside {root} (a name relative to it) or a URL, "
                        "which is never fetched")
    return str(candidate) if candidate.is_file() else None


def confined_image(value: str | None, root: str | Path | None) -> Path:
    """The local file an instance's image names, resolved, inside the images folder ``root``
    (a run's ``--images`` or the build's; never one an item names for itself). ImageRefused
    says why not: no folder, no file, a URL, or a path leading outside the folder."""
    if not isinstance(value, str) or not value.strip():
        raise ImageRefused("no local image file")
    if is_url(value):
        raise ImageRefused("a URL: images are never fetched, only local files are sent")
    if root is None:
        raise ImageRefused("no images folder: give the run --images DIR, or build with "
                           "`fam build --images DIR`")
    base = Path(root).resolve()
    resolved = _confine(base / value, base)
    if resolved is None:
        raise ImageRefused(f"outside the images folder {base}")
    if not resolved.is_file():
        raise ImageRefused("no local image file")
    return resolved


def pool_dishes(annotations: Iterable[dict[str, Any]], recipes: Iterable[dict[str, Any]],
                kb: dict[str, ConditionKB], vocabulary: Vocabulary,
                foods: dict[str, dict[str, Any]], images: Path | None = None) -> dict[str, Dish]:
    """Annotated recipes with at least one entry, by recipe id (sorted)."""
    resolved = {r["record"]["id"]: r for r in recipes}
    nutrients = veto_nutrients(kb)
    dishes: dict[str, Dish] = {}
    for annotation in annotations:
        recipe_id = annotation["recipe_id"]
        if annotation["excluded"] or not (annotation["rec"] or annotation["not_rec"]):
            continue
        recipe = resolved.get(recipe_id)
        if recipe is None:
            raise DataError(None, "annotated recipe missing from the resolved recipes",
                            field="recipe_id", value=recipe_id,
                            expected="annotations and recipes from the same build")
        items = recipe_ingredients(recipe, vocabulary, foods)
        dishes[recipe_id] = Dish(
            recipe_id, Standing.of(annotation), frozenset(i.canonical for i in items),
            dish_view(recipe["record"], recipe.get("nutrition")),
            _evidence(items, recipe.get("nutrition"), nutrients,
                      dish_profile(recipe, items)),
            _lines(recipe, items),
            find_image(recipe_id, recipe["record"], images),
            str(images.resolve()) if images is not None else None,
            frozenset(e["condition"] for e in annotation.get("excluded_entries") or []),
            annotated_sides(annotation))
    return dict(sorted(dishes.items()))


def annotated_sides(annotation: dict[str, Any]) -> dict[str, str]:
    """Condition -> the side the rule-grounded annotation gave the entry (an expert's
    correction or exclusion records it as ``annotated_side``)."""
    sides = {"rec": REC, "not_rec": NOT_REC}
    out = {}
    for key in ("rec", "not_rec", "excluded_entries"):
        for entry in annotation.get(key) or []:
            side = entry.get(ANNOTATED, key)
            if side in sides:
                out[entry["condition"]] = sides[side]
    return dict(sorted(out.items()))


# --------------------------------------------------------------------------- dish-level


def water_fill(total: int, caps: dict[str, int]) -> dict[str, int]:
    """Split ``total`` as evenly as possible over the keys, none above its cap."""
    alloc = dict.fromkeys(caps, 0)
    remaining = min(total, sum(caps.values()))
    while remaining > 0:
        active = [k for k in caps if alloc[k] < caps[k]]
        share = remaining // len(active)
        if share == 0:
            for key in active[:remaining]:
                alloc[key] += 1
            break
        for key in active:
            give = min(share, caps[key] - alloc[key])
            alloc[key] += give
            remaining -= give
    return alloc


def balanced_cap(rec: int, not_rec: int, minority_share: float) -> int:
    """The most instances a condition can have with at least ``minority_share`` of its
    minority label."""
    minority = min(rec, not_rec)
    if minority_share <= 0:
        return rec + not_rec
    return min(rec + not_rec, minority + math.floor(minority * (1 - minority_share)
                                                   / minority_share + 1e-9))


def rec_counts(quotas: dict[str, int], rec: dict[str, int], not_rec: dict[str, int],
               minority_share: float = 0.0) -> dict[str, int]:
    """Recommend instances per condition: each near half its quota and neither label under
    ``minority_share`` of it, totalling half of all where the pools allow."""
    low = {c: max(0, q - not_rec[c], math.ceil(minority_share * q - 1e-9))
           for c, q in quotas.items()}
    high = {c: min(rec[c], q, math.floor((1 - minority_share) * q + 1e-9))
            for c, q in quotas.items()}
    counts = {c: min(max(q // 2 + (i % 2) * (q % 2), low[c]), high[c])
              for i, (c, q) in enumerate(quotas.items())}
    target = sum(quotas.values()) // 2
    while (gap := target - sum(counts.values())) != 0:
        step = 1 if gap > 0 else -1
        room = [c for c in quotas if (counts[c] < high[c] if step > 0 else counts[c] > low[c])]
        if not room:
            break
        # Move the condition whose split is furthest from half in the other direction first.
        room.sort(key=lambda c: step * (counts[c] - quotas[c] / 2))
        for condition in room[:abs(gap)]:
            counts[condition] += step
    return counts


def stable_key(*parts: object) -> int:
    """A number fixed by ``parts`` alone (sha256; unlike ``hash`` the same in every process):
    candidates sorted by it keep their order when other candidates come or go."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def dish_order(seed: int, recipe_id: str, condition: str) -> tuple[int, str, str]:
    """Where an entry stands in the draw of the dish-level instances (smallest first)."""
    return stable_key(seed, "dish", recipe_id, condition), recipe_id, condition


def dish_instance_id(recipe_id: str, condition: str) -> str:
    """The id of an entry's dish-level instance: the same in every build that draws it."""
    return f"dish-{recipe_id}-{condition}"


def dish_instances(dishes: dict[str, Dish], conditions: Sequence[str], size: int,
                   labels: dict[str, str], seed: int,
                   minority_share: float = 0.0) -> list[dict[str, Any]]:
    """Condition- and label-balanced dish-level instances: equal quotas where the pools allow,
    no condition with less than ``minority_share`` of either label (a condition short of one
    label gets fewer instances, the rest go to others). Each (condition, label) pool gives its
    first entries in :func:`dish_order`, and the instances come in that order too, with ids
    :func:`dish_instance_id`.

    Pools and quotas are the annotation's (:attr:`Dish.annotated`), the gold is the reviewed
    side: an expert's correction changes the gold of that entry's instance and nothing else;
    an excluded entry is passed over (the next entry of its pool takes the place)."""
    sides: dict[str, dict[str, list[str]]] = {c: {REC: [], NOT_REC: []} for c in conditions}
    for recipe_id, dish in dishes.items():
        for condition, side in dish.annotated.items():
            if condition in sides:
                sides[condition][side].append(recipe_id)
    quotas = water_fill(size, {c: balanced_cap(len(s[REC]), len(s[NOT_REC]), minority_share)
                               for c, s in sides.items()})
    recs = rec_counts(quotas, {c: len(s[REC]) for c, s in sides.items()},
                      {c: len(s[NOT_REC]) for c, s in sides.items()}, minority_share)
    chosen: list[tuple[str, str, str]] = []
    for condition in conditions:
        for side, count in ((REC, recs[condition]), (NOT_REC, quotas[condition] - recs[condition])):
            ranked = sorted((rid for rid in sides[condition][side]
                             if condition in dishes[rid].standing.side),
                            key=lambda rid, c=condition: dish_order(seed, rid, c))
            chosen += [(rid, condition) for rid in ranked[:count]]
    chosen.sort(key=lambda entry: dish_order(seed, *entry))
    items = [_dish_item(dishes[rid], condition, dishes[rid].standing.side[condition], labels)
             for rid, condition in chosen]
    _check_unique(items)
    return items


def _check_unique(items: list[dict[str, Any]]) -> None:
    counts = Counter(item["id"] for item in items)
    twice = sorted(k for k, n in counts.items() if n > 1)
    if twice:
        raise DataError(None, "two entries give the same instance id", field="id",
                        value=twice[0], expected="recipe and condition ids that do not run "
                        "into one another across a '-'")


def _dish_item(dish: Dish, condition: str, side: str, labels: dict[str, str]) -> dict[str, Any]:
    return {
        "id": dish_instance_id(dish.recipe_id, condition), "task": TASK_DISH,
        "condition": condition, "conditions": [condition],
        "condition_labels": [labels[condition]],
        "recipe_id": dish.recipe_id, "dish": dish.view, "image": dish.image,
        "images_root": dish.images_root,
        "gold": {"decision": side, "condition": condition,
                 "rationale": dish.standing.evidence[condition], "ingredients": dish.lines},
        "evidence": dish.evidence,
    }


def balance_report(dishes: dict[str, Dish], dish: list[dict[str, Any]],
                   conditions: Sequence[str], size: int, minority_share: float
                   ) -> list[dict[str, Any]]:
    """Per condition: the pool's labels, the instances drawn, the minority share and, where a
    condition has fewer instances than an equal share, why (too few of one label)."""
    pool = {c: Counter() for c in conditions}
    for entry in dishes.values():
        for condition, side in entry.standing.side.items():
            if condition in pool:
                pool[condition][side] += 1
    drawn = {c: Counter() for c in conditions}
    for item in dish:
        drawn[item["condition"]][item["gold"]["decision"]] += 1
    equal = size // max(1, len(conditions))
    rows = []
    for condition in conditions:
        have, got = pool[condition], drawn[condition]
        total = sum(got.values())
        row = {"condition": condition, "pool_recommend": have[REC],
               "pool_not_recommend": have[NOT_REC], "recommend": got[REC],
               "not_recommend": got[NOT_REC],
               "minority_share": round(min(got[REC], got[NOT_REC]) / total, 4) if total else 0.0,
               "short_of_equal_share": None}
        if total < equal:
            label = REC if have[REC] < have[NOT_REC] else NOT_REC
            row["short_of_equal_share"] = (
                f"only {min(have[REC], have[NOT_REC])} pool recipes are {label} for this "
                f"condition: at most {total} instances keep {minority_share:.0%} of the minority "
                f"label (equal share {equal})")
        rows.append(row)
    return rows


# --------------------------------------------------------------------------- comparative


@dataclass
class _Drawer:
    """Draws four dishes with distinct utilities for one distractor type, target set and slot.

    Options are the dishes with no excluded entry among the targets (:meth:`Dish.option_for`).
    A draw is the smallest valid choice in an order fixed by (seed, slot, candidate)
    (:func:`stable_key`): the best dish first in that order that can head a draw, then the
    utility levels with the smallest keys and on each level its dish with the smallest key.
    Whether a choice is valid depends on its own dishes only, so a dish that is not drawn can
    come, go or change without changing the draw."""

    dishes: dict[str, Dish]
    config: BenchConfig
    common: frozenset[str]
    seed: int
    rec_for: dict[str, frozenset[str]] = field(init=False)
    slot: int = field(init=False, default=-1)
    _keys: dict[str, tuple[int, str]] = field(init=False, default_factory=dict)
    _memo: dict[tuple[Any, ...], Any] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.rec_for = {rid: frozenset(c for c, s in d.standing.side.items() if s == REC)
                        for rid, d in self.dishes.items()}

    def feasible(self, kind: str, targets: list[str]) -> bool:
        """Some draw of ``kind`` exists for ``targets`` (the same for every slot)."""
        return self._remember(("feasible", kind, *targets), lambda: any(
            self._viable(kind, targets, top) for top in self._tops(kind, targets)))

    def draw(self, kind: str, targets: list[str], slot: int) -> list[str] | None:
        """Four recipe ids, best first, or None when this target set cannot serve ``kind``."""
        if slot != self.slot:
            self.slot, self._keys = slot, {}
        for top in sorted(self._tops(kind, targets), key=self.key):
            if self._viable(kind, targets, top):
                return [top, *self._pick(kind, targets, top)]
        return None

    def key(self, rid: str) -> tuple[int, str]:
        """The dish's place in this slot's order (smallest first)."""
        if rid not in self._keys:
            self._keys[rid] = (stable_key(self.seed, "rank", self.slot, rid), rid)
        return self._keys[rid]

    def utilities(self, targets: list[str]) -> dict[str, int]:
        """The utility for ``targets`` of every dish that can be an option for them."""
        return self._remember(("utility", *targets), lambda: {
            rid: dish.standing.utility(targets) for rid, dish in self.dishes.items()
            if dish.option_for(targets)})

    def _remember(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def _tops(self, kind: str, targets: list[str]) -> list[str]:
        """The dishes that can be the best option of ``kind``."""
        def make() -> list[str]:
            utility = self.utilities(targets)
            if kind in ("condition_discrimination", "ingredient_coverage_discrimination"):
                return [r for r in utility if self.dishes[r].standing.side.get(targets[0]) == REC]
            return [r for r in utility
                    if self.dishes[r].standing.eligible(targets) and utility[r] >= 1]
        return self._remember(("tops", kind, *targets), make)

    def _others(self, kind: str, targets: list[str], top: str) -> list[str]:
        """The dishes that can be the other three options under ``top`` (for
        ``eligible_dish_ranking``: every dish below it)."""
        utility = self.utilities(targets)
        level = utility[top]
        if kind == "ingredient_coverage_discrimination":
            shared = self.dishes[top].canonicals - self.common
            return self._remember((kind, top, *targets), lambda: [
                r for r in utility if utility[r] < level
                and len(self.dishes[r].canonicals & shared) >= self.config.min_shared])
        return self._remember((kind, level, *targets), lambda: [
            r for r in utility if utility[r] < level and self._fits(kind, r, targets)])

    def _fits(self, kind: str, rid: str, targets: list[str]) -> bool:
        """``rid`` is the kind of lower option ``kind`` asks for."""
        if kind == "condition_discrimination":  # recommended for some other condition
            return bool(self.rec_for[rid].difference(targets))
        if kind == "combined_constraint_discrimination":
            return _partial(self.dishes[rid].standing, targets)
        return True

    def _second_levels(self, targets: list[str], top: str) -> set[int]:
        """``eligible_dish_ranking``: the levels of the eligible dishes under ``top`` with
        two more levels below them."""
        utility = self.utilities(targets)

        def make() -> set[int]:
            below = self._others("eligible_dish_ranking", targets, top)
            levels = {utility[r] for r in below}
            return {utility[r] for r in below if self.dishes[r].standing.eligible(targets)
                    and sum(level < utility[r] for level in levels) >= 2}
        return self._remember(("second", utility[top], *targets), make)

    def _viable(self, kind: str, targets: list[str], top: str) -> bool:
        """``top`` can head a draw of ``kind``."""
        utility = self.utilities(targets)
        if kind == "eligible_dish_ranking":
            return bool(self._second_levels(targets, top))
        return len({utility[r] for r in self._others(kind, targets, top)}) >= 3

    def _pick(self, kind: str, targets: list[str], top: str) -> list[str]:
        """The other three options under a viable ``top``, best first."""
        utility = self.utilities(targets)
        others = self._others(kind, targets, top)
        if kind != "eligible_dish_ranking":
            return self._levels(others, 3, utility)
        good = self._second_levels(targets, top)
        second = self._levels([r for r in others if utility[r] in good
                               and self.dishes[r].standing.eligible(targets)], 1, utility)
        level = utility[second[0]]
        return second + self._levels([r for r in others if utility[r] < level], 2, utility)

    def _levels(self, candidates: list[str], count: int, utility: dict[str, int]) -> list[str]:
        """``count`` dishes with distinct utilities, highest first: the levels with the
        smallest keys, and on each level its dish with the smallest key."""
        first: dict[int, str] = {}
        for rid in candidates:
            level = utility[rid]
            if level not in first or self.key(rid) < self.key(first[level]):
                first[level] = rid
        levels = sorted(first, key=lambda u: stable_key(self.seed, "level", self.slot, u))
        return [first[u] for u in sorted(levels[:count], reverse=True)]


def _partial(standing: Standing, targets: list[str]) -> bool:
    """NotRec for at least one target and Rec for another: satisfies part of the constraints."""
    sides = [standing.side.get(c) for c in targets]
    return NOT_REC in sides and REC in sides


def distractor_plan(size: int, shares: dict[str, float], seed: int) -> list[str]:
    """``size`` distractor types in proportion to ``shares`` (largest remainder), in an order
    fixed by the seed and the size."""
    total = sum(shares.values()) or 1.0
    exact = {k: size * v / total for k, v in shares.items()}
    counts = {k: int(v) for k, v in exact.items()}
    for key in sorted(exact, key=lambda k: counts[k] - exact[k])[:size - sum(counts.values())]:
        counts[key] += 1
    plan = [k for k in DISTRACTORS for _ in range(counts.get(k, 0))]
    order = sorted(range(len(plan)), key=lambda i: (stable_key(seed, "kind", i), i))
    return [plan[i] for i in order]


class _TargetSet(StrictModel):
    conditions: list[str]
    source: Source


class _TargetFile(StrictModel):
    version: int
    source: Source
    sets: list[_TargetSet]


def load_target_sets(path: Path | None = None) -> list[tuple[str, ...]]:
    """Co-occurring condition sets (``standards/data/fam_comorbidities.yaml``) the comparative
    task draws its two- and three-condition targets from."""
    path = path or standards_dir() / "fam_comorbidities.yaml"
    data = load_model(path, _TargetFile)
    sets = []
    for index, entry in enumerate(data.sets):
        unknown = [c for c in entry.conditions if c not in CONDITION_IDS]
        if unknown or len(set(entry.conditions)) != len(entry.conditions) \
                or len(entry.conditions) not in (2, 3):
            raise DataError(path, "a set names two or three distinct known conditions",
                            field=f"sets[{index}].conditions", value=entry.conditions)
        sets.append(tuple(entry.conditions))
    return sets


TARGET_COUNTS = {"condition_discrimination": (1,), "ingredient_coverage_discrimination": (1,),
                 "eligible_dish_ranking": (2,), "combined_constraint_discrimination": (2, 3)}


def _target_choices(kind: str, conditions: Sequence[str], mentions: Counter, seed: int,
                    slot: int, target_sets: Sequence[tuple[str, ...]] = ()) -> list[list[str]]:
    """Target sets for ``kind`` at ``slot``, in the order to try: one condition,
    least-mentioned first; or a co-occurring set of two or three (``target_sets``), the
    least-mentioned sets first. Ties are broken by :func:`stable_key`."""
    choices: list[list[str]] = []
    for count in sorted(TARGET_COUNTS[kind], key=lambda n: stable_key(seed, "size", slot, n)):
        if count == 1:
            choices += [[c] for c in sorted(conditions, key=lambda c: (
                mentions[c], stable_key(seed, "target", slot, c), c))]
            continue
        sized = [list(s) for s in target_sets if len(s) == count]
        sized.sort(key=lambda s: (min(mentions[c] for c in s), sum(mentions[c] for c in s),
                                  stable_key(seed, "target", slot, *s), s))
        choices += sized
    return choices


def target_plan(kinds: Sequence[str], conditions: Sequence[str],
                target_sets: Sequence[tuple[str, ...]], seed: int,
                feasible: Callable[[str, list[str]], bool]) -> list[list[str] | None]:
    """Per slot, its targets: the first of :func:`_target_choices` that some draw can serve
    (``feasible``), or None. Mentions count the planned targets, so a slot's targets follow
    from the seed, the distractor types and the conditions, never from what an earlier slot
    drew."""
    mentions: Counter = Counter()
    plan: list[list[str] | None] = []
    for slot, kind in enumerate(kinds):
        choices = _target_choices(kind, conditions, mentions, seed, slot, target_sets)
        targets = next((t for t in choices if feasible(kind, t)), None)
        mentions.update(targets or [])
        plan.append(targets)
    return plan


def common_canonicals(dishes: dict[str, Dish], count: int) -> frozenset[str]:
    """The ``count`` canonical ingredients found in the most dishes."""
    counter = Counter(c for dish in dishes.values() for c in dish.canonicals)
    return frozenset(name for name, _ in counter.most_common(count))


def rank_instances(dishes: dict[str, Dish], conditions: Sequence[str], config: BenchConfig,
                   size: int, labels: dict[str, str], seed: int,
                   target_sets: Sequence[tuple[str, ...]] | None = None
                   ) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Comparative instances and, per distractor type, how many could not be drawn; two- and
    three-condition targets come from ``target_sets`` (default: the packaged co-occurring
    sets restricted to ``conditions``). Slot ``n`` of the plan gives the item ``rank-<n+1>``
    (none when it cannot be drawn); what a slot draws depends on the seed, the slot and the
    dishes it could pick, never on another slot."""
    drawer = _Drawer(dishes, config, common_canonicals(dishes, config.common), seed)
    if target_sets is None:
        target_sets = [s for s in load_target_sets() if set(s) <= set(conditions)]
    kinds = distractor_plan(size, config.shares, seed)
    plan = target_plan(kinds, conditions, target_sets, seed, drawer.feasible)
    items: list[dict[str, Any]] = []
    missing: Counter = Counter()
    for slot, (kind, targets) in enumerate(zip(kinds, plan, strict=True)):
        drawn = None if targets is None else drawer.draw(kind, targets, slot)
        if drawn is None:
            missing[kind] += 1
            continue
        items.append(_rank_item(slot, kind, targets, [dishes[r] for r in drawn], labels, seed))
    return items, dict(missing)


def _rank_item(slot: int, kind: str, targets: list[str], ordered: list[Dish],
               labels: dict[str, str], seed: int) -> dict[str, Any]:
    """One comparative item, ``rank-<slot + 1>``; the best dish sits at letter ``slot % 4``,
    the others at letters in an order fixed by the seed and the slot."""
    letters = list(LETTERS)
    best = letters.pop(slot % 4)
    letters.sort(key=lambda k: stable_key(seed, "letters", slot, k))
    placed = dict(zip([best, *letters], ordered, strict=True))
    by_letter = dict(sorted(placed.items()))
    return {
        "id": f"rank-{slot + 1:05d}", "task": TASK_RANK, "distractor": kind,
        "conditions": targets, "condition_labels": [labels[c] for c in targets],
        "recipe_ids": {k: d.recipe_id for k, d in by_letter.items()},
        "dishes": {k: d.view for k, d in by_letter.items()},
        "images": {k: d.image for k, d in by_letter.items()},
        "images_root": ordered[0].images_root,
        "gold": {"ranking": [best, *letters],
                 "labels": {k: d.standing.label(targets) for k, d in by_letter.items()},
                 "utility": {k: d.standing.utility(targets) for k, d in by_letter.items()},
                 "avoid_violations": {k: d.standing.violations(targets)
                                      for k, d in by_letter.items()}},
        "evidence": {k: d.evidence for k, d in by_letter.items()},
    }


# --------------------------------------------------------------------------- statistics


def item_images(item: dict[str, Any]) -> list[str | None]:
    """The image paths an instance shows: its dish's, or each option's for a ranking."""
    return [item.get("image")] if item["task"] == TASK_DISH else list(item["images"].values())


def has_images(item: dict[str, Any]) -> bool:
    """Every image the instance shows is a local file inside its images folder."""
    try:
        for path in item_images(item):
            confined_image(path, item.get("images_root"))
    except ImageRefused:
        return False
    return True


def instance_stats(dish: list[dict[str, Any]], rank: list[dict[str, Any]]) -> dict[str, Any]:
    """Balance statistics (labels, conditions, distractor types, answer positions)."""
    per_condition: dict[str, Counter] = {}
    for item in dish:
        per_condition.setdefault(item["condition"], Counter())[item["gold"]["decision"]] += 1
    option_labels = Counter(v for item in rank for v in item["gold"]["labels"].values())
    return {
        "dish": {"instances": len(dish),
                 "labels": dict(Counter(i["gold"]["decision"] for i in dish)),
                 "conditions": {c: dict(v) for c, v in sorted(per_condition.items())},
                 "recipes": len({i["recipe_id"] for i in dish}),
                 "with_image": sum(has_images(i) for i in dish),
                 "mean_rationale": _mean(len(i["gold"]["rationale"]) for i in dish)},
        "rank": {"instances": len(rank),
                 "distractors": dict(sorted(Counter(i["distractor"] for i in rank).items())),
                 "answer_positions": dict(sorted(Counter(i["gold"]["ranking"][0]
                                                         for i in rank).items())),
                 "condition_mentions": dict(sorted(Counter(c for i in rank
                                                           for c in i["conditions"]).items())),
                 "targets_per_instance": dict(sorted(Counter(str(len(i["conditions"]))
                                                             for i in rank).items())),
                 "option_labels": dict(option_labels),
                 "options_with_avoid_violation": sum(bool(v) for i in rank for v in
                                                     i["gold"]["avoid_violations"].values()),
                 "with_all_images": sum(has_images(i) for i in rank)},
    }


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(sum(values) / len(values), 3) if values else 0.0
