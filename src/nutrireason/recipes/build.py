"""Build a resolved recipe corpus: parse, match, weigh, compute nutrition, keep or exclude.

Outputs (deterministic: same inputs give byte-identical files): ``recipes.jsonl`` (every
recipe with its resolved ingredients and nutrition or exclusion reason), ``recipes.parquet``
(one flat row per recipe), ``foods.parquet`` + ``food_ingredients.parquet`` (kept recipes in the
shared food shape), ``quality.json`` and ``manifest.json``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel

from nutrireason import __version__
from nutrireason.recipes.backoff import (
    backoff_names,
    bare_name,
    collective_example,
    kind_name,
    packless_name,
    with_forms,
)
from nutrireason.recipes.coverage import (
    LineEnergy,
    UnresolvedEnergy,
    energy_share,
)
from nutrireason.recipes.foods import recipe_foods
from nutrireason.recipes.grams import (
    CHANGED_STATE,
    COUNTED_PIECE,
    CUT_PORTIONS,
    NO_FALLBACK_UNITS,
    Weighed,
    Weigher,
    portion_words,
    small_kind_foods,
    whole_item,
)
from nutrireason.recipes.lines import grams_per_counted_piece, paren_volume, stated_drained
from nutrireason.recipes.load import CorpusLoad
from nutrireason.recipes.match import (
    Match,
    Matcher,
    name_words,
    names_the_food,
    product_of_food,
    stem,
)
from nutrireason.recipes.nutrition import recipe_nutrition
from nutrireason.recipes.parse import (
    BONELESS,
    MASS_UNITS,
    VOLUME_UNITS,
    ParsedLine,
    parse_in_order,
    parse_line,
    unit_kind,
    without_qualifiers,
)
from nutrireason.recipes.proxies import PROXY_RULE, Proxy, find_proxy, load_proxies, proxy_share
from nutrireason.recipes.rules import RecipeRules, load_ingredient_map, load_recipe_rules
from nutrireason.recipes.schema import (
    RecipeNutrition,
    RecipeRecord,
    ResolvedIngredient,
    ResolvedRecipe,
)
from nutrireason.recipes.standard_weights import (
    STANDARD_WEIGHT_METHOD,
    StandardWeight,
    find_standard,
    load_standard_weights,
)
from nutrireason.recipes.state import (
    COOKED_STATES,
    MEAT_GROUPS,
    StateResolver,
    load_cooking_yields,
)
from nutrireason.recipes.state import words as description_words
from nutrireason.recipes.units import convert
from nutrireason.recipes.words import fold
from nutrireason.sources.sr28 import Sr28
from nutrireason.standards import Standards, load_standards, standards_dir
from nutrireason.storage import (
    atomic_path,
    input_fingerprints,
    write_json_atomic,
    write_parquet_atomic,
)

STATED_DRAINED_METHOD = "stated_drained_weight"

# SR28 groups of crisp, dry foods (breakfast cereals, baked products, snacks): crushed, they
# pack a cup far more densely than whole.
CRISP_GROUPS = {"0800", "1800", "2500"}
# "crushed" (not "slightly crushed") before the food: measured after crushing.
CRUSHED_BEFORE_FOOD = re.compile(r"(?i)(?<!slightly )(?<!lightly )(?<!coarsely )"
                                 r"(?<!partially )\bcrushed\b(?![^(]*\))")


def no_carbohydrate_no_sugar(nutrients: pd.DataFrame) -> dict[str, dict[str, float]]:
    """SR28's nutrients per 100 g by food, where a food with no carbohydrate (0 g: meat, fish,
    eggs, oils) has no sugar and no fiber either when SR28 leaves those blank (sugars and
    fiber are part of carbohydrate): a blank would count the food's mass as unknown and
    spread the other ingredients' sugar over it (562 such foods, raw shrimp among them)."""
    table = nutrients.set_index("ndb_no")
    none = table["carbohydrates"] == 0
    for name in ("sugar", "fiber"):
        table.loc[none & table[name].isna(), name] = 0.0
    return table.to_dict(orient="index")


# SR28's whole birds ("Turkey, whole, meat and skin, raw"): weighed as purchased, with bone.
WHOLE_BIRD = re.compile(r"^(?:Turkey|Chicken|Duck|Goose|Cornish game hens?)[^,]*, whole, meat\b")
# SR28 portions already without bone: "1 wing, bone removed", "1 chop without refuse",
# "1 unit (yield from 1 lb ready-to-cook chicken)".
PORTION_OFF_THE_BONE = re.compile(r"(?i)bone|refuse|edible|meat only|yield")
# Words that say a recipe (or an oil line) fries: "deep-fry", "fry until golden", "for frying".
FRYING = re.compile(r"(?i)\bdeep[- ]?fr|\bfr(?:y|ies|ied|ying)\b")
# A food the recipe makes from another of its lines ("1/2 cup browned butter" after "1 1/2 cups
# butter", "1 cup reserved broth" after "4 cups broth"): its lines use the earlier line's food.
MADE_IN_THE_KITCHEN = re.compile(r"(?i)\b(?:browned|brown(?:ed)?[- ]butter|clarified|reserved|"
                                 r"rendered)\b")


LEGUMES = "1600"
# How SR28 ends a canned legume's description ("Beans, black turtle, mature seeds, canned").
CANNED_PACK = re.compile(r", canned(?:, solids and liquids?|, plain)?$")


def counted_earlier(items: list[ResolvedIngredient]) -> None:
    """Lines of a food the recipe makes from an earlier line's food (the same SR28 entry or
    the same last word: butter) weigh nothing of their own while together they need no more
    than that line holds: "1 1/2 cups unsalted butter" browned, then used as "1/2 cup browned
    butter" twice and "6 tablespoons browned butter". More than the earlier line holds is a
    food of its own."""
    later: dict[int, list[ResolvedIngredient]] = {}
    for index, item in enumerate(items):
        if not (item.grams and item.ndb_no and MADE_IN_THE_KITCHEN.search(item.line)):
            continue
        source = next((n for n in range(index - 1, -1, -1) if _same_food(items[n], item)
                       and not MADE_IN_THE_KITCHEN.search(items[n].line)), None)
        if source is not None:
            later.setdefault(source, []).append(item)
    for source, uses in later.items():
        held = items[source].grams or 0.0
        if sum(use.grams or 0.0 for use in uses) > held * 1.05:
            continue
        for use in uses:
            use.grams = 0.0
            use.grams_method = f"made from {items[source].line!r}, counted there"


def _same_food(earlier: ResolvedIngredient, item: ResolvedIngredient) -> bool:
    if not (earlier.grams and earlier.ndb_no):
        return False
    head = (earlier.food or "").split()[-1:]
    return earlier.ndb_no == item.ndb_no or bool(head) and head == (item.food or "").split()[-1:]


# An amount given as a share of another line's: "about ¾ the weight of Mozzarella cheese as
# the tomato", "twice the volume of water as rice" (the food after "of", the other after "as").
RELATIVE_AMOUNT = re.compile(r"(?i)\bthe\s+(?:weight|amount|volume)\s+of\s+(?P<food>[a-z][a-z -]*?)"
                             r"\s+as\s+(?:the\s+)?(?P<other>[a-z][a-z -]*[a-z])")


# Sugars are part of carbohydrate: a recipe's sugar may pass its carbohydrate by rounding
# (5 % and half a gram per 100 g), not more.
SUGAR_OVER_CARBOHYDRATE = 1.05
# An oil line's own purpose: frying in it ("for frying", "to deep-fry", "for shallow frying").
FOR_FRYING = re.compile(r"(?i)\b(?:for|to)\s+(?:the\s+)?(?:deep|shallow|pan)?[- ]?"
                        r"fr(?:y|ying)\b")
# A quarter cup of oil (SR28: 218 g a cup): from here oil for frying is a layer in the pan.
FRYING_LAYER_GRAMS = 50.0
# About a cup of oil: a line that says it is for frying is a bath from here, and any oil line
# this heavy is flagged for review.
CUP_OF_OIL_GRAMS = 200.0
# A fruit or vegetable weighed as bought and then trimmed, peeled or cored by the line's own
# instruction (after the food: "1 pound asparagus, trimmed of tough ends", "2 lb apples
# (peeled and cored)"): what is eaten is SR28's edible part. "1 lb peeled carrots" and "2
# bananas (200 g, previously peeled)" are weighed peeled.
TRIMMED_AFTER = re.compile(r"(?i)(?<!previously )(?<!already )(?<!pre-)\b"
                           r"(?:trimmed|peeled|cored|seeded|de-?seeded|stemmed|"
                           r"hulled|pitted|stoned|husked|ends\s+(?:removed|snapped)|"
                           r"tough\s+ends)\b")
PRODUCE_GROUPS = frozenset({"0900", "1100"})
# the line trims a cut's fat after weighing it: SR28's separable lean is what is eaten
FAT_TRIMMED = re.compile(r"(?i)\b(?:(?:excess\s+|visible\s+)?fat\s+(?:trimmed|removed|cut\s+off|"
                         r"discarded)|trimmed\s+of\s+(?:all\s+|any\s+|the\s+|excess\s+|"
                         r"visible\s+)*fat)\b")
PACKAGED = re.compile(r"(?i)\b(?:jars?|cans?|tins?|packages?|pkgs?|bags?|boxes|cartons?)\b")


def after_food(parsed: ParsedLine) -> str:
    """The line's text after its food's last word ("" when the word is not found): what the
    line says to do with the food ("1 lb asparagus, trimmed"), not how it was bought ("330 g
    peeled cooking apples")."""
    words = (parsed.food or "").split()
    found = re.search(rf"(?i)\b{re.escape(words[-1])}\b", parsed.line) if words else None
    return parsed.line[found.end():] if found else ""


# Beef of no named cut cut into cubes, chunks or pieces is the cut sold for stews (SR28's beef
# "chuck for stew", lean and fat), not the composite of every retail cut. Lamb cut up stays the
# composite: SR28's lamb "cubed for stew or kabob" is lean only, trimmed meat as sold, not a
# piece the cook cuts with its fat.
# Meat cut into pieces: SR28's stew meat of the species (by a name the matcher knows), for
# the species alone or the cut the stew entry is made of ("beef chuck": chuck for stew, lean
# and fat as bought). Lamb's stew entry is lean only, trimmed: not a cut cubed at home.
STEW_CUTS = {"beef": ("stew beef", frozenset({"chuck"}))}


def stew_name(meat: str, parts: set[str] = frozenset()) -> str | None:
    """The stew meat's name for a meat cut into pieces, when the line names only its species
    or a cut its stew meat is made of ("beef chuck", the part ``chuck``), else None ("beef
    sirloin")."""
    named = set(meat.lower().split())
    for species, (name, cuts) in STEW_CUTS.items():
        if species in named and (named - {species}) | parts <= cuts:
            return name
    return None
CUBED = re.compile(r"(?i)\b(?:cubes?|cubed|chunks?|stew(?:ing)?|kabobs?|kebabs?|skewer(?:s|ing)?)"
                   r"\b|\bcut\s+(?:in|into)\b[^,;]*\bpieces\b")
NO_BONE = re.compile(r"(?i)\bboneless\b")
BONE_IN = re.compile(r"(?i)\bbone-?\s?in\b|\bon the bone\b|\bwith bones?\b")


def bone_of(text: str) -> str | None:
    """What a line or an SR28 description says of the bone: "boneless", "bone-in" or None."""
    if NO_BONE.search(text):
        return "boneless"
    return "bone-in" if BONE_IN.search(text) else None


def other_bone(line: str, description: str) -> bool:
    """The line and an SR28 description disagree on the bone: "2 boneless pork loin roasts"
    and "Pork, fresh, loin, sirloin (chops or roasts), bone-in", or the other way round."""
    said, described = bone_of(line), bone_of(description)
    return said is not None and described is not None and said != described


def same_bone(line: str, description: str) -> bool:
    """The line and an SR28 description both say boneless, or both bone-in."""
    said = bone_of(line)
    return said is not None and said == bone_of(description)


# A fish bought whole (head, bones and fins on), not fillets or steaks.
WHOLE_FISH = re.compile(r"(?i)\bwhole\b(?![^,]*\b(?:fillets?|filets?|steaks?)\b)")
# An SR28 portion weighing a food in its shell, and lines whose food is out of it already.
IN_SHELL = re.compile(r"(?i)\(with shell\),? yield")
SHELLED = re.compile(r"(?i)\b(?:shucked|shelled|canned|cans?|tins?|jars?|packages?|frozen|"
                     r"bottled|chopped|minced|meat|"
                     r"without (?:the )?shells?|out of (?:the|their) shells?)\b")
# Grams per millilitre of a volume at which a parenthetical mass is the volume's millilitres
# written as grams (a US cup of 237 ml given as 225-260 g), and how far the food's own
# portion must disagree (40 %) for the portion to be believed instead.
MILLILITRES_AS_GRAMS = (0.93, 1.10)
VOLUME_DISAGREES = 1.4
PACKET_UNITS = {"packet", "packets", "envelope", "envelopes", "sachet", "sachets"}
CAN_UNITS = {"can", "cans", "tin", "tins"}
GENERATOR = f"nutrireason {__version__} recipes-build 2"
# Standards files a recipe build depends on: a change to any of them makes a rebuild necessary.
RULE_FILES = ("ingredient_map.yaml", "recipes.yaml", "nutrients.yaml", "cooking_yields.yaml",
              "proxies.yaml", "standard_weights.yaml")


def build_inputs(corpus_file: Path) -> list[Path]:
    """The files a recipe build reads: the corpus and the standards it applies."""
    return [corpus_file, *(standards_dir() / name for name in RULE_FILES)]


# Line states a reviewed name may hold: the reviewer chose the entry for the name as a whole.
REVIEWED_STATES = {"smoked", "dried"}


# FDA "low fat": at most 3 g of fat per reference amount; per 100 g here.
LOW_FAT_GRAMS = 3.0


def low_fat_foods(sr28: Sr28) -> set[str]:
    """SR28 entries with at most 3 g fat per 100 g."""
    table = sr28.nutrients
    return set(table.loc[table["total_fat"] <= LOW_FAT_GRAMS, "ndb_no"])


# Fruit (0900) and vegetable (1100) entries under this energy density are fresh, not dried.
WATERY_KCAL = 150.0


def watery_produce(sr28: Sr28) -> set[str]:
    """Fruit and vegetable entries under 150 kcal per 100 g: a "dried" line is not them."""
    table = sr28.nutrients.merge(sr28.foods[["ndb_no", "group_code"]], on="ndb_no")
    produce = table["group_code"].isin(["0900", "1100"]) & (table["calories"] < WATERY_KCAL)
    return set(table.loc[produce, "ndb_no"])


def reviewed_states(states: list[str], match: Match) -> list[str]:
    """The line's states less a cut or preservation the reviewed name already names: the
    reviewer chose that entry ("sirloin tip roast" is SR28's tip round, not another sirloin;
    "smoked bacon" is bacon, which is smoked)."""
    if match.method not in ("reviewed_map", "reviewed_subphrase") or not match.name:
        return states
    named = name_words(match.name)
    return [s for s in states if not (s.startswith("part:") and s[5:] in named)
            and not (s in REVIEWED_STATES and s in named)]


@dataclass
class Resolver:
    """Everything needed to resolve recipes, loaded once."""

    matcher: Matcher
    weigher: Weigher
    nutrients: dict[str, dict[str, float]]
    rules: RecipeRules
    standards: Standards
    states: StateResolver

    teaspoon_grams: dict[str, float] = field(default_factory=dict)
    piece_grams: dict[str, float] = field(default_factory=dict)
    crushed_cup_grams: float | None = None
    unresolved_energy: UnresolvedEnergy | None = None
    proxies: dict[str, Proxy] = field(default_factory=dict)
    standard_weights: list[StandardWeight] = field(default_factory=list)

    @classmethod
    def from_sr28(cls, sr28: Sr28, ingredient_map: Path | None = None) -> Resolver:
        reviewed = load_ingredient_map(ingredient_map)
        rules = load_recipe_rules()
        proxies = load_proxies()
        return cls(Matcher(sr28.foods, reviewed.names),
                   Weigher(sr28.weights, reviewed.unit_weights, reviewed.weight_overrides,
                           small_kind_foods(sr28.foods)),
                   no_carbohydrate_no_sugar(sr28.nutrients),
                   rules, load_standards(),
                   StateResolver(sr28.foods, load_cooking_yields(), low_fat_foods(sr28),
                                 watery_produce(sr28)),
                   reviewed.teaspoon_grams, reviewed.piece_grams, crushed_cup_grams(sr28),
                   UnresolvedEnergy.from_sr28(rules.unresolved_energy, sr28.nutrients,
                                              sr28.foods),
                   proxies, load_standard_weights())

    def ingredient(self, line: str) -> ResolvedIngredient:
        """Parse, match (in the line's state) and weigh one line."""
        parsed = parse_line(line)
        item = ResolvedIngredient(line=line, kind=parsed.kind, quantity=parsed.quantity,
                                  unit=parsed.unit, food=parsed.food, prep=parsed.prep,
                                  states=parsed.states, rules=parsed.rules,
                                  problem=parsed.problem)
        if parsed.kind == "header" or parsed.problem:
            return item
        match = self._match(parsed, item)
        if match is None:
            item.problem = f"no SR28 food for {parsed.food!r}"
            return item
        if self.states.plant_based_mismatch(match.ndb_no, line):
            item.problem = f"no SR28 food for {parsed.food!r}: the line asks for a plant-based " \
                           f"food, SR28's match is the animal food {match.description!r}"
            return item
        states = reviewed_states(parsed.states, match)
        scored_cooked = self._scored_cooked(match, states)
        choice = self.states.choose(match.ndb_no, [*states, "raw"] if scored_cooked else states,
                                    line)
        if scored_cooked and self.states.is_cooked(choice.description):
            choice = replace(choice, problem=f"SR28 has {choice.description!r} only cooked and "
                                             f"the line names no cooking")
        if choice.problem:
            item.problem = f"no SR28 food for {parsed.food!r}: {choice.problem}"
            return item
        item.ndb_no, item.sr28_description = choice.ndb_no, choice.description
        if choice.unknown:
            item.unknown_nutrients = list(choice.unknown)
            item.rules = [*item.rules, "plain_entry_for_low_sodium"]
        item.match_score, item.match_method = match.score, match.method
        if choice.state and choice.ndb_no != match.ndb_no:
            item.match_method = f"{match.method}+state:{choice.state}"
        if choice.yield_factor is not None:  # recorded even when the line has no grams
            item.yield_factor = choice.yield_factor
        if parsed.kind == "quantified":
            weighed = self._stated_drained(parsed) or self._weigh(parsed, match, choice.ndb_no)
            if parsed.unit_kind == "mass":
                by_volume = self._volume_over_millilitres(parsed, match, choice.ndb_no, weighed)
                if by_volume is not weighed:
                    weighed, item.rules = by_volume, [*item.rules, "grams_are_millilitres"]
            item.grams = None if weighed.grams is None else round(weighed.grams, 3)
            item.grams_method, item.problem = weighed.method, weighed.problem
            self._boned_piece(item, parsed, weighed)
            if choice.yield_factor is not None and item.grams is not None:
                item.grams = round(item.grams / choice.yield_factor, 3)
                item.grams_method = f"{item.grams_method}; cooked->raw yield " \
                                    f"{choice.yield_factor:g} ({choice.yield_source})"
            self._edible_portion(item, parsed)
            self._trimmed_produce(item, parsed)
            self._fat_trimmed(item, parsed)
            self._out_of_shell(item, parsed)
            self._drained_share(item, parsed)
            self._rendered(item)
            self._check_amount(item)
        return item

    def _scored_cooked(self, match: Match, states: list[str]) -> bool:
        """A food found by token scoring in a cooked state for a line that names no cooking
        ("250 g black glutinous rice" scored to the cooked glutinous rice, "deboned mutton"
        to SR28's roasted mutton): the raw entry is wanted, and without one nothing fits.
        Reviewed names chose their entry's state."""
        return match.method == "token_score" and \
            self.states.is_cooked(match.description) and \
            not (COOKED_STATES | {"raw"}) & set(states)

    def _match(self, parsed: ParsedLine, item: ResolvedIngredient) -> Match | None:
        """The line's food; when SR28 has none, the first later "or" alternative that it has
        ("caldo de pollo or chicken stock"), recorded in the line's rules."""
        floor = self.rules.min_match_score.value
        found = self._collective_example(parsed, item)
        if found is not None:
            return found
        meat = re.sub(r"\s+meat$", "", parsed.food or "")  # "lamb or goat meat": lamb meat
        parts = {state.split(":", 1)[1] for state in parsed.states if state.startswith("part:")}
        stew = stew_name(meat, parts) if CUBED.search(parsed.line) else None
        match = self.matcher.match(stew or parsed.food, parsed.unit, parsed.raw_food,
                                   parsed.prep, parsed.line)
        packless = packless_name(parsed.food, parsed.line)
        if packless and not (match and names_the_food(packless, match.description) and
                             not product_of_food(packless, match.description)):
            # "tuna in olive oil" is tuna, not the oil ("tuna in water" is the map's tuna);
            # a food that is nothing without its pack ("crispy chilli in oil") stays as found
            food = self._match(replace(parsed, food=packless, raw_food=None), item)
            if food is not None:
                item.rules = [*item.rules, f"pack_set_aside:{packless}"]
                return food
        if match is not None and match.score >= floor:
            if stew:
                item.rules = [*item.rules, f"stew_cut:{stew}"]
            return match
        if parsed.alternatives:
            # "X or Y" is X: a standard proxy for X comes before Y ("crème fraîche, single
            # cream, or milk" is crème fraîche, read through its proxy)
            own = self._proxy(proxy_names(parsed), item)
            if own is not None:
                return own
        for alternative in parsed.alternatives:
            other = self.matcher.match(alternative, parsed.unit)
            if other is not None and other.score >= floor:
                item.rules = [*item.rules, f"alternative_fallback:{alternative}"]
                return other
        names = [with_forms(name, parsed.food or "")
                 for name in backoff_names(parsed.food, parsed.line, parsed.unit)]
        plain = unqualified_name(parsed)
        if plain and plain not in names:
            names.append(plain)  # "part skim ricotta": ricotta, its state chooses part skim
        for name in names:
            if not self._same_kind(parsed.food, name):
                continue  # "fat (cold gravy or butter)": the fat is butter, not gravy
            other = self.matcher.match(name, parsed.unit, None, parsed.prep, parsed.line)
            if other is not None and other.score >= floor:
                item.rules = [*item.rules, f"name_backoff:{name}"]
                return other
        return self._proxy([*proxy_names(parsed), *names], item)

    def _collective_example(self, parsed: ParsedLine, item: ResolvedIngredient) -> Match | None:
        """A class of foods the line gives examples of is its first example ("leafy greens
        (such as spinach or kale)"), else the example with the class's noun when SR28's food
        names the example ("shredded cheese (such as Monterey Jack)": Cheese, monterey)."""
        example = collective_example(parsed.food, parsed.line)
        if not example or not self._same_kind(parsed.food, example):
            return None
        head = bare_name(parsed.food).split()[-1]
        floor = self.rules.min_match_score.value
        for name in [example, f"{example} {head}"]:
            found = self.matcher.match(name, parsed.unit, None, parsed.prep, parsed.line)
            if found is None or found.score < floor:
                continue
            described = found.description.lower()
            if name != example and not any(word in described for word in example.split()):
                return None  # "ugu vegetables" is not SR28's mixed vegetables
            item.rules = [*item.rules, f"collective_example:{name}"]
            return found
        return None

    def _proxy(self, names: list[str | None], item: ResolvedIngredient) -> Match | None:
        """The standard proxy for the first of ``names`` (the line's name, then its back-off
        names) that has one, marked on the line (``standards/data/proxies.yaml``)."""
        for name in filter(None, names):
            proxy = find_proxy(self.proxies, name)
            description = self.states.description.get(proxy.ndb_no) if proxy else None
            if proxy and description:
                item.rules = [*item.rules, f"{PROXY_RULE}{proxy.name}"]
                return Match(proxy.ndb_no, description, 100.0, "proxy", proxy.name)
        return None

    def _same_kind(self, food: str | None, name: str) -> bool:
        """A back-off name keeps the kind of food the line's own name says, where the words
        say one (``unresolved_energy.groups``: a fat, a cheese, a fish); a powdered food is
        of its powder's kind ("powdered garlic" is a spice), a spread of its own ("mint
        jelly" is a jelly)."""
        assert self.unresolved_energy is not None
        kind = self.unresolved_energy.group(kind_name(food) or "")
        other = self.unresolved_energy.group(name)
        return kind is None or other is None or kind == other

    def _named_density(self, parsed: ParsedLine, match: Match) -> Weighed | None:
        """A volume of a name the reviewed map gives its own grams per teaspoon ("kosher
        salt"), weighed by it."""
        grams = self.teaspoon_grams.get(match.name or "")
        if grams is None or parsed.unit_kind != "volume" or parsed.quantity is None:
            return None
        return Weighed(convert(parsed.quantity, parsed.unit, "teaspoon") * grams,
                       f"reviewed_density:{match.name}={grams:g} g per teaspoon")

    def _named_piece(self, parsed: ParsedLine, match: Match) -> Weighed | None:
        """A count of a name the reviewed map gives its own grams per piece ("2 scotch bonnet
        peppers"), weighed by it."""
        grams = self.piece_grams.get(match.name or "")
        unit = (parsed.unit or "").rstrip("s")
        own_noun = not unit or unit in {"piece", "whole"} or \
            any(word.rstrip("s").startswith(unit) or stem(word) == stem(unit)
                for word in (match.name or "").split())  # "patties" are patties
        if grams is None or parsed.unit_kind != "count" or parsed.quantity is None or \
                not own_noun:
            return None
        return Weighed(parsed.quantity * grams, f"reviewed_piece:{match.name}={grams:g} g")

    def _counted_per_pound(self, parsed: ParsedLine) -> Weighed | None:
        """Shrimp counted with their count per pound ("24 large (15/20) shrimp"): each weighs
        a pound over the count (SR28's "large" shrimp is 7 g; a 15/20 one is 26 g)."""
        each = grams_per_counted_piece(parsed.line)
        if each is None or parsed.unit_kind != "count" or parsed.quantity is None or \
                (parsed.unit or "piece").rstrip("s") not in {"piece", "shrimp", "prawn",
                                                               "scallop"}:
            return None
        return Weighed(parsed.quantity * each, f"count per pound on the line: {each:.1f} g each")

    def _weigh(self, parsed: ParsedLine, match: Match, ndb_no: str) -> Weighed:
        """The line's grams: a reviewed density or piece, a count per pound, else SR28's
        portions (or a relative's)."""
        parsed = counted_cans(parsed)
        found = self._named_density(parsed, match) or self._named_piece(parsed, match) or \
            self._counted_per_pound(parsed) or \
            self._by_relative(parsed, ndb_no, self.weigher.weigh(parsed, ndb_no))
        found = self._crushed_crisp(parsed, ndb_no, found) or found
        return found if found.grams is not None else self._standard(parsed, ndb_no) or found

    def _standard(self, parsed: ParsedLine, ndb_no: str) -> Weighed | None:
        """A count of a unit SR28 does not weigh for this food, by its standard weight
        ("1 bunch parsley", "1 loaf white bread", "1 can coconut milk")."""
        if parsed.unit_kind != "count" or parsed.quantity is None:
            return None
        head = (parsed.food or "").split()[-1:]
        own_noun = bool(head) and (parsed.unit or "").rstrip("s") == head[0].rstrip("s")
        found = find_standard(self.standard_weights, None if own_noun else parsed.unit,
                              ndb_no, self.states.description.get(ndb_no, ""))
        if found is None:
            return None
        return Weighed(parsed.quantity * found.grams,
                       f"{STANDARD_WEIGHT_METHOD}:1 {found.unit}={found.grams:g} g")

    def _crushed_crisp(self, parsed: ParsedLine, ndb_no: str, weighed: Weighed) -> Weighed | None:
        """A volume of a crisp food measured crushed ("1 cup crushed corn flakes", not "1 cup
        corn flakes, crushed", measured whole) whose entry has no crushed cup: crumbs pack
        about three times a cup of flakes (28 g), so it is weighed by the median crushed cup
        SR28 gives its crisp foods (crackers, cookies, chips; see crushed_cup_grams)."""
        method = weighed.method or ""
        if parsed.unit_kind != "volume" or parsed.quantity is None or \
                self.crushed_cup_grams is None or \
                self.states.group.get(ndb_no) not in CRISP_GROUPS or \
                not crushed_before_food(parsed.line, parsed.food) or \
                re.search(r"crushed|crumbs", method):
            return None
        cups = convert(parsed.quantity, parsed.unit, "cup")
        return Weighed(cups * self.crushed_cup_grams,
                       f"crushed_crisp_food: {self.crushed_cup_grams:g} g a cup (median of "
                       "SR28's crushed cups of crisp foods)")

    def _volume_over_millilitres(self, parsed: ParsedLine, match: Match, ndb_no: str,
                                 weighed: Weighed) -> Weighed:
        """"1 ½ cup (360 g) rolled oats", "1.36 kg (48 oz / 6 cups) flour": a mass that is the
        volume's millilitres (240 g a cup, a conversion written as grams or as ounces) on a
        food whose own cup weighs far less or more (SR28: 81 g of oats a cup) is the volume,
        weighed by the food's portion."""
        amount, unit = parsed.replaced or paren_volume(parsed.line) or (0.0, "")
        if weighed.grams is None or unit not in VOLUME_UNITS:
            return weighed
        millilitres = convert(amount, unit, "milliliter")
        if not MILLILITRES_AS_GRAMS[0] <= weighed.grams / millilitres <= MILLILITRES_AS_GRAMS[1]:
            return weighed
        by_volume = replace(parsed, quantity=amount, unit=unit, unit_kind="volume")
        found = self._weigh(by_volume, match, ndb_no)
        if found.grams is None or not (found.method or "").startswith(
                ("sr28_weight", "reviewed_density")) or \
                1 / VOLUME_DISAGREES < found.grams / weighed.grams < VOLUME_DISAGREES:
            return weighed
        return Weighed(found.grams, f"{found.method}; the line's {weighed.grams:g} g is the "
                                    f"{unit}'s millilitres written as grams")

    def _by_relative(self, parsed: ParsedLine, ndb_no: str, weighed: Weighed) -> Weighed:
        """A volume of an entry without a volume portion, weighed by the cup of its closest
        relative that has one (reduced-fat cheddar by cheddar's shredded cup, frozen butternut
        squash by raw butternut's cubes) rather than ingredient-slicer's generic density; a
        count the entry has no piece for, by the relative's piece ("20 frozen cherries" by
        raw cherries' 8 g cherry; "20 large shrimp" by its relative's large ones)."""
        if parsed.unit_kind == "count" and weighed.grams is None and weighed.method is None:
            whole = whole_item(parsed)
            if whole:  # "1 beef tenderloin roast": a relative's roast, never a smaller piece
                return self._relative_weight(parsed, ndb_no, lambda method: bool(re.search(
                    rf"\b{whole}\b", method.split("=")[0]))) or weighed
            piece = (parsed.unit or "").rstrip("s")
            # a part ("2 artichoke hearts") or a container is never a relative's whole
            # medium piece
            medium = None if piece in NO_FALLBACK_UNITS else "medium"
            words = [w for w in (piece, medium, *parsed.size) if w]
            # a line that counts nuts ("12 cashews") by a relative's ounce of counted kernels
            return self._relative_weight(parsed, ndb_no, lambda method: (bool(piece) and any(
                re.search(rf"\b{re.escape(w)}(?:e?s)?\b", method) for w in words)) or
                (not piece and COUNTED_PIECE in method)) or weighed
        if parsed.unit_kind != "volume" or (weighed.method or "").startswith("sr28_weight"):
            return weighed
        return self._relative_weight(parsed, ndb_no, lambda method: method.startswith(
            "sr28_weight") and set(re.findall(r"[a-z]+", method)) & CHANGED_STATE <=
            set(parsed.prep), self._drained_like) or \
            self._cut_like_its_kind(parsed, ndb_no) or weighed

    def _boned_piece(self, item: ResolvedIngredient, parsed: ParsedLine,
                     weighed: Weighed) -> None:
        """A counted piece weighed by a relative that says the line's bone ("2 boneless pork
        loin roasts" by SR28's boneless top loin roast) where the entry says none (the whole
        loin): the piece's entry is the food as well."""
        other = weighed.relative
        if parsed.unit_kind != "count" or other is None or item.ndb_no is None or \
                bone_of(self.states.description[item.ndb_no]) is not None or \
                not same_bone(parsed.line, self.states.description[other]):
            return
        item.ndb_no, item.sr28_description = other, self.states.description[other]
        item.rules = [*item.rules, "boned_piece"]

    def _drained_like(self, ndb_no: str) -> list[str]:
        """The closest relatives whose cup weighs like the entry's: for drained solids, only
        drained ones ("4 cups canned kidney beans, drained" by the rinsed solids' 158 g cup,
        not the 256 g cup of beans in their liquid)."""
        relatives = self.states.closest_relatives(ndb_no)
        own = description_words(self.states.description[ndb_no])
        if "drained" not in own:
            return relatives
        return [r for r in dict.fromkeys([*relatives, *self.states.same_head(ndb_no)])
                if own - description_words("solids") <=
                description_words(self.states.description[r])]

    def _cut_like_its_kind(self, parsed: ParsedLine, ndb_no: str) -> Weighed | None:
        """A cup of cubes, crumbs, grated or shredded pieces of an entry without one, by the
        same cut of its own kind ("8 cups cubed Italian bread" by white bread's cup of cubes,
        35 g, not a generic density of 137 g a cup: cut pieces hold air), else of its SR28
        category ("½ cup grated Romano" by a grated cheese's cup, 97 g, not 196 g)."""
        for cut in dict.fromkeys(w for w in portion_words(parsed) if w in CUT_PORTIONS):
            # the line's own word first: "grated" by a grated cup before a shredded one
            found = self._relative_weight(
                parsed, ndb_no, lambda method, cut=cut: method.startswith("sr28_weight") and
                cut in re.findall(r"[a-z]+", method), self.states.same_category,
                ": the same cut")
            if found is not None:
                return found
        return None

    def _relative_weight(self, parsed: ParsedLine, ndb_no: str,
                         fits: Callable[[str], bool],
                         relatives: Callable[[str], list[str]] | None = None,
                         why: str = "") -> Weighed | None:
        """The line weighed by the first of ``relatives`` (the closest relatives by default)
        whose weighing method ``fits``; relatives that say the line's bone first ("2 boneless
        pork loin roasts" by the boneless top loin roast), never one the line's bone
        contradicts (a bone-in roast's meat)."""
        candidates = (relatives or self.states.closest_relatives)(ndb_no)
        if bone_of(parsed.line) is not None:  # most lines say nothing of the bone
            candidates = sorted(
                (other for other in candidates
                 if not other_bone(parsed.line, self.states.description[other])),
                key=lambda other: not same_bone(parsed.line, self.states.description[other]))
        for other in candidates:
            found = self.weigher.weigh(parsed, other)
            if found.grams is not None and fits(found.method or ""):
                return Weighed(found.grams, f"{found.method} (of {other}, "
                                            f"{self.states.description[other]}{why})",
                               relative=other)
        return None

    def _stated_drained(self, parsed: ParsedLine) -> Weighed | None:
        """The drained solids a canned line states ("400 g tinned chickpeas (240 g drained
        weight)", "1 can (230 g drained) chickpeas"): the grams eaten, not the can's net
        weight or SR28's can."""
        measure = stated_drained(parsed.line)
        if measure is None or "canned" not in parsed.states:
            return None
        grams = convert(measure.quantity, measure.unit, "gram")
        return Weighed(grams, f"{STATED_DRAINED_METHOD}={grams:g} g")

    def _drained_share(self, item: ResolvedIngredient, parsed: ParsedLine) -> None:
        """A drained canned food weighed by its can's net weight keeps only the solids."""
        if (item.grams_method or "").startswith(STATED_DRAINED_METHOD):
            return
        can_size = {"paren_measure", "pack_size"} & set(parsed.rules) or \
            re.search(r"(?i)\bcans?\b|\btins?\b", parsed.line) or standard_can(item.grams)
        canned = "canned" in parsed.states or "canned" in (item.sr28_description or "").lower()
        # a can weighed whole: by mass, by a standard can, or by SR28's can of the food in its
        # liquid ("2 tins of mixed beans, drained": a relative's 436 g can, solids and liquids)
        whole_can = (item.grams_method or "").startswith("sr28_weight:1 can=") and \
            "drained" not in (item.grams_method or "") and \
            "drained" not in (item.sr28_description or "")
        by_mass = parsed.unit_kind == "mass" or whole_can or \
            (item.grams_method or "").startswith(f"{STANDARD_WEIGHT_METHOD}:1 can")
        if not ("drained" in parsed.states and canned and by_mass
                and can_size and item.grams is not None):
            return
        share = self.states.yields.drained(self.states.group.get(item.ndb_no or ""),
                                           item.sr28_description or "")
        item.grams = round(item.grams * share.factor, 3)
        item.grams_method = f"{item.grams_method}; drained solids x{share.factor:g} of the " \
                            "can's net weight"
        self._drained_legume(item)

    def _drained_legume(self, item: ResolvedIngredient) -> None:
        """Drained canned beans whose entry is the can's solids and liquids (SR28 has no
        drained black beans): the drained solids are cooked beans, read as SR28's same beans
        boiled with salt (SR28's drained red kidney beans, 124 kcal per 100 g, against 127
        boiled with salt and 81 for solids and liquids)."""
        description = item.sr28_description or ""
        if self.states.group.get(item.ndb_no or "") != LEGUMES or "drained" in description:
            return
        boiled = CANNED_PACK.sub(", cooked, boiled, with salt", description)
        found = self.states.by_description.get(boiled)
        if boiled == description or found is None:
            return
        item.ndb_no, item.sr28_description = found, boiled
        item.rules = [*item.rules, "drained_beans_as_cooked"]

    def _rendered(self, item: ResolvedIngredient) -> None:
        """A food whose fat renders out (bacon) bought raw is eaten as its cooked entry:
        raw grams x the cited yield ("uncooked bacon" is bacon as bought: it is not eaten
        raw)."""
        rendered = self.states.yields.rendered.get(item.ndb_no or "")
        if rendered is None or item.grams is None or rendered.cooked not in self.nutrients:
            return
        item.grams = round(item.grams * rendered.factor, 3)
        item.ndb_no = rendered.cooked
        item.sr28_description = self.states.description[rendered.cooked]
        item.rules = [*item.rules, "rendered"]
        item.grams_method = f"{item.grams_method}; fat rendered out: eaten as " \
                            f"{rendered.cooked} x{rendered.factor:g} of the raw weight " \
                            f"({rendered.source})"

    def _out_of_shell(self, item: ResolvedIngredient, parsed: ParsedLine) -> None:
        """Shellfish bought by weight are weighed in their shell: the meat is SR28's own
        yield ("1 lb (with shell), yield after shell removed" = 68 g of clams), unless the
        line says they are shucked, canned or chopped."""
        if parsed.unit_kind != "mass" or item.grams is None or SHELLED.search(parsed.line):
            return
        portion = next((p for p in self.weigher.by_food.get(item.ndb_no or "", [])
                        if p.unit in MASS_UNITS and IN_SHELL.search(p.measure)), None)
        if portion is None:
            return
        share = portion.grams / convert(portion.amount, str(portion.unit), "gram")
        item.grams = round(item.grams * share, 3)
        item.grams_method = f"{item.grams_method}; out of the shell x{share:.3g} " \
                            f"(SR28: {portion.amount:g} {portion.measure} = {portion.grams:g} g)"

    def _trimmed_produce(self, item: ResolvedIngredient, parsed: ParsedLine) -> None:
        """A fruit or vegetable weighed by mass that the line then trims, peels or cores loses
        SR28's refuse for the entry ("1 pound asparagus, trimmed of tough ends": 47 % butt
        ends)"; a whole one counted by its standard weight as bought too ("1 butternut
        squash, peeled")."""
        as_bought = parsed.unit_kind == "mass" or \
            (item.grams_method or "").startswith(f"{STANDARD_WEIGHT_METHOD}:1 whole")
        if not as_bought or item.grams is None or \
                self.states.group.get(item.ndb_no) not in PRODUCE_GROUPS or \
                PACKAGED.search(parsed.line) or not TRIMMED_AFTER.search(after_food(parsed)):
            return
        refuse, what = self.states.refuse.get(item.ndb_no or "", (0.0, ""))
        if not refuse:
            return
        item.grams = round(item.grams * (1 - refuse / 100), 3)
        item.rules = [*item.rules, "trimmed_as_bought"]
        item.grams_method = f"{item.grams_method}; trimmed as bought: SR28 refuse " \
                            f"{refuse:g} % ({what})"

    def _fat_trimmed(self, item: ResolvedIngredient, parsed: ParsedLine) -> None:
        """A cut weighed as bought whose fat the line trims off is the same cut trimmed to 0"
        fat where SR28 has it ("strip steaks, trimmed of excess fat"), else ("2 lb sirloin
        steak, fat trimmed") SR28's separable lean of the same cut, less the separable fat: the
        lean entry's refuse over the lean-and-fat entry's (top sirloin: 16 % bone, tissue
        and fat against 3 % bone and tissue, so 13 % fat)."""
        description = item.sr28_description or ""
        if parsed.unit_kind != "mass" or item.grams is None or \
                "separable lean and fat" not in description or \
                not FAT_TRIMMED.search(after_food(parsed)):
            return
        closer = self.states.by_description.get(
            description.replace('trimmed to 1/8" fat', 'trimmed to 0" fat')
            .replace("lip-on", "lip off"))
        if closer is not None and closer != item.ndb_no:
            # "strip steaks, trimmed of excess fat": the same cut trimmed to 0" of outer fat
            # (the seam fat stays: a cook cannot trim it)
            item.ndb_no, item.sr28_description = closer, self.states.description[closer]
            item.rules = [*item.rules, "fat_trimmed"]
            item.grams_method = f"{item.grams_method}; fat trimmed: the cut trimmed to 0\" fat"
            return
        lean = self.states.by_description.get(
            description.replace("separable lean and fat", "separable lean only"))
        if lean is None:
            return
        fat = max(0.0, self.states.refuse.get(lean, (0.0, ""))[0] -
                  self.states.refuse.get(item.ndb_no or "", (0.0, ""))[0])
        item.ndb_no, item.sr28_description = lean, self.states.description[lean]
        item.grams = round(item.grams * (1 - fat / 100), 3)
        item.rules = [*item.rules, "fat_trimmed"]
        item.grams_method = f"{item.grams_method}; fat trimmed: the separable lean, less " \
                            f"SR28's separable fat {fat:g} %"

    def _edible_portion(self, item: ResolvedIngredient, parsed: ParsedLine) -> None:
        """A bone-in meat weighed by mass loses its bone (SR28 refuse for the entry); a line
        matched to SR28's whole bird is bone-in unless it says boneless. So does a count of
        bone-in pieces weighed by SR28's piece as sampled ("24 chicken wings": 1 piece = 107 g
        with its 38 % bone) or by a standard weight as bought ("1 rack pork spareribs"),
        unless the portion says its bone is off."""
        states = parsed.states
        if WHOLE_BIRD.match(item.sr28_description or "") and not BONELESS.search(parsed.line):
            states = [*states, "bone_in"]  # "10 pounds turkey" matched to the whole bird
        # a standard weight of a bone-in cut is as bought too ("1 rack pork spareribs")
        as_sampled = parsed.unit_kind == "count" and \
            (item.grams_method or "").startswith(("sr28_weight", STANDARD_WEIGHT_METHOD)) and \
            not PORTION_OFF_THE_BONE.search(item.grams_method or "")
        edible = self.states.edible_share(item.ndb_no, states) \
            if parsed.unit_kind == "mass" or as_sampled else None
        if edible is None and item.grams is not None and parsed.unit_kind == "mass" and \
                WHOLE_FISH.search(parsed.line) and \
                (item.sr28_description or "").startswith("Fish,"):
            # SR28 analyses fish as its edible flesh and gives no refuse for a whole fish
            item.problem = "a whole fish weighed as bought: SR28 gives no edible share for it"
            item.grams = None
            return
        if edible is None or item.grams is None:
            return
        share, where = edible
        item.grams = round(item.grams * share, 3)
        item.grams_method = f"{item.grams_method}; edible portion x{share:.2f} ({where})"

    def _check_amount(self, item: ResolvedIngredient) -> None:
        """A line heavier than any plausible recipe line (or, for spices, herbs and salt, than
        any eaten amount) is dropped with a reason; the recipe is then excluded."""
        limit, what = self.rules.max_line_grams.value, "one line"
        spice = self.states.group.get(item.ndb_no) == "0200" and \
            "vinegar" not in (item.sr28_description or "").lower()  # SR28 files vinegar there
        if spice:
            limit, what = self.rules.max_spice_line_grams.value, "one line of spices or salt"
        if item.grams is not None and item.grams > limit:
            item.problem = f"implausible amount: {item.grams:,.0f} g is over {limit:,.0f} g " \
                           f"for {what}"
            item.grams = None

    def recipe(self, record: RecipeRecord) -> ResolvedRecipe:
        """Resolve a recipe and decide whether it is kept (and flagged for review)."""
        items = [self.ingredient(line) for line in record.ingredients]
        counted_earlier(items)
        self._relative_amounts(items)
        category = food_category(record, self.rules)
        exclusion = self._exclusion(items) or self._frying_bath(record, items)
        nutrition, flags = None, []
        if exclusion is None:
            self._frying_oil_left_out(items)
            nutrition = recipe_nutrition(items, self.nutrients, record.servings, self.standards,
                                         self.rules.nutrient_coverage.value)
            exclusion = self._implausible_total(nutrition) or \
                self._impossible_nutrition(nutrition, items)
            if exclusion:
                nutrition = None
            else:
                flags = self._flags(record, nutrition, category, items)
        return ResolvedRecipe(record=record, ingredients=items, food_category=category,
                              kept=exclusion is None, exclusion=exclusion, flags=flags,
                              nutrition=nutrition)

    def _relative_amounts(self, items: list[ResolvedIngredient]) -> None:
        """A line weighed against another ("about ¾ the weight of mozzarella as the tomato")
        is its own food (the one after "of"), at that share of the other line's grams."""
        for item in items:
            found = RELATIVE_AMOUNT.search(item.line)
            if not found or item.quantity is None:
                continue
            other = next((o for o in items if o is not item and o.grams and o.food and
                          o.food.split()[-1] in found.group("other").split()), None)
            own = self.ingredient(f"100 g {found.group('food')}")
            if other is None or own.ndb_no is None:
                continue
            item.food, item.ndb_no = own.food, own.ndb_no
            item.sr28_description, item.problem = own.sr28_description, None
            item.grams = round(item.quantity * (other.grams or 0.0), 3)
            item.grams_method = f"{item.quantity:g} x the weight of {other.line!r}"
            item.rules = [*item.rules, "relative_amount"]

    def _exclusion(self, items: list[ResolvedIngredient]) -> str | None:
        """Why a recipe cannot be resolved reliably, or None.

        An implausible quantity anywhere excludes it (the recipe text is corrupt). Otherwise
        the unresolved lines must stay under 10 % of the recipe's estimated mass: a mass unit
        or ingredient-slicer's generic density where there is one, else the median weight of
        the recipe's resolved lines (an unknown line counts as a typical line; an unweighable
        meat or fish line as the heaviest one: it is likely the dish's main part)."""
        quantified = [i for i in items if i.kind == "quantified"]
        if not quantified:
            return "no quantified ingredients"
        for item in quantified:
            if item.problem and item.problem.startswith("implausible"):
                return f"implausible quantity: {item.line!r}: {item.problem}"
        typo = likely_typo(quantified)
        if typo:
            return f"implausible quantity: {typo.line!r}: reads as {typo.quantity:g} cups and " \
                   "outweighs the rest of the recipe; likely a typo for " \
                   f"1/{int(typo.quantity) % 10} cup"
        unresolved = [i for i in quantified if i.grams is None or not i.ndb_no]
        resolved = sorted(i.grams for i in quantified if i.grams and i.ndb_no)
        typical = resolved[len(resolved) // 2] if resolved else None
        guesses = [self._unresolved_energy(item, resolved, typical) for item in unresolved]
        share = energy_share([(i.grams, kcal) for i in quantified if i.grams and i.ndb_no
                              and (kcal := self.nutrients[i.ndb_no]["calories"]) == kcal],
                             guesses)
        if share > 1 - self.rules.min_resolved_share.value:
            first = unresolved[0]
            return (f"unresolved ingredients: {len(unresolved)} of {len(quantified)} quantified "
                    f"lines, {share:.0%} of the estimated energy (first: {first.line!r}: "
                    f"{first.problem})")
        return None

    def _unresolved_energy(self, item: ResolvedIngredient, resolved: list[float],
                           typical: float | None) -> LineEnergy:
        """The estimated grams (kept on the line) and energy density of an unresolved line."""
        assert self.unresolved_energy is not None
        name = " ".join(filter(None, [item.food, parse_line(item.line).raw_food])) or item.line
        count = item.quantity if unit_kind(item.unit) == "count" else None
        guess = self.unresolved_energy.line(name, self._estimate(item), count)
        grams = guess.grams
        if grams is None:
            main = item.ndb_no and self.states.group.get(item.ndb_no) in MEAT_GROUPS or \
                self.unresolved_energy.group(name) in MEAT_GROUPS
            # a meat or fish line that cannot be weighed is likely the dish's main part
            grams = resolved[-1] if main and resolved else typical
        item.estimated_grams = grams
        return LineEnergy(grams, guess.kcal_per_100g, guess.basis)

    def _oil_line(self, item: ResolvedIngredient) -> bool:
        """A weighed line of SR28 fats and oils that says oil (not butter or lard)."""
        return bool(item.grams) and self.states.group.get(item.ndb_no) == "0400" and \
            re.search(r"(?i)\boil\b", item.line) is not None

    def _frying_bath(self, record: RecipeRecord, items: list[ResolvedIngredient]) -> str | None:
        """A deep-frying bath ("2 1/2 quarts peanut oil" in fried shrimp, "1 cup oil, for
        frying") is mostly left in the pan and what the food takes up is not in the recipe:
        the recipe is excluded rather than counted with the whole bath. An infused oil (the
        title names an oil) is the oil itself."""
        if re.search(r"(?i)\boils?\b", record.title or ""):
            return None
        fries = bool(FRYING.search(" ".join(record.instructions)))
        limit = self.rules.frying_oil_grams.value
        for item in filter(self._oil_line, items):
            says_so = FRYING.search(item.line) and item.grams >= CUP_OF_OIL_GRAMS
            if says_so or (fries and item.grams > limit):
                return f"deep-frying oil: {item.grams:,.0f} g in {item.line!r}; the oil a " \
                       "fried food takes up is not in the recipe"
        return None

    def _frying_oil_left_out(self, items: list[ResolvedIngredient]) -> None:
        """An oil line of a quarter cup or more that says it is for frying ("½ cup vegetable
        oil (for frying)") is a frying layer, mostly left in the pan: left out like its
        unquantified twin ("oil, for frying"), with the reason on the line. A few spoons to
        fry onions in are taken up and counted; a bath of a cup or more excludes the recipe
        instead (:meth:`_frying_bath`)."""
        for item in filter(self._oil_line, items):
            if FOR_FRYING.search(item.line) and item.grams >= FRYING_LAYER_GRAMS:
                item.grams_method = f"{item.grams_method}; {item.grams:g} g of oil for " \
                                    "frying left out: most of it stays in the pan"
                item.grams = 0.0
                item.rules = [*item.rules, "frying_oil_left_out"]

    def _estimate(self, item: ResolvedIngredient) -> float | None:
        """Grams of an unresolved line: its mass unit, else ingredient-slicer's density, else
        water's for a volume ("3 drops food coloring" is a fraction of a gram, not a typical
        line); a packet of an unknown mix weighs a seasoning packet, a can of no size a 15 oz
        can."""
        if item.quantity is None:
            return None
        if item.unit in MASS_UNITS:
            return convert(item.quantity, item.unit, "gram")
        generic = parse_line(item.line).generic_grams
        if generic:
            return round(generic, 3)
        if item.unit in VOLUME_UNITS:
            return round(convert(item.quantity, item.unit, "milliliter"), 3)
        if item.unit in PACKET_UNITS:
            return item.quantity * self.rules.packet_grams.value
        if item.unit in CAN_UNITS:
            return item.quantity * self.rules.can_grams.value
        return None

    def _implausible_total(self, nutrition: RecipeNutrition) -> str | None:
        rules = self.rules
        if nutrition.total_grams < rules.min_total_grams.value:
            return f"too light: total weight {nutrition.total_grams:g} g is under " \
                   f"{rules.min_total_grams.value:g} g"
        if nutrition.total_grams > rules.max_total_grams.value:
            return f"implausible total: {nutrition.total_grams:,.0f} g is over " \
                   f"{rules.max_total_grams.value:,.0f} g"
        density = nutrition.per_100g.get("calories")
        if density is not None and density > rules.max_energy_density.value:
            return f"implausible energy density: {density:.0f} kcal per 100 g"
        return None

    def _impossible_nutrition(self, nutrition: RecipeNutrition,
                              items: list[ResolvedIngredient]) -> str | None:
        """Sugar above carbohydrate (sugars are part of it) beyond rounding: the recipe is
        excluded, naming the line that adds most sugar over its own carbohydrate, so that no
        label rests on it."""
        sugar = nutrition.per_100g.get("sugar")
        carbohydrate = nutrition.per_100g.get("carbohydrates")
        if sugar is None or carbohydrate is None or \
                sugar <= carbohydrate * SUGAR_OVER_CARBOHYDRATE + 0.5:
            return None

        def excess(item: ResolvedIngredient) -> float:
            values = self.nutrients[item.ndb_no or ""]
            carbs = values["carbohydrates"]
            return (values["sugar"] - (0.0 if carbs != carbs else carbs)) * (item.grams or 0)

        weighed = [i for i in items if i.grams and i.ndb_no and
                   self.nutrients[i.ndb_no]["sugar"] == self.nutrients[i.ndb_no]["sugar"]]
        line = max(weighed, key=excess).line if weighed else "?"
        return f"impossible nutrition: sugar {sugar:.1f} g above carbohydrate " \
               f"{carbohydrate:.1f} g per 100 g (most from {line!r})"

    def _flags(self, record: RecipeRecord, nutrition: RecipeNutrition, category: str,
               items: list[ResolvedIngredient]) -> list[str]:
        """Reasons a kept recipe needs a look: energy per serving out of range, or far from
        the nutrition the recipe itself publishes."""
        flags = []
        energy = (nutrition.per_serving or {}).get("calories")
        if energy is not None and energy > self.rules.serving_energy.value:
            flags.append(f"energy per serving {energy:,.0f} kcal is over "
                         f"{self.rules.serving_energy.value:,.0f} kcal: check servings")
        low_ok = category in ("beverages", "sauces and condiments", "soups")
        if energy is not None and energy < self.rules.min_serving_energy.value and not low_ok:
            flags.append(f"energy per serving {energy:.1f} kcal is under "
                         f"{self.rules.min_serving_energy.value:g} kcal")
        oil = [i for i in items if self._oil_line(i) and i.grams >= CUP_OF_OIL_GRAMS]
        if oil:
            flags.append(f"{oil[0].grams:,.0f} g of oil in one line ({oil[0].line!r}): if it is "
                         "for frying, most of it is not eaten")
        published = _published_calories(record)
        if energy and published:
            ratio = energy / published
            bound = self.rules.published_ratio.value
            if ratio > bound or ratio < 1 / bound:
                flags.append(f"computed {energy:,.0f} kcal per serving is {ratio:.2f}x the "
                             f"recipe's published {published:,.0f} kcal")
        return flags


# Net weights of common cans (US 14.5, 15, 15.5, 16, 28 and 29 oz; European 400 and 800 g):
# "15 oz black beans (canned, drained)" names the can, not the beans left after draining.
STANDARD_CAN_GRAMS = (411.1, 425.2, 439.4, 453.6, 793.8, 822.1, 400.0, 800.0)


def crushed_before_food(line: str, food: str | None) -> bool:
    """The line says "crushed" before the food's last word (and before any comma): the cook
    measures the crumbs ("1 cup crushed cornflakes"), not whole pieces crushed afterwards
    ("3 cups cornflakes, crushed", "6 cups pretzels crushed")."""
    text = fold(line.split(",")[0])
    found = CRUSHED_BEFORE_FOOD.search(text)
    head = (food or "").split()[-1:]
    return found is not None and bool(head) and \
        re.search(rf"\b{re.escape(head[0])}\b", text[found.end():]) is not None


def crushed_cup_grams(sr28: Sr28) -> float | None:
    """The median grams of SR28's "cup, crushed" portions of crisp foods (crackers, graham
    crackers, chips: 52-94 g, median 72 g), for a crushed crisp food without one of its own."""
    weights = sr28.weights.merge(sr28.foods[["ndb_no", "group_code"]], on="ndb_no")
    crushed = weights[weights["measure"].str.contains(r"\bcup\b.*\bcrushed\b", regex=True) &
                      weights["group_code"].isin(CRISP_GROUPS) & (weights["amount"] > 0)]
    if crushed.empty:
        return None
    return float((crushed["grams"] / crushed["amount"]).median())


def proxy_names(parsed: ParsedLine) -> list[str]:
    """The line's own names a proxy may be listed under, most specific first: with a
    qualifier the parser moved to the preparation ("ground meat"), with its counted unit
    ("stock cubes", "curry leaves"), then as parsed."""
    food = parsed.food or ""
    if not food:
        return []
    qualified = [f"{word} {food}" for word in ("ground", "minced", "dried", "smoked")
                 if word in parsed.prep]
    unit = parsed.unit or ""
    counted = [f"{food} {unit}"] if unit.isalpha() and parsed.unit_kind == "count" and \
        unit not in food.split() else []
    # a qualifier the line's states carry ("reduced fat crème fraîche": qual:reduced_fat) is
    # asked of the proxy's entry, not part of the proxy's name
    return list(dict.fromkeys([*qualified, *counted, food, unqualified_name(parsed) or food]))


def unqualified_name(parsed: ParsedLine) -> str | None:
    """The line's name without the qualifier words its states carry ("skim ricotta" with
    qual:reduced_fat is ricotta): the state, not the name, then asks for the qualified entry;
    None when the line carries no qualifier or the name has no such word."""
    food = parsed.food or ""
    if not any(state.startswith("qual:") for state in parsed.states):
        return None
    plain = without_qualifiers(food)
    return plain if plain != food else None


# A line that counts cans or tins ("1 tin tomatoes", "2 small cans coconut milk"), whatever
# unit the parser read.
COUNTED_CANS = re.compile(r"(?i)^\W*[\d½¼¾⅓⅔⅛.,/ -]+(?:(?:small|large|medium)\s+)?(cans?|tins?)\b")


def counted_cans(parsed: ParsedLine) -> ParsedLine:
    """``parsed`` counting cans when the line counts cans and the parser read another unit
    ("1 tin tomatoes" is a tin, not one tomato)."""
    found = COUNTED_CANS.search(parsed.line)
    if found is None or parsed.unit_kind != "count" or parsed.unit in CAN_UNITS:
        return parsed
    return replace(parsed, unit="cans" if found.group(1).lower().endswith("s") else "can")


def standard_can(grams: float | None) -> bool:
    """``grams`` is a common can's net weight (within 1 %)."""
    return grams is not None and any(abs(grams - can) <= 0.01 * can
                                     for can in STANDARD_CAN_GRAMS)


def likely_typo(items: list[ResolvedIngredient]) -> ResolvedIngredient | None:
    """A line written "12/13/14/16/18 cup" (a fraction that lost its slash: "14 cup" for
    1/4 cup) of a solid food (under 200 g a cup: liquids such as water, stock or milk do come
    by the dozen cups) that weighs more than all the recipe's other lines together."""
    weighed = [i for i in items if i.grams]
    for item in weighed:
        solid = item.quantity and item.grams / item.quantity < 200
        if solid and re.match(r"^\s*1[2-68]\s*cups?\b", item.line, re.I):
            rest = sum(i.grams for i in weighed if i is not item)
            if item.grams > rest:
                return item
    return None


def _published_calories(record: RecipeRecord) -> float | None:
    """Calories per serving from the record's own ``nutrition`` field, when numeric."""
    value = (record.nutrition or {}).get("calories")
    if isinstance(value, str):
        match = re.search(r"\d+(?:\.\d+)?", value.replace(",", ""))
        value = float(match.group(0)) if match else None
    return float(value) if isinstance(value, int | float) and value > 0 else None


def food_category(record: RecipeRecord, rules: RecipeRules) -> str:
    """WWEIA-like group from the recipe's own category, then its title (first rule wins)."""
    for text in (record.category or "", record.title):
        lowered = text.lower()
        for rule in rules.categories:
            if any(keyword in lowered for keyword in rule.keywords):
                return rule.group
    return rules.categories[-1].group


def build_corpus(corpus: CorpusLoad, resolver: Resolver, out: Path,
                 inputs: list[Path], progress=None, workers: int = 1) -> dict[str, Any]:
    """Resolve every record of ``corpus`` and write the outputs into ``out``; return quality.

    The distinct ingredient lines are parsed in ``workers`` processes while this one resolves
    the recipes whose lines are ready."""
    records = sorted(corpus.records, key=lambda r: r.id)
    resolved = []
    for index in parse_in_order([record.ingredients for record in records], workers):
        resolved.append(resolver.recipe(records[index]))
        if progress:
            progress()
    quality = quality_report(corpus, resolved, resolver.nutrients)
    _write_outputs(out, resolved, quality, inputs)
    return quality


def quality_report(corpus: CorpusLoad, resolved: list[ResolvedRecipe],
                   nutrients: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """Lines parsed, names matched, grams resolved, recipes kept and excluded by reason, and
    the kept recipes read through a standard proxy with the proxy share of their energy."""
    lines = [i for r in resolved for i in r.ingredients]
    quantified = [i for i in lines if i.kind == "quantified"]
    reasons = Counter(_reason_kind(r.exclusion) for r in resolved if not r.kept)
    return {
        "records_loaded": len(corpus.records),
        "records_rejected_at_load": corpus.problems,
        "lines": len(lines),
        "lines_by_kind": dict(sorted(Counter(i.kind for i in lines).items())),
        "lines_matched": sum(i.ndb_no is not None for i in lines),
        "match_methods": dict(sorted(Counter(i.match_method for i in lines
                                             if i.match_method).items())),
        "quantified_lines": len(quantified),
        "quantified_with_grams": sum(i.grams is not None for i in quantified),
        "grams_methods": dict(sorted(Counter(_method_kind(i.grams_method) for i in quantified
                                             if i.grams_method).items())),
        "recipes": len(resolved),
        "recipes_kept": sum(r.kept for r in resolved),
        "recipes_excluded_by_reason": dict(sorted(reasons.items())),
        "recipes_excluded": [{"id": r.record.id, "reason": r.exclusion}
                             for r in resolved if not r.kept],
        "recipes_flagged": [{"id": r.record.id, "flags": r.flags}
                            for r in resolved if r.kept and r.flags],
        "lines_with_yield": sum(i.yield_factor is not None for i in lines),
        "lines_in_state": dict(sorted(Counter(
            i.match_method.split("+state:")[1] for i in lines
            if i.match_method and "+state:" in i.match_method).items())),
        "line_rules": dict(sorted(Counter(rule for i in lines for rule in i.rules).items())),
        "kept_by_category": dict(sorted(Counter(r.food_category for r in resolved
                                                if r.kept).items())),
        "recipes_with_proxies": [_proxies(r, nutrients or {}) for r in resolved if r.kept and any(
            rule.startswith(PROXY_RULE) for i in r.ingredients for rule in i.rules)],
    }


def _proxies(recipe: ResolvedRecipe, nutrients: dict[str, dict[str, float]]) -> dict[str, Any]:
    """A kept recipe's proxy lines and their share of its energy."""
    def proxied(item: ResolvedIngredient) -> bool:
        return any(rule.startswith(PROXY_RULE) for rule in item.rules)

    weighed = [(i.grams, kcal, proxied(i)) for i in recipe.ingredients if i.grams and i.ndb_no
               and (kcal := nutrients.get(i.ndb_no, {}).get("calories", 0.0)) == kcal]
    return {"id": recipe.record.id, "lines": [i.line for i in recipe.ingredients if proxied(i)],
            "energy_share": round(proxy_share(weighed), 4)}


def _reason_kind(reason: str | None) -> str:
    """The reason's kind: the text before its first colon."""
    return (reason or "").split(":")[0]


def _method_kind(method: str) -> str:
    return method.split(":")[0]


def _write_outputs(out: Path, resolved: list[ResolvedRecipe], quality: dict[str, Any],
                   inputs: list[Path]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with atomic_path(out / "recipes.jsonl") as tmp:
        tmp.write_text("".join(_line(r) for r in resolved), encoding="utf-8")
    write_parquet_atomic(out / "recipes.parquet", flat_table(resolved))
    foods = recipe_foods(resolved)
    write_parquet_atomic(out / "foods.parquet", foods.foods)
    write_parquet_atomic(out / "food_ingredients.parquet", foods.ingredients)
    write_json_atomic(out / "quality.json", quality)
    write_json_atomic(out / "manifest.json", {
        "artifact": "recipes", "generator": GENERATOR,
        "inputs": input_fingerprints(inputs),
        "counts": {"recipes": quality["recipes"], "kept": quality["recipes_kept"],
                   "foods": len(foods.foods)},
    })


def _line(model: BaseModel) -> str:
    return json.dumps(model.model_dump(mode="json"), sort_keys=True, ensure_ascii=False) + "\n"


def flat_table(resolved: list[ResolvedRecipe]) -> pd.DataFrame:
    """One row per recipe: ids, category, kept/exclusion, grams, nutrients per 100 g, tags."""
    rows = []
    for recipe in resolved:
        nutrition = recipe.nutrition
        rows.append({
            "id": recipe.record.id, "title": recipe.record.title,
            "category": recipe.record.category, "food_category": recipe.food_category,
            "servings": recipe.record.servings, "kept": recipe.kept,
            "exclusion": recipe.exclusion,
            "total_grams": nutrition.total_grams if nutrition else None,
            **{f"{k}_per_100g": v for k, v in (nutrition.per_100g if nutrition else {}).items()},
            "nutrient_tags": nutrition.nutrient_tags if nutrition else [],
            "dietary_tags": nutrition.dietary_tags if nutrition else [],
        })
    return pd.DataFrame(rows)
