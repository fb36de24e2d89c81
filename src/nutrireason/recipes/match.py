"""Ingredient names -> SR28 foods: a reviewed map for frequent names, then token scoring over
generic SR28 entries (no baby foods, fast food, restaurant or branded items)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

import pandas as pd
from rapidfuzz import fuzz, process

from nutrireason.recipes.words import PORTION_UNITS, fold, own_text

EXCLUDED_GROUPS = {"0300", "2100", "2200", "3600"}  # baby, fast food, meals/entrees, restaurant
GENERIC_WORDS = {"raw", "fresh", "whole", "plain", "regular", "all", "purpose", "unenriched",
                 "enriched", "commercial", "prepared", "ns", "as", "to", "without", "with",
                 "and", "or", "salt", "added", "type", "year", "round", "average", "mature",
                 "seeds", "fluid", "table"}
# SR28 descriptions start with a category word ("Spices, cumin seed"; "Cheese, cheddar"): not a
# sign of a different food.
CATEGORY_WORDS = {"spice", "beverage", "cheese", "game", "meat", "oil", "nut", "seed", "bean",
                  "sugar", "syrup",
                  "fish", "beef", "pork", "chicken", "lamb", "veal", "egg", "milk", "cereal",
                  "soup", "sauce", "vegetable", "fruit", "mollusk", "crustacean", "turkey",
                  "leavening", "agent",
                  "vinegar", "alcoholic", "seasoning", "pepper", "lettuce", "squash", "onion",
                  "cabbage", "pea", "lentil", "mushroom", "cream", "yogurt", "butter", "water",
                  "tap", "municipal", "margarine", "shortening", "salad", "dressing"}
# Category words that name another food when they stand before one ("lamb steaks", "fish
# oil", "pork broth", "lentil flour", "vegetable suet"); "butter" in "all-butter pie crust"
# does not.
KIND_CATEGORIES = {"lamb", "pork", "beef", "veal", "chicken", "turkey", "fish", "lentil",
                   "bean", "pea", "egg", "vegetable", "mushroom", "crustacean", "mollusk",
                   "onion", "nut", "seed", "fruit"}
MIN_SCORE = 60.0
# Words the parser moves to "preparation" that name a different food when kept.
QUALIFIERS = ("ground", "dried", "fresh", "canned", "cooked", "boiled", "heavy", "frozen",
              "minced", "diced", "chopped", "steamed")


# Words before a food that never name another food: sizes, states, cuts, cooking.
IGNORED_BEFORE = frozenset({"fresh", "large", "small", "medium", "whole", "raw", "ripe",
                            "boneless", "skinless", "lean", "extra", "jumbo", "baby", "young",
                            "dried", "frozen", "canned", "cooked", "chopped", "minced",
                            "diced", "sliced", "ground", "grated", "shredded", "peeled",
                            "crushed", "mashed", "cubed", "halved", "pitted", "seedless",
                            "unsalted", "salted", "plain", "low", "reduced", "light",
                            "heavy", "thick", "thin", "hot", "cold", "warm", "soft", "hard",
                            "mixed", "assorted", "other", "more", "any", "your", "of"})


# Plant parts that make another food of the plant named before them ("beet greens" are SR28's
# beet greens, not beets; "pumpkin leaves", "pea shoots", "squash blossoms").
PART_NOUNS = frozenset({"green", "leaf", "top", "shoot", "sprout", "blossom", "flower",
                        "stem", "vine", "tip"})


# How the cook cuts a food: before the food it may name a product ("1 can diced tomatoes",
# "minced garlic" in a jar); after it, it is an instruction ("2 tomatoes, diced").
CUTTING_WORDS = frozenset({"minced", "diced", "chopped"})


def cut_after_food(word: str, name: str, line: str | None) -> bool:
    """``word`` is a cutting word the line writes only after the food's name."""
    if word not in CUTTING_WORDS or not line or not name:
        return False
    lowered = line.lower()
    head = re.search(rf"\b{re.escape(name.split()[-1])}", lowered)
    return head is not None and re.search(rf"\b{word}\b", lowered[:head.start()]) is None


# The last word of a name that names a product type: a match that lacks it is another food
# ("butter beans" is not butter, "vanilla protein powder" is not vanilla extract, "blue cheese
# dressing" is not blue cheese, "chicken bouillon" is not chicken).
PRODUCT_HEADS = {"powder", "sauce", "dressing", "seasoning", "extract", "bouillon", "boullion",
                 "stock", "broth", "oil", "paste", "juice", "milk", "butter", "flour", "sugar",
                 "syrup", "vinegar", "wine", "cream", "cheese", "crumb", "chip", "bar", "mix",
                 "blend", "spread", "jam", "preserve", "jelly", "soup", "cake", "cookie",
                 "bread", "noodle", "pasta", "candy", "bean", "meal", "zest", "creamer",
                 "marinade", "cracker", "cereal", "granola", "yogurt", "tofu", "sausage",
                 "burger", "patty", "pie", "muffin", "bun", "roll", "tortilla", "wrap",
                 "dough", "crust", "pudding", "custard", "coating", "frosting", "icing",
                 "flake", "chutney", "starter", "rub", "liqueur", "schnapps", "beer",
                 "gelatin", "nectar", "relish", "salsa", "curry", "vinaigrette", "glaze",
                 "ketchup", "catsup",
                 # filled and shaped doughs: "cheese tortellini" is no cheese, "potato
                 # gnocchi" no potatoes
                 "tortellini", "ravioli", "gnocchi", "pierogi", "empanada", "samosa",
                 "dumpling", "wonton"}
# Words that stand for one another in a product head.
HEAD_SYNONYMS = {"stock": {"broth", "stock", "bouillon", "soup"},
                 "broth": {"broth", "stock", "bouillon", "soup"},
                 "bouillon": {"broth", "stock", "bouillon", "soup"},
                 "boullion": {"broth", "stock", "bouillon", "soup"},
                 "soup": {"broth", "stock", "bouillon", "soup"},
                 "noodle": {"noodle", "pasta", "spaghetti", "macaroni"},
                 "pasta": {"noodle", "pasta", "spaghetti", "macaroni"},
                 "chip": {"chip", "morsel"}, "crumb": {"crumb"},
                 "zest": {"peel", "zest", "rind"}, "preserve": {"preserve", "jam", "jelly"},
                 "jam": {"preserve", "jam", "jelly"}, "cookie": {"cookie", "biscuit"},
                 "cracker": {"cracker", "crisp"}, "flake": {"flake", "flaked"},
                 "powder": {"powder", "powdered", "ground", "dry", "dried", "granulated"}}


# Words of a qualifier the parser carries as a state ("low sodium tomatoes"): no food word.
QUALIFIER_NAME_WORDS = {"sodium"}
# Words in a name that say nothing about which food it is.
LOOSE_WORDS = {"fresh", "large", "small", "medium", "organic", "good", "quality", "best",
               "homemade", "store", "bought", "storebought", "favorite", "favourite", "choice",
               "your", "extra", "thin", "thick", "sliced", "chopped", "diced", "minced",
               "shredded", "grated", "whole", "ground", "baby", "mini", "jumbo", "pure",
               "natural", "premium", "cold", "hot", "warm", "room", "temperature", "softened",
               "melted", "packed", "loosely", "firmly", "finely", "roughly", "coarsely",
               "crushed", "cubed", "halved", "quartered", "trimmed", "peeled", "pitted",
               "seeded", "boneless", "skinless", "lean", "low", "fat", "reduced", "light",
               "unsalted", "salted", "sweetened", "unsweetened", "plain", "style", "brand",
               "optional", "leftover", "cooked", "uncooked", "canned", "frozen", "dried", "dry",
               "raw", "drained", "rinsed", "boiled", "roasted", "toasted", "sized", "size",
               "sharp", "mild", "aged", "virgin", "extravirgin", "kosher", "sea", "coarse",
               "fine", "granulated", "italian", "greek", "mexican", "french", "english",
               "spanish", "thai", "chinese", "japanese", "indian", "american", "asian",
               "block", "wedge", "stick", "loaf", "heavy", "firm", "soft", "ripe",
               "young", "new", "dark", "golden", "yellow", "white", "red", "green", "short",
               "cut", "chunk", "fluffy", "mixed", "assorted", "bite", "giant", "big", "little",
               "browned", "creamy", "tart", "crunchy", "chunky", "smooth", "crisp", "tender",
               # a plant-based line is checked against animal foods after matching
               # (StateResolver.plant_based_mismatch), not by failing to match
               "plant", "based", "plantbased", "vegan",
               "shavings", "shaving", "shaved", "curls", "curl",
               # how a meat was cooked or torn: line states (cooked, shredded), not the food
               "rotisserie", "pulled",
               # "1 recipe pie crust" is a batch of it, not SR28's "prepared from recipe"
               "recipe"}


def names_the_food(query: str, description: str, vocabulary: set[str] | frozenset = frozenset()
                   ) -> bool:
    """The description carries the query's specific words: its head and, when the word right
    before it names a food SR28 knows (``vocabulary``), that word too ("flax seeds" is not
    lotus seeds, "butter beans" not black beans; "Honeycrisp apples" are apples)."""
    wanted = [w for w in tokens(query) if w not in LOOSE_WORDS and w not in GENERIC_WORDS]
    found = set(tokens(description))
    found |= {w[:-4] for w in found if w.endswith("seed")}  # flaxseed -> flax
    if not wanted:
        return True
    # a product's kind is its modifier: "tzatziki sauce" is not Worcestershire sauce
    product = wanted[-1] in PRODUCT_HEADS
    required = [wanted[-1]] + [w for w in wanted[-2:-1] if w in vocabulary or product]
    return all(w in found for w in required)


# A stand-in for an animal food is another food, unless the name asks for one.
STAND_IN_WORDS = {"meatless", "vegetarian", "imitation", "substitute", "veggie", "vegan"}
ASKS_FOR_STAND_IN = STAND_IN_WORDS | {"plant", "based", "soy", "tofu", "seitan", "tempeh",
                                      "vegetable", "bean", "mock", "faux"}


def product_of_food(query: str, description: str) -> bool:
    """The entry's own name ends in a product word the query does not name: a product made of
    the food, not the food ("sardines" are not "Fish oil, sardine", "peanuts" not "Peanut
    butter, smooth style")."""
    wanted = set(tokens(query))
    first = tokens(description.split(",")[0])
    return len(first) > 1 and first[-1] in PRODUCT_HEADS and first[-1] not in wanted and \
        not HEAD_SYNONYMS.get(first[-1], set()) & wanted


def keeps_head(query: str, description: str) -> bool:
    """False when the query ends in a product word the description does not name; when the
    description is a product the query does not name ("almond" is not "Oil, almond"); or a
    part the query does not ask for ("skin only", "fat only")."""
    wanted = tokens(query)
    lowered = description.lower()
    if set(tokens(description)) & STAND_IN_WORDS and not set(wanted) & ASKS_FOR_STAND_IN:
        return False  # "meatballs" are not "Meatballs, meatless"
    for part in ("skin only", "fat only", "separable fat", "giblets", "bones"):
        if part in lowered and part.split()[0] not in query.lower():
            return False
    first = tokens(description.split(",")[0])
    if len(first) == 1 and first[0] in PRODUCT_HEADS and first[0] not in wanted and \
            not HEAD_SYNONYMS.get(first[0], set()) & set(wanted):
        return False
    if not wanted or wanted[-1] not in PRODUCT_HEADS:
        return True
    accepted = HEAD_SYNONYMS.get(wanted[-1], {wanted[-1]})
    return bool(accepted & set(tokens(description)))


@dataclass(frozen=True)
class Match:
    ndb_no: str
    description: str
    score: float
    method: str
    name: str | None = None  # the reviewed-map name that matched, if any


IRREGULAR_PLURALS = {"leaves": "leaf", "loaves": "loaf"}


@cache
def stem(word: str) -> str:
    """Crude plural folding for matching only: berries->berry, tomatoes->tomato, eggs->egg,
    leaves->leaf."""
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("oes"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def spells(words: tuple[str, ...], name: str) -> bool:
    """``words`` hold ``name`` word for word, its last word in either number ("boneless strip
    steaks" spells "strip steak"; "113 grams flour" does not spell "gram flour")."""
    wanted = name.split()
    size = len(wanted)
    return any(list(words[start:start + size - 1]) == wanted[:-1] and
               stem(words[start + size - 1]) == stem(wanted[-1])
               for start in range(len(words) - size + 1))


def stemmed(name: str) -> str:
    """``name`` with each word's plural folded ("coriander leaves" -> "coriander leaf")."""
    return " ".join(stem(word) for word in name.split())


def unique_by_stems(names: dict[str, object]) -> dict[str, str]:
    """Stemmed spelling -> the one name in ``names`` with that spelling; spellings several
    names share are left out."""
    found: dict[str, str | None] = {}
    for name in names:
        key = stemmed(name)
        found[key] = name if key not in found else None
    return {key: name for key, name in found.items() if name is not None}


def tokens(text: str) -> list[str]:
    """Lower-case word stems of ``text`` (memoised: descriptions are scored many times)."""
    return list(_tokens(text))


@lru_cache(maxsize=200_000)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in _WORD.findall(text.lower()))


_WORD = re.compile(r"[a-z0-9]+")


# Words the line's states carry (cuts, cooking, preservation): a wider name adding only these
# is the same food in a state, found by the state rules.
LINE_STATE_WORDS = frozenset({
    "breast", "breasts", "thigh", "thighs", "drumstick", "drumsticks", "wing", "wings", "leg",
    "legs", "belly", "shoulder", "tenderloin", "loin", "brisket", "chuck", "sirloin", "flank",
    "ribeye", "round", "cooked", "boiled", "roasted", "grilled", "fried", "canned", "frozen",
    "dried", "smoked", "raw", "drained", "skinless", "boneless", "fresh"})


def unasked_concentrate(query: str, description: str) -> bool:
    """An undiluted concentrate for a name that asks for none: "pink lemonade" is the drink
    (SR28's concentrate "prepared with water"), not the frozen concentrate, which holds about
    four times its energy. (A line that says "concentrate" anywhere asks for one.)"""
    text = description.lower()
    return "concentrate" in text and "concentrate" not in query.lower() and \
        not re.search(r"\b(?:prepared|diluted|reconstituted)\b", text)


@lru_cache(maxsize=100_000)
def name_words(name: str) -> frozenset[str]:
    """The words of a food name, hyphenated ones split ("tri-tip" holds "tri")."""
    return frozenset(re.split(r"[\s-]+", name.strip()))


@lru_cache(maxsize=100_000)
def line_words(line: str, commas: bool = False) -> tuple[str, ...]:
    """The line's own words as the reviewed map spells names: lower case, accents folded,
    parentheticals and later "or" alternatives left out (with ``commas``, its commas kept as
    words of their own)."""
    pattern = r"[a-z0-9%'-]+|," if commas else r"[a-z0-9%'-]+"
    return tuple(re.findall(pattern, fold(re.sub(r"\([^)]*\)", " ", own_text(line)))))


class Matcher:
    """Matches cleaned ingredient names to SR28 foods, with a score and the method used."""

    def __init__(self, foods: pd.DataFrame, reviewed: dict[str, tuple[str | None, str]]) -> None:
        keep = ~foods["group_code"].isin(EXCLUDED_GROUPS)
        keep &= foods["manufacturer"].fillna("").str.strip().eq("")
        keep &= ~foods["description"].str.contains(r"\b[A-Z]{3,}", regex=True)
        self.candidates = foods.loc[keep, ["ndb_no", "description"]].reset_index(drop=True)
        self.lowered = self.candidates["description"].str.lower().tolist()
        self.index: dict[str, list[int]] = {}
        for position, text in enumerate(self.lowered):
            for token in set(tokens(text)):
                self.index.setdefault(token, []).append(position)
        self.known = set(foods["ndb_no"])
        # Words SR28 uses for foods (not for preparation): a modifier among them names a food.
        self.vocabulary = set(self.index) - LOOSE_WORDS - GENERIC_WORDS - CATEGORY_WORDS
        self.food_words = (self.vocabulary | PRODUCT_HEADS) - LOOSE_WORDS
        self.descriptions = dict(zip(foods["ndb_no"], foods["description"], strict=True))
        self.reviewed = reviewed
        # reviewed names of several words, by each word's stem
        self.by_word: dict[str, list[str]] = {}
        for known in reviewed:
            if len(name_words(known)) > 1:
                for word in name_words(known):
                    self.by_word.setdefault(stem(word), []).append(known)
        self.by_stems = unique_by_stems(reviewed)
        self._memo: dict[str, Match | None] = {}
        # no phrase longer than the longest reviewed name can be one: the sub-phrase search
        # looks at most this many words at a time, so its work grows linearly with a name
        self.longest = max((len(known.split()) for known in reviewed), default=1)

    def match(self, name: str | None, unit: str | None = None, raw_name: str | None = None,
              prep: list[str] | None = None, line: str | None = None) -> Match | None:
        """Best SR28 food for ``name``.

        In order: the reviewed map for a wider name the line itself spells out (see
        :meth:`wider_name`), for the name with a qualifier the parser moved to ``prep``
        ("ground" + "ginger"), with a portion unit ("chicken" + "breast"), as parsed
        (``raw_name``) or cleaned; then the longest reviewed sub-phrase ("mayonnaise hellmann"
        -> "mayonnaise"); then token scoring over SR28 descriptions.
        """
        if not name:
            return None
        named = unit in PORTION_UNITS and stem(unit) not in tokens(name)
        query = f"{name} {unit}" if named else name
        qualifiers = [f"{word} {name}" for word in QUALIFIERS if word in (prep or [])
                      and not cut_after_food(word, name, line)]
        wider = self.wider_name(name, line)
        dropped = self.dropped_kind(name, line)
        if dropped and self.refusal([dropped, self._spelled(dropped), raw_name, name]):
            dropped = None  # "corn flour" is refused (corn starch or corn meal), not guessed
        concentrate = "concentrate" in (line or "").lower()
        key = f"{query}|{raw_name}|{'/'.join(qualifiers)}|{wider}|{dropped}|{concentrate}"
        if key not in self._memo:
            names = [wider, *qualifiers, query, raw_name, name, species_meat(name)]
            # the slicer's own name when it kept more of the food ("corn muffin", parsed
            # "muffin")
            fuller = raw_name if raw_name and raw_name != name and \
                set(name.split()) < set(raw_name.split()) and \
                raw_name.split()[-1] == name.split()[-1] else None
            self._memo[key] = (dropped and self._kind_named(dropped)) or \
                self._first_reviewed(names) or (
                None if self.refusal(names) else self._subphrase(name) or
                (fuller and self._fuzzy(fuller, concentrate)) or
                self._fuzzy(query, concentrate))
        return self._spelled_out(self._memo[key], line)

    def _spelled_out(self, found: Match | None, line: str | None) -> Match | None:
        """A sub-phrase match widened to the longest reviewed name the line spells out around
        it: the parsed name kept words no food has ("McCain Quick Cook Straight Cut French
        Fried Potatoes" holds "potatoes"; the line spells "french fried potatoes")."""
        if found is None or found.method != "reviewed_subphrase" or not found.name:
            return found
        wider = self.wider_name(found.name, line)
        widened = self._reviewed(wider)
        if widened is None or name_words(wider) - name_words(found.name) <= LINE_STATE_WORDS:
            return found  # "chicken breast" of "cans chunk chicken breast": the cut is a state
        return Match(widened.ndb_no, widened.description, found.score, found.method, wider)

    def wider_name(self, name: str, line: str | None) -> str | None:
        """The longest reviewed name with more words than ``name`` that holds all of them and
        that the line spells out word for word (outside parentheses and later "or"
        alternatives): the words the parser dropped ("2 lb top round roast" parsed as
        "roast", "3 lb sirloin tip roast" as "sirloin roast")."""
        candidates = self.by_word.get(stem(name.split()[-1])) if line else None
        if not candidates:
            return None
        wanted = {stem(word) for word in name_words(name)}
        # a name does not run across a comma ("orange, peel removed" is no orange peel)
        spelled = line_words(line, commas=True)
        best = None
        for candidate in candidates:
            if spells(spelled, candidate) and (best is None or len(candidate) > len(best)):
                words = {stem(word) for word in name_words(candidate)}
                if len(words) > len(wanted) and wanted <= words:
                    best = candidate
        return best

    def dropped_kind(self, name: str, line: str | None) -> str | None:
        """The food word the line writes right before the name's head that the name lost
        ("3 prickly pears" parsed as "pears"), with the head: a word SR28 names foods with,
        not a size, state, cut or preparation."""
        words = line_words(line) if line else ()
        head = stem(name.split()[-1]) if name.split() else ""
        at = [i for i, word in enumerate(words) if i and stem(word) == head]
        if not at:
            return None
        before = words[at[-1] - 1]
        if not before.isalpha() or before in name.split() or stem(before) in IGNORED_BEFORE or \
                stem(before) not in self.vocabulary:
            return None
        return f"{before} {words[at[-1]]}"

    def _kind_named(self, phrase: str) -> Match | None:
        """The SR28 food a two-word phrase names when the entry's own name (its first part)
        holds both words ("prickly pears": Prickly pears, raw); none otherwise."""
        found = self._reviewed(self._spelled(phrase)) or self._fuzzy(phrase)
        first = set(tokens(found.description.split(",")[0])) if found else set()
        return found if found and set(tokens(phrase)) <= first else None

    def refusal(self, names: list[str | None]) -> str | None:
        """The reviewed map's reason when it lists one of ``names`` as having no SR28 food
        (such a name is never matched by sub-phrase or token scoring: "kaffir lime leaves"
        are not limes)."""
        for candidate in names:
            if self._refused(candidate):
                return self.reviewed[candidate][1] or "no SR28 food fits (reviewed)"
        return None

    def _refused(self, name: str | None) -> bool:
        """The reviewed map lists ``name`` as having no SR28 food."""
        return bool(name) and name in self.reviewed and self.reviewed[name][0] is None

    def _first_reviewed(self, names: list[str | None]) -> Match | None:
        """The first of ``names`` (most specific first) the reviewed map lists; none when that
        one is refused ("ground coffee" is no brewed coffee, which "coffee" is)."""
        for candidate in names:
            candidate = self._spelled(candidate)
            if self._refused(candidate):
                return None
            found = self._reviewed(candidate)
            if found:
                return found
        return None

    def _spelled(self, name: str | None) -> str | None:
        """The reviewed name a name of several words spells with other plurals ("coriander
        leaf" is "coriander leaves"); a spelling two reviewed names share decides nothing, and
        a single word keeps its number ("peppers" are not the seasoning "pepper")."""
        if not name or name in self.reviewed or len(name.split()) < 2:
            return name
        return self.by_stems.get(stemmed(name), name)

    def _subphrase(self, name: str) -> Match | None:
        """The longest run of words in ``name`` that the reviewed map knows, rightmost first."""
        words = name.split()
        # food_later[i]: a food word stands at position i or after it (one pass, not a scan
        # per phrase)
        food_later = [False] * (len(words) + 1)
        for index in range(len(words) - 1, -1, -1):
            food_later[index] = food_later[index + 1] or stem(words[index]) in self.food_words
        for length in range(min(len(words) - 1, self.longest), 0, -1):
            for start in range(len(words) - length, -1, -1):
                phrase = " ".join(words[start:start + length])
                found = self._reviewed(phrase)
                before = words[start - 1] if start > 0 else None
                # "lamb steaks", "fish oil", "lentil flour": a food word (a category word too)
                # before the phrase names another food
                specific_before = before is not None and \
                    stem(before) not in LOOSE_WORDS | QUALIFIER_NAME_WORDS and \
                    (stem(before) in self.vocabulary or stem(before) in KIND_CATEGORIES) and \
                    not (found and stem(before) in tokens(found.description))
                # "mango chutney", "plum tomatoes": a food word after the phrase names
                # another product
                after = words[start + length] if start + length < len(words) else None
                specific_after = food_later[start + length] or \
                    (after is not None and stem(after) in PART_NOUNS)
                # "herb cream cheese": "cheese" is not cheddar when "cream cheese", another
                # food the map knows, is the phrase with the word before it
                wider = self._reviewed(f"{before} {phrase}") if before else None
                other_food = found and wider and wider.ndb_no != found.ndb_no
                if found and not other_food and not specific_before and not specific_after \
                        and keeps_head(name, phrase + " " + found.description):
                    return Match(found.ndb_no, found.description, 90.0, "reviewed_subphrase",
                                 phrase)
        return None

    def _reviewed(self, name: str | None) -> Match | None:
        if not name or name not in self.reviewed:
            return None
        ndb, text = self.reviewed[name]
        if ndb is None or ndb not in self.known:
            return None
        return Match(ndb, self.descriptions[ndb], 100.0, "reviewed_map", name)

    def names_the_kind(self, query: str, description: str) -> bool:
        """Token scoring's guard: the query's head noun is the entry's head (or a product word
        checked by :func:`keeps_head`), and the words that say which kind the entry is are in
        the query ("leaves" is not taro leaves, "bonga fish" not burbot, "lamb meat" not lamb
        brain, "pigeons" not pigeon peas, "peppers" not black pepper)."""
        wanted = [w for w in tokens(query) if w not in LOOSE_WORDS and w not in GENERIC_WORDS]
        if len(query.split()) > 1 and query.split()[-1] == "greens":  # "beet greens": leaves
            wanted.append("green")
        if not wanted:
            return False
        heads, kinds = description_kind(description)
        if wanted[-1] not in heads and (wanted[-1] not in PRODUCT_HEADS or
                                        any(wanted[-1] in option for option in kinds)):
            return False  # "custard" is no custard-apple: there it names the apple's kind
        # a national word names a dressing's kind ("french dressing"), loose as it is elsewhere
        named = set(wanted) | (set(tokens(query)) & NATIONAL_WORDS)
        return not kinds or any(all(w in named for w in option) for option in kinds)

    def _fuzzy(self, query: str, concentrate: bool = False) -> Match | None:
        """Rank descriptions sharing a word with the query (or, failing that, rapidfuzz's
        closest 40) by :func:`score_description`, rapidfuzz's token-set ratio breaking ties.
        An undiluted concentrate only when the line asks for one (``concentrate``)."""
        shared = sorted({i for t in tokens(query) for i in self.index.get(t, [])})
        if not shared:
            shared = [i for _, _, i in process.extract(query, self.lowered,
                                                       scorer=fuzz.token_set_ratio, limit=40)]
        best: tuple[float, float, int] | None = None
        for index in shared:
            text = self.lowered[index]
            if not keeps_head(query, text) or product_of_food(query, text) or \
                    not names_the_food(query, text, self.vocabulary) \
                    or not self.names_the_kind(query, text) or \
                    (not concentrate and unasked_concentrate(query, text)):
                continue
            key = (not community_food(query, text), score_description(query, text),
                   fuzz.token_set_ratio(query, text), -index)
            if best is None or key > best:
                best = key
        best = None if best is None else (best[1], -best[3])
        if best is None or best[0] < MIN_SCORE:
            return None
        row = self.candidates.iloc[best[1]]
        return Match(row["ndb_no"], row["description"], round(best[0], 1), "token_score")


# SR28's foods of one community's diet (its Alaska Native, American Indian entries: "Octopus
# (Alaska Native)", "Mutton, cooked, roasted (Navajo)", "Tea, herbal, brewed, Hohoysi (Hopi)").
COMMUNITY_FOODS = re.compile(r"\((alaska native|navajo|hopi|apache|northern plains indians|"
                             r"shoshone bannock|southwest)\)")


def community_food(query: str, description: str) -> bool:
    """A community's food the query does not name: token scoring takes it only when no other
    entry names the food ("1 kg octopus" is SR28's common octopus; huckleberries are only the
    Alaska Native entry)."""
    found = COMMUNITY_FOODS.search(description.lower())
    return bool(found) and not set(found.group(1).split()) <= set(query.lower().split())


def species_meat(name: str) -> str | None:
    """"lamb meat" -> "lamb": the species names the food (SR28 has no "meat" entries but
    drippings, luncheon meat and variety meats, each another food)."""
    words = name.split()
    return " ".join(words[:-1]) if len(words) > 1 and words[-1] == "meat" else None


# Nationality words: loose on a line ("Italian parsley"), a kind in SR28 ("Beans, french").
NATIONAL_WORDS = {"italian", "greek", "mexican", "french", "english", "spanish", "thai",
                  "chinese", "japanese", "indian", "american", "asian"}
# Words that never say which kind an entry is ("Soup, cream of celery": "of"); loose
# adjectives do not either, except the few that name another product ("Fish, fish sticks").
KIND_IGNORED = (GENERIC_WORDS | (LOOSE_WORDS - NATIONAL_WORDS) |
                {"of", "in", "the", "a", "for", "from", "by", "on", "made", "includes",
                 "style", "flavor", "flavored"}) - \
    {"stick", "block", "wedge", "loaf", "chunk", "white", "red", "green", "yellow", "golden",
     "dark", "dry", "dried"}
# SR28 parts that say nothing of the food ("Beef, variety meats and by-products, tripe").
_NEUTRAL_PART = re.compile(r"(?i)^\s*(?:variety meats and by-products|ready-to-\w+|"
                           r"commercially prepared|new zealand|imported)\s*$")


def description_kind(description: str) -> tuple[set[str], list[list[str]]]:
    """The words that name an SR28 entry's food: its head nouns, and the words that say which
    one it is (alternatives of them, where the entry says "or"). "Taro leaves, raw" ->
    ({leaf}, [[taro]]); after a category ("Fish, pike, walleye", "Spices, pepper, black") the
    next part names the kind: ({fish, pike}, [[pike]]), ({spice, pepper}, [[pepper, black]])."""
    raw_parts = description.split(",")
    parts = [re.sub(r"\([^)]*\)?|ready-to-\w+", " ", part) for part in raw_parts]
    parts = [part for part in parts if tokens(part) and not _NEUTRAL_PART.match(part)]
    if not parts:
        return set(), []
    first = tokens(parts[0])
    if set(first) <= CATEGORY_WORDS | GENERIC_WORDS and len(parts) > 1:
        kind = tokens(parts[1])
        heads = set(first) | {kind[-1]}
        if set(kind) <= CATEGORY_WORDS and len(parts) > 2:  # "Spices, pepper, black"
            kind = kind + tokens(parts[2])
        text = " ".join(kind)
    else:
        heads, text = set(first[-1:]), " ".join(first[:-1])
    heads |= synonym_words(raw_parts)
    options = [[w for w in option.split() if w not in KIND_IGNORED]
               for option in re.split(r"\bor\b", text)]
    return heads, [option for option in options if option]


def synonym_words(parts: list[str]) -> set[str]:
    """The words of a parenthesised name an SR28 description gives right after its head
    ("Squab, (pigeon), meat and skin": pigeon), which names the food as the head does."""
    if len(parts) > 1 and re.fullmatch(r"\s*\([^)]*\)\s*", parts[1]):
        return set(tokens(parts[1]))
    return set()


def score_description(query: str, description: str) -> float:
    """0-100: how well an SR28 description names the queried food, favouring plain entries."""
    wanted = tokens(query)
    if not wanted:
        return 0.0
    parts = description.split(",")
    first = set(tokens(parts[0])) | synonym_words(parts)
    everything = set(tokens(description))
    coverage = sum(w in everything for w in wanted) / len(wanted)
    head = 1.0 if wanted[-1] in first else 0.0
    ignorable = set(wanted) | GENERIC_WORDS
    extra_first = len(first - ignorable - CATEGORY_WORDS)
    extra = len(everything - ignorable - first)
    raw = 1.0 if "raw" in everything else 0.0
    leading = 1.0 if tokens(description)[:1] == wanted[-1:] else 0.0
    score = 65 * coverage + 25 * head + 6 * raw + 8 * leading - 12 * extra_first - 2.5 * extra
    score += 4
    return max(0.0, min(100.0, score))
