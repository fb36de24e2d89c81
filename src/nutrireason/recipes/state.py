"""Food state: a line that says cooked, canned, drained, frozen or dried gets the SR28 entry in
that state ("1 cup cooked rice" -> *Rice, white, long-grain, regular, enriched, cooked*, not the
raw grain), or, where SR28 has none, the raw entry with a cooking-yield conversion recorded on
the line (``standards/data/cooking_yields.yaml``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import pandas as pd

from nutrireason.recipes.match import stem
from nutrireason.recipes.parse import CUTS
from nutrireason.recipes.words import own_text
from nutrireason.standards import standards_dir
from nutrireason.standards.loader import Source, StrictModel, load_model

# Line states that mean the food was cooked before it is measured.
COOKED_STATES = {"cooked", "boiled", "roasted", "grilled", "fried", "canned"}
# Description words that mark an uncooked entry.
RAW_WORDS = {"raw", "dry", "uncooked", "unprepared", "dried"}
# Description words a cooked sibling may drop or add without being another food.
NEUTRAL_WORDS = RAW_WORDS | {"fresh", "as", "purchased", "without", "with", "salt", "added",
                             "solids", "and", "liquids", "drained", "rinsed", "in", "tap",
                             "water", "cooked", "boiled", "enriched", "unenriched", "regular",
                             "mature", "seeds", "all", "types", "frozen", "unheated", "year",
                             "round", "average", "ripe", "variety", "varieties"}
NEUTRAL_WORDS = {stem(w) for w in NEUTRAL_WORDS}  # folded as :func:`words` folds them
# Line state -> description words a sibling must have (any one), best first.
STATE_WORDS = {
    "cooked": ("cooked", "canned", "prepared"),
    "boiled": ("boiled", "stewed", "simmered", "poached", "cooked", "canned"),  # moist heat
    "roasted": ("roasted", "baked", "cooked"), "grilled": ("grilled", "broiled", "cooked"),
    "fried": ("fried", "cooked"), "canned": ("canned",), "frozen": ("frozen",),
    "dried": ("dried", "dehydrated"), "skinless": ("only",), "raw": ("raw", "dry", "uncooked"),
    "drained": ("drained",), "smoked": ("smoked",),
}
# Cuts named on a line that SR28 lists as their own entries ("chicken thighs").
PARTS = CUTS
for _part in PARTS:
    STATE_WORDS[_part] = (_part,)
# A fried line never lands on a moist-heat entry it does not name (fried peanuts are
# oil-roasted, not boiled).
MOIST_HEAT = frozenset({"boiled", "stewed", "simmered", "poached", "braised"})
COOKING_WORDS = {"cooked", "boiled", "roasted", "fried", "baked", "stewed", "braised",
                 "broiled", "grilled", "simmered", "prepared"}
# drained / rinsed say "canned" for foods that come canned.
CANNED_GROUPS = {"1100", "1500", "1600", "0900"}  # "drained" says canned for these
EXCLUDED = {"0300", "2100", "3600"}


class GroupYield(StrictModel):
    name: str
    factor: float
    source: Source


class CitedFactor(StrictModel):
    factor: float
    source: Source


class RenderedFood(StrictModel):
    name: str
    cooked: str
    factor: float
    source: Source


class CookingYields(StrictModel):
    version: int
    source: Source
    groups: dict[str, GroupYield]
    default: CitedFactor
    drained_share: CitedFactor
    drained_share_animal: CitedFactor
    rendered: dict[str, RenderedFood] = {}

    def drained(self, group_code: str | None, description: str = "") -> CitedFactor:
        """Drained solids per gram of a can's net weight: meat, poultry and fish cans hold
        little liquid; vegetable, bean and shellfish cans (clams in their juice) about half."""
        shellfish = description.startswith(("Mollusks", "Crustaceans"))
        return self.drained_share_animal if group_code in MEAT_GROUPS and not shellfish \
            else self.drained_share

    def factor(self, group_code: str) -> tuple[float, str]:
        """Cooked grams per raw gram for an SR28 group, and where the figure comes from."""
        entry = self.groups.get(group_code)
        if entry is None:
            return self.default.factor, "default"
        return entry.factor, f"group {group_code} {entry.name}"


def load_cooking_yields(path: Path | None = None) -> CookingYields:
    """``standards/data/cooking_yields.yaml``."""
    return load_model(path or standards_dir() / "cooking_yields.yaml", CookingYields)


@lru_cache(maxsize=100_000)
def words(text: str) -> frozenset[str]:
    """Description words, plurals folded ("mangos" and "mango" are one word)."""
    return frozenset(stem(w) for w in re.findall(r"[a-z]+|\d+", text.lower()))


@dataclass(frozen=True)
class StateChoice:
    """The entry for the stated state, or the raw entry with a yield factor to apply."""

    ndb_no: str
    description: str
    state: str | None  # the state the sibling was chosen for
    yield_factor: float | None = None
    yield_source: str | None = None
    problem: str | None = None  # the stated state has no SR28 entry and no conversion
    # nutrients the entry cannot stand for on this line (SR28 has no low-sodium entry)
    unknown: tuple[str, ...] = ()


MEAT_GROUPS = {"0500", "1000", "1300", "1500", "1700"}
# SR28's ground meats ("Beef, ground, 90% lean meat / 10% fat, raw", "Pork, fresh, ground")
GROUND_ENTRY = re.compile(r"(?i)^\w+(?:, fresh)?, ground\b")
# The grinding said of the food itself: before its name in the first clause ("1 lb ground
# veal"), or as the clause right after it ("veal, finely minced"); not a ground spice later.
GRINDS_FIRST_CLAUSE = re.compile(r"(?i)^[^,(]*\b(?:ground|minced?)\b(?!\s+(?:\w+\s+)?(?:pepper|"
                                 r"spices?|cumin|coriander|cinnamon|ginger|garlic|onions?)\b)")
GRINDS_AFTER = re.compile(r"(?i),\s*(?:\w+ly\s+)?(?:ground|minced)\b|"
                          r"\(\s*(?:\w+ly\s+)?(?:ground|minced)\s*\)")
# Dishes made of ground meat: the meat is ground whatever the line says of it.
GROUND_DISH = re.compile(r"(?i)\b(?:hamburgers?|burgers?|patt(?:y|ies)|meat ?balls?|"
                         r"meat ?loaf|keema|kofta)\b")
USUAL_GROUND = "80% lean"  # ground beef as sold by default (the reviewed map's ground beef)
LEAN_ONLY_SHARE = 90  # a ground entry this lean or leaner stands for lean meat
GRADED = re.compile(r"\b(?:choice|select|prime)\b")  # one grade, not "all grades"
POULTRY = "0500"
# Cooked poultry taken apart: the meat is pulled off the bones and the skin left behind.
PULLED_APART = re.compile(r"(?i)\b(?:shredded|shred|pulled|diced|chopped|cubed|cut[- ]up)\b")
# Poultry, pork, beef, lamb and game are shredded or pulled only once cooked.
SHREDDED_MEANS_COOKED = {"0500", "1000", "1300", "1700"}
ANIMAL_GROUPS = MEAT_GROUPS | {"0100", "0700"}
# A line saying the meat still has its bone: weights are as purchased, bone included.
# Plant-based stand-ins are not the animal food SR28 has under the same name.
PLANT_BASED = re.compile(r"(?i)\b(vegan|plant[- ]based|dairy[- ]free|non[- ]dairy|meatless|"
                         r"meat[- ]free|veggie burger|egg[- ]free)\b")


STATE_ORDER_FIRST = {"skinless", *PARTS}
# Variety and cut words a canned sibling may lack: SR28 lists canned salmon as pink or
# sockeye, canned chicken without "broilers or fryers" or a cut.
VARIETY_WORDS = frozenset(stem(w) for w in (
    "atlantic", "pacific", "farmed", "wild", "broilers", "fryers", "or", "meat", "skin",
    "pink", "yellow", "sockeye", "chum", "coho", "chinook", "king", "light", "white", "dark",
    "albacore", "skipjack", "yellowfin", "bluefin", *PARTS))
# A qualifier is honoured by an entry whose words hold one of these sets.
QUALIFIER_WORDS = {
    "gluten_free": [{"gluten", "free"}],
    "low_sodium": [{"low", "sodium"}, {"reduced", "sodium"}, {"less", "sodium"}, {"no", "salt"},
                   {"without", "salt"}, {"sodium", "free"}],
    "reduced_fat": [{"reduced", "fat"}, {"low", "fat"}, {"lowfat"}, {"nonfat"}, {"fat", "free"},
                    {"skim"}, {"light"}],
    "sugar_free": [{"sugar", "free"}, {"no", "sugar"}, {"without", "sugar"}, {"sugarfree"}],
    "whole_grain": [{"whole", "grain"}, {"whole", "wheat"}, {"wholemeal"}],
}
LOW_MILKFAT = re.compile(r"(?<![\d.])[12]% milkfat")
# A qualifier that changes one nutrient only: where SR28 has no entry honouring it, the plain
# entry stands for the food with that nutrient unknown ("no-salt-added tomatoes" are tomatoes
# whose sodium SR28 does not give). Salt itself is not a salt-free food.
ONE_NUTRIENT_QUALIFIERS = {"low_sodium": "sodium"}


class StateResolver:
    """Finds SR28 siblings in a stated state and yields for raw entries without one."""

    def __init__(self, foods: pd.DataFrame, yields: CookingYields,
                 low_fat: set[str] | None = None, watery: set[str] | None = None) -> None:
        """``low_fat``: entries with at most 3 g fat per 100 g (FDA's "low fat"): a
        reduced-fat qualifier asks nothing of them ("fat-free chicken broth"). ``watery``:
        fruits and vegetables under 150 kcal per 100 g (fresh, not already dried like dates
        or raisins)."""
        self.low_fat = low_fat or set()
        self.watery = watery or set()
        keep = ~foods["group_code"].isin(EXCLUDED) & foods["manufacturer"].fillna("").eq("")
        kept = foods.loc[keep, ["ndb_no", "description", "group_code"]]
        self.description = dict(zip(foods["ndb_no"], foods["description"], strict=True))
        self.by_description = {text: ndb for ndb, text in self.description.items()}
        self.group = dict(zip(foods["ndb_no"], foods["group_code"], strict=True))
        self.refuse = {}
        if "refuse" in foods:
            self.refuse = {ndb: (float(value), str(what)) for ndb, value, what in
                           zip(foods["ndb_no"], foods["refuse"], foods["refuse_description"],
                               strict=True)}
        self.by_head: dict[str, list[tuple[str, str]]] = {}
        self.by_category: dict[str, list[tuple[str, str]]] = {}
        for ndb, text in zip(kept["ndb_no"], kept["description"], strict=True):
            self.by_head.setdefault(_head(text), []).append((ndb, text))
            self.by_category.setdefault(text.split(",")[0].lower(), []).append((ndb, text))
        self.yields = yields

    def choose(self, ndb_no: str, states: list[str], line: str = "") -> StateChoice:
        """The entry for ``ndb_no`` in the line's state (first state that has a sibling);
        words of ``line`` break ties between siblings ("frozen, unsweetened")."""
        states = implied_states(self.group.get(ndb_no), states, self.description.get(ndb_no, ""))
        if "drained" in states and SOAKED.search(line):
            # "dried chickpeas, soaked and drained": the soak is drained (the matched name
            # may already have used the word "dried")
            states = [s for s in states if s != "drained"]
        current, problem, unknown = self._qualified(
            self._lean(self._ground_cut(self._whole_cut(ndb_no, line), line), states), states, line)
        if problem:
            return StateChoice(current, self.description[current], None, problem=problem)
        choice = self._meat_only(self._in_state(current, states, line), line)
        return replace(choice, unknown=unknown) if unknown and not choice.problem else choice

    def _meat_only(self, choice: StateChoice, line: str) -> StateChoice:
        """Cooked poultry taken apart ("2 cups shredded cooked chicken", "diced cooked
        turkey") is its meat: the skin stays behind with the bones. SR28's meat-only entry in
        the same cooking, where the line does not mention the skin."""
        description = choice.description
        if self.group.get(choice.ndb_no) != POULTRY or "meat and skin," not in description \
                or choice.yield_factor is not None or not PULLED_APART.search(line) or \
                re.search(r"(?i)\bskin\b", line):
            return choice
        only = description.replace("meat and skin,", "meat only,")
        found = self.by_description.get(only) or \
            self.by_description.get(only.replace("meat only, cooked,", "meat only,"))
        if found is None or not COOKING_WORDS & words(description):
            return choice
        return replace(choice, ndb_no=found, description=self.description[found])

    def _in_state(self, current: str, states: list[str], line: str) -> StateChoice:
        """The sibling of ``current`` in the line's state, or a yield for a raw entry."""
        chosen = None
        wanted = self._wanted(current, states)
        for state in wanted:
            found = current if words(self.description[current]) & set(STATE_WORDS[state]) \
                else self._sibling(current, state, states, words(line)) or \
                (self._sibling(current, state, states, words(line), VARIETY_WORDS)
                 if state == "canned" else None)
            if found:
                current, chosen = found, state
                if state in STATE_ORDER_FIRST:  # cut and skin first, then the cooking state
                    continue
                break
        description = self.description[current]
        preserved = {"dried", "smoked"} & set(wanted) - words(description)
        dried_produce = "dried" in preserved and current in self.watery
        if preserved and chosen is None and (self.group.get(current) in MEAT_GROUPS or
                                             dried_produce):
            # dried or smoked fish and meat, dried fruit and vegetables, are other foods than
            # the fresh entry (water gone: "dried cherries" are not raw cherries)
            return StateChoice(current, description, None, problem=f"no SR28 entry for "
                               f"{sorted(preserved)[0]} {description!r}")
        if self.is_raw(description) and COOKED_STATES & set(states):
            factor, where = self.yields.factor(self.group[current])
            return StateChoice(current, description, chosen, factor, where)
        return StateChoice(current, description, chosen)

    def closest_relatives(self, ndb_no: str) -> list[str]:
        """Other entries of the same food (same head), those sharing most words first: where
        an entry lacks a portion, its nearest relative's is the same food's."""
        own = words(self.description.get(ndb_no, ""))
        needed = own - RELATIVE_IGNORED
        return [other for other in self.same_head(ndb_no)
                if needed <= words(self.description[other])
                and not (words(self.description[other]) - own) & NEW_FORM_WORDS]

    def same_head(self, ndb_no: str) -> list[str]:
        """Other entries of the same head ("Bread, italian" -> the other breads), those sharing
        most words first: the kind of food whose cut pieces (a cup of cubes, of crumbs) weigh
        alike where the entry itself has no such portion."""
        description = self.description.get(ndb_no)
        if description is None:
            return []
        own = words(description)
        found = [(len(own & words(text)), other)
                 for other, text in self.by_head.get(_head(description), []) if other != ndb_no]
        return [other for _, other in sorted(found, key=lambda r: (-r[0], r[1]))]

    def same_category(self, ndb_no: str) -> list[str]:
        """The entry's own head, then the other entries of its SR28 category ("Cheese,
        romano" -> the other cheeses), those sharing most words first."""
        description = self.description.get(ndb_no)
        if description is None:
            return []
        head = self.same_head(ndb_no)
        taken = {ndb_no, *head}
        own = words(description)
        found = [(len(own & words(text)), other)
                 for other, text in self.by_category.get(description.split(",")[0].lower(), [])
                 if other not in taken]
        return head + [other for _, other in sorted(found, key=lambda r: (-r[0], r[1]))]

    def _qualified(self, ndb_no: str, states: list[str], line: str
                   ) -> tuple[str, str | None, tuple[str, ...]]:
        """The entry honouring every qualifier on the line (gluten-free, low-sodium,
        reduced-fat, sugar-free, whole-grain), from the same kind of food; or a problem when
        SR28 has none (gluten-free flour is not wheat flour). A one-nutrient qualifier SR28
        has no entry for keeps the entry and names the nutrient it leaves unknown."""
        current = ndb_no
        unknown: list[str] = []
        asked = {s.split(":")[1] for s in states if s.startswith("qual:")}
        for state in states:
            if not state.startswith("qual:"):
                continue
            name = state.split(":")[1]
            if _honours(self.description[current], name) or \
                    (name == "reduced_fat" and current in self.low_fat):
                continue
            found = self._honouring(current, name, line, asked)
            if found is None and name in ONE_NUTRIENT_QUALIFIERS and \
                    not self.description[current].startswith("Salt,"):
                unknown.append(ONE_NUTRIENT_QUALIFIERS[name])
                continue
            if found is None:
                label = name.replace("_", "-")
                return current, f"no SR28 entry for {label} {self.description[current]!r}", ()
            current = found
        return current, None, tuple(unknown)

    def _honouring(self, ndb_no: str, name: str, line: str,
                   asked: set[str] | frozenset[str] = frozenset()) -> str | None:
        """The same-head entry that honours qualifier ``name`` and keeps most of the entry's
        words ("Wheat flour, white, ..." -> "Wheat flour, whole-grain"), and no qualifier the
        line did not ask for (unsalted butter is not light unsalted butter); a fat share on
        the line ("2% cottage cheese") must be the entry's."""
        description = self.description[ndb_no]
        original = words(description)
        line_words = words(line)
        shares = {f"{n}%" for n in re.findall(r"(?<![\d.])(\d+(?:\.\d+)?)\s*%", line)}
        fat_free = bool(FAT_FREE.search(line.lower()))
        best: tuple[float, str] | None = None
        for other, text in self.by_head.get(_head(description), []):
            found = words(text)
            if other == ndb_no or not _honours(text, name):
                continue
            if any(_honours(text, extra) and not _honours(description, extra)
                   for extra in set(QUALIFIER_WORDS) - asked - {name}):
                continue
            if (found & FLAVOR_WORDS) - original - line_words:
                continue  # fat-free milk is not fat-free chocolate milk
            cooked_mismatch = bool(found & COOKING_WORDS) != bool(original & COOKING_WORDS)
            score = len(original & found) + 1.5 * len((found - NEUTRAL_WORDS) & line_words) - \
                0.3 * len(found - original) - 3 * cooked_mismatch + \
                10 * any(share in text for share in shares) + \
                5 * bool(fat_free and FAT_FREE.search(text.lower()))
            if best is None or (score, other) > best:
                best = (score, other)
        return None if best is None else best[1]

    def _whole_cut(self, ndb_no: str, line: str) -> str:
        """Meat the line neither grinds nor minces ("1 kg lean beef, cut into cubes") is not
        SR28's ground meat that its name found: the same meat's raw composite of retail cuts,
        lean only for a lean (90 % and over) ground entry, lean and fat otherwise, the least
        trimmed of fat for lean and fat, the most for lean only."""
        description = self.description.get(ndb_no, "")
        if not line or self.group.get(ndb_no) not in MEAT_GROUPS or \
                not GROUND_ENTRY.search(description) or grinds_the_food(line):
            return ndb_no
        share = re.search(r"(\d+)% lean", description)
        lean_only = share is not None and int(share.group(1)) >= LEAN_ONLY_SHARE
        wanted = "separable lean only" if lean_only else "separable lean and fat"
        found = [(_trim_rank(text, lean_only), bool(GRADED.search(text)), len(text), other)
                 for other, text in self.by_head.get(_head(description), [])
                 if "composite of trimmed retail cuts" in text and wanted in text and
                 self.is_raw(text)]
        return min(found)[-1] if found else ndb_no

    def _ground_cut(self, ndb_no: str, line: str) -> str:
        """Meat of no named cut that the line grinds or minces ("1 lb ground veal", "¾ lb
        veal, finely minced", "minced lamb") is SR28's ground meat of the same kind, not the
        composite of retail cuts its name found: the usual 80 % lean for beef (a stated
        leanness then chooses another)."""
        description = self.description.get(ndb_no, "")
        if not line or self.group.get(ndb_no) not in MEAT_GROUPS or \
                "composite of trimmed retail cuts" not in description or \
                not grinds_the_food(line):
            return ndb_no
        found = [(USUAL_GROUND not in text, len(text), other)
                 for other, text in self.by_head.get(_head(description), [])
                 if GROUND_ENTRY.search(text) and self.is_raw(text)]
        return min(found)[-1] if found else ndb_no

    def _lean(self, ndb_no: str, states: list[str]) -> str:
        """The entry with the line's lean share ("90/10 beef mince" -> 90% lean), if any."""
        lean = next((s.split(":")[1] for s in states if s.startswith("lean:")), None)
        description = self.description[ndb_no]
        if lean is None or f"{lean}% lean" in description or "% lean" not in description:
            return ndb_no
        wanted = re.sub(r"\d+% lean meat / \d+% fat", f"{lean}% lean meat / {100 - int(lean)}% fat",
                        description)
        return next((other for other, text in self.by_head.get(_head(description), [])
                     if text == wanted), ndb_no)

    def edible_share(self, ndb_no: str, states: list[str]) -> tuple[float, str] | None:
        """For a bone-in meat (the line's "bone_in" state) weighed as purchased: the edible
        share from SR28's refuse (bone) for the entry, and how it was found; None when it
        does not apply."""
        if self.group.get(ndb_no) not in MEAT_GROUPS or "bone_in" not in states:
            return None
        refuse, what = self.refuse.get(ndb_no, (0.0, ""))
        bone = bone_share(refuse, what)
        source = f"SR28 bone {bone:g} % of {refuse:g} % refuse ({what})"
        if bone <= 0:  # SR28 gives no bone for this cut: the plainest entry of its kind
            fallback = self._plainest_with_bone(ndb_no)
            if fallback is None:
                return None
            bone = bone_share(*self.refuse[fallback])
            source = f"SR28 bone {bone:g} % of {self.description[fallback]!r} ({fallback}); " \
                     "the entry itself gives none"
        return 1 - bone / 100, source

    def _plainest_with_bone(self, ndb_no: str) -> str | None:
        """The same-head entry with a bone refuse and the fewest words."""
        found = [(len(words(text)), other) for other, text in
                 self.by_head.get(_head(self.description[ndb_no]), [])
                 if bone_share(*self.refuse.get(other, (0.0, ""))) > 0]
        return min(found)[1] if found else None

    def plant_based_mismatch(self, ndb_no: str, line: str) -> bool:
        """A vegan / plant-based / dairy-free line matched to an animal food."""
        return self.group.get(ndb_no) in ANIMAL_GROUPS and \
            bool(PLANT_BASED.search(own_text(line))) \
            and not words(self.description[ndb_no]) & {"soy", "imitation", "vegetarian",
                                                       "meatless", "substitute", "almond",
                                                       "coconut", "rice", "oat"}

    def is_raw(self, description: str) -> bool:
        """An uncooked entry: says raw, dry or uncooked, and no cooking word."""
        found = words(description)
        return bool(found & RAW_WORDS) and not found & {"cooked", "canned", "boiled",
                                                        "roasted", "fried", "baked"}

    def is_cooked(self, description: str) -> bool:
        """Cooked by moist or dry heat; not a baked good or a prepared product, whose baked
        or prepared state is the one it is used in (a baked pie crust, prepared pudding), nor
        dry- or oil-roasted nuts."""
        product = re.sub(r"(?i)\b(?:dry|oil)[- ]roasted\b", " ", description)
        return bool(words(product) & (COOKING_WORDS - {"prepared", "baked"}))

    def _wanted(self, ndb_no: str, states: list[str]) -> list[str]:
        wanted = [s for s in ("canned", "boiled", "roasted", "grilled", "fried", "cooked",
                              "frozen", "dried", "smoked") if s in states]
        found = words(self.description[ndb_no])
        named = words(re.sub(r"\([^)]*\)", " ", self.description[ndb_no]))
        joined = self.description[ndb_no].lower().replace(" ", "")  # "rib eye" is ribeye
        parts = [p for p in PARTS if f"part:{p}" in states and p not in named and p not in joined]
        if "skinless" in states and "skin" in found:
            wanted.insert(0, "skinless")
        if "raw" in states and not wanted and found & COOKING_WORDS:
            wanted.append("raw")  # "macaroni (uncooked)" matched to a cooked entry
        if "dried" in wanted and self.group.get(ndb_no) == LEGUMES and \
                found & (COOKING_WORDS | {"canned"}):
            # dried beans are SR28's raw mature seeds ("dried chickpeas" matched to canned)
            wanted[wanted.index("dried")] = "raw"
        if self.group.get(ndb_no) in MEAT_GROUPS:
            wanted = parts[:1] + wanted
        if "drained" in states and self.group[ndb_no] in CANNED_GROUPS \
                and "canned" not in wanted and not DRAINED_OTHERWISE & set(states):
            # "2 cups cooked adzuki beans, drained", "dried chickpeas, soaked and drained":
            # the pot or the soak was drained, not a can
            wanted.insert(0, "canned")
        if "drained" in states and "liquid" in found:
            wanted.insert(0, "drained")  # "canned, solids and liquids" -> "drained solids"
        return wanted

    def _sibling(self, ndb_no: str, state: str, states: list[str],
                 line_words: set[str], variety: frozenset[str] = frozenset()) -> str | None:
        """Same head and the same distinguishing words, plus a word of ``state``; words in
        ``variety`` may differ (canned salmon is pink or sockeye, not Atlantic farmed)."""
        description = self.description[ndb_no]
        base = words(description) - NEUTRAL_WORDS - variety
        # words only in a parenthesised aside ("Waterchestnuts, chinese, (matai), raw") may be
        # missing from a sibling that adds no words of its own but the state's
        aside = base - words(re.sub(r"\([^)]*\)", " ", description))
        best: tuple[float, str] | None = None
        for other, text in self.by_head.get(_head(description), []):
            found = words(text)
            joined_cut = state in PARTS and state in text.lower().replace(" ", "")
            oil_roasted = state == "fried" and {"oil", "roasted"} <= found  # fried nuts
            if other == ndb_no or not (found & set(STATE_WORDS[state]) or joined_cut or
                                       oil_roasted):
                continue
            if state == "fried" and found & MOIST_HEAT and not MOIST_HEAT & line_words:
                continue
            if state == "raw" and found & COOKING_WORDS:
                continue
            if "wild" in found and "wild" not in base and "wild" not in line_words:
                continue  # a wild duck's breast is not a farmed duck's
            if state == "drained" and "liquid" in found:
                continue
            if {"on", "cob"} <= found and not EAR_WORDS & line_words:
                continue  # "1 cup frozen corn" is kernels, not SR28's frozen corn on the cob
            if state == "frozen" and found & SWEETENED and not SWEETENED & line_words:
                continue  # frozen fruit is the fruit; only a line that says so is sweetened
            missing = base - found - (COOKING_WORDS if state == "raw" else set()) - \
                ({"liquid"} if state == "drained" else set())
            if missing and missing <= aside and not (found - words(description) - NEUTRAL_WORDS
                                                     - set(STATE_WORDS[state])):
                missing = set()  # only the raw entry's aside differs ("(matai)")
            if state not in PARTS and (missing - {"skin", "and"} or
                                       (missing and state != "skinless")):
                continue
            score = _preference(found, base, state, states, line_words) + \
                0.5 * len(words(description) & found) - 0.1 * len(found) + \
                1.5 * len((found - NEUTRAL_WORDS) & line_words) - \
                5 * _adds_a_food(text, line_words) + \
                (4 if joined_cut and not found & set(STATE_WORDS[state]) else 0)  # "rib eye"
            if best is None or (score, other) > best:
                best = (score, other)
        return None if best is None else best[1]


# Words of an SR28 entry packed or frozen with sugar.
SWEETENED = frozenset({"sweetened", "syrup", "sugar"})
LEGUMES = "1600"
SOAKED = re.compile(r"(?i)\b(?:dried|soaked|soak)\b")
# States that say what was drained when it is not a can.
DRAINED_OTHERWISE = frozenset({"cooked", "boiled", "dried", "raw", "frozen"})
# Words that ask for corn on the cob.
EAR_WORDS = frozenset({"cob", "cobs", "ear", "ears"})


# Fats sold shredded and raw: "shredded suet" is no cooked meat.
RAW_FATS = re.compile(r"(?i)\b(?:suet|lard|fatback)\b")


def implied_states(group: str | None, states: list[str], description: str = "") -> list[str]:
    """The line's states with what they imply for the food's group: shredded or pulled meat
    is cooked meat ("2 cups shredded chicken" is not raw chicken by the cup); shredded suet
    or lard is the raw fat, sold shredded."""
    if "shredded" in states and group in SHREDDED_MEANS_COOKED and "raw" not in states \
            and not COOKED_STATES & set(states) and not RAW_FATS.search(description):
        return sorted({*states, "cooked"})
    return states


# Grains and seeds without gluten of their own: a gluten-free one ("rolled oats (gluten-free)",
# certified free of wheat contamination) is the same food as SR28's entry.
GLUTEN_FREE_FOODS = re.compile(r"^(?:Cereals, oats|Oats?|Oat flour|Rice|"
                               r"Wild rice|Corn|Cornmeal|Corn flour|Quinoa|Buckwheat|Millet|"
                               r"Amaranth|Sorghum|Teff|Tortillas, ready-to-bake or -fry, corn)\b")


def _honours(description: str, name: str) -> bool:
    found = words(description)
    if name == "gluten_free" and GLUTEN_FREE_FOODS.match(description):
        return True
    if name == "reduced_fat" and LOW_MILKFAT.search(description):
        return True  # "1% milkfat", not the 1 of "1.5 ounce prepared with 1/2 cup milk"
    return any(need <= found for need in QUALIFIER_WORDS[name])


def bone_share(refuse: float, what: str) -> float:
    """The bone part of an SR28 refuse: the largest "NN% bone" / "bone ... NN%" share where
    the description itemises ("32% bone, 12% skin"), else the whole refuse when it is bone."""
    text = what.lower()
    parts = [float(m.group(1) or m.group(2)) for m in
             re.finditer(r"(\d+(?:\.\d+)?)\s*%\s*bone|bone[^,%]*?(\d+(?:\.\d+)?)\s*%", text)]
    if parts:
        return min(max(parts), refuse)
    return refuse if "bone" in text else 0.0


# Words in which an entry and its relative may differ and still be the same food for a
# portion: state, fat level, sweetening, colour (a cup of yellow pepper weighs as a red one's).
RELATIVE_IGNORED = NEUTRAL_WORDS | {stem(w) for w in (
    "cooked", "boiled", "roasted", "baked", "steamed", "microwaved", "unprepared",
    "whole", "milk", "fat", "reduced", "low", "lowfat", "nonfat", "skim", "free", "part",
    "not", "sweetened", "unsweetened", "plain", "light", "lite", "flaked", "packaged",
    "shredded", "red", "green", "yellow", "orange", "white", "black", "brown", "purple",
    "golden")}


# Words of a relative in another physical form (a powder made up into a drink).
NEW_FORM_WORDS = {stem(w) for w in ("prepared", "reconstituted", "diluted", "water")}


# SR28 first words that name a category; the food is the next part ("Soup, vegetable broth"
# and "Soup, chunky vegetable" are two foods, not states of one).
CATEGORY_HEADS = {"soup", "sauce", "beverages", "cereals", "snacks", "spices", "candies",
                  "cookies", "crackers", "nuts", "seeds", "salad dressing", "syrups",
                  "sweeteners", "oil", "leavening agents", "alcoholic beverage", "pie fillings",
                  "puddings", "toppings", "desserts", "cheese", "fish", "mollusks",
                  "crustaceans", "game meat"}


def grinds_the_food(line: str) -> bool:
    """The line grinds or minces its food itself ("ground", "minced", "mince" before its name
    or right after a comma or in parentheses: see GRINDS_FIRST_CLAUSE), or makes a dish of
    ground meat (burgers, meatballs); "1 lb beef with ground pepper" does not."""
    text = re.sub(r"\([^)]*\)", " ", own_text(line))  # "1½ lb (680 g) ground beef"
    return bool(GRINDS_FIRST_CLAUSE.search(text) or GRINDS_AFTER.search(line) or
                GROUND_DISH.search(text))


def _trim_rank(description: str, lean_only: bool) -> int:
    """Fat trim order of a composite entry: 0" first for lean only, 1/8" first otherwise
    (the trim the generic beef entry has)."""
    trims = ['0" fat', '1/8" fat', '1/4" fat']
    order = trims if lean_only else [trims[1], trims[2], trims[0]]
    return next((i for i, trim in enumerate(order) if trim in description), len(order))


def _head(description: str) -> str:
    parts = description.lower().split(",")
    head = parts[0] if parts[0].strip() not in CATEGORY_HEADS else ",".join(parts[:2])
    return " ".join(sorted(words(head)))


# Words of an SR28 entry prepared as another dish than the plain food in a state.
PREPARED_WORDS = frozenset(stem(w) for w in ("pickled", "harvard", "marinated", "spiced",
                                             "creamed", "glazed", "candied", "seasoned"))
# "Fat-free", "nonfat" and "skim" ask for the fat-free entry, not any reduced-fat one.
FAT_FREE = re.compile(r"fat[- ]?free|non[- ]?fat|(?<!part-)(?<!part )(?<!semi-)(?<!semi )\bskim")
# Flavours an entry may add to a food: another product than the plain one.
FLAVOR_WORDS = frozenset(stem(w) for w in (
    "chocolate", "vanilla", "strawberry", "coffee", "mocha", "caramel", "banana", "cherry",
    "lemon", "orange", "peanut", "honey", "maple", "cinnamon", "raisin", "fruit", "blueberry",
    "raspberry", "peach", "apple", "cheese", "garlic", "onion", "herb", "pepper", "bacon"))


def _adds_a_food(description: str, line_words: set[str]) -> bool:
    """The description adds a food the line does not name ("Tomatoes, ..., canned, with
    green chilies" for a can of plum tomatoes)."""
    for part in description.lower().split(",")[1:]:
        part = part.strip()
        if part.startswith("with "):
            added = words(part) - NEUTRAL_WORDS - {"with", "added"}
            if added and not added <= line_words:
                return True
    return False


def _preference(found: set[str], base: set[str], state: str, states: list[str],
                line_words: set[str] | frozenset[str] = frozenset()) -> float:
    """Higher is better: the state's first word, drained solids when drained, no added salt,
    unsweetened unless the line says otherwise ("peaches in heavy syrup"), few extra words."""
    score = 0.0
    if STATE_WORDS[state][0] in found:
        score += 4
    if "drained" in states and "drained" in found:
        score += 2
    elif state == "canned" and "drained" in found:
        score -= 1.5  # a can the line does not drain is its solids and liquids
    if "rinsed" in found and "rinsed" not in states:
        score -= 1
    if state in PARTS and {"lean", "only"} <= found and "lean" not in line_words:
        score -= 6  # a cut as bought keeps its fat: SR28's lean-only analysis is trimmed of it
    if "liquid" in found and "solid" not in found and not {"liquid", "juice"} & line_words:
        score -= 4  # "canned clams" are the clams, not SR28's canning liquid alone
    if "salt" in found and "without" not in found:
        score -= 2
    if "low" in found or "sodium" in found:
        score -= 2
    if found & {"cooked", "boiled", "stewed", "roasted", "fried"} - line_words and \
            state in ("frozen", "dried", "canned", "skinless"):
        score -= 3
    if "fried" in found and state != "fried":
        score -= 1
    if state in PARTS and found & COOKING_WORDS:
        score -= 3
    if (found & PREPARED_WORDS) - line_words:
        score -= 2  # "2 cans beets" are canned beets, not pickled or Harvard beets
    sweet = {"sweetened", "syrup", "heavy", "light"}
    if found & sweet and state in ("frozen", "canned") and not sweet & line_words:
        score -= 1.5
    extra = found - base - NEUTRAL_WORDS - set(STATE_WORDS[state]) - (sweet & line_words)
    return score - len(extra)
