"""The dish as a whole: what it is (a drink, a sweet topping, a condiment), how much of its
energy comes from free sugars, its alcohol, and the unresolved lines that could decide a label.

"Recommend" is a claim about the whole dish (FAM-Bench asks the model to recommend "only when
the overall evidence supports suitability"), so a beneficial ingredient alone does not make a
dish recommended. :func:`withheld` names the reasons a dish is never recommended, whatever its
ingredients, each cited in ``standards/data/fam_rules.yaml``:

* a dish (not a drink) whose free sugars are above ``free_sugars_max_energy_share`` of its
  energy (WHO 2015, under 10 % of energy; free sugars are the sugars of added sugars, honey,
  syrups, sweets and fruit juices);
* a drink that is not low in free sugars (over ``drink_low_free_sugars_per_100g``, the UK
  front-of-pack "low" line; a drink's energy is mostly its sugar, so the energy share says
  nothing there) or an alcoholic drink; from ``ssb_min_free_sugars_per_100g`` (the UK soft
  drinks levy's line) the drink is a sugar-sweetened beverage, evidence against it where the
  condition lists that concept; an icing, frosting, glaze, syrup or sweet spread; a condiment,
  sauce, dressing or spice blend (eaten in small amounts: it supports no diet);
* alcohol in any amount, cooked or not, for a condition whose guidance limits alcohol (USDA
  retention factors keep 5-85 % of the alcohol after cooking);
* beneficial foods under ``beneficial_total_min_share`` of the dish's mass (water left out)
  together;
* for a condition that avoids gluten, a product made with or without wheat whose label alone
  tells (:data:`LABEL_GLUTEN`: bouillon cubes, miso, Worcestershire sauce).

:func:`line_gluten` reads a line's first food for gluten its name hides (:data:`HIDDEN_GLUTEN`:
soy sauce, hoisin, malt vinegar, gravy, cream soups), whatever SR28 food the line resolved to.

:func:`decisive_unresolved` reads the lines the recipe build could not resolve: a line naming a
meat, fish, alcohol, a fried or processed food could decide a label (Appendix F, missing
ingredients), so a recommendation that ignores it is withheld.

The dish's kind is read from its title's head noun (the last word before "in", "with", "on"
...: "Tea Cake" is a cake, "Beef in Beer" is beef, "Sweet and Sour Sauce" a sauce), the head
noun of a parenthesised gloss ("Toum (Lebanese Garlic Sauce)") and the source's category.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

DRINK, TOPPING, CONDIMENT = "drink", "sweet topping", "condiment"

_HEADS = {
    DRINK: ("lemonade limeade punch smoothie smoothies milkshake shake juice tea chai coffee latte "
            "cappuccino espresso mocha cola cocoa chocolate-drink cider eggnog nog lassi sangria "
            "cocktail martini margarita mojito daiquiri liqueur wine beer ale stout soda pop "
            "cordial horchata kombucha toddy grog spritzer frappe frappuccino float "
            "drink drinks beverage beverages milk milks sharbat sherbet julep sour fizz colada "
            "slush slushie kefir ayran"),
    TOPPING: ("icing frosting glaze syrup fondant ganache caramel butterscotch jam jelly "
              "preserves preserve marmalade curd compote coulis fudge-sauce dulce "
              "sprinkles"),
    CONDIMENT: ("sauce sauces dressing dressings vinaigrette condiment relish chutney ketchup "
                "catsup mustard mayonnaise mayo aioli salsa pesto dip gravy marinade rub "
                "seasoning seasonings spread blend mix powder paste vinegar pickle pickles "
                "oil butter"),
}
HEAD_KINDS = {word: kind for kind, words in _HEADS.items() for word in words.split()}
# Spice blends named "masala" (a "Chicken Tikka Masala" or "Aloo Masala" is a dish).
_BLEND_MASALA = re.compile(r"(?i)\b(?:garam|chaat|tandoori|meat|chai|sambar|chana|kitchen|"
                           r"biryani|pav bhaji) masala\b")
CATEGORY_KINDS = ((re.compile(r"(?i)\b(beverage|drink|cocktail)"), DRINK),
                  (re.compile(r"(?i)\b(frosting|icing|syrup|jam|jelly|preserve)"), TOPPING),
                  (re.compile(r"(?i)\b(sauce|dressing|condiment|spice mix|marinade|seasoning|"
                              r"relish|chutney|dip)"), CONDIMENT))
# The words that end the dish's own name in a title ("Beef in Beer", "Tea with Lemon"); a
# comma or parenthesis starts a note. "and" joins modifiers ("Pear and Almond Smoothie",
# "Sweet and Sour Sauce"), so it does not end the name.
_HEAD_END = re.compile(r"(?i)\s(?:in|with|on|over|for|from|a la|au|aux|de|di|alla|à)\s|"
                       r"[,(:;]|\s-\s")
# A trailing variant number ("Cola I", "Barbecue Sauce II", "Soy Milk 2") is no head noun.
_VARIANT = re.compile(r"(?i)(?:\s+(?:[ivx]+|\d+))+\s*$")
# A parenthesised gloss ("Wonjo Bissap (Gambian Hibiscus Beverage)") names the dish too.
_GLOSS = re.compile(r"\(([^()]*)\)")

# Free sugars (WHO 2015): the sugars of these concepts and of fruit juices.
FREE_SUGAR_CONCEPTS = frozenset({"added_sugars", "high_sugar_desserts",
                                 "sugar_sweetened_beverages"})
# Unresolved lines that could decide a label, by the concept they would add.
DECISIVE_WORDS: dict[str, re.Pattern[str]] = {
    "red_meat": re.compile(r"(?i)\b(beef|veal|pork|lamb|mutton|goat|kid|venison|elk|moose|"
                           r"bison|buffalo|boar|rabbit|hare|kangaroo|caribou|game|steaks?|"
                           r"chops?|brisket|oxtail|ribs?)\b"),
    "processed_meats": re.compile(r"(?i)\b(sausages?|bacon|ham|salami|chorizo|pepperoni|"
                                  r"hot ?dogs?|frankfurters?|wieners?|bratwurst|kielbasa|"
                                  r"pancetta|prosciutto|jerky|spam|bologna|merguez)\b"),
    "fish_seafood": re.compile(r"(?i)\b(fish|salmon|tuna|cod|trout|sardines?|anchov(?:y|ies)|"
                               r"mackerel|shrimps?|prawns?|crabs?|lobsters?|mussels?|clams?|"
                               r"oysters?|scallops?|squid|octopus|tilapia|catfish|haddock)\b"),
    "alcohol": re.compile(r"(?i)\b(wine|beer|ale|lager|stout|rum|vodka|gin|brandy|cognac|"
                          r"whisk(?:e)?y|bourbon|sherry|port|liqueur|tequila|sake|mirin|"
                          r"vermouth|champagne|prosecco|cider|kirsch|schnapps|amaretto|"
                          r"marsala|madeira|grappa|ouzo|absinthe)\b"),
    "gluten_containing_grains": re.compile(
        r"(?i)\b(bread|breads|buns?|rolls?|bagels?|baguettes?|pitas?|naan|croissants?|"
        r"muffins?|biscuits?|crackers?|pretzels?|croutons?|bread ?crumbs|panko|pasta|noodles?|"
        r"spaghetti|macaroni|lasagn[ae]|couscous|bulgur|flour|wheat|barley|rye|spelt|semolina|"
        r"seitan|pastry|pie crust|phyllo|filo|dough|wraps?|flour tortillas?|cake|cookies?|"
        r"beer|ale|lager|stout|malt)\b"),
    "fried_foods": re.compile(r"(?i)\b(chips|crisps|fries|fried|batter|tempura|doughnuts?)\b"),
    "highly_processed_foods": re.compile(r"(?i)\b(instant|packaged|boxed|frozen dinner|"
                                         r"cake mix|soup mix|bouillon|stock cubes?|nuggets)\b"),
}
# "ginger ale" and "root beer" are soft drinks; "rum extract" holds a trace.
_NOT_ALCOHOL = re.compile(r"(?i)\b(ginger ale|root beer|birch beer|extract|flavou?ring|"
                          r"non-?alcoholic|alcohol-free|wine vinegar|cider vinegar|"
                          r"apple cider(?! vinegar)\s+(?:juice))\b")


@dataclass(frozen=True)
class DishProfile:
    """What the rules read of the dish as a whole (kept in each instance's evidence, so the
    rule-based reference reads the same)."""

    kinds: tuple[str, ...] = ()
    free_sugar_share: float | None = None  # share of the dish's energy from free sugars
    free_sugar_foods: tuple[str, ...] = ()  # the foods carrying a tenth of them or more
    free_sugars_per_100g: float | None = None  # grams of free sugars per 100 g of the dish
    alcohol: tuple[str, ...] = ()  # canonical names of the alcoholic ingredients
    unresolved: dict[str, list[str]] = field(default_factory=dict)  # concept -> lines
    label_gluten: tuple[str, ...] = ()  # lines whose gluten only the product's label tells
    absent: tuple[str, ...] = ()  # foods the title or steps name and no line holds

    def as_evidence(self) -> dict[str, Any]:
        return {"kinds": list(self.kinds), "free_sugar_share": self.free_sugar_share,
                "free_sugar_foods": list(self.free_sugar_foods),
                "free_sugars_per_100g": self.free_sugars_per_100g,
                "alcohol": list(self.alcohol), "unresolved": dict(self.unresolved),
                "label_gluten": list(self.label_gluten), "absent": list(self.absent)}

    @classmethod
    def from_evidence(cls, row: dict[str, Any] | None) -> DishProfile:
        if not row:
            return cls()
        return cls(tuple(row.get("kinds") or ()), row.get("free_sugar_share"),
                   tuple(row.get("free_sugar_foods") or ()), row.get("free_sugars_per_100g"),
                   tuple(row.get("alcohol") or ()),
                   {k: list(v) for k, v in (row.get("unresolved") or {}).items()},
                   tuple(row.get("label_gluten") or ()), tuple(row.get("absent") or ()))

    @property
    def drink(self) -> bool:
        return DRINK in self.kinds


def head_noun(title: str) -> str:
    """The last word of the dish's own name in ``title`` (lower case, "" for none)."""
    name = _VARIANT.sub("", _HEAD_END.split(title.strip(), maxsplit=1)[0])
    words = re.findall(r"[a-z]+(?:-[a-z]+)?", name.lower())
    return words[-1] if words else ""


def dish_kinds(title: str, category: str | None) -> tuple[str, ...]:
    """The kinds the head nouns of the title and of its parenthesised gloss, and the source's
    category name (drink, sweet topping, condiment). The recipe build's food category is not
    read: it matches keywords inside words ("tea" in "steak")."""
    kinds = set()
    for head in (head_noun(title), *(head_noun(gloss) for gloss in _GLOSS.findall(title))):
        singular = head[:-1] if head.endswith("s") else head
        kinds.update(HEAD_KINDS[word] for word in (head, singular) if word in HEAD_KINDS)
    if _BLEND_MASALA.search(title):
        kinds.add(CONDIMENT)
    for pattern, kind in CATEGORY_KINDS:
        if category and pattern.search(category):
            kinds.add(kind)
    return tuple(sorted(kinds))


# SR28 descriptions (and canonical names) of foods whose sugars are free sugars: sugars,
# syrups, honey, jams, sweets, frozen desserts, sweetened products and fruit juices
FREE_SUGAR_WORDS = re.compile(
    r"(?i)\b(sugars?|syrups?|honey|jams?|jell(?:y|ies)|preserves|marmalade|molasses|candies|"
    r"candy|frostings?|icings?|toppings?|ice creams?|sherbets?|sorbets?|frozen yogurts?|"
    r"hazelnut spread|nectars?|agave|sweetened|sweets|juices?|caramels?|fudge|puddings?|"
    r"chocolate|cookies|cakes?|pastr(?:y|ies)|sweetener)\b")


def is_free_sugar(canonical: str, concepts: Iterable[str], description: str = "") -> bool:
    """A food whose sugars are free sugars (WHO 2015): added sugars, honey, syrups, sweets,
    sweetened products and fruit juices (by concept, name or SR28 description)."""
    return bool(FREE_SUGAR_CONCEPTS & set(concepts)) or \
        bool(FREE_SUGAR_WORDS.search(f"{canonical} {description}"))


# The food a line uses is its first one: "white wine, chicken broth, or alcohol-free wine" is
# wine (a comma or an "or" starts an alternative or a note).
_FIRST_FOOD = re.compile(r"(?i),|\s\bor\b\s")


def alcoholic_line(line: str) -> bool:
    """The line's first food is an alcoholic drink (not ginger ale, an extract or a
    vinegar)."""
    first = first_food(line)
    return bool(DECISIVE_WORDS["alcohol"].search(first)) and not _NOT_ALCOHOL.search(first)


def first_food(line: str) -> str:
    """The line up to its first comma or "or"; a lone word before "or" shares the noun of the
    alternative after it ("½ cup red or dry white wine" is red wine, "2 tbsp red or white wine
    vinegar" red vinegar)."""
    split = _FIRST_FOOD.search(line)
    if split is None:
        return line
    first = line[:split.start()]
    words = re.findall(r"[A-Za-z][\w'-]*", first)
    food = [w for w in words if w.lower() not in _MEASURE_WORDS]
    if split.group().strip().lower() == "or" and len(food) == 1:
        after = re.findall(r"[A-Za-z][\w'-]*", line[split.end():].split(",")[0])
        if len(after) > 1:
            first = f"{first} {after[-1]}"
    return first


_MEASURE_WORDS = {"cup", "cups", "tbsp", "tsp", "tablespoon", "tablespoons", "teaspoon",
                  "teaspoons", "ml", "l", "oz", "ounce", "ounces", "fl", "pint", "pints",
                  "quart", "quarts", "bottle", "bottles", "can", "cans", "glass", "splash",
                  "dash", "shot", "shots", "of", "a", "about"}


# "gluten-free bread", "rice flour", "corn tortillas", tamari, a miso made of soybeans or rice
# alone: no gluten named
_NO_GLUTEN = re.compile(r"(?i)\b(?:gluten|wheat)[- ]free\b|\btamari\b|"
                        r"\b(?:rice|soybean|hatcho|mame) miso\b|\b(?:rice|corn|almond|coconut|"
                        r"chickpea|gram|tapioca|potato|cassava|buckwheat|sorghum|millet|teff|"
                        r"quinoa)\s+(?:flour|noodles?|pasta|tortillas?|crackers?|starch|paper|"
                        r"vermicelli)\b")
# Foods made with wheat or barley by their standard recipe, whose name says no grain (Celiac
# Disease Foundation, sources of gluten: soy sauce brewed with wheat, malt and malt vinegar,
# beer, sauces and gravies thickened with flour, seitan, brewer's yeast). A line naming one
# holds gluten whatever SR28 food it resolved to ("malt vinegar" reads as distilled vinegar).
HIDDEN_GLUTEN = re.compile(
    r"(?i)\b(soy sauce|shoyu|teriyaki|hoisin|oyster sauce|malt|malted|malt vinegar|beer|ale|"
    r"lager|stout|gravy|roux|b[eé]chamel|white sauce|seitan|brewer'?s yeast|barley miso|mugi|"
    r"cream of (?:[a-z]+ ){1,2}soup)\b")
# Drinks named like beer that are soft drinks; a gravy browner is caramel and vegetable base.
_NOT_HIDDEN_GLUTEN = re.compile(r"(?i)\b(ginger ale|root beer|ginger beer|birch beer|"
                                r"gravy brown(?:er|ing))\b")
# Products made with or without wheat, so that only their label tells (Celiac Disease
# Foundation: check the label of bouillon and soup bases, miso, Worcestershire sauce).
LABEL_GLUTEN = re.compile(r"(?i)\b(bouillon|stock (?:cubes?|powder|granules|base)|"
                          r"broth (?:cubes?|powder|granules|base)|soup base|miso|"
                          r"worcestershire)\b")


def line_gluten(line: str) -> str | None:
    """"hidden" when the line's first food holds gluten by its standard recipe, "label" when
    the line names a product whose label alone tells (anywhere on the line: "2 chicken or beef
    bouillon cubes"), None otherwise (or when the line says gluten-free)."""
    first = _FIRST_FOOD.split(line, maxsplit=1)[0]
    if _NO_GLUTEN.search(first):
        return None
    if HIDDEN_GLUTEN.search(first) and not _NOT_HIDDEN_GLUTEN.search(first):
        return "hidden"
    return "label" if LABEL_GLUTEN.search(line) and not _NO_GLUTEN.search(line) else None


def unresolved_concepts(lines: Iterable[str]) -> dict[str, list[str]]:
    """Concept -> the unresolved lines that name a food of it."""
    found: dict[str, list[str]] = {}
    for line in lines:
        for concept, pattern in DECISIVE_WORDS.items():
            if concept == "alcohol" and not alcoholic_line(line):
                continue
            if concept == "gluten_containing_grains" and _NO_GLUTEN.search(line):
                continue
            if pattern.search(line) or (concept == "gluten_containing_grains"
                                        and line_gluten(line) == "hidden"):
                found.setdefault(concept, []).append(line)
    return found


def free_sugars(items: Iterable[Any], descriptions: dict[str, str] | None = None
                ) -> tuple[float | None, float | None, tuple[str, ...]]:
    """(share of the weighed ingredients' energy from free sugars, free sugars in grams per
    100 g of the dish, the foods carrying at least a tenth of them); None where the energy or
    the mass is unknown. ``items``: annotate's Ingredient rows; ``descriptions``: line -> its
    SR28 description."""
    descriptions = descriptions or {}
    energy = mass = total = 0.0
    grams_by_food: dict[str, float] = {}
    for item in items:
        if not item.grams:
            continue
        mass += item.grams
        energy += item.grams * _value(item, "calories") / 100
        if is_free_sugar(item.canonical, item.concepts, descriptions.get(item.line, "")):
            sugar = item.grams * _value(item, "sugar") / 100
            if sugar > 0:
                total += sugar
                grams_by_food[item.canonical] = grams_by_food.get(item.canonical, 0.0) + sugar
    carriers = tuple(food for food, grams in grams_by_food.items() if grams >= 0.1 * total)
    share = round(4.0 * total / energy, 6) if energy > 0 else None
    per_100g = round(100.0 * total / mass, 3) if mass > 0 else None
    return share, per_100g, carriers


def _value(item: Any, nutrient: str) -> float:
    value = item.nutrients.get(nutrient)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if number == number else 0.0  # NaN: not measured


def dish_profile(recipe: dict[str, Any], items: list[Any]) -> DishProfile:
    """The profile of a resolved recipe (``recipes.jsonl`` shape) and its matched
    ingredients."""
    record = recipe["record"]
    descriptions = {str(row.get("line")): str(row.get("sr28_description") or "")
                    for row in recipe.get("ingredients") or []}
    share, per_100g, carriers = free_sugars(items, descriptions)
    alcohol = tuple(dict.fromkeys(i.canonical for i in items if "alcohol" in i.concepts
                                  and alcoholic_line(i.line + " " + i.canonical)))
    lines = [row for row in recipe.get("ingredients") or [] if row.get("kind") != "header"]
    unresolved = [str(row.get("line") or "") for row in lines if not row.get("ndb_no")]
    label_gluten = tuple(str(row.get("line")) for row in lines
                         if line_gluten(str(row.get("line") or "")) == "label")
    kinds = dish_kinds(str(record.get("title") or ""), record.get("category"))
    # a sauce, rub or icing names what it is for ("Chicken Barbecue Sauce", "use on fish")
    absent = () if {CONDIMENT, TOPPING} & set(kinds) else absent_foods(
        str(record.get("title") or ""), record.get("instructions") or [],
        [str(row.get("line") or "") for row in lines],
        {concept for item in items for concept in item.concepts})
    return DishProfile(kinds, share, carriers, per_100g, alcohol,
                       unresolved_concepts(unresolved), label_gluten, absent)


# Foods whose presence can decide a label, as a recipe's title or steps name them (nouns only:
# no "chop", "game" or "ribs" of celery), with the vocabulary concepts that hold them in a
# matched line ("halibut" is fish). A title or a step naming one that no ingredient line holds
# says the lines leave part of the dish out ("Potato Omelet" whose lines are eggs and milk;
# pancakes "soaked in sugar syrup" with no sugar line).
NAMED_FOODS: dict[str, tuple[re.Pattern[str], frozenset[str]]] = {
    "meat": (re.compile(r"(?i)\b(beef|veal|pork|lamb|mutton|goat|venison|bison|brisket|oxtail|"
                        r"sausages?|bacon|ham|salami|chorizo|pepperoni|pancetta|prosciutto|"
                        r"chicken|turkey|duck)\b"),
             frozenset({"red_meat", "processed_meats", "poultry"})),
    "fish or seafood": (re.compile(r"(?i)\b(fish|salmon|tuna|cod|trout|sardines?|"
                                   r"anchov(?:y|ies)|mackerel|shrimps?|prawns?|crabs?|lobsters?|"
                                   r"mussels?|clams?|oysters?|scallops?|squid|octopus)\b"),
                        frozenset({"fish_seafood"})),
    "alcohol": (re.compile(r"(?i)\b(wine|beer|rum|vodka|brandy|cognac|whisk(?:e)?y|bourbon|"
                           r"sherry|liqueur|tequila|vermouth|champagne|marsala)\b"
                           r"(?!\s+(?:vinegar|vinaigrette))"), frozenset({"alcohol"})),
    "a wheat product": (re.compile(r"(?i)\b(flour|wheat|barley|rye|semolina|bread ?crumbs|"
                                   r"panko|couscous|bulgur|pasta|noodles|spaghetti|macaroni|penne|"
                                   r"fusilli|rigatoni|linguine|fettuccine|tortellini|ravioli|"
                                   r"orzo|lasagn[ae])\b"),
                        frozenset({"gluten_containing_grains", "refined_grains",
                                   "whole_grains"})),
    "a sweetener": (re.compile(r"(?i)\b(sugar|syrup|honey|molasses|caramel|condensed milk)\b"),
                    frozenset({"added_sugars"})),
    "cheese": (re.compile(r"(?i)\b(cheese|parmesan|parmigiano|pecorino|romano|cheddar|"
                          r"mozzarella|feta|paneer|gruy[eè]re|ricotta|mascarpone|halloumi|brie|"
                          r"camembert|gouda|emmental|provolone|asiago|queso|cotija)\b"),
               frozenset()),
    "potatoes": (re.compile(r"(?i)\b(potato(?:es)?)\b"), frozenset()),
}
# "sugar-free", "rice flour" and the like name no such food in a title or a step.
_NAMED_NOT = re.compile(r"(?i)\b(?:sugar|gluten|wheat)[- ]free\b|\b(?:rice|corn|maize|oat|"
                        r"sorghum|millet|teff|almond|coconut|chickpea|tapioca|potato|cassava|"
                        r"buckwheat) (?:flour|noodles|"
                        r"pasta|starch)\b|\bsweet potato(?:es)?\b|\bcheesecloth\b|"
                        r"\bfish (?:it )?out\b|"
                        # kitchen equipment named after a food: "potato masher", "lobster pot"
                        r"\b[a-z]+ (?:masher|peeler|ricer|grater|cloth|pot|kettle|poacher|"
                        r"steamer|knife|scissors|brush)\b")
# Steps that are no part of the dish: serving suggestions, variations, substitutes, uses,
# comparisons and comments.
_ASIDE = re.compile(r"(?i)\b(serve[sd]?|serving|accompan\w*|goes? well|pairs?|garnish\w*|"
                    r"variations?|vary|substitut\w*|instead|optional(?:ly)?|leftovers?|"
                    r"alternatively|use[sd]?|try|e\.g|for example|such as|if (?:desired|you "
                    r"like|preferred)|to taste|cavity|thumb|enjoy|alongside|can|could|may|"
                    r"might|like|similar|addition|includes?|including|popular|excellent|"
                    r"traditionally|often|usually|typically)\b")
# A part of a dish whose steps speak of the dish it goes into ("Ravioli Filling", "Pizza
# Dough": the ravioli and the cheese topping are not in its lines).
_COMPONENT = re.compile(r"(?i)\b(filling|stuffing|dough|crust|pastry|batter|base|starter|"
                        r"stock|broth)\s*(?:\(|$)")


def absent_foods(title: str, instructions: Iterable[str], lines: Iterable[str],
                 concepts: set[str] | frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The foods the title or the steps (but for asides: serving suggestions, variations)
    name whose kind no ingredient line holds, by its words or its matched food's
    ``concepts``."""
    if _COMPONENT.search(title):
        return ()
    held = " ".join(lines)
    # the dish's own noun is what the recipe makes ("Homemade Paneer", "Date Syrup",
    # "Ibiwungu (Rwandan Banana Beer)"), not a food it leaves out, in the title or the steps
    parts = [part.strip() for part in re.split(r"[()]", title) if part.strip()]
    made = {words[-1].lower() for part in parts if (words := re.findall(r"[\w'-]+", part))}
    title = " ".join(re.sub(r"[\w'-]+\W*$", "", part) for part in parts)
    sentences = [part for step in instructions
                 for part in re.split(r"(?<=[.;!?])\s+(?=[A-Z])", step)
                 if not _ASIDE.search(part)]
    named = _NAMED_NOT.sub(" ", " ".join([title, *sentences]))
    absent = []
    concepts = set(concepts)
    for pattern, holders in NAMED_FOODS.values():
        if pattern.search(held) or holders & concepts:
            continue
        found = next((m.group(1).lower() for m in pattern.finditer(named)
                      if m.group(1).lower() not in made), None)
        if found:
            absent.append(found)
    return tuple(absent)
