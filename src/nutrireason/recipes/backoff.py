"""Other names to try when a line's food name finds no SR28 food.

A recipe from a site the build has never seen names its foods in words no list foresaw: one
extra word ("pumpkin flesh", "goat cheese crumbles", "baking sugar") or a local name glossed
in the line itself ("guinea corn (sorghum)", "jeera (cumin) powder", "white fish fillets
(e.g. sole, halibut, or cod)"). :func:`backoff_names` gives, in order, the names a careful
reader would try next; the matcher's own checks (score floor, identity guard) still decide:

1. the first example a line gives ("e.g. sole", "such as margarine");
2. a parenthesised gloss that names a food (not a measure, a state or a note: "(feta;
   optional)" is feta, "(optional)" and "(about 2 lb)" are nothing);
3. a powdered food as the ground spice or the dry product ("powdered ginger" is ground
   ginger, "powdered milk" milk powder);
4. the name without a form noun at its end ("pumpkin flesh", "elk steaks", "white pepper
   powder", "beet roots", "green onion tops", "portobello mushroom cap") or the descriptors
   at its start ("baking sugar", "seedless raisins", "unflavored yogurt") or a filling or
   pack word ("pimento-stuffed olives", "water-packed tuna");
5. a fruit spread of a flavour the reviewed map does not list under its generic name
   ("apple jelly", "lime marmalade", "fig jam": SR28 has one entry for jellies, one for jams
   and preserves, and only orange marmalade);
6. the name without the pack it comes in or its skin ("green olives packed in brine", "wild
   salmon fillets with skin"), a bun as a roll ("kaiser bun");
7. the name with accents folded ("crème fraîche");
8. each of these spelled as the map spells its words ("tumeric", "shitake mushrooms",
   "portobello mushroom cap", "green chillies").
"""

from __future__ import annotations

import re
import unicodedata

# Nouns for the form a food comes in, not the food: dropped when the whole name fails.
FORM_NOUNS = frozenset({"flesh", "crumbles", "crumbled", "puffs", "steaks", "chunks", "bits",
                        "pieces", "rings", "roots", "root", "powder", "fillets", "filets",
                        "cubes", "slices", "wedges", "segments", "florets", "meat", "pulp",
                        "flakes", "granules", "strips", "tips", "nuggets", "shavings", "curls",
                        "shards", "cap", "caps", "stem", "stems"})
# Words before a food that say it is milled to a powder.
POWDERED = frozenset({"powdered", "powder"})
# Words before a food that say how it is used or sold, not what it is.
DESCRIPTORS = frozenset({"baking", "cooking", "organic", "homemade", "store-bought",
                         "storebought", "premium", "quality", "good", "best", "local", "farm",
                         "free-range", "pastured", "natural", "pure", "solid", "table",
                         "kitchen", "everyday", "regular", "plain", "real", "fat", "full-fat",
                         "whole-fat", "granulated", "unflavored", "unflavoured", "seedless",
                         "stoned", "pitted", "refined", "wild", "commercial", "bottled",
                         "imported", "authentic", "traditional", "high-quality"})
# Compound words that say what a food is filled or packed with ("pimento-stuffed olives",
# "water-packed tuna"): not the food; a pack is kept after the name, as the map lists it
# ("tuna water", the slicer's "tuna in water").
FILLED_OR_PACKED = re.compile(r"^(?P<filling>[a-z]+)-?(?P<kind>stuffed|filled|packed)$")
# Spellings (and a synonym: "dehydrated") of one word that the reviewed map and SR28 write
# otherwise: tried when the name as written finds nothing (never before it: "chilli powder" and
# "chili powder" are two foods).
SPELLING_VARIANTS = {"tumeric": "turmeric", "shitake": "shiitake", "shitakes": "shiitake",
                     "galingal": "galangal", "portobello": "portabella",
                     "portobellos": "portabella", "crookedneck": "crookneck",
                     "crooked-neck": "crookneck", "chilli": "chile", "chillies": "chiles",
                     "chillis": "chiles", "chilis": "chiles", "chilies": "chiles",
                     "chili": "chile", "lemongrass": "lemon grass", "matsoh": "matzo",
                     "matzoh": "matzo", "matzah": "matzo", "filo": "phyllo", "fillo": "phyllo",
                     "courgette": "zucchini", "courgettes": "zucchini",
                     "aubergine": "eggplant", "aubergines": "eggplant", "yogourt": "yogurt",
                     "tomatoe": "tomato", "potatoe": "potato", "cardamon": "cardamom",
                     "cardamons": "cardamom", "dehydrated": "dried"}
# Parts of a fruit a line uses alone ("peel from 3 clementines"): a back-off keeps the part.
FRUIT_PARTS = frozenset({"peel", "zest", "rind", "juice"})
# A gloss that only says how the food is cut or kept ("(minced or powdered)"): no food.
FORM_ONLY = frozenset({"minced", "powdered", "chopped", "diced", "sliced", "grated", "ground",
                       "crushed", "whole", "fresh", "dried", "frozen", "cooked", "raw",
                       "peeled", "shredded", "melted", "softened", "flakes", "granules"})
# A gloss that is a note, not a food ("(optional)", "(see note)", "(divided)").
NOTE_WORDS = re.compile(r"(?i)\b(optional|note|see|divided|to taste|as needed|about|approx|"
                        r"or more|or less|each|total|plus|more|for|if|such|used|any|your|"
                        r"preferably|ideally|recommended|homemade|store)\b")
# What a food is packed in ("in brine", "in its own juice", "in tomato sauce"): the pack, not
# the food's name.
PACKED_IN = re.compile(r"(?i)\bin\s+(?:its\s+own\s+|light\s+|heavy\s+|(olive)\s+)?(brine|water|oil|"
                       r"syrup|juice|tomato sauce|sauce)\b")
# Words of a name that say the skin stays on ("salmon fillets with skin", "skin-on").
SKIN_WORDS = frozenset({"skin", "skins", "skinon"})


PACKED_BEFORE = re.compile(r"(?i)\b(water|oil|brine)[- ]packed\b")


def packed_words(line: str) -> set[str]:
    """The words of the pack a line's food comes in ("in tomato sauce": tomato, sauce;
    "water-packed": water)."""
    words = {word for found in PACKED_IN.finditer(line)
             for word in " ".join(filter(None, found.groups())).lower().split()}
    return words | {found.group(1).lower() for found in PACKED_BEFORE.finditer(line)}


def packless_name(name: str | None, line: str) -> str | None:
    """The food a name ends by its pack ("tuna olive oil" from "tuna in olive oil",
    "mackerel fillets tomato sauce"): the name before the pack; None when the name does not
    end in the line's pack or is only the pack."""
    words = (name or "").split()
    pack = packed_words(line)
    kept = list(words)
    while kept and kept[-1] in pack:
        kept.pop()
    return " ".join(kept) if kept and kept != words else None


# Spreads whose first words name a flavour, not another food ("apple jelly" is no apple): the
# generic name each is listed under.
FLAVOURED_SPREADS = {"jelly": "fruit jelly", "jellies": "fruit jelly", "jam": "fruit jam",
                     "jams": "fruit jam", "preserves": "preserves", "marmalade": "marmalade"}
EXAMPLE = re.compile(r"(?i)\b(?:e\.\s?g\.?|eg\.|such as|for example|like)\s*:?\s*([^,;()]+)")
GLOSS = re.compile(r"\(([^()]*)\)")


def backoff_names(name: str | None, line: str, unit: str | None = None) -> list[str]:
    """The names to try, in order, after ``name`` (the parsed food of ``line``) failed; a
    name that is only a form noun takes the counted word before it ("2 beet roots": the
    unit "beet")."""
    found: list[str] = []
    if name in FORM_NOUNS and unit and unit.isalpha():
        found.append(unit)
    head = bare_name(name).split()[-1:]

    def one_kind(example: str) -> bool:
        # "plant-based milk (such as oat or soy)": a one-word example is a kind of the line's
        # food (oat milk, not oats); "white fish fillets (e.g. sole)", "mixed nuts (e.g.
        # almonds)" and "sweetener (such as coconut sugar)" name the food itself
        return bool(head) and head[0] not in FORM_NOUNS | COLLECTIVE_HEADS and \
            len(example.split()) == 1 and example not in (name or "").split()

    for example in examples(line):
        found.append(f"{example} {head[0]}" if one_kind(example) else example)
    for inner in GLOSS.findall(line):
        # "beans (kidney, soya, black eye)": a list of kinds, kidney beans (not a kidney);
        # "guinea corn (sorghum)": one name, the food's other name; "stock cube (Maggi or
        # Knorr)": capitalised, brands, no kinds
        glosses = _glosses(inner)
        kinds = len(glosses) > 1 and not re.search(r"\b[A-Z][a-z]", inner)
        for gloss in glosses:
            found += [f"{gloss} {head[0]}", gloss] if kinds and one_kind(gloss) else [gloss]
    slash = re.search(r"([a-z]+)/[a-z]+\s+(.+)", line.lower())
    if slash:  # "5 corn/wheat tortillas": the first of the two, with its noun
        found.append(_clean(f"{slash.group(1)} {slash.group(2).split(',')[0]}"))
    words = (name or "").split()
    if powder_form(name) != name:
        # "powdered ginger", "powdered milk": the ground spice, the dry milk
        rest = " ".join(words[1:])
        found += [powder_form(name), f"ground {rest}", rest]
    if len(words) > 1 and words[-1] in FORM_NOUNS:
        words = words[:-1]
        found.append(" ".join(words))
    found += _without_descriptors(words)
    if len(words) > 1 and words[-1] in FLAVOURED_SPREADS:
        found.append(FLAVOURED_SPREADS[words[-1]])
    pack = packed_words(line) | SKIN_WORDS
    kept = [word for word in words if word not in pack]
    if words and kept != words and kept:
        # "green olives packed in brine", "wild salmon fillets with skin": the food alone;
        # "water-packed tuna" first as the map lists a pack, after the food ("tuna water")
        if words[0] in pack - SKIN_WORDS:
            found.append(" ".join([*kept, words[0]]))
        found.append(" ".join(kept))
    if len(words) > 1 and words[-1] in ("bun", "buns"):
        found.append(" ".join([*words[:-1], "rolls" if words[-1] == "buns" else "roll"]))
    folded = fold_accents(name or "")
    if folded != (name or ""):
        found.append(folded)
    found += [variant for variant in (respelled(n) for n in [name or "", *found]) if variant]
    if len(words) > 1 and words[0] in FRUIT_PARTS:
        # "peel from 3 clementines (such as mandarins)": the peel of the fruit, never the fruit
        found = [n for n in found if words[0] in n.split()] + \
            [f"{word.rstrip('s')} {words[0]}" for word in words[1:]]
    seen = {name}
    return [n for n in found if n and not (n in seen or seen.add(n))]  # type: ignore[func-returns-value]


def _without_descriptors(words: list[str]) -> list[str]:
    """The name less the words before its food that only describe it: leading descriptors
    ("seedless raisins", "refined sugar") and a filling or a pack ("pimento-stuffed olives";
    "water-packed tuna" is "tuna water", then tuna)."""
    found = []
    rest = list(words)
    while len(rest) > 1 and rest[0] in DESCRIPTORS:
        rest = rest[1:]
        found.append(" ".join(rest))
    for index, word in enumerate(rest[:-1]):
        filled = FILLED_OR_PACKED.match(word)
        if filled:
            food = [*rest[:index], *rest[index + 1:]]
            if filled["kind"] == "packed":
                found.append(" ".join([*food, filled["filling"]]))
            found.append(" ".join(food))
            break
    return found


def respelled(name: str) -> str | None:
    """``name`` with each word spelled as the map and SR28 spell it ("tumeric" -> "turmeric",
    "portobello mushroom" -> "portabella mushroom"); None when no word changes."""
    words = name.split()
    changed = [SPELLING_VARIANTS.get(word, word) for word in words]
    return " ".join(changed) if changed != words else None


def powder_form(name: str | None) -> str | None:
    """A powdered food named as its powder ("powdered milk" -> "milk powder"); other names
    as they are."""
    words = (name or "").split()
    if len(words) > 1 and words[0] in POWDERED:
        return f"{' '.join(words[1:])} powder"
    return name


def kind_name(name: str | None) -> str | None:
    """The name whose words say what kind of food ``name`` is: a powdered food's powder
    ("powdered garlic" is a spice), a flavoured spread's generic name ("mint jelly" is a
    jelly, not an herb)."""
    words = (name or "").split()
    if len(words) > 1 and words[-1] in FLAVOURED_SPREADS:
        return FLAVOURED_SPREADS[words[-1]]
    return powder_form(name)


def examples(line: str) -> list[str]:
    """The first food of each example list the line gives ("such as spinach or kale" is
    spinach; "such as peas and carrots" is SR28's peas and carrots)."""
    return [_clean(re.split(r"\bor\b|/", m.group(1))[0]) for m in EXAMPLE.finditer(line)]


# The last word of a name for a mixture or a class of foods, not one food: when the line
# names examples of it ("mixed vegetables (e.g. carrots, cabbage)", "leafy greens (such as
# spinach)"), the first example says what it is.
COLLECTIVE_HEADS = frozenset({"vegetables", "veggies", "veg", "greens", "nuts", "fruit",
                              "fruits", "berries", "herbs", "fish", "seafood", "meat", "meats",
                              "squash", "cheese"})
# Words that may stand before a collective head and leave it a class ("mixed", "leafy",
# "shredded"); any other word makes it one food ("cream cheese", "pine nuts").
CLASS_WORDS = frozenset({"mixed", "assorted", "leafy", "green", "fresh", "dried", "frozen",
                         "other", "seasonal", "white", "ground", "minced", "chopped", "grated",
                         "shredded", "sliced", "diced", "any", "winter", "summer", "hard",
                         "soft", "firm", "melting", "cooked", "raw", "tree", "dark"})
# Words of a name that say how the food is prepared, kept on the example that names it
# ("ground meat (beef or lamb)" is ground beef).
KEPT_FORMS = frozenset({"ground", "minced"})


def collective_example(name: str | None, line: str) -> str | None:
    """The food a collective name stands for on this line: its first example, with the name's
    preparation word ("ground"); None when the name is one food or the line gives no
    example."""
    words = bare_name(name).split()
    if not words or words[-1] not in COLLECTIVE_HEADS or \
            not set(words[:-1]) <= CLASS_WORDS:
        return None
    found = examples(line) + [gloss for inner in GLOSS.findall(line)
                              for gloss in _glosses(inner)][:1]
    if not found:
        return None
    return with_forms(found[0], name or "")


def bare_name(name: str | None) -> str:
    """The name without a note of choice ("meat of your choice" is meat)."""
    return re.sub(r"\s+(?:of\s+)?(?:your\s+)?choice$", "", name or "")


def with_forms(other: str, name: str) -> str:
    """``other`` with the preparation words of ``name`` it lacks in front ("beef", "ground
    meat" -> "ground beef")."""
    kept = [word for word in name.split() if word in KEPT_FORMS and word not in other.split()]
    return " ".join([*kept, other])


def _glosses(inner: str) -> list[str]:
    """The foods a parenthesised gloss names, in order ("sorghum"; "feta; optional" -> "feta";
    "cold gravy or butter" -> both); none for a measure, a note or a state."""
    names = []
    mixed = MIX_OF.match(inner)
    if mixed:  # "a mix of cheddar and parmesan is good": cheddar, then parmesan
        inner = PRAISE.sub("", inner[mixed.end():]).replace(" and ", " or ")
    for part in re.split(r";|,|\s/\s|\bor\b", inner):
        name = _clean(part)
        if not name or re.search(r"\d", name) or NOTE_WORDS.search(name):
            break  # what follows a note or a measure is no gloss ("(about 2 lb, or 1 kg)")
        if set(name.split()) <= FORM_ONLY:
            continue
        if re.search(r"[a-z]{3}", name):
            names.append(name)
    return names


# A gloss that mixes foods names them in order: the first is the food, as for "or".
MIX_OF = re.compile(r"(?i)^\s*(?:a\s+|an\s+)?(?:mix|mixture|blend|combination|combo)\s+of\s+")
PRAISE = re.compile(r"(?i)\s+(?:is|are|works?|would be)\s+(?:good|best|nice|great|fine|well|"
                    r"ideal)\b.*$")


def _clean(text: str) -> str:
    text = re.sub(r"(?i)^(?:a|an|the|some|either)\s+", "", text.strip().lower())
    text = re.sub(r"(?i)\b(?:or|and)\s*$", "", text).strip(" .:-")
    return " ".join(text.split())


def fold_accents(text: str) -> str:
    """"crème fraîche" -> "creme fraiche"."""
    return "".join(c for c in unicodedata.normalize("NFKD", text)
                   if not unicodedata.combining(c))
