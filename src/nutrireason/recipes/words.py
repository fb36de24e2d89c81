"""Words every step of reading a recipe line shares: accents folded, the line's own text
(without the foods it names only as alternatives), the units a count of a food part names. At
the bottom of ``recipes/``."""

from __future__ import annotations

import re
import unicodedata

PORTION_UNITS = {"breast", "thigh", "drumstick", "wing", "fillet", "filet", "steak", "chop",
                 "leg", "loin", "rib", "stalk", "head", "ear", "roll", "bun", "bagel", "muffin",
                 "biscuit", "cookie", "cracker", "patty", "link"}

# A qualifier of a later alternative ("all-purpose flour or a gluten-free blend") does not count.
# A later alternative runs to the next comma: what follows is said of the food used ("dhal or
# other lentils, cooked but not drained" is cooked).
LATER_ALTERNATIVE = re.compile(r"\s(?:or|and/or)\s[^,;]*")


def fold(text: str) -> str:
    """Lower case with accents folded to ASCII ("Consommé" -> "consomme")."""
    return unicodedata.normalize("NFKD", text.lower()).encode("ascii", "ignore").decode()


def own_text(text: str) -> str:
    """The lower-cased line without what describes other foods than the one used: later "or"
    alternatives outside parentheses ("top sirloin or tenderloin"), "(or frozen)", and
    parentheticals listing choices ("(beef, pork, turkey, plant based)"); "pre-cooked" reads
    as cooked."""
    lowered = re.sub(r"\bpre-?cooked\b|\bpar-?cooked\b", "cooked", text.lower())
    lowered = re.sub(r"\(\s*or\b[^)]*\)|\([^()]*,[^()]*,[^()]*\)", " ", lowered)
    outside = re.sub(r"\([^)]*\)", " ", lowered)
    if LATER_ALTERNATIVE.search(outside):
        inside = " ".join(re.findall(r"\([^)]*\)", lowered))
        lowered = LATER_ALTERNATIVE.sub(" ", outside) + " " + inside
    return lowered
