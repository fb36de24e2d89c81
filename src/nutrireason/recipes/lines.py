"""Text rules applied to an ingredient line before ``ingredient-slicer`` sees it.

Each rule is one small function with one job, so that each error class found in real recipe
lines has one clear, tested fix:

- :func:`strip_noise`: HTML, temperatures ("105°F"), note references ("[See Note 1]"), emoji;
- :func:`split_parentheticals`: "(15-ounce)", "(about 3 pounds)", "(drained)" leave the main
  text (the slicer multiplies numbers it finds in them: "4 lbs roast (cut into 4 chunks)" would
  read as 16 lbs) and are kept aside, for a measure or state words;
- :func:`first_alternative`: "X or Y" keeps X ("1 cup yogurt or sour cream");
- :func:`expand_abbreviations`: "2 TB oil" -> tablespoon; "about", "scant", "heaping" go;
  "1 - 3 pound whole chicken" is one 3-pound chicken, not a 1-3 pound range;
- :func:`set_aside_clauses`: "cut into 1/2-inch slices" and "X with Y" leave the main text (a
  unit word in how a food is cut is not the line's unit; "cream cheese with chives" is cream
  cheese); they are kept aside with the parentheticals;
- :func:`leading_quantity`: the number that starts the line ("1 1/2", "1-1/2", "½", "2-3" as
  the range's first number, "2 14-ounce cans" as 2 x 14 ounces);
- :func:`paren_measure`: a measure in a parenthetical ("(15 oz)", "(about 3 pounds)", "(220g)");
- :func:`each_clause`: a size per item after a comma ("4 salmon fillets, about 6 oz each");
- :func:`gloss_mass`: the line's mass after a count ("1 pork shoulder roast, about 4 lb").
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from functools import lru_cache

FRACTIONS = {"½": "1/2", "¼": "1/4", "¾": "3/4", "⅓": "1/3", "⅔": "2/3", "⅛": "1/8",
             "⅜": "3/8", "⅝": "5/8", "⅞": "7/8", "⅕": "1/5", "⅙": "1/6"}
# Measure words in parentheticals and "N X-ounce cans" -> the slicer's standardised unit.
MEASURES = {
    "g": "gram", "gm": "gram", "gms": "gram", "gr": "gram", "gram": "gram", "grams": "gram",
    "kg": "kilogram", "kgs": "kilogram", "kilogram": "kilogram", "kilograms": "kilogram",
    "kilo": "kilogram", "kilos": "kilogram",
    "oz": "ounce", "ounce": "ounce", "ounces": "ounce",
    "lb": "pound", "lbs": "pound", "pound": "pound", "pounds": "pound",
    "ml": "milliliter", "milliliter": "milliliter", "milliliters": "milliliter",
    "millilitre": "milliliter", "millilitres": "milliliter",
    "l": "liter", "liter": "liter", "liters": "liter", "litre": "liter", "litres": "liter",
    "cup": "cup", "cups": "cup", "tbsp": "tablespoon", "tablespoon": "tablespoon",
    "tablespoons": "tablespoon", "tsp": "teaspoon", "teaspoon": "teaspoon",
    "teaspoons": "teaspoon", "fl oz": "fluid ounce", "fluid ounce": "fluid ounce",
    "fluid ounces": "fluid ounce",
}
APPROXIMATE = r"about|approx\.?|approximately|around|roughly|scant|heaping|heaped|generous|" \
              r"rounded|level|~|appx\.?"
_NUMBER = r"\d+(?:\.\d+)?(?:\s+\d+/\d+|\s*-\s*\d+/\d+|/\d+)?"
_MEASURE_WORDS = "|".join(sorted((re.escape(k) for k in MEASURES), key=len, reverse=True))


UNIT_ABBREVIATIONS = {"gms?": "g", "grms?": "g", "kgs": "kg", "kilos?": "kg", "tbls?": "tablespoon",
                      "tbsps": "tablespoon", "tsps": "teaspoon", "pkts?": "packet",
                      "packs?": "package", "ltrs?": "liter", "mls": "ml",
                      "cupfuls?": "cup", "ea": ""}
# Decilitres and centilitres, which the slicer does not read, as millilitres.
# The amount may be a mixed number ("1 1/2 dl"; :func:`strip_noise` spells "3½" so): a
# fraction's denominator alone is no amount ("3 1/2 dl" had been 3 and 1/200 ml).
METRIC_VOLUME = re.compile(r"(?i)(?<![\w/.,])(\d+\s+\d+/\d+|\d+/\d+|\d+(?:[.,]\d+)?)\s*"
                          r"(dl|cl|decilit(?:er|re)s?|centilit(?:er|re)s?)\b\.?")
# "2 heaping spoonfuls": a spoonful is read as a tablespoon, the serving spoon of UK and US
# home recipes (a heaped or level one alike: approximators are dropped everywhere).
SPOONFUL = re.compile(rf"(?i)(?<=\d)\s*(?:(?:{APPROXIMATE})\s+)?(?:spoonfuls?|spoons?)\b")


# Household measures the slicer does not know, in teaspoons: a dessert spoon is 10 ml (two
# teaspoons), a soup spoon a tablespoon (15 ml).
_AMOUNT = rf"(?<![\w/])({_NUMBER})(?:\s*-\s*({_NUMBER}))?"
HOUSEHOLD_SPOONS = re.compile(rf"(?i){_AMOUNT}\s*(dessert|soup)[- ]?spoons?\b")
SPOON_TEASPOONS = {"dessert": 2.0, "soup": 3.0}
# "a fifth" of spirits is a fifth of a US gallon, 757 ml (the 750 ml bottle's old size).
FIFTHS = re.compile(rf"(?i){_AMOUNT}\s+fifths?\b")
# "1 bottle of dry red wine": a wine bottle is the standard 750 ml (27 CFR 4.72, the US
# standards of fill for wine; EU Directive 2007/45/EC); SR28 weighs wine by the fluid ounce
# only. A bottle with its own size ("1 bottle (375 ml) wine") keeps that size.
WINE_BOTTLES = re.compile(rf"(?i)(?:{_AMOUNT}|(?<![\w/])(an?|one))\s+bottles?\s+(?:of\s+)?"
                          r"(?=(?:[a-z'-]+\s+){0,3}?(?:wine|champagne|prosecco|cava)\b(?!\s+vinegar))")


def wine_bottles(text: str) -> str:
    """"1 bottle of dry red wine" -> "750 ml dry red wine"."""
    return WINE_BOTTLES.sub(lambda m: f"{_times(m, 750)} ml ", text)
# "2 dozen oysters", "a dozen eggs": twelve of them.
# "1 glass of milk", "2 glasses red wine": a glass is a US cup (8 fl oz, the "8-ounce glass"
# of US dietary advice); a glass of wine is the 5 fl oz standard serving (Dietary Guidelines
# for Americans 2020-2025, Appendix: one drink is 5 fl oz of wine), of a dessert wine SR28's
# own glass (14057: 1 glass = 3.5 fl oz).
GLASSES = re.compile(rf"(?i){_AMOUNT}\s+(?:(?:large|big|small|tall|full)\s+)?"
                     r"(?:glass(?:es)?|tumblers?)\b(?:\s+of\b)?"
                     r"(?=(?P<dessert>[^,;(]*\b(?:port|sherry|marsala|madeira|muscat)\b)?)"
                     r"(?=(?P<wine>[^,;(]*\b(?:wine|claret|champagne|prosecco|chablis|"
                     r"vermouth)\b)?)")
GLASS_FLUID_OUNCES = {"dessert": 3.5, "wine": 5.0}
DOZEN = re.compile(rf"(?i)(?:{_AMOUNT}|(?<![\w/])(an?|one|half an?))\s+dozen\b")
# A length where the amount stands: "9-inch pie crust", "50 mm cinnamon stick" are one item of
# that size; "24 1/4-inch baguette slices" are 24 slices, not 24 1/4.
LENGTH = r"(?:inch(?:es)?|in\.|cm|mm|centimet(?:er|re)s?|millimet(?:er|re)s?)(?![\w])"
LEADING_LENGTH = re.compile(rf"(?i)^({_NUMBER})\s*-?\s*{LENGTH}\.?\s*")
COUNT_THEN_LENGTH = re.compile(rf"(?i)^(\d+)\s+(\d+/\d+|\d*\.\d+)\s*-?\s*{LENGTH}\.?\s*")


# A shellfish size as a count per pound ("24 large (15/20) shrimp", "36 shrimp (21/25 count)",
# "16-20 count prawns"): the trade's grading, which says what one piece weighs.
PER_POUND = re.compile(r"(?i)\(\s*(\d{1,2})\s*[/-]\s*(\d{1,2})\s*(?:count|ct\.?|"
                       r"per\s+(?:pound|lb))?\s*\)|\b(\d{1,2})\s*[/-]\s*(\d{1,2})\s*(?:count|ct)\b")
SHELLFISH = re.compile(r"(?i)\b(?:shrimps?|prawns?|scallops?)\b")


def grams_per_counted_piece(line: str) -> float | None:
    """Grams of one shrimp, prawn or scallop from a count per pound on the line (453.6 g over
    the count's middle), or None: a pair of numbers that is no such count (a fraction, "1/2")
    is not read."""
    if not SHELLFISH.search(line):
        return None
    for found in PER_POUND.finditer(line):
        low, high = (int(n) for n in (found.group(1) or found.group(3),
                                       found.group(2) or found.group(4)))
        if 6 <= low < high <= low + 15:
            return 453.592 / ((low + high) / 2)
    return None


# "(240 g drained)", "250 grams drained and rinsed", "8 oz drained weight": the solids of a
# can, stated by the recipe.
STATED_DRAINED = re.compile(r"(?i)(\d+(?:\.\d+)?)\s*(g|grams?|oz|ounces?)\.?\s+"
                            r"(?:net\s+)?drained\b")


def stated_drained(line: str) -> Measure | None:
    """The mass of a can's drained solids that the line states, or None."""
    found = STATED_DRAINED.search(line)
    if found is None:
        return None
    return Measure(float(found.group(1)), MEASURES[found.group(2).lower()], False)


# "1 cup plus 2 tablespoons flour", "1 tablespoon plus 2 cups oil, divided": the two amounts
# together, in the first one's unit (a volume with a volume, a mass with a mass).
PLUS = re.compile(rf"(?i)^({_NUMBER})\s*({_MEASURE_WORDS})\.?\s+plus\s+({_NUMBER})\s*"
                  rf"({_MEASURE_WORDS})\.?(?=\s|$)")
IN_TEASPOONS = {"teaspoon": 1.0, "tablespoon": 3.0, "cup": 48.0, "fluid ounce": 6.0,
                "milliliter": 48 / 236.588, "liter": 48 / 0.236588}
IN_GRAMS = {"gram": 1.0, "kilogram": 1000.0, "ounce": 28.3495, "pound": 453.592}


def amounts_plus(text: str) -> str:
    """"1 cup plus 2 tablespoons flour" -> "1.125 cup flour"; amounts of different kinds (a
    volume plus a mass) are left as they are."""
    found = PLUS.search(text)
    if found is None:
        return text
    first, unit, second, other = (found.group(1), MEASURES[found.group(2).lower()],
                                  found.group(3), MEASURES[found.group(4).lower()])
    for table in (IN_TEASPOONS, IN_GRAMS):
        if unit in table and other in table:
            total = (parse_number(first) or 0.0) + \
                (parse_number(second) or 0.0) * table[other] / table[unit]
            return f"{total:.4g} {found.group(2)}{text[found.end():]}"
    return text


# "A pinch of nutmeg", "a large loaf of bread", "a couple of spoonfuls chopped dill": the
# article is the amount (one; a couple is two) when a unit follows it. "A few", "a little"
# and "a bit" stay vague.
ARTICLE_AMOUNT = re.compile(
    r"(?i)^\s*(?:(?P<couple>a\s+couple(?:\s+of)?)|an?)\s+(?=(?:(?:large|small|medium|big|"
    r"generous|good|heaping|heaped|level|scant|rounded)\s+)?(?:cups?|tablespoons?|tbsps?|"
    r"teaspoons?|tsps?|spoonfuls?|pinch(?:es)?|dash(?:es)?|drops?|shots?|"
    r"loaf|loaves|sprigs?|cloves?|cans?|tins?|jars?|packages?|packets?|"
    r"bags?|bunch(?:es)?|heads?|sticks?|slices?|pieces?|pounds?|ounces?|pints?|quarts?|"
    r"liters?|litres?|handfuls?)\b)")


# "3 oz lamb or other solid and flavorful fat": the lamb names the fat, it is no alternative.
OTHER_FAT = re.compile(r"(?i)\b(lamb|mutton|beef|pork|bacon|chicken|duck|goose)\s+or\s+other\s+"
                       r"(?:[\w-]+\s+){0,4}?fat\b")


def animal_fat(text: str) -> str:
    """"lamb or other ... fat" as "lamb fat"."""
    return OTHER_FAT.sub(lambda m: f"{m.group(1)} fat", text)


def article_amount(text: str) -> str:
    """The article before a unit as its number ("a pinch" -> "1 pinch", "a couple of
    spoonfuls" -> "2 spoonfuls")."""
    return ARTICLE_AMOUNT.sub(lambda m: "2 " if m.group("couple") else "1 ", text, count=1)


def household_measures(text: str) -> str:
    """Dessert and soup spoons as teaspoons, fifths as millilitres, glasses as cups (of wine,
    as 5 fl oz), dozens as counts."""
    text = HOUSEHOLD_SPOONS.sub(
        lambda m: f"{_times(m, SPOON_TEASPOONS[m.group(3).lower()])} teaspoon", text)
    text = FIFTHS.sub(lambda m: f"{_times(m, 757)} ml", text)
    text = GLASSES.sub(_glasses, text)
    return DOZEN.sub(lambda m: _times(m, 12), text)


def _glasses(found: re.Match) -> str:
    kind = "dessert" if found.group("dessert") else "wine" if found.group("wine") else None
    return f"{_times(found, GLASS_FLUID_OUNCES[kind])} fl oz" if kind else \
        f"{_times(found, 1.0)} cup"


def _times(found: re.Match, factor: float) -> str:
    """The amount (a number, a range or "a"/"half a") found first in ``found``, times
    ``factor``."""
    words = {"a": 1.0, "an": 1.0, "one": 1.0, "half a": 0.5, "half an": 0.5}
    amounts = [g for g in found.groups()[:2] if g] or [found.groups()[2]]
    values = [words.get(a.lower()) or parse_number(a) or 0.0 for a in amounts]
    return "-".join(f"{v * factor:g}" for v in values)


def set_aside_lengths(main: str) -> tuple[str, list[str]]:
    """A length where the amount stands is the item's size, kept aside: "9-inch pie crust" is
    one crust, "24 1/4-inch slices" 24 slices."""
    found = COUNT_THEN_LENGTH.match(main)
    if found:
        size = found.group(0)[len(found.group(1)):].strip()
        return f"{found.group(1)} " + main[found.end():], [size]
    found = LEADING_LENGTH.match(main)
    if found:
        return "1 " + main[found.end():], [found.group(0).strip()]
    return main, []


# "weighing approximately 971 g": the line's weight, read as a parenthetical measure.
WEIGHING = re.compile(r"(?i)\s*,?\s*\bweighing\s+(?:about\s+|approximately\s+|approx\.?\s+|"
                      r"roughly\s+|around\s+)?(\d+(?:[.,]\d+)?\s*(?:g|grams?|kg|kilos?|oz|"
                      r"ounces?|lbs?|pounds?)\b\.?(?:\s+each\b)?)")


# Cooking appliances named in an amount ("3 Instant Pot or 4 (slow cooker) cups water"): the
# amount for that appliance, not a food.
APPLIANCES = re.compile(r"(?i)\b(?:instant ?pot|slow[- ]cooker|crock[- ]?pot|pressure cooker|"
                        r"rice cooker|air[- ]fryer|stove[- ]?top)\b")


def _millilitres(found: re.Match[str]) -> str:
    amount = parse_number(found.group(1).replace(",", "."))
    if amount is None:
        return found.group(0)  # left as written: no amount is made up
    return f"{amount * (100 if found.group(2).lower().startswith('d') else 10):g} ml"


@dataclass
class LineText:
    """An ingredient line after the text rules: what the slicer reads, and what was set aside."""

    main: str
    parentheticals: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    alternatives: list[str] = field(default_factory=list)  # foods of later "or" alternatives


def strip_noise(text: str) -> str:
    """HTML tags and entities ("&#189;" is ½), wiki quote markup, temperatures, note
    references, the "center-cut" label, emoji and odd symbols removed; a slab of ribs read as
    a rack, baby back ribs as pork backribs; unicode fractions spelled out ("1½" ->
    "1 1/2"); whitespace collapsed."""
    text = html.unescape(re.sub(r"<[^>]+>", " ", text)).replace("u0026", "&")
    for glyph, spelled in FRACTIONS.items():
        text = re.sub(rf"(\d){glyph}", rf"\1 {spelled}", text).replace(glyph, spelled)
    text = text.replace("⁄", "/").replace("–", "-").replace("—", "-")
    text = re.sub(r"\b(\d+)\s+/\s*(\d+)\b|\b(\d+)\s*/\s+(\d+)\b", _join_fraction, text)  # "1 /2"
    text = re.sub(r"\d+\s*°\s*[FC]?(?:\s*(?:to|-)\s*\d+\s*°\s*[FC]?)?", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"'{2,}", " ", text)  # wiki bold and italics quotes around words
    text = re.sub(r"(?i)\b(?:pre|par)-?(cooked)\b", r"\1", text)  # "pre-cooked rice"
    # "center-cut" is a retail label for the middle of a cut ("center cut beef tenderloin
    # roast", "center-cut bacon"), not a word of the food's name
    text = re.sub(r"(?i)\b(?:center|centre)[- ]cut\b", " ", text)
    # a slab of ribs is a rack; baby back ribs are SR28's pork backribs (the slicer reads
    # "baby-back ribs" as "baby" counted in ribs)
    text = re.sub(r"(?i)\bslabs\b", "racks", re.sub(r"(?i)\bslab\b", "rack", text))
    text = re.sub(r"(?i)\bbaby[- ]back(?:\s+pork)?(?:\s+loin)?\s+ribs\b", "pork backribs", text)
    text = re.sub(r"[^\w\s/\-.,()%'&;:+]", " ", text)
    return " ".join(text.split())


def _join_fraction(found: re.Match) -> str:
    top, bottom = (found.group(1), found.group(2)) if found.group(1) else \
        (found.group(3), found.group(4))
    return f"{top}/{bottom}"


def split_parentheticals(text: str) -> tuple[str, list[str]]:
    """Main text without any (...) groups, innermost first, and the groups' texts in order."""
    found: list[str] = []
    while True:
        match = re.search(r"\(([^()]*)\)", text)
        if not match:
            break
        inner = " ".join(match.group(1).split())
        if inner:
            found.append(inner)
        text = text[:match.start()] + " " + text[match.end():]
    text = text.replace("(", " ").replace(")", " ")
    return " ".join(text.split()), found


ADJECTIVES = {"fresh", "frozen", "dried", "canned", "light", "dark", "low", "regular", "whole",
              "plain", "sweet", "salted", "unsalted", "white", "brown", "red", "green", "yellow",
              "hot", "mild", "large", "small", "medium", "raw", "cooked", "chopped", "ground",
              "smoked"}


# Foods named by one word that never take another food's noun: "water or beef broth" is
# water, "yogurt or sour cream" yogurt, "margarine or olive oil" margarine.
STANDALONE_FOODS = {"water", "milk", "cream", "yogurt", "yoghurt", "butter", "margarine",
                    "ghee", "lard", "salt", "sugar", "honey", "stock", "broth", "wine", "beer",
                    "juice", "vinegar", "oil", "rice", "pasta", "noodles", "eggs", "egg",
                    "flour", "cornstarch", "mayonnaise", "ketchup", "mustard"}


_ALTERNATIVE_UNITS = r"cups?|tbsp|tablespoons?|teaspoons?|tsp|oz|ounces?|g|grams?|ml|dl|lbs?|" \
                     r"pounds?|kg|liters?|litres?|cans?|packages?|large|medium|small"
# "X or Y", "X / Y", "X and/or Y" (not before a number: "1 or 2 eggs" is one food) ...
OR_SPLIT = re.compile(r"(?i)\s+or\s+(?![\d/])|\s+/\s+(?![\d])|\s+and/or\s+")
# ... and "or" before an amount of its own ("1 cup cream or 1/2 cup milk").
OR_WITH_AMOUNT = re.compile(rf"(?i)\s+or\s+(?:(?![\d/])|(?=[\d/. ]+\s*(?:{_ALTERNATIVE_UNITS})\b))|"
                            r"\s+/\s+(?![\d])|\s+and/or\s+")


@lru_cache(maxsize=1)
def _reviewed_names() -> frozenset[str]:
    from nutrireason.recipes.rules import load_ingredient_map

    return frozenset(load_ingredient_map().names)


# "stewing/braising", "salmon/fish": two words of two letters or more (not "g/ml", not
# "1/2", not "and/or")
SLASHED_WORDS = re.compile(r"(?i)\b(?!and/or\b)([a-z]{2,})/[a-z]{2,}\b")


def first_alternative(text: str) -> str:
    """"X or Y" -> X, and "X / Y" -> X, unless the alternative is a number ("1 or 2 eggs").
    Alternative adjectives keep the first and the shared noun ("fresh or frozen peas" ->
    "fresh peas", "low-fat or Greek yogurt" -> "low-fat yogurt" is not guessed: only the
    adjective pair goes). Two words joined by a slash are the first ("stewing/braising
    steak" -> "stewing steak"; "and/or" stays)."""
    text = SLASHED_WORDS.sub(r"\1", text)
    text = re.sub(r"(?i)\b([a-z]+-[a-z]+|" + "|".join(sorted(ADJECTIVES)) +
                  r")\s+(?:or|and/or|/)\s+[a-z]+(?:-[a-z]+)?\b", r"\1", text)
    # "1 or 2 eggs" is one food; "1 cup cream or 1/2 cup milk" two, each with its amount
    parts = OR_WITH_AMOUNT.split(text, maxsplit=1)
    if len(parts) == 2 and not _food_words(parts[0]):  # "3 or 4 cups water": one food
        parts = OR_SPLIT.split(text, maxsplit=1)
    first = parts[0].strip(" ,;-")
    listed = first.split(",")
    if len(parts) == 2 and len(listed) > 1 and all(len(_food_words(i)) == 1 for i in listed) \
            and not any(re.search(r"(?:ed|ing)\s*$", i) and _food_words(i)[0] not in ADJECTIVES
                        for i in listed[1:]):
        first = listed[0]  # "2 cups kidney, black, or pinto beans": kidney beans
    if len(parts) == 2 and len(_food_words(first)) == 1:
        # "peanut or canola oil for deep-frying": the other food ends before its purpose
        other = re.split(r"[,;(]|\s(?:for|to|as|in|if|plus|such)\s", parts[1])[0].split()
        word = _food_words(first)[0]
        if word in STANDALONE_FOODS and not (len(other) >= 2 and
                                             f"{word} {other[1].lower()}" in _reviewed_names()):
            return first  # "water or beef broth"; but "milk or dark chocolate chunks"
        # "milk or half and half" is milk: "half" is no noun the two share
        if len(other) >= 2 and other[-1].isalpha() and other[-2].lower() not in ADJECTIVES \
                and "and" not in other and not re.match(r"[\d/]", other[0]):
            # "almond or cashew milk" -> almond milk, "semisweet or bittersweet chocolate
            # chips" -> semisweet chocolate chips (not "milk or white stock" -> milk stock)
            return f"{first} {' '.join(other[1:])}"
        if _shares_head_noun(word, other):
            return f"{first} {other[-1]}"
    return first


def _shares_head_noun(word: str, other: list[str]) -> bool:
    """A one-word first alternative that names no food alone but does with the other food's
    last word, as the reviewed map knows it: "whipping or light cream" is whipping cream,
    "granulated or brown sugar" granulated sugar ("whipping" alone had fallen through to the
    light cream). "1 lemon, or 3 tablespoons lemon juice" stays a lemon (a food alone)."""
    noun = other[-1].lower() if other else ""
    names = _reviewed_names()
    return len(other) >= 2 and noun.isalpha() and word not in names and \
        f"{word} {noun}" in names


def later_alternatives(text: str) -> list[str]:
    """The foods named after the first "or" of a line ("2 cups caldo de pollo or chicken
    stock" -> ["chicken stock"]; "turkey or chicken broth or stock" -> ["chicken broth",
    "stock"]; "salmon/fish stock" -> ["fish stock"]), each up to a comma or parenthesis;
    numbers ("1 or 2 eggs") are not foods."""
    text = SLASHED_WORDS.sub(lambda found: found[0].replace("/", " / "), text)
    parts = re.split(r"\s+or\s+|\s+/\s+|\s+and/or\s+", re.sub(r"\([^)]*\)", " ", text))
    found = []
    for part in parts[1:]:
        name = re.split(r"[,;(]", part)[0].strip(" .-")
        if _food_words(name) and not re.match(r"^\d", name):
            found.append(" ".join(_food_words(name)))
    return found


_UNIT_WORDS = set(MEASURES) | {"can", "cans", "jar", "jars", "package", "packages", "bag",
                               "bags", "pinch", "dash", "handful", "bunch", "clove", "cloves",
                               "large", "medium", "small", "x"}


# Words of how a food was made or bought, not of which food it is.
_MAKING_WORDS = {"homemade", "home-made", "store-bought", "storebought", "good", "quality",
                 "organic", "leftover"}


def _food_words(text: str) -> list[str]:
    """The words of an alternative that are not its quantity, unit, an approximation or a
    word of how it was made ("2 quarts peanut", "about 1/4 cup vegetable" and "1 cup homemade
    chicken" hold one food word)."""
    return [w for w in re.findall(r"[a-z][a-z'-]*", text.lower())
            if w not in _UNIT_WORDS and w not in _MAKING_WORDS]



# Units and approximations the slicer reads that MEASURES does not list.
_UNIT_WORDS |= {"quart", "quarts", "qt", "pint", "pints", "gallon", "gallons", "liter",
                    "liters", "litre", "litres", "ml", "l", "g", "kg", "gram", "grams", "lb",
                    "lbs", "pound", "pounds", "oz", "ounce", "ounces", "about", "approximately",
                    "around", "roughly", "heaping", "scant", "generous", "tin", "tins",
                    "bottle", "bottles", "box", "boxes", "packet", "packets", "ea", "of"}


def expand_abbreviations(text: str) -> str:
    """"TB"/"T" (capital) -> tablespoon, "c." -> cup; approximators dropped; " - " joins."""
    # "1 - 3 pound whole chicken": one item of a size given by a singular unit, not a range
    text = re.sub(r"^1\s+-\s+(\d+(?:\.\d+)?)[\s-]*(pound|ounce)\b(?!s)", r"1 \1-\2", text,
                  flags=re.I)
    # "pound cake" is a food ("1 package pound cake"), not a pound of cake ("1 pound cake flour")
    text = re.sub(r"(?i)\bpound\s+cake(?!\s+(?:flour|mix)\b)", "poundcake", text)
    text = re.sub(r"(\d)\s+-\s+(\d)", r"\1-\2", text)  # "8 - 10 cups" is a range
    text = re.sub(r"(?<=\d)\s*(?:TB|Tb|T)\b\.?", " tablespoon", text)
    text = re.sub(r"(?<=\d)\s*c\.(?=\s)", " cup", text)
    for short, unit in UNIT_ABBREVIATIONS.items():  # units the slicer does not know
        text = re.sub(rf"(?i)(?<=\d)\s*{short}\b\.?", f" {unit}", text)
    text = SPOONFUL.sub(" tablespoon", text)
    text = METRIC_VOLUME.sub(_millilitres, text)
    text = re.sub(rf"(?i)(?<![\w])(?:{APPROXIMATE})(?![\w])", " ", text)
    text = re.sub(r"\s+-\s+", " ", text)
    text = re.sub(r"(?i)\b(?:bone|skin)[- ](?:in|on)\b", " ", text)  # states, read elsewhere
    return " ".join(text.split()).strip(" ,;-")


# "cut into 1/2-inch slices", "sliced into strips", "broken into florets": how the food is cut.
INTO_CLAUSE = re.compile(r"(?i)(?<=[a-z)])[\s,]+(?:(?:cut|sliced|chopped|diced|torn|broken|split|"
                         r"separated|shaped|formed|rolled|divided|pulled|zested)\s+)?"
                         r"(?:into|(?<=[a-z] )in(?=\s+(?:[\d½¼¾⅓⅔⅛.,/-]+\s*(?:cm|mm|inch(?:es)?|"
                         r"in\.?|\")?[\s-]*)?(?:(?:small|large|thin|thick|bite[- ]size[d]?)\s+)?"
                         r"(?:strips|slices|wedges|rings|chunks|cubes|pieces|halves|quarters|"
                         r"dice)\b))\s+[^,;]*")
# "beef or lamb which has some fat": a relative clause describes the food, it names none.
RELATIVE_CLAUSE = re.compile(r"(?i)[\s,]+(?:which|that)\s+(?:has|have|is|are|was|were|should|"
                             r"must|can|will|still)\b[^,;()]*")
# "grated on the large side of a box grater", "using a food processor": the tool, not the food
# nor its unit.
TOOL_CLAUSE = re.compile(r"(?i)[\s,]+(?:on|using|with|in|through)\s+(?:the\s+|a\s+|an\s+)?"
                         r"(?:[\w-]+\s+){0,6}?(?:grater|microplane|zester|mandoline|"
                         r"food[- ]processor|blender|mortar|garlic press|sieve|ricer|spiralizer)"
                         r"\b[^,;]*")
# "X with Y" names X ("cream cheese with chives", "whole tomatoes with juice"), unless Y is a
# part of X's own entry ("chicken thighs with skin", "potatoes with peel").
WITH_CLAUSE = re.compile(r"(?i)\s+(?:with(?:out)?|in(?=\s+(?:its|their)?\s*(?:own\s+)?"
                         r"(?:(?:unsweetened|natural|light|heavy|fruit|pineapple)\s+)?"
                         r"(?:juice|syrup)\b))\s+"
                         r"(?!(?:the\s+)?(?:skins?|bones?|peels?|tops?|rinds?)\b)[^,;]*")


# "heads removed", "with skin removed", "stones removed": what was taken off, not the food.
REMOVED_CLAUSE = re.compile(r"(?i)[\s,]+(?:with\s+)?(?:the\s+|their\s+|its\s+)?"
                            r"(?:[a-z]+\s+){1,2}(?:removed|discarded)\b[^,;]*")


# "Vegetable oil, to fry", "flour for dusting": what the food is for, not which food.
PURPOSE_CLAUSE = re.compile(r"(?i)[\s,]+(?:to|for)\s+(?:fry|frying|deep[- ]?fry(?:ing)?|"
                            r"shallow[- ]?fry(?:ing)?|greas(?:e|ing)|serv(?:e|ing)|garnish(?:ing)?|"
                            r"dust(?:ing)?|brush(?:ing)?|drizzl(?:e|ing)|sprinkl(?:e|ing)|"
                            r"coat(?:ing)?|dredg(?:e|ing)|decorat(?:e|ing|ion)|the pan|"
                            r"soak(?:ing)?|grind(?:ing)?|blanch(?:ing)?)\b[^,;]*")


def set_aside_clauses(text: str) -> tuple[str, list[str]]:
    """The main text without the tool it is cut with ("on a box grater"), "into ..." cutting
    clauses, "with ..." clauses and "to fry" / "for dusting" purposes, and the clauses set
    aside (for state words)."""
    aside = []
    for pattern in (RELATIVE_CLAUSE, TOOL_CLAUSE, REMOVED_CLAUSE, INTO_CLAUSE, WITH_CLAUSE,
                    PURPOSE_CLAUSE):
        found = pattern.search(text)
        if found and re.search(r"[a-z]", text[:found.start()], re.I):
            aside.append(found.group(0).strip(" ,"))
            text = (text[:found.start()] + text[found.end():]).strip(" ,")
    return text, aside


# "1 lemon, juiced", "2 oranges, zested": the fruit is used for its juice or its zest, not
# eaten whole. The line becomes "juice of 1 lemon" / "zest of 2 oranges" (juiced and zested:
# the juice, the bulk of what is used) when nothing else on it says the flesh is eaten.
CITRUS_LINE = re.compile(rf"(?i)^\s*(?P<amount>{_NUMBER})\s+"
                         r"(?P<size>(?:large|medium|small)(?:[- ]sized?)?\s+)?"
                         r"(?P<fruit>lemon|lime|orange|grapefruit|tangerine)(?:e?s)?\b"
                         r"(?P<rest>.*)$")
CITRUS_USE_WORDS = {"juiced", "juice", "zested", "zest", "and", "only", "finely", "freshly",
                    "thoroughly", "grated", "of", "for", "its", "the", "both", "then", "halved",
                    "squeezed", "plus", "more", "to", "taste", "divided"}


def citrus_part(main: str, parentheticals: list[str]) -> str | None:
    """"juice of N fruit" or "zest of N fruit" for a whole citrus used only for its juice or
    zest; None for any other line."""
    found = CITRUS_LINE.match(first_alternative(main))
    if not found:
        return None
    after_comma = main.partition(",")[2] if "," not in found["rest"] else ""
    rest = re.findall(r"[a-z]+", " ".join([found["rest"], after_comma, *parentheticals]).lower())
    if not rest or not set(rest) <= CITRUS_USE_WORDS:
        return None
    part = "juice" if {"juiced", "juice", "squeezed"} & set(rest) else \
        "zest" if {"zested", "zest"} & set(rest) else None
    if part is None:
        return None
    return f"{part} of {found['amount']} {found['size'] or ''}{found['fruit'].lower()}"


def parse_number(text: str) -> float | None:
    """"1 1/2", "1-1/2", "3/4", "2.5", "2" -> a float; anything else None."""
    text = text.strip()
    mixed = re.fullmatch(r"(\d+)(?:\s+|\s*-\s*)(\d+)/(\d+)", text)
    if mixed:
        whole, top, bottom = (int(g) for g in mixed.groups())
        return whole + top / bottom if bottom else None
    fraction = re.fullmatch(r"(\d+)/(\d+)", text)
    if fraction:
        top, bottom = (int(g) for g in fraction.groups())
        return top / bottom if bottom else None
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        return float(text)
    return None


@dataclass(frozen=True)
class Leading:
    """The quantity at the start of a line; ``unit`` only for "2 14-ounce cans" forms."""

    quantity: float
    unit: str | None = None
    text: str = ""


def leading_quantity(text: str) -> Leading | None:
    """The line's own leading number: a mixed number, a fraction, a range (its first number:
    :func:`range_first`) or "N M-unit" / "N x M unit" (N packages of M units each; M may be a
    range)."""
    packs = re.match(r"^(\d+)(?:\s+|\s*x\s*)(\d+(?:\.\d+)?)(?:\s*-\s*(\d+(?:\.\d+)?))?\s*-?\s*"
                     rf"({_MEASURE_WORDS})\.?(?![\w])", text, re.I)
    if packs:
        count, each = float(packs.group(1)), float(packs.group(2))
        if packs.group(3):  # "1 10-13 oz bag": the pack-size range's first number
            each = range_first(packs.group(2), packs.group(3)) or each
        return Leading(count * each, MEASURES[packs.group(4).lower()], packs.group(0))
    share = re.match(rf"^({_NUMBER})\s+of\s+an?\s+(\d+(?:\.\d+)?)\s*-?\s*({_MEASURE_WORDS})\.?"
                     r"(?![\w])", text, re.I)
    if share and parse_number(share.group(1)) is not None:  # "1/2 of a 15 ounce can"
        amount = (parse_number(share.group(1)) or 0.0) * float(share.group(2))
        return Leading(amount, MEASURES[share.group(3).lower()], share.group(0))
    ranged = re.match(rf"^({_NUMBER})\s*(?:-|to|or)\s*({_NUMBER})(?![\d/])", text)
    if ranged and parse_number(ranged.group(0)) is None:
        first = range_first(ranged.group(1), ranged.group(2))
        if first is not None:
            return Leading(first, None, ranged.group(0))
    single = re.match(rf"^({_NUMBER})(?![\d/])", text)
    if single:
        value = parse_number(single.group(1))
        if value is not None:
            return Leading(value, None, single.group(0))
    return None


@dataclass(frozen=True)
class Measure:
    """A measure found in a parenthetical; ``each`` when it gives the size of one item."""

    quantity: float
    unit: str
    each: bool


def paren_measure(line: str, parentheticals: list[str]) -> Measure | None:
    """The first parenthetical that is only a measure: "(15-ounce)", "(about 3 pounds)",
    "(220g)", "(4 oz. each)". It gives one item's size when it follows the leading number
    ("1 (15 oz) can") or says "each"; otherwise the line's total."""
    for inner in parentheticals:
        # "(about 350g/12oz, see note)": the first of the measures
        text = expand_abbreviations(re.split(r",|\s/\s|/\s|(?<=[a-z.])/(?=\d)",
                                             inner.lower())[0])
        text = re.sub(r"\s+each$", " each", text)
        match = re.fullmatch(rf"({_NUMBER})(?:\s*(?:-|to)\s*({_NUMBER}))?\s*-?\s*"
                             rf"({_MEASURE_WORDS})\.?(\s+each)?"
                             r"(?:\s+(?:can|package|jar|bag|box|bottle|carton|container|tin))?",
                             text)
        if not match:
            continue
        value = range_first(match.group(1), match.group(2))
        if value is None or value <= 0:
            continue
        after_number = re.match(rf"^\s*{_NUMBER}\s*\(\s*{re.escape(inner)}", line) is not None
        each = bool(match.group(4)) or bool(re.search(r"\beach\b", inner.lower()))
        return Measure(value, MEASURES[match.group(3)], each or after_number)
    return None


VOLUME_MEASURES = frozenset({"cup", "tablespoon", "teaspoon", "milliliter", "liter",
                             "fluid ounce", "pint", "quart"})


def paren_volume(line: str) -> tuple[float, str] | None:
    """A volume a parenthetical gives beside the line's mass ("1.36 kg (48 oz / 6 cups)
    flour": 6 cups), the first one; None when none does."""
    for inner in re.findall(r"\(([^()]*)\)", line):
        for part in re.split(r",|/(?!\d)|;", inner.lower()):
            found = re.fullmatch(rf"\s*(?:(?:{APPROXIMATE})\s+)?({_NUMBER})\s*-?\s*"
                                 rf"({_MEASURE_WORDS})\.?\s*", expand_abbreviations(part))
            if found and MEASURES[found.group(2)] in VOLUME_MEASURES:
                amount = parse_number(found.group(1))
                if amount:
                    return amount, MEASURES[found.group(2)]
    return None


def paren_count(parentheticals: list[str], portions: set[str]) -> tuple[float, str, str] | None:
    """A count of pieces in a parenthetical, for a line with no quantity of its own
    ("shredded cooked chicken (about 2 small drumsticks)"): the number, the piece (one of
    ``portions``, singular) and its size word ("" for none)."""
    for inner in parentheticals:
        found = re.fullmatch(rf"\s*(?:about|approx(?:imately|\.)?|roughly|around|~)?\s*"
                             rf"({_NUMBER})(?:\s*(?:-|to)\s*({_NUMBER}))?\s+"
                             r"(?:(small|medium|large)\s+)?([a-z]+?)(?:e?s)?\s*",
                             inner.lower())
        if not found or found.group(4) not in portions:
            continue
        value = range_first(found.group(1), found.group(2))
        if value is not None and value > 0:
            return value, found.group(4), found.group(3) or ""
    return None


def range_first(low: str, high: str | None) -> float | None:
    """A measure's number, or its range's first number ("2-3 cups" -> 2, "6-8 oz" -> 6): the
    least the recipe asks for, and the number recipe calculators read (on the dev split the
    recipes with a ranged line stood at 1.27x their published calories against 1.03x for the
    rest when ranges were read at their middle). A range that falls ("4-3 pounds") is none."""
    first = parse_number(low)
    if high is None or first is None:
        return first
    last = parse_number(high)
    return first if last is not None and last > first else None


def each_clause(main: str) -> Measure | None:
    """A size per item after the first comma ("4 salmon fillets, about 6 oz each",
    "2 steaks, 8-10 ounces each"), when the line's own number counts items (no measure word
    right after it); a range gives its first number."""
    head, comma, tail = main.partition(",")
    found = re.search(rf"({_NUMBER})(?:\s*(?:-|to)\s*({_NUMBER}))?\s*-?\s*({_MEASURE_WORDS})"
                      r"\.?\s+each\b", tail, re.I)
    leading = leading_quantity(head)
    if not (comma and found and leading) or leading.unit or \
            re.match(rf"^{re.escape(leading.text)}\s*-?\s*(?:{_MEASURE_WORDS})\.?(?![\w])", head,
                     re.I):
        return None
    size = range_first(found.group(1), found.group(2))
    if size is None or size <= 0:
        return None
    return Measure(size, MEASURES[found.group(3).lower()], True)


_MASS_WORDS = "|".join(sorted((re.escape(k) for k, v in MEASURES.items()
                               if v in ("gram", "kilogram", "ounce", "pound")),
                              key=len, reverse=True))


def gloss_mass(main: str) -> Measure | None:
    """The whole line's mass in a clause after a count ("1 pork shoulder roast, about 4 lb",
    "1 salmon, 1½ lbs", "4 chicken breasts, about 1½ pounds in all"): a mass the cook states
    beats a count weighed by a standard piece. Not a size per item (:func:`each_clause`), and
    not when the line's own number already has a measure ("2 lb beef, 80 % lean")."""
    head, comma, tail = main.partition(",")
    leading = leading_quantity(head)
    if not comma or leading is None or leading.unit or \
            re.match(rf"^{re.escape(leading.text)}\s*-?\s*(?:{_MEASURE_WORDS})\.?(?![\w])", head,
                     re.I):
        return None
    found = re.search(rf"(?:^|,)\s*(?:about|approx(?:imately|\.)?|roughly|around|~|total(?:ling)?"
                      rf"|weighing)?\s*({_NUMBER})(?:\s*(?:-|to)\s*({_NUMBER}))?\s*-?\s*"
                      rf"({_MASS_WORDS})\.?(?![\w])(?!\s+each)", tail, re.I)
    if not found:
        return None
    size = range_first(found.group(1), found.group(2))
    if size is None or size <= 0:
        return None
    return Measure(size, MEASURES[found.group(3).lower()], False)


def prepare(line: str) -> LineText:
    """Apply the text rules in order; ``rules`` names each rule that changed the text."""
    rules = []
    text = strip_noise(line)
    if text != " ".join(line.split()):
        rules.append("noise")
    weighing = WEIGHING.sub(r" (\1)", text)  # "12 potatoes weighing about 971 g": a total
    if weighing != text:
        rules.append("weighing")
        text = weighing
    main, parentheticals = split_parentheticals(text)
    if parentheticals:
        rules.append("parentheticals")
    without = " ".join(APPLIANCES.sub(" ", main).split())
    if without != main and re.search(r"[a-z]", without, re.I):
        rules.append("appliance")
        main = without
    main, clauses = set_aside_clauses(main)
    if clauses:
        rules.append("clause_set_aside")
        parentheticals += clauses
    alternatives = later_alternatives(main)
    citrus = citrus_part(main, parentheticals)
    if citrus:
        rules.append("citrus_part")
        main, parentheticals = citrus, []
    for name, rule in (("article_amount", article_amount), ("animal_fat", animal_fat),
                       ("alternative", first_alternative), ("abbreviations", expand_abbreviations),
                       ("household_measure", household_measures), ("amounts_plus", amounts_plus)):
        changed = rule(main)
        if changed != main:
            rules.append(name)
            main = changed
    bottled = wine_bottles(main)
    if bottled != main and not any(re.search(r"\d", part) for part in parentheticals):
        rules.append("wine_bottle")  # a bottle with its own size keeps it
        main = bottled
    main, lengths = set_aside_lengths(main)
    if lengths:
        rules.append("length_is_size")
        parentheticals += lengths
    return LineText(main, parentheticals, rules, alternatives)
