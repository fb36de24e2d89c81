"""Ingredient lines -> quantity, unit, food name, preparation, with ``ingredient-slicer``."""

from __future__ import annotations

import multiprocessing
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from ingredient_slicer import IngredientSlicer
from ingredient_slicer import _utils as _slicer_utils

from nutrireason.recipes.lines import (
    FRACTIONS,
    Measure,
    each_clause,
    first_alternative,
    gloss_mass,
    leading_quantity,
    paren_count,
    paren_measure,
    prepare,
    strip_noise,
)
from nutrireason.recipes.rules import load_recipe_rules
from nutrireason.recipes.units import convert
from nutrireason.recipes.words import LATER_ALTERNATIVE, PORTION_UNITS, fold, own_text
from nutrireason.workers import end_with_parent

MASS_UNITS = {"gram", "kilogram", "milligram", "ounce", "pound"}
VOLUME_UNITS = {"cup", "tablespoon", "teaspoon", "milliliter", "liter", "deciliter", "quart",
                "pint", "gallon", "fluid ounce"}
# Units the slicer reports that carry no weight (quantity left unknown).
VAGUE_UNITS = {"to taste", "handful", "splash", "sprinkle", "drizzle"}
# Small culinary measures in teaspoons (common kitchen definitions: a pinch is 1/16 teaspoon,
# a dash 1/8 teaspoon, a smidgen 1/32 teaspoon, a drop 1/96 teaspoon, about 0.05 ml).
SMALL_MEASURES = {"pinch": 1 / 16, "dash": 1 / 8, "smidgen": 1 / 32, "drop": 1 / 96}
CONTAINERS = {"can", "tin", "jar", "package", "packet", "bag", "box", "bottle", "carton",
              "container"}
FILLER_WORDS = {"of", "and", "or", "a", "an", "the", "some", "fresh", "freshly", "plus",
                "about", "approximately", "optional", "x", "cold", "chilled", "lukewarm",
                # a serving temperature is no other food ("2 cups boiling milk" is milk)
                "boiling", "warm", "warmed", "scalded", "heated"}
# Words that say how a food is cut or kept, never which food it is: a "food" made only of them
# ("4 boneless (skinless chicken breasts)") means the food sits in a parenthetical.
STATE_ONLY_WORDS = {"boneless", "skinless", "large", "medium", "small", "whole", "halved",
                    "chopped", "diced", "sliced", "peeled", "cubed", "trimmed", "frozen", "thawed"}


@dataclass
class ParsedLine:
    """One ingredient line, parsed. ``kind``: quantified, unquantified or header."""

    line: str
    kind: str
    quantity: float | None = None
    unit: str | None = None
    unit_kind: str | None = None  # mass | volume | count | vague
    food: str | None = None
    prep: list[str] = field(default_factory=list)
    size: list[str] = field(default_factory=list)
    problem: str | None = None
    generic_grams: float | None = None  # ingredient-slicer's density-based estimate
    raw_food: str | None = None  # ingredient-slicer's food name, lower-cased
    alternatives: list[str] = field(default_factory=list)  # later "or" foods, cleaned
    states: list[str] = field(default_factory=list)  # cooked, canned, drained, ... (whole line)
    rules: list[str] = field(default_factory=list)  # text and quantity rules that fired
    # the line's own amount a parenthetical measure replaced ("1 ½ cup (360 g)": 1.5 cup)
    replaced: tuple[float, str] | None = None


# Words on a line (parentheticals included) that say which state of a food is meant (the
# entries a state asks for are `recipes.state.STATE_WORDS`).
LINE_STATE_WORDS = {
    "cooked": "cooked", "boiled": "boiled", "steamed": "boiled", "simmered": "boiled",
    "poached": "boiled", "roasted": "roasted", "baked": "roasted", "grilled": "grilled",
    "broiled": "grilled", "fried": "fried", "sauteed": "cooked", "sautéed": "cooked",
    "canned": "canned", "tinned": "canned", "drained": "drained", "rinsed": "rinsed",
    "dried": "dried", "dehydrated": "dried", "dry": "raw", "frozen": "frozen",
    "thawed": "frozen", "raw": "raw",
    "uncooked": "raw", "leftover": "cooked", "boneless": "boneless", "skinless": "skinless",
    "rotisserie": "roasted", "shredded": "shredded", "pulled": "shredded", "smoked": "smoked",
    # a poultry fillet is boneless and skinless (fish entries name no skin: unaffected)
    "fillet": "skinless", "fillets": "skinless", "filet": "skinless", "filets": "skinless",
}
# "rinsed and dried", "patted dry": water wiped off a fresh food, not a dried food.
PATTED_DRY = re.compile(r"\b(?:rinsed|washed|cleaned|patted)\s+(?:and\s+)?(?:patted\s+)?"
                        r"dr(?:ied|y)\b")
# Quantities beyond these, per unit, are not a recipe line (a typo or a unit lost in parsing).


@lru_cache(maxsize=1)
def max_quantity() -> dict[str, float]:
    """The largest plausible quantity per unit kind (grams, cups, items), from
    ``standards/data/recipes.yaml``."""
    rules = load_recipe_rules()
    return {"mass": rules.max_quantity_mass_g.value, "volume": rules.max_quantity_cups.value,
            "count": rules.max_quantity_items.value}


_CACHE: dict[str, ParsedLine] = {}


def _memoised_density(lookup):
    """ingredient-slicer looks a food's density up by fuzzy similarity over its whole table
    for every volume line (about 4 ms); the same food names recur, so remember the answer
    (a copy each time: callers may change the dict). Output is unchanged."""
    if getattr(lookup, "memoised", False):
        return lookup
    remembered: dict[tuple[str, str], dict] = {}

    def density(food: str, method: str = "levenshtein") -> dict:
        key = (food, method)
        if key not in remembered:
            remembered[key] = lookup(food, method)
        return dict(remembered[key])

    density.memoised = True
    return density


_slicer_utils._get_food_density = _memoised_density(_slicer_utils._get_food_density)


@lru_cache(maxsize=1 << 16)
def _bigrams(text: str) -> frozenset[str]:
    return frozenset(text[i:i + 2] for i in range(len(text) - 1))


def _dice_similarity(first: str, second: str) -> float:
    """ingredient-slicer's Dice coefficient over character bigrams, with each string's bigrams
    computed once: its density search scores a new food against every food of its table, and
    rebuilding the table's bigrams each time was about a quarter of a corpus's parse time
    (25 s -> 18 s over an eighth of the Wikibooks lines). Same formula, same result."""
    if first == second:
        return 1
    if len(first) < 2 or len(second) < 2:
        return 0
    ours, theirs = _bigrams(first), _bigrams(second)
    return 2.0 * len(ours & theirs) / (len(ours) + len(theirs))


SLICER_DICE = _slicer_utils._dice_coeff_similarity  # the original, kept for the tests
_slicer_utils._dice_coeff_similarity = _dice_similarity


def normalise(line: str) -> str:
    """Whitespace collapsed and HTML tags removed ("<bdi>1 cup</bdi> broth" -> "1 cup broth")."""
    return " ".join(re.sub(r"<[^>]+>", " ", line).split())


def parse_line(line: str) -> ParsedLine:
    """Parse one raw ingredient line (identical lines are parsed once per process)."""
    text = normalise(line)
    if text not in _CACHE:
        _CACHE[text] = _parse(text)
    return replace(_CACHE[text], line=line)


def parse_in_order(groups: list[list[str]], workers: int = 1) -> Iterator[int]:
    """Parse the distinct lines of ``groups`` not parsed yet, on ``workers`` fresh processes,
    in order, and yield each group's index as soon as all its lines are parsed: the caller
    resolves a recipe while the processes parse the next ones.

    ingredient-slicer's output depends on set iteration order (e.g. "packed" vs "lightly
    packed"), which Python randomises per process; the workers run with PYTHONHASHSEED=0 so a
    build gives the same parse, byte for byte, every time.
    """
    todo: list[str] = []
    ready_at: list[int] = []  # group i is ready once this many of ``todo`` are parsed (rising)
    seen = set(_CACHE)
    for lines in groups:
        for text in map(normalise, lines):
            if text not in seen:
                seen.add(text)
                todo.append(text)
        ready_at.append(len(todo))
    if not todo:
        yield from range(len(groups))
        return
    with _seeded_pool(workers) as pool:
        parsed = pool.imap(_parse, todo, chunksize=64)
        done = 0
        for index, needed in enumerate(ready_at):
            for text in todo[done:needed]:
                _CACHE[text] = next(parsed)
            done = needed
            yield index


@contextmanager
def _seeded_pool(workers: int) -> Iterator[Any]:
    """A pool of fresh processes started with PYTHONHASHSEED=0 (the parent's is restored)."""
    previous = os.environ.get("PYTHONHASHSEED")
    os.environ["PYTHONHASHSEED"] = "0"
    try:
        pool = multiprocessing.get_context("spawn").Pool(
            max(1, workers), initializer=end_with_parent, initargs=(os.getpid(),))
    finally:
        if previous is None:
            os.environ.pop("PYTHONHASHSEED", None)
        else:
            os.environ["PYTHONHASHSEED"] = previous
    with pool:
        yield pool


# Lines naming kitchen equipment, not food ("10 bamboo skewers").
NON_FOOD = re.compile(r"(?i)\b(skewers?|toothpicks?|parchment|baking paper|aluminum foil|"
                      r"kitchen twine|cupcake liners?|popsicle sticks?|ramekins?|"
                      r"wood chips|wood chunks|charcoal)\b")


# The longest Wikibooks ingredient line has 282 characters (99.9 % have 123 or fewer); a line
# ten times that is not an ingredient line, and the parser's work grows with its length.
MAX_LINE_CHARS = 3000
ZERO_DENOMINATOR = re.compile(r"(?<![\d.])\d+(?:\s*-\s*\d+)?\s*/\s*0+(?![\d.])")


def unreadable_line(text: str) -> str | None:
    """Why a line cannot be parsed at all (too long, a fraction over zero), or None."""
    if len(text) > MAX_LINE_CHARS:
        return (f"line of {len(text):,} characters, longer than {MAX_LINE_CHARS:,}: not an "
                "ingredient line")
    zero = ZERO_DENOMINATOR.search(text)
    if zero:
        return f"quantity {zero.group(0)!r} divides by zero"
    for pattern, what in MISREAD_QUANTITIES:
        found = pattern.search(text)
        if found:
            return f"{what} {found.group(0).strip()!r}"
    return None


# Quantities the slicer would misread rather than refuse ("-5 cups" as 5, "10^6 g" as 60 g,
# "½½ cup" as 0.048 cup): each is a named problem instead.
MISREAD_QUANTITIES = (
    (re.compile(r"^\s*[-−]\d+(?:[.,/]\d+)?"), "negative quantity"),
    (re.compile(r"\d+(?:\.\d+)?\s*(?:[x×]\s*10\s*)?(?:\^|\*\*)\s*-?\d+"),
     "quantity with an exponent"),
    (re.compile(r"[½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞]\s*[½⅓⅔¼¾⅕⅖⅗⅘⅙⅚⅛⅜⅝⅞]"), "doubled fraction"),
)


def _parse(text: str) -> ParsedLine:
    line = text
    if not re.search(r"[a-z]", text, re.I) or text.endswith(":"):
        return ParsedLine(line, "header")
    if NON_FOOD.search(text):
        return ParsedLine(line, "header", problem="equipment, not food")
    refused = unreadable_line(text)
    if refused:
        return ParsedLine(line, "quantified", problem=refused)
    prepared = prepare(text)
    main = prepared.main if re.search(r"[a-z]", prepared.main, re.I) else strip_noise(text)
    try:
        sliced = IngredientSlicer(main).to_json()
    except (ArithmeticError, ValueError, IndexError, RecursionError) as exc:
        # the slicer's own reading failed: a named problem on this line, never a stopped build
        return ParsedLine(line, "quantified",
                          problem=f"quantity cannot be read ({type(exc).__name__}: {exc})")
    unit = sliced.get("standardized_unit")
    quantity, problem = _quantity(sliced.get("quantity"))
    rules = list(prepared.rules)
    quantity, unit = _own_quantity(main, quantity, unit, rules)
    counted = paren_count(prepared.parentheticals, COUNTED_CUTS) if quantity is None and \
        not unit else None
    if counted:  # "shredded cooked chicken (about 2 small drumsticks)": the count is all
        quantity, unit = counted[0], counted[1]
        rules.append("paren_count")
    measure = paren_measure(strip_noise(text), prepared.parentheticals)
    each = None if measure else each_clause(main)
    if each and quantity is not None:
        quantity, unit, measure = quantity * each.quantity, each.unit, None
        rules.append("each_clause")
    gloss = None if measure or each else gloss_mass(main)
    if gloss and quantity is not None:
        quantity, unit = gloss.quantity, gloss.unit
        rules.append("mass_gloss")
    piece, replaced = None, None
    if measure and _measure_wins(unit, measure.unit):
        if quantity is not None and unit:
            replaced = (quantity, unit)
        each = measure.each or per_container(quantity, unit, measure)
        quantity = measure.quantity * (quantity if each and quantity else 1.0)
        piece, unit = unit, measure.unit
        rules.append("paren_measure")
        if each and not measure.each:
            rules.append("size_per_container")
    if unit in SMALL_MEASURES and quantity is not None:
        quantity, unit = quantity * SMALL_MEASURES[unit], "teaspoon"
    food = _food_before_comma(main, clean_food(sliced.get("food"), unit), unit, rules)
    food = dropped_portion_noun(main, food, rules)
    strip = STRIP_STEAK.search(main) if unit == "strip" else None
    if strip:  # "2 New York strip steaks": the steaks are counted, "strip" names the cut
        food, unit = " ".join(strip.group(0).lower().split()), "steak"
        rules.append("strip_steak")
    moved = part_noun(food, unit)
    if moved:
        food, unit = moved  # "4 leaves iceberg lettuce", "12 pineapple rings": the part counts
        rules.append("part_noun")
    if unit in PRODUCT_UNITS and food and PRODUCT_UNITS[unit] not in food:
        food = f"{food} {PRODUCT_UNITS[unit]}"  # "8 tortillas flour or corn": flour tortillas
        rules.append("portion_noun")
    if food and piece in PORTION_UNITS and piece not in food:
        food = f"{food} {piece}"  # "6 chicken thighs (2 pounds)": the cut stays in the name
    if food is None or set(food.split()) <= STATE_ONLY_WORDS:
        # "1/2 stick ((4 tbsp) butter)", "4 boneless (skinless chicken breasts, sliced)": the
        # food sits in a parenthetical
        others = [p for p in prepared.parentheticals if not re.match(r"^[\d\s./-]", p)]
        food = clean_food(others[-1].split(",")[0], unit) if others else food
    parsed = ParsedLine(line, "unquantified", unit=unit, food=food,
                        prep=_prep_words(sliced, prepared.parentheticals),
                        size=[*(sliced.get("size_modifiers") or []),
                              *([counted[2]] if counted and counted[2] else [])],
                        problem=problem,
                        generic_grams=_quantity(sliced.get("gram_weight"))[0],
                        raw_food=_raw_food(sliced, food, rules),
                        states=line_states(text), rules=rules, replaced=replaced,
                        alternatives=[a for a in (clean_food(alt, unit)
                                                  for alt in prepared.alternatives) if a])
    grain_word, _, rest = (food or "").partition(" ")
    if "qual:whole_grain" in parsed.states and grain_word in ("grain", "wheat") and rest and \
            rest not in ("flour", "bread", "berries", "germ", "bran"):
        parsed.food = rest  # "whole-grain spaghetti": the slicer drops "whole"
    parsed.problem = parsed.problem or unreadable_number(text)
    if quantity is None or unit in VAGUE_UNITS:
        parsed.unit_kind = "vague" if unit in VAGUE_UNITS else None
        if parsed.problem:
            parsed.kind = "quantified"
        return parsed
    parsed.kind = "quantified"
    parsed.quantity = quantity
    parsed.unit_kind = unit_kind(unit)
    if parsed.unit_kind == "mass" and unit_kind(piece) != "volume" and \
            cooking_instruction(text):
        # "1 pound penne pasta, cooked al dente and drained": a pound of dry pasta, to cook
        # (not "1 cup (600 g) basmati rice, cooked": the cup is dry, the grams cooked)
        parsed.states = [s for s in parsed.states if s not in ("cooked", "boiled")]
        parsed.rules.append("cooking_instruction")
    parsed.generic_grams = _rescaled(parsed.generic_grams, sliced, quantity, unit)
    parsed.problem = parsed.problem or implausible_quantity(quantity, parsed.unit_kind, unit)
    _wing_parts(parsed)
    counted = parsed.unit_kind == "count" or \
        (replaced is not None and unit_kind(replaced[1]) == "count")
    if parsed.food in COUNTED_SENSE and (counted or set(parsed.prep) & FRESH_CUTS):
        # "1 red pepper, chopped", "1 medium red pepper (~1 cup)", "½ cup red pepper, diced":
        # a counted or cut red pepper is the vegetable, "1 bunch of coriander" the leaves;
        # measured by the spoon ("½ tsp red pepper", "1 tsp coriander") each stays the ground
        # spice
        parsed.food = COUNTED_SENSE[parsed.food]
        parsed.rules.append("counted_sense")
    return parsed


# Names that, measured by the spoon, are a ground spice, and counted or cut, the fresh plant.
COUNTED_SENSE = {"red pepper": "red bell pepper", "fresh red pepper": "red bell pepper",
                 "coriander": "coriander leaves", "fresh coriander": "coriander leaves"}
# Cuts of a fresh plant, never of a ground spice.
FRESH_CUTS = frozenset({"chopped", "diced", "sliced", "minced", "seeded", "cored", "julienned",
                        "cut", "slivered", "quartered", "halved"})


# A steak named by its cut "strip" (the slicer reads the word as a unit, as in "strips of
# bacon").
STRIP_STEAK = re.compile(r"(?i)\b(?:new\s+york\s+|ny\s+|kansas\s+city\s+)?strip\s+"
                         r"(?:steaks?|loins?)\b")


# A part of a food counted on its own: the count weighs the part, never the whole food.
PART_NOUNS = {"leaf": "leaf", "leaves": "leaf", "ring": "ring", "rings": "ring",
              "wedge": "wedge", "wedges": "wedge", "segment": "segment",
              "segments": "segment", "floret": "floret", "florets": "floret",
              "spear": "spear", "spears": "spear"}


def part_noun(food: str | None, unit: str | None) -> tuple[str, str] | None:
    """(the food, the part as the unit) when a counted line names a part of the food
    ("4 leaves iceberg lettuce", "12 pineapple rings", "6 cabbage leaves"); None otherwise
    (a mass or volume line weighs the food by its measure)."""
    words = (food or "").split()
    if not words or (unit and unit not in PART_NOUNS and unit not in words and
                     not (len(words) == 1 and words[0] in PART_NOUNS)):
        return None  # a measure or container counts ("1 can pineapple rings" is a can)
    if words[0] in PART_NOUNS and len(words) > 1:
        rest = [w for w in words[1:] if w != "of"]
        return (" ".join(rest), PART_NOUNS[words[0]]) if rest else None
    if words[-1] in PART_NOUNS:
        rest = words[:-1] or ([unit] if unit and unit not in PART_NOUNS else [])
        return (" ".join(rest), PART_NOUNS[words[-1]]) if rest else None
    return None


# A wing cut at its joints: the flat (wingette) and the drumette are each half of SR28's wing.
WING_PARTS = re.compile(r"(?i)\b(?:wingettes?|drumettes?|party wings?|wing (?:flats?|sections?))\b")


def _wing_parts(parsed: ParsedLine) -> None:
    """"24 chicken wingettes" are 12 wings: a count of wing parts is half as many wings."""
    if parsed.unit_kind == "count" and parsed.quantity and WING_PARTS.search(parsed.food or ""):
        parsed.quantity = parsed.quantity / 2
        parsed.food = WING_PARTS.sub("wings", parsed.food or "")
        parsed.rules.append("wing_parts")


# Staples bought dry and weighed dry: a cooking word after them on a line with a mass is what
# to do with them ("8 ounces orzo, cooked and well drained"), not the state they are weighed in.
DRY_STAPLES = re.compile(r"\b(?:pasta|spaghetti|linguine|fettuccine|penne|macaroni|noodles?|"
                         r"orzo|rigatoni|ziti|fusilli|rotini|farfalle|lasagne|lasagna|"
                         r"vermicelli|rice|quinoa|couscous|barley|bulgur|lentils?|beans?|"
                         r"chickpeas?)\b")
COOKING_INSTRUCTION = re.compile(r"\b(?:cooked|boiled)\b")


def cooking_instruction(text: str) -> bool:
    """A dry staple with a cooking word only after it: cooking is the instruction."""
    lowered = text.lower()
    staple = DRY_STAPLES.search(lowered)
    cooking = COOKING_INSTRUCTION.search(lowered)
    return bool(staple and cooking and cooking.start() > staple.end())


# Preparation words SR28 portion names use ("1 cup, shredded"); found anywhere on the line.
PORTION_PREP = ("shredded", "grated", "chopped", "diced", "sliced", "packed", "crumbled",
                "cubed", "mashed", "pureed", "melted", "whipped", "sifted", "halves", "pieces",
                "minced", "crushed", "ground", "flaked", "cooked")


def _prep_words(sliced: dict, parentheticals: list[str]) -> list[str]:
    """The slicer's preparation words plus portion words written in parentheses
    ("3 cups Monterey Jack (shredded)")."""
    prep = list(sliced.get("prep") or [])
    inside = " ".join(parentheticals).lower()
    prep += [w for w in PORTION_PREP if re.search(rf"\b{w}\b", inside) and w not in prep]
    return prep


def _food_before_comma(main: str, food: str | None, unit: str | None,
                       rules: list[str]) -> str | None:
    """The food named before the first comma when the slicer took words from after it
    ("1 lb Brussels sprouts, outer leaves removed" -> "brussels sprouts", not "... removed")."""
    head = main.split(",")[0]
    if food is None or head == main or not re.match(r"^\s*\d", head):
        return food
    before = set(re.findall(r"[a-z0-9%'-]+", head.lower()))
    if set(food.split()) <= before:
        return food
    shorter = clean_food(IngredientSlicer(head).to_json().get("food"), unit)
    describes = DESCRIPTOR_WORDS | STATE_ONLY_WORDS  # "boneless, skinless chicken thighs"
    if shorter and (unit == "egg" or not set(shorter.split()) <= describes):
        rules.append("food_before_comma")
        return shorter
    return food


# Words that describe a food without naming one: "4 red, very hot dried cayenne peppers" names
# its food after the comma ("red" alone had matched red cabbage, "10 flat, crisp puris" an emu
# fillet). After the unit "egg", "white" is the egg's white ("1 egg white, whipped").
DESCRIPTOR_WORDS = {"red", "green", "yellow", "white", "black", "brown", "purple",
                    "golden", "large", "small", "medium", "big", "little", "flat", "thin",
                    "thick", "crisp", "crispy", "hot", "mild", "sweet", "ripe", "unripe",
                    "very", "whole", "soft", "hard", "firm", "young", "old", "baby", "mini",
                    "standard", "regular", "ordinary", "good", "fresh",
                    # how a dairy food or a product is sold: "Plain, non-fat Greek yogurt"
                    "plain", "unsweetened", "sweetened", "salted", "unsalted", "organic",
                    "natural", "original", "lite", "light", "nonfat", "non-fat", "lowfat",
                    "low-fat", "reduced-fat", "full-fat", "skim", "fat-free",
                    # texture: "4 tbsp crunchy, unsweetened peanut butter"
                    "crunchy", "smooth", "creamy", "chunky"}


def _raw_food(sliced: dict, food: str | None, rules: list[str]) -> str | None:
    """The slicer's own food name, unless it lost a noun we put back ("cinnamon" of
    "cinnamon rolls" is another food)."""
    if "portion_noun" in rules:
        return food
    return " ".join(str(sliced.get("food") or "").lower().split()) or None


# Unit words the slicer drops from a food name that make another food ("cinnamon rolls" are
# not cinnamon, "short ribs" not "short"); cut words (breast, fillet) name a part of the same
# food and are read as states instead.
# Nouns of a fruit spread too: the slicer reads "jelly" as a preparation ("¾ cup apple jelly"
# -> "apple"), which leaves the fruit.
PRODUCT_NOUNS = ("roll", "bun", "bagel", "muffin", "biscuit", "cookie", "cracker", "rib",
                 "jelly", "jellie", "jam", "marmalade", "preserve")
# Units the slicer reads that are the product itself: the food it names is their kind.
PRODUCT_UNITS = {"tortilla": "tortillas"}


def dropped_portion_noun(main: str, food: str | None, rules: list[str]) -> str | None:
    """A product noun the slicer drops because it is also a unit word ("2 lbs short ribs" ->
    "short", "2 cans cinnamon rolls" -> "cinnamon") put back when the line names it right
    after the food."""
    if not food:
        return food
    nouns = "|".join(sorted(PRODUCT_NOUNS))
    found = re.search(rf"\b{re.escape(food)}\s+((?:{nouns})s?)\b", main.lower())
    if not found:
        return food
    rules.append("portion_noun")
    return f"{food} {found.group(1)}"


def _rescaled(grams: float | None, sliced: dict, quantity: float, unit: str | None
              ) -> float | None:
    """The slicer's gram estimate for the quantity we kept (None when the unit changed)."""
    if unit != sliced.get("standardized_unit"):
        return None
    sliced_quantity = _quantity(sliced.get("quantity"))[0]
    if grams is None or not sliced_quantity:
        return grams
    return grams * quantity / sliced_quantity


def _own_quantity(main: str, quantity: float | None, unit: str | None,
                  rules: list[str]) -> tuple[float | None, str | None]:
    """The line's own leading number wins over the slicer's (which multiplies numbers it finds
    later in the line: "2 lbs. ground beef 7-20 % fat" -> 14 lbs)."""
    leading = leading_quantity(main)
    if leading is None:
        if quantity is not None and not re.search(r"\d", main):
            rules.append("number_word_ignored")  # "Thousand Island dressing" is no quantity
            return None, unit
        return quantity, unit
    if leading.unit:
        if (quantity, unit) != (leading.quantity, leading.unit):
            rules.append("pack_size")
        return leading.quantity, leading.unit
    if quantity is not None and abs(quantity - leading.quantity) > 1e-9:
        rules.append("leading_number")
    return leading.quantity, unit


def _measure_wins(unit: str | None, measure_unit: str) -> bool:
    """A parenthetical measure replaces a count or container ("1 (15 oz) can"), and a mass
    replaces a volume ("1 cup (220 g)"); a mass on the line itself stays."""
    kind = unit_kind(unit)
    return kind == "count" or (kind == "volume" and measure_unit in MASS_UNITS)


# Foods whose "light" version is a reduced-fat one.
LIGHT_FAT_FOODS = r"sour cream|cream cheese|butter|margarine|coconut milk|coconut cream|" \
    r"cheddar(?: cheese)?|mozzarella(?: cheese)?|ricotta(?: cheese)?|feta(?: cheese)?|" \
    r"cheese|ice cream|whipped topping|cool whip|mayo(?:nnaise)?|ranch(?: dressing)?"
# Qualifiers that make another food and must survive into the SR28 entry.
QUALIFIER_PATTERNS = {
    "gluten_free": re.compile(r"\bgluten[- ]?free\b|\bgf\b"),
    # "low or no sodium" / "low/no-sodium" is either one: not the salted food
    "low_sodium": re.compile(r"\b(?:low|reduced|less)(?:\s*(?:or|/)\s*no)?[- ](?:sodium|salt)\b|"
                             r"\bno[- ]salt[- ]added\b|"
                             r"\bunsalted\b|"
                             r"\b(?:sodium|salt)[- ]free\b"),
    "reduced_fat": re.compile(r"\b(?:reduced|low|lower)[- ]fat\b|\bfat[- ]free\b|"
                              r"\bnon[- ]?fat\b|\bskim(?:med)?\b|\blowfat\b|"
                              # "light" is less fat only before a fatty food ("light sour
                              # cream"), not light cream, brown sugar, corn syrup or soy sauce
                              rf"\b(?:light|lite)\s+(?:{LIGHT_FAT_FOODS})\b|"
                              r"(?<![\d.])[12]\s*%\s*(?:(?:milk)?fat\s+)?"
                              r"(?:milk|milkfat|greek|yogurt|cottage)\b"),
    "sugar_free": re.compile(r"\bsugar[- ]free\b|\bno[- ]sugar[- ]added\b"),
    "whole_grain": re.compile(r"\bwhole[- ]?(?:wheat|grain)\b|\bwhole ?meal\b"),
}
# A leanness said in words: USDA's "lean" ground beef is at most 10 % fat, "extra lean" at
# most 5 % (9 CFR 317.362); the entries at those limits
LEAN_WORD = re.compile(r"(?i)\b(?:extra[- ])?lean\b(?!\s+(?:and|&)\s+fat)")
WORDED_LEAN = {"lean": 90, "extra": 95}  # "lean", "extra lean"
# Meat still on its bone (weights are as purchased), unless the line says it is off.
BONE_IN = re.compile(r"(?i)\bbone[- ]?in\b|\bwhole\b[^,]*\b(chicken|hen|turkey|duck|fish|"
                     r"roaster|fryer)\b|\b(drumsticks?|wings?|wingettes?|drumettes?|spare ?ribs|"
                     r"short ribs|shanks?|chicken legs?|leg quarters?)\b|"
                     # a bird sold whole: "broiler/fryer chicken", "roasting chicken", "fat hen"
                     r"\b(?:broiler|fryer|roaster|roasting|stewing)\b[\w/ -]*\bchickens?\b|"
                     r"\b(?:fat|stewing|boiling)\s+hens?\b|"
                     # a count of birds weighed: "1 ea. (3-4 pounds) chicken", "2 (3 lb) ducks"
                     r"^\s*\d+\s*(?:ea\.?\s*)?\([^)]*\b(?:pounds?|lbs?|kg|kilos?|ounces?|oz)\b"
                     r"[^)]*\)\s*(?:whole\s+)?(?:[a-z/-]+\s+)?(?:chicken|hen|duck|goose|turkey|"
                     r"capon)s?\b(?!\s+(?:breast|thigh|leg|wing|drumstick|fillet|filet|tender))|"
                     # cuts sold on the bone: "chicken pieces", "beef ribs", "lamb neck", chops
                     r"\bwith (?:the )?bones?\b|\bchicken (?:pieces|parts|quarters?)\b|\bjointed\b|"
                     r"\bpieces of chicken\b(?!\s+(?:breasts?|thighs?|tenders?|fillets?))|"
                     r"\b(?:baby )?back ribs\b|"
                     r"\b(?:beef|pork|lamb|mutton|goat) (?:ribs|necks?)\b|"
                     # a bird cut up is jointed: "1 pound chicken, cut into pieces", "cut-up
                     # chicken" (a named cut, "chicken breast, cut into pieces", is not)
                     r"\bcut[- ]up\s+(?:whole\s+)?(?:chickens?|hens?|ducks?|rabbits?)\b|"
                     r"\b(?:chickens?|hens?|ducks?|rabbits?)\s*,\s*cut\s+(?:up|into\s+"
                     r"(?:\d+\s+|serving\s+|small\s+|large\s+)?pieces)\b|"
                     r"\bnecks? of (?:lamb|mutton|goat)\b|\bchops?\b|\bwhole\b[^,]*\brabbits?\b")
SKIN_OFF = re.compile(r"\bskins?\s+(?:removed|off|discarded)\b|"
                      r"\b(?:remove|removed|discard|discarded)\s+(?:the\s+)?skins?\b")
BONELESS = re.compile(r"(?i)\b(boneless|fillets?|filets?|ground|minced|mince|breast meat|"
                      r"meat only)\b")
CUTS = ("breast", "thigh", "drumstick", "wing", "leg", "belly", "shoulder", "tenderloin",
        "loin", "brisket", "chuck", "sirloin", "flank", "ribeye", "round")
# Pieces of meat or fish a line may count in a gloss when it gives no quantity of its own
COUNTED_CUTS = {"breast", "thigh", "drumstick", "wing", "leg", "fillet", "filet", "steak",
                "chop", "shank"}


# A qualifier the line rules out ("(not low-fat)", "instead of reduced-fat") does not count.
NEGATED_QUALIFIER = re.compile(r"\b(?:not|rather than|instead of|never)\s+(?:a\s+|the\s+)?"
                               r"[a-z]+[- ]?[a-z]+")
# A state the line negates ("not drained", "do not peel"): not the food's state.
NEGATED = re.compile(r"\b(?:not|never)\s+(?:be\s+)?[a-z]+")


# A qualifier offered as an option ("soy sauce (gluten-free if preferred)", "bread crumbs (or
# gluten-free)") does not count: the recipe's food is the plain one.
_CONDITION = r"if\s+(?:preferred|needed|necessary|desired|required|wanted|avoiding|you\s+" \
             r"(?:like|prefer|need|want|wish|are))\b"
OPTIONAL_QUALIFIER = re.compile(rf"\((?:\s*(?:or|optional(?:ly)?|can\s+use|sub(?:stitute)?)\b|"
                                rf"[^)]*\b(?:{_CONDITION}|works?\b|can\s+work|"
                                r"(?:is|would\s+be)\s+fine|"
                                r"(?:you\s+)?(?:can|could)\s+(?:also\s+)?use|"
                                r"would\s+(?:also\s+)?work))"
                                rf"[^)]*\)|"
                                rf"\b(?:use\s+)?[a-z]+(?:[- ][a-z]+)?,?\s+{_CONDITION}")


# A parenthetical that points elsewhere ("(for gluten free see note)", "(see below)") says
# nothing of the food this line uses.
NOTE_REFERENCE = re.compile(r"\([^)]*\b(?:see|note|notes|below|above)\b[^)]*\)")


def without_qualifiers(name: str) -> str:
    """``name`` without the words of :data:`QUALIFIER_PATTERNS` ("reduced fat creme
    fraiche" -> "creme fraiche"); the name itself when nothing else is left."""
    text = name.lower()
    for pattern in QUALIFIER_PATTERNS.values():
        text = pattern.sub(" ", text)
    return " ".join(text.split()) or name


def qualifier_text(lowered: str) -> str:
    """The part of a lower-cased line whose qualifiers describe the food used: negated
    qualifiers, qualifiers offered as options and later "or" alternatives outside parentheses
    removed."""
    text = OPTIONAL_QUALIFIER.sub(" ", NEGATED_QUALIFIER.sub(" ", lowered))
    text = NOTE_REFERENCE.sub(" ", text)
    outside = re.sub(r"\([^)]*\)", " ", text)
    if LATER_ALTERNATIVE.search(outside):
        inside = " ".join(re.findall(r"\([^)]*\)", text))
        text = LATER_ALTERNATIVE.sub(" ", outside) + " " + inside
    return text




# "2 cans", "½ can", "1 (15 oz) can": an amount, then a can or tin (unicode fractions too).
LEADING_CAN = re.compile(rf"^\s*[\d/. {''.join(FRACTIONS)}-]+.*\b(?:cans?|tins?)\b")


def line_states(text: str) -> list[str]:
    """State words on the line ("1 cup rice, cooked", "(drained)", "2 cans salmon"), in a fixed
    order; alternatives in parentheses ("(or frozen)") and states a "fresh" line rules out do
    not count; a named cut is "part:<cut>"."""
    lowered = NEGATED.sub(" ", own_text(text))
    words = set(re.findall(r"[a-zé]+", lowered))
    found = {LINE_STATE_WORDS[w] for w in words if w in LINE_STATE_WORDS}
    before_comma = re.sub(r"\([^)]*\)", " ", lowered).split(",")[0]
    if LEADING_CAN.match(before_comma):
        found.add("canned")
    if "fresh" in words or PATTED_DRY.search(lowered):
        found -= {"frozen", "canned", "dried"} if "fresh" in words else {"dried"}
    if SKIN_OFF.search(lowered):  # "chicken thighs, skin removed"
        found.add("skinless")
    if BONE_IN.search(first_alternative(text)) and not BONELESS.search(text):
        # the food used ("pork loin or pork chops" is a loin; "lamb or mutton breast chops"
        # are chops)
        found.add("bone_in")
    lean = re.search(r"\b([5-9]\d)\s*(?:(?:%|percent)\s*lean|%?\s*/\s*[1-4]?\d\b)", lowered)
    if lean:  # "90/10", "93% lean", "85%/15%", "90 percent lean"
        found.add(f"lean:{lean.group(1)}")
    elif worded := LEAN_WORD.search(first_alternative(text)):  # "lean beef mince"
        phrase = worded.group(0).lower()
        found.add(f"lean:{WORDED_LEAN['extra' if phrase.startswith('extra') else 'lean']}")
    for name, pattern in QUALIFIER_PATTERNS.items():
        if pattern.search(qualifier_text(lowered)):
            found.add(f"qual:{name}")
    # "1 whole chicken, cut into pieces (breast cut into 4 pieces)" is the whole bird
    cut_text = re.sub(r"\([^)]*\)", " ", lowered) if re.search(r"\bwhole\b", before_comma) \
        else lowered
    for cut in CUTS:
        if re.search(rf"\b{cut}s?\b", cut_text):
            found.add(f"part:{cut}")
            break
    return sorted(found)


def unreadable_number(text: str) -> str | None:
    """Scientific notation or a run of 6+ digits is not a kitchen quantity: name it."""
    match = re.search(r"\b\d+(?:\.\d+)?e[+-]?\d+\b|\b\d{6,}\b", text, re.I)
    return f"implausible quantity {match.group(0)!r}" if match else None


# Net weights of common US cans (grams): tuna 5 oz, paste 6 oz, sauce 8 oz, condensed soup
# 10.5-10.75 oz, evaporated milk 12 oz, coconut milk 13.5 oz, condensed milk 14 oz, tomatoes
# and broth 14.5 oz, beans and vegetables 15-16 oz, 19-20 oz, family size 28-29 oz.
CAN_NET_GRAMS = (142.0, 170.0, 227.0, 298.0, 305.0, 340.0, 383.0, 397.0, 411.0, 425.0, 432.0,
                 439.0, 454.0, 539.0, 567.0, 794.0, 822.0)
CONTAINERS = {"can", "cans", "tin", "tins", "jar", "jars"}
GRAMS_PER = {"gram": 1.0, "kilogram": 1000.0, "ounce": 28.3495, "pound": 453.592}


def per_container(count: float | None, unit: str | None, measure: Measure) -> bool:
    """A mass after several counted cans is each can's ("2 cans (14 ounces) sweetened
    condensed milk": two 14 oz cans) when it is a common can's net weight and its share per can
    is not ("2 cans (30 oz) kidney beans" are two 15 oz cans); otherwise the line's total."""
    if not count or count <= 1 or unit not in CONTAINERS or measure.unit not in GRAMS_PER:
        return False
    grams = measure.quantity * GRAMS_PER[measure.unit]
    return _can_size(grams) and not _can_size(grams / count)


def _can_size(grams: float) -> bool:
    return any(abs(grams - can) <= 0.02 * can for can in CAN_NET_GRAMS)


def implausible_quantity(quantity: float, kind: str, unit: str | None) -> str | None:
    """A quantity beyond any recipe line for its kind of unit (grams for mass units)."""
    amount = quantity
    if kind == "mass":
        amount = convert(quantity, unit, "gram")
    elif kind == "volume" and unit not in ("cup", "tablespoon", "teaspoon"):
        amount = convert(quantity, unit, "cup")
    if amount > max_quantity()[kind]:
        return f"implausible quantity {quantity:g} {unit or 'items'}"
    return None


def unit_kind(unit: str | None) -> str:
    """mass, volume or count (no unit, or a word such as clove, slice, egg)."""
    if unit in MASS_UNITS:
        return "mass"
    if unit in VOLUME_UNITS:
        return "volume"
    return "count"


def _quantity(value: object) -> tuple[float | None, str | None]:
    if value in (None, ""):
        return None, None
    try:
        number = float(str(value))
    except ValueError:
        return None, f"non-numeric quantity {value!r}"
    if number <= 0:
        return None, f"quantity {value!r} is not positive"
    return number, None


# British spellings of food words -> the spelling SR28 and the reviewed map use.
SPELLINGS = {"yoghurt": "yogurt", "yoghurts": "yogurts", "yogourt": "yogurt"}


def clean_food(food: object, unit: str | None) -> str | None:
    """Lower-case food name without container words, a repeated unit word or filler."""
    if not food:
        return None
    folded = fold(str(food))
    words = [SPELLINGS.get(w, w) for w in re.split(r"[^a-z0-9%\-']+", folded) if w]
    unit_words = {unit, f"{unit}s"} if unit else set()
    kept = [w for w in words if w not in CONTAINERS and w not in FILLER_WORDS]
    if kept and kept[0] in unit_words and len(kept) > 1:
        kept = kept[1:]
    return " ".join(kept) or None
