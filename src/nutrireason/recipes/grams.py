"""Quantities -> grams: pint for mass and volume units, SR28 portion weights (WEIGHT) for
household measures and counts. Every figure says how it was obtained."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from nutrireason.recipes.backoff import EXAMPLE
from nutrireason.recipes.lines import FRACTIONS, parse_number
from nutrireason.recipes.parse import CUTS, MASS_UNITS, VOLUME_UNITS, ParsedLine
from nutrireason.recipes.units import SLICER_TO_PINT, convert

# SR28 Msre_Desc first words -> pint unit names
MEASURE_UNITS = {"cup": "cup", "cups": "cup", "tbsp": "tablespoon", "tablespoon": "tablespoon",
                 "tsp": "teaspoon", "teaspoon": "teaspoon", "fl oz": "fluid_ounce",
                 "ml": "milliliter", "liter": "liter", "l": "liter", "quart": "quart",
                 "pint": "pint", "gallon": "gallon", "oz": "ounce", "lb": "pound",
                 "g": "gram", "kg": "kilogram"}
SIZE_WORDS = ("medium", "large", "small", "extra large", "jumbo")
# Count units that hold an amount of their own: weighed only by a portion that names them
# (another portion, a glass of water for "3 ice cubes" or a sprig for "1 bunch", is another
# amount).
NO_FALLBACK_UNITS = {"cube", "cubes", "bunch", "bunches", "handful", "handfuls", "package",
                     "packages", "packet", "packets", "bag", "bags", "box", "boxes", "jar",
                     "jars", "bottle", "bottles", "carton", "cartons", "sleeve", "sleeves",
                     "container", "containers", "can", "cans", "tin", "tins",
                     # a head is the whole vegetable: "1 head of celery" is not one stalk
                     "head", "heads",
                     # a cut piece is not the whole item: "20 carrot sticks" are not 20 carrots
                     "slice", "slices", "wedge", "wedges", "strip", "strips", "stick", "sticks",
                     "spear", "spears", "floret", "florets", "chunk", "chunks", "segment",
                     "segments", "heart", "hearts", "ring", "rings", "leaf", "leaves",
                     # a whole joint or loaf is not one slice or chop of it
                     "loaf", "loaves", "roast", "roasts", "joint", "joints", "hock", "hocks",
                     "ball", "balls"}
# Foods named by a whole joint ("1 city-style ham", "1 ham hock"): weighed only by a portion
# naming it, never by a slice of it.
WHOLE_ITEM_NOUNS = {"ham", "hams", "roast", "roasts", "hock", "hocks", "joint", "joints",
                    "loaf", "loaves", "ball", "balls"}
# A unit word and the words SR28 portions use for it, first named first ("1 rib celery" is a
# stalk; "2 sticks celery" is a stalk in British recipes, a carrot stick a strip).
UNIT_SYNONYMS = {"rib": ("stalk",), "ribs": ("stalk",), "envelope": ("packet",),
                 "strip": ("slice",), "strips": ("slice",), "ring": ("slice",),
                 "rings": ("slice",), "leaves": ("leaf",), "leaf": ("leaves",),
                 "box": ("package",), "tin": ("can",), "tins": ("can",),
                 "boxes": ("package",),
                 "sachet": ("packet",), "stick": ("stalk", "strip"), "cake": ("block",),
                 "sticks": ("stalk", "strip"), "head": ("bunch",), "heads": ("bunch",)}
# Foods a store sells one to a package or box: "1 package store-bought angel food cake" is
# one cake (SR28's "cake (9" dia x 4")"), a package of pound cake one loaf, not a pack of
# slices.
ONE_PER_PACKAGE = ("cake", "pie")
WHOLE_ITEM_WORDS = ("loaf",)
PACKAGE_UNITS = {"package", "packages", "box", "boxes"}


@dataclass(frozen=True)
class Weighed:
    grams: float | None
    method: str | None
    problem: str | None = None
    relative: str | None = None  # the SR28 entry whose portion weighed it, when not its own


@dataclass(frozen=True)
class Portion:
    """One SR28 WEIGHT row: ``amount`` ``measure`` weighs ``grams``; ``unit`` for volumes."""

    amount: float
    measure: str
    grams: float
    unit: str | None

    @property
    def text(self) -> str:
        return self.measure.lower()

    def describe(self) -> str:
        return f"sr28_weight:{self.amount:g} {self.measure}={self.grams:g} g"


NON_VOLUME = {"ounce", "pound", "gram", "kilogram"}
# Words that say the pieces are a small kind: the food's small portion, else its lightest.
SMALL_KINDS = re.compile(r"(?i)\b(mini|baby|pickling|cocktail|petite|snack[- ]size)\b")
# Portion words for a food in another state than the line's ("1 cup, whipped" is half the
# weight of a cup of the liquid cream): used only when the line says so.
CHANGED_STATE = {"whipped", "mashed", "pureed", "melted", "sifted", "thawed", "cooked",
                 "crumbled", "unthawed", "spooned"}


class Weigher:
    """Grams for a parsed line and a matched SR28 food, from the WEIGHT table."""

    def __init__(self, weights: pd.DataFrame,
                 unit_weights: dict[str, dict[str, float]] | None = None,
                 overrides: dict[str, dict[str, float]] | None = None,
                 small_foods: set[str] | None = None) -> None:
        """``unit_weights``: reviewed grams per unit (ndb_no -> {unit: grams}) for measures
        WEIGHT lacks; they join the food's per-piece portions. ``overrides``: reviewed grams
        per unit that replace SR28's portions of that unit (SR28 weighs one slice of French
        bread at 139 g)."""
        self.by_food: dict[str, list[Portion]] = {}
        # entries that are the small kind themselves ("Carrots, baby"): their medium is it
        self.small_foods = small_foods or set()
        ordered = weights.sort_values(["ndb_no", "seq"])
        for ndb, amount, measure, grams in ordered[["ndb_no", "amount", "measure",
                                                     "grams"]].itertuples(index=False):
            if amount and amount > 0:
                self.by_food.setdefault(ndb, []).append(sr28_portion(amount, measure, grams))
        for portions in self.by_food.values():  # "1 oz (18 kernels)": one kernel too
            portions += [piece for portion in list(portions) for piece in counted_in_mass(portion)]
        for portions in self.by_food.values():  # a serving given as a volume comes last
            portions.sort(key=lambda p: p.measure.endswith(")") and "(serving" in p.measure)
        for ndb, units in (unit_weights or {}).items():  # after SR28's own portions
            for unit, grams in units.items():
                self.by_food.setdefault(ndb, []).append(Portion(1.0, unit, grams, None))
        for ndb, units in (overrides or {}).items():
            kept = [p for p in self.by_food.get(ndb, []) if _first_word(p.text) not in units]
            self.by_food[ndb] = kept + [Portion(1.0, u, g, None) for u, g in units.items()]

    def weigh(self, parsed: ParsedLine, ndb_no: str | None) -> Weighed:
        if parsed.kind != "quantified" or parsed.quantity is None:
            return Weighed(None, None, "no quantity")
        if parsed.unit_kind == "mass":
            return Weighed(convert(parsed.quantity, parsed.unit, "gram"), f"mass:{parsed.unit}")
        portions = self.by_food.get(ndb_no, []) if ndb_no else None
        if portions is None:
            return Weighed(None, None, "no SR28 food to weigh")
        if parsed.unit_kind == "volume":
            return self._volume(parsed, portions)
        return self._count(parsed, portions, ndb_no)

    def _volume(self, parsed: ParsedLine, portions: list[Portion]) -> Weighed:
        volume = [p for p in portions if p.unit and p.unit not in NON_VOLUME]
        if not volume:
            if parsed.generic_grams:
                return Weighed(parsed.generic_grams, "generic_density:ingredient-slicer")
            return Weighed(None, None, f"SR28 has no volume portion for {parsed.unit}")
        same_unit = [p for p in volume if p.unit == SLICER_TO_PINT.get(parsed.unit, parsed.unit)]
        ground = [p for p in volume if re.search(r"\bground\b", p.text)] \
            if milled(parsed.food) else []
        portion = _prefer(ground or same_unit or volume, portion_words(parsed))
        amount = convert(parsed.quantity, parsed.unit, portion.unit)
        return Weighed(amount / portion.amount * portion.grams, portion.describe())

    def _count(self, parsed: ParsedLine, portions: list[Portion], ndb_no: str) -> Weighed:
        countable = [p for p in portions if p.unit is None]
        if not countable:
            return Weighed(None, None, f"SR28 has no per-piece portion for {parsed.unit or 'item'}")
        head = (parsed.food or "").split()[-1:]
        own_noun = bool(head) and parsed.unit is not None and \
            head[0].rstrip("s").startswith(parsed.unit.rstrip("s"))
        sizes = [*parsed.size, *(SIZE_FALLBACK[w] for w in parsed.size if w in SIZE_FALLBACK)]
        if own_noun:  # "12 cherry tomatoes": the kind, the size, then the noun
            kinds = [KIND_SYNONYMS.get(w, w) for w in (parsed.food or "").split()[:-1]]
            wanted = [w for w in [*kinds, *sizes, parsed.unit] if w]
        else:
            wanted = [w for w in [parsed.unit, *sizes] if w]
        piece = _one_per_package(parsed, countable, head)
        if piece:  # a package of a cake holds the cake
            wanted = [piece, *parsed.size]
        piece = piece or parsed.unit
        if parsed.unit is None:  # a container the line names ("1 block firm tofu") is its piece
            wanted += [w for w in sorted(CONTAINER_MEASURES)
                       if re.search(rf"(?i)\b{w}\b", parsed.line)]
            # then a portion named by the food's own words ("20 wonton wrappers": SR28's
            # wonton wrapper, not its first portion, an egg roll wrapper)
            wanted += [w for w in (parsed.food or "").split() if len(w) > 2]
        synonym = next((word for word in UNIT_SYNONYMS.get(parsed.unit or "", ())
                        if _names(countable, word)), None)
        if synonym and not _names(countable, parsed.unit):
            wanted = [synonym if w == parsed.unit else w for w in wanted]
        elif parsed.unit in NO_FALLBACK_UNITS and not _names(countable, piece):
            # "3 ice cubes", "1 bunch cilantro": no portion of that unit; another portion (a
            # glass of water, a sprig) would be another amount
            return Weighed(None, None, f"SR28 has no per-{parsed.unit} portion for this food")
        whole = whole_item(parsed)
        if whole and not _names(countable, whole):
            # "1 city-style ham", "1 large tin of corned beef": not a slice of it
            return Weighed(None, None, f"SR28 has no per-{whole} portion for this food")
        across = stated_diameter(parsed.line)
        sized = [p for p in countable if portion_diameter(p.text)]
        counts_slices = any(word.startswith(("slice", "ring")) for word in
                            [parsed.unit or "", *(parsed.food or "").split()[-1:]])
        thick = stated_thickness(parsed.line) if counts_slices else None
        slices = [p for p in countable if portion_thickness(p.text)] if thick else []
        if across and sized:  # "12 (6-inch) flour tortillas": the portion of that diameter
            portion = min(sized, key=lambda p: abs(portion_diameter(p.text) - across))
        elif thick and slices:  # "4 ½-inch thick pineapple slices": the slice that thick
            portion = min(slices, key=lambda p: abs(portion_thickness(p.text) - thick))
        elif SMALL_KINDS.search(parsed.line) and ndb_no not in self.small_foods:
            # "5 mini cucumbers", "12 pickling cucumbers"
            portion = _small_piece(countable)
            if portion is None:  # SR28's only cucumber is 8 inches long: not a mini one
                return Weighed(None, None, "SR28 has no small portion for this food")
        else:
            portion = _pick_count(countable, wanted, parsed.unit)
            if portion is None:  # "15 pieces tofu": a quarter block is no piece
                return Weighed(None, None, f"SR28 has no per-{parsed.unit or 'item'} portion "
                                           "for this food")
        if portion.amount == 0.5 and HALF_PIECES.search(portion.text):
            # SR28 weighs a breast or a large fish's fillet by the half (one side of the bird,
            # half a side of salmon): that half is the piece a recipe counts ("2 chicken breast
            # halves", "4 salmon fillets"), not two of it
            return Weighed(parsed.quantity * portion.grams,
                           f"{portion.describe()} (the half is one piece)")
        return Weighed(parsed.quantity / portion.amount * portion.grams, portion.describe())


def whole_item(parsed: ParsedLine) -> str | None:
    """The whole item a line without a unit counts: a joint its food ends with ("ham",
    "roast", "hock"), or a can or tin it names; a cut read as the unit counts the joint too
    ("1 beef tenderloin roast" is a roast, not a tenderloin steak)."""
    if parsed.unit is not None and parsed.unit.rstrip("s") not in CUTS:
        return None
    head = (parsed.food or "").split()[-1:]
    if head and head[0] in WHOLE_ITEM_NOUNS:
        return head[0].rstrip("s")
    if parsed.unit is not None:
        return None
    found = re.search(r"(?i)(?:\d|\ba|\bone|\blarge|\bsmall)\s+(?:\([^)]*\)\s*)?(cans?|tins?)\b",
                      parsed.line)
    return found.group(1).lower().rstrip("s") if found else None


HALF_PIECES = re.compile(r"^(?:breast|fillet|filet)s?\b")
# A diameter stated with the count, before the food ("6 (8-inch) tortillas", "2 10" pitas");
# a burrito-size tortilla is the 10-inch one. "cut into 1-inch pieces" says no size.
_LEADING_DIAMETER = re.compile(r'^\s*\d+(?:\.\d+|\s+\d+/\d+|/\d+)?\s*(?:ea\.?\s*)?'
                               r'(?:(?:large|small|medium)\s*)?\(?(?:[^)\d]*\babout\s+)?\s*'
                               r'(\d+(?:\.\d+)?)\s*-?\s*(?:inch(?:es)?\b|in\.|"|”)', re.I)
_BURRITO_SIZE = re.compile(r"(?i)\bburrito[- ]?(?:size|sized|style)\b")
BURRITO_INCHES = 10.0
# SR28 writes 6 1/2 inches as 6-1/2" and a range as 7-8".
_PORTION_DIAMETER = re.compile(r'(?<![\d/])(\d+)(?:-(\d+)/(\d+)|\s*-\s*(\d+))?\s*"\s*dia')


def stated_diameter(line: str) -> float | None:
    """Inches across that a line gives its pieces, if any."""
    found = _LEADING_DIAMETER.search(line)
    if found:
        return float(found.group(1))
    return BURRITO_INCHES if _BURRITO_SIZE.search(line) else None


_STATED_THICKNESS = re.compile(r"(?i)(\d+(?:\.\d+)?(?:\s*/\s*\d+)?|[½¼¾⅓⅔⅛])\s*-?\s*"
                               r"(inch(?:es)?|in\.?|\"|cm)\s*-?\s*thick\b")
_PORTION_THICKNESS = re.compile(r"(\d+(?:-\d+/\d+|/\d+)?)\"\s*thick")


def stated_thickness(line: str) -> float | None:
    """Inches thick that a line cuts its slices ("½-inch thick", "1 cm thick"), if any."""
    found = _STATED_THICKNESS.search(line)
    if not found:
        return None
    value = parse_number(FRACTIONS.get(found.group(1), found.group(1).replace(" ", "")))
    if value is None:
        return None
    return value / 2.54 if found.group(2).lower() == "cm" else value


def portion_thickness(measure: str) -> float | None:
    """Inches thick of an SR28 portion ("slice (3-1/2\" dia x 1/2\" thick)" -> 0.5)."""
    found = _PORTION_THICKNESS.search(measure)
    return parse_number(found.group(1)) if found else None


def portion_diameter(measure: str) -> float | None:
    """Inches across of an SR28 portion ("tortilla (approx 7-8" dia)" -> 7.5)."""
    found = _PORTION_DIAMETER.search(measure)
    if not found:
        return None
    whole, numerator, denominator, upper = found.groups()
    if numerator:
        return int(whole) + int(numerator) / int(denominator)
    return (int(whole) + int(upper)) / 2 if upper else float(whole)


def small_kind_foods(foods: pd.DataFrame) -> set[str]:
    """Entries whose description names a small kind ("Carrots, baby, raw")."""
    return {ndb for ndb, text in zip(foods["ndb_no"], foods["description"], strict=True)
            if SMALL_KINDS.search(str(text))}


# Kind words a line uses for one SR28 names otherwise ("roma tomatoes" are plum tomatoes).
KIND_SYNONYMS = {"roma": "plum"}
# A size SR28 has no portion for, and the nearest it has ("2 huge onions" are large ones, not
# medium; SR28's own "extra large" egg is used where it exists).
SIZE_FALLBACK = {"huge": "large", "big": "large", "giant": "large", "extra large": "large",
                 "extra-large": "large", "jumbo": "large", "little": "small", "tiny": "small"}


def _one_per_package(parsed: ParsedLine, countable: list[Portion], head: list[str]
                     ) -> str | None:
    """The whole-item portion word for a package of a food sold one to a package."""
    if parsed.unit not in PACKAGE_UNITS or not head or \
            not head[0].rstrip("s").endswith(ONE_PER_PACKAGE):
        return None
    return next((word for word in (head[0].rstrip("s"), *ONE_PER_PACKAGE, *WHOLE_ITEM_WORDS)
                 if any(re.search(rf"(?:^|,)\s*{word}s?\b", _outside_parentheses(p.text))
                        for p in countable)), None)


def _leads(portion: Portion, unit: str) -> bool:
    """The measure's own noun is ``unit``: it starts the measure or a part after a comma."""
    stem = re.escape(unit.lower().rstrip("s"))
    # "wedge or slice (1/8 of one lemon)": the slice is the measure's noun too, as the cube
    # of sugar's "serving 1 cube" and the packet of its "serving packet"
    return bool(re.search(rf"(?:^|,|\bor|\bserving(?:\s+\d+)?)\s*{stem}",
                          _outside_parentheses(portion.text)))


def _outside_parentheses(text: str) -> str:
    """A measure's own words: "wedge (1/8 of one lemon)" -> "wedge"."""
    return re.sub(r"\([^)]*\)", " ", text)


def _names(portions: list[Portion], unit: str) -> bool:
    """Some portion's measure names ``unit`` ("slice" in "1 slice, large")."""
    pattern = re.compile(rf"\b{re.escape(unit.lower().rstrip('s'))}")
    return any(pattern.search(_outside_parentheses(p.text)) for p in portions)


# "serving 1/2 cup", "serving (2 tbsp)": a serving SR28 gives as a volume.
_SERVING_VOLUME = re.compile(r"(?i)^serving\s*\(?\s*(\d+/\d+|\d+(?:\.\d+)?)\s*"
                             r"(cups?|tbsp|tsp|fl oz|ml)\b")


def sr28_portion(amount: float, measure: str, grams: float) -> Portion:
    """A WEIGHT row as a portion; a serving stated as a volume is that volume ("1 serving 1/2
    cup" of vanilla ice cream is half a cup, 66 g)."""
    serving = _SERVING_VOLUME.match(str(measure).strip())
    if serving:
        number, unit = serving.groups()
        top, _, bottom = number.partition("/")
        size = float(top) / float(bottom) if bottom else float(top)
        return Portion(float(amount) * size, f"{unit.rstrip('s')} ({measure})", float(grams),
                       measure_unit(unit))
    return Portion(float(amount), str(measure), float(grams), measure_unit(measure))


# An SR28 mass portion that counts its pieces: "oz (18 kernels)", "oz (10-12 kernels)",
# "oz shelled (32 nuts)", "oz (19 halves)".
COUNTED_MASS = re.compile(r"(?i)^oz\b[^(]*\((\d+)(?:-\d+)?\s+(?:whole\s+)?(kernels|halves|nuts|"
                          r"almonds|seeds)\)")
COUNTED_PIECE = "counted in the ounce"  # the measure text of a piece derived from one


def counted_in_mass(portion: Portion) -> list[Portion]:
    """One piece of a mass portion that counts them ("1 oz (18 kernels)": a kernel weighs
    28.35 / 18 g), for lines that count nuts ("12 cashews", "24 pecan halves"); the first
    number of a range ("10-12 kernels"). Halves give a whole nut (two halves) first: "3
    walnuts" are three nuts, "24 pecan halves" the halves."""
    found = COUNTED_MASS.search(portion.measure)
    if found is None or portion.unit != "ounce":
        return []
    count, noun = int(found.group(1)), found.group(2).lower()
    piece = Portion(portion.amount * count, f"{noun} ({COUNTED_PIECE}: {portion.measure})",
                    portion.grams, None)
    if noun != "halves":
        return [piece]
    return [Portion(portion.amount * count / 2, f"nut (two halves {COUNTED_PIECE}: "
                                                f"{portion.measure})", portion.grams, None), piece]


def measure_unit(measure: str) -> str | None:
    """The pint unit of an SR28 measure ("cup, chopped" -> cup; "large" -> None)."""
    text = str(measure).lower().strip()
    for key in sorted(MEASURE_UNITS, key=len, reverse=True):
        if re.match(rf"{re.escape(key)}\b", text):
            return MEASURE_UNITS[key]
    return None


def _first_word(measure: str) -> str:
    """The unit word a measure starts with: "slice, large (...)" -> "slice"."""
    words = re.findall(r"[a-z]+", measure.lower())
    return words[0] if words else ""


# Words SR28 portions use for the same thing a line says otherwise: grated semi-hard cheese
# is shredded; macaroni is "elbows".
# A line's word for a cut and the word SR28's portions use for it ("cubed bread" is SR28's
# "cup, cubes" of bread, 35 g, not its "cup, crumbs").
PORTION_SYNONYMS = {"grated": "shredded", "macaroni": "elbows", "cubed": "cubes",
                    "crumbled": "crumbs"}
# Cuts whose cup another entry of the same kind can lend (cut pieces hold air alike).
CUT_PORTIONS = {"cubes", "crumbs", "grated", "shredded"}


def portion_words(parsed: ParsedLine) -> list[str]:
    """Words that pick a volume portion, best first: the line's preparation, its synonyms,
    the food's own words (a shape: "elbow macaroni", "pasta shells"), then the first example
    the line gives ("1 cup small pasta, like elbows or shells" is weighed as elbows)."""
    found = list(parsed.prep)
    found += [PORTION_SYNONYMS[w] for w in parsed.prep if w in PORTION_SYNONYMS]
    # a cut the parser dropped from the food name ("1 cup bread cubes" parses as "bread")
    spelled = re.findall(r"[a-z]+", parsed.line.lower())
    found += [PORTION_SYNONYMS.get(w, w) for w in spelled
              if PORTION_SYNONYMS.get(w, w) in CUT_PORTIONS]
    food = (parsed.food or "").split()
    found += [PORTION_SYNONYMS.get(w, w) for w in food]
    example = EXAMPLE.search(parsed.line)
    if example:
        first = re.split(r"\s+(?:or|and)\s+", example.group(1).strip().lower())[0]
        found += [PORTION_SYNONYMS.get(w, w) for w in re.findall(r"[a-z]+", first)]
    found += parsed.size
    return list(dict.fromkeys(found))


def _prefer(portions: list[Portion], prep: list[str]) -> Portion:
    """The portion whose measure names the line's preparation as a word ("packed", not inside
    "unpacked"), else a plain one, else the first listed. Callers pass the portions in the
    line's own unit first (a cup line weighed by SR28's cup, not by its teaspoon x 48). A
    portion of another state or size than the line asks for comes after the others: "1 cup
    chocolate chips" is SR28's "cup chips", not its "cup large chips" listed first."""
    asked = {w.lower() for w in prep}
    unasked = (CHANGED_STATE | set(SIZE_WORDS) | {"mini"}) - asked
    portions = sorted(portions, key=lambda p: bool(set(
        re.findall(r"[a-z]+", p.text.split("(")[0])) & unasked))
    for word in prep:
        pattern = re.compile(rf"\b{re.escape(word.lower())}s?\b")
        for portion in portions:
            if pattern.search(portion.text):
                return portion
    plain = [p for p in portions if "," not in p.text]
    return (plain or portions)[0]


def milled(food: str | None) -> bool:
    """A nut or seed "flour" or "meal" is the food ground: it is weighed by SR28's ground
    portion where the food has one ("1 cup almond flour" is 95 g, not the 143 g of whole
    almonds; flaxseed meal by the ground tablespoon, 7 g)."""
    return bool(food) and food.split()[-1] in ("flour", "meal")


def _small_piece(portions: list[Portion]) -> Portion | None:
    """The food's "small" portion; None when it has none (a medium or whole piece is
    another size)."""
    if any(re.search(r"\bsmall\b", p.text) for p in portions):
        return _pick_count(portions, ["small"])
    return None


def _pick_count(portions: list[Portion], wanted: list[str], unit: str | None = None
                ) -> Portion | None:
    """Per-piece portion: one naming the unit or size word (outside its parentheses: a lemon
    wedge's "(1/8 of one lemon)" is no lemon; the unit as the measure's own noun: "Italian
    tomato" is a kind of tomato, not "a tomato"), else medium, else a whole fruit, else the
    first; a whole carcass's yield ("1 unit (yield from 1 lb ready-to-cook chicken)") last."""
    portions = sorted(portions, key=lambda p: "yield from" in p.text)
    # a cut piece or a container is never a medium or whole fruit ("4 lemon slices")
    whole = [] if unit in NO_FALLBACK_UNITS else ["medium", "fruit"]
    for index, word in enumerate([*wanted, *whole]):
        found = [p for p in portions if (_leads(p, word) if word == unit else _names([p], word))]
        if found:
            # "1 head lettuce": of the head portions, the one of the line's size, else medium
            for size in [*wanted[index + 1:], "medium"]:
                sized = [p for p in found if _names([p], size)]
                if sized:
                    return sized[0]
            # no size asked and no medium: the plain piece, not a large or thin one listed
            # first ("4 slices toast": SR28's "slice", not its "slice, large")
            return min(found, key=lambda p: (bool(OTHER_SIZE.search(p.text.split("(")[0])),
                                             len(p.text.split("(")[0].split())))
    # nothing names the piece: the first plain portion, never a container or a share of one
    # ("20 cherries" are not 20 packages, "15 pieces tofu" not 15 quarter blocks)
    if unit in NO_FALLBACK_UNITS:
        return None
    return next((p for p in portions if _first_word(p.text) not in CONTAINER_MEASURES), None)


# A piece's size words other than medium, in an SR28 measure ("very thin" is thin).
OTHER_SIZE = re.compile(r"\b(?:" + "|".join(
    word for word in (*SIZE_WORDS, "mini", "thin", "thick") if word != "medium") + r")\b")
# SR28 measures that hold many pieces of a food.
CONTAINER_MEASURES = {"package", "pack", "pkg", "can", "jar", "box", "bottle", "container",
                      "block", "bag", "carton", "tub", "loaf", "envelope", "packet"}


__all__ = ["MASS_UNITS", "VOLUME_UNITS", "Portion", "Weighed", "Weigher", "convert",
           "measure_unit"]
