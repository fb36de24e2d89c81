"""The FAM-Bench canonical ingredient vocabulary: SR28 foods -> canonical names and concepts.

Rules live in ``standards/data/fam_vocabulary.yaml``. A rule matches a food when its ndb number
is listed, or when its SR28 description matches one of the rule's patterns (case-insensitive
whole words or phrases; a trailing ``*`` extends a word), its group code is among the rule's
groups (when given), at least one ``require_any`` pattern matches (when given) and no
``exclude_any`` pattern matches. A rule with only groups matches every food of those groups.
The first matching rule with a name names the food and gives its concepts; later naming rules
(alternatives for other variants) do not apply; concept-only rules add theirs on top.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from nutrireason.errors import DataError
from nutrireason.fam.kb import CONCEPTS
from nutrireason.standards.loader import standards_dir
from nutrireason.storage import parse_yaml

_RULE_KEYS = {
    "canonical", "name_from_description", "concepts", "match", "exclude_any", "require_any",
    "source",
}
_MATCH_KEYS = {"ndb", "description_any", "groups"}
# Leading description segments that name a kind, not the food ("Spices, cumin seed").
_GENERIC_PREFIXES = {
    "spices", "leavening agents", "nuts", "seeds", "beverages", "alcoholic beverage", "sauce",
    "soup", "crustaceans", "mollusks", "fish", "cheese", "sugars", "syrups", "oil",
    "tomato products", "peppers", "candies", "snacks", "beans", "game meat", "vegetables",
}


def vocabulary_path() -> Path:
    """The packaged vocabulary file."""
    return standards_dir() / "fam_vocabulary.yaml"


def fallback_name(description: str | None) -> str:
    """The SR28 description's first comma segment, lower-cased ("" when there is none)."""
    return (description or "").split(",")[0].strip().lower()


def derived_name(description: str | None) -> str:
    """A name read from the description: skip a generic first segment, drop parentheses."""
    segments = [s.strip().lower() for s in (description or "").split(",") if s.strip()]
    if len(segments) > 1 and segments[0] in _GENERIC_PREFIXES:
        segments = segments[1:]
    name = re.sub(r"\s*\([^)]*\)", "", segments[0]) if segments else ""
    return " ".join(name.split())


# Canonical names that name a class of foods (a rationale may name the class a food belongs
# to: brandy is a liquor, kielbasa a sausage); any other canonical names one food, and a food
# it does not describe is named by its own description instead (a cucumber is no celery).
CLASS_NAMES = frozenset({
    "dried fruit", "liquor", "shellfish", "tropical fruit", "baked dessert", "berries",
    "pastry", "sausage", "candy", "jam", "fruit juice", "soft drink", "beans", "pasta",
    "giblets", "wheat", "melons", "organ meat", "bread crumbs", "cornmeal",
    "whole grain cornmeal", "white bread", "pickles", "salsa", "ketchup", "lard"})


def describes(canonical: str, description: str) -> bool:
    """The head word of ``canonical`` (its last word; its stem: the first letters, all but two
    of a long word) stands in ``description``: "bell pepper" describes "Peppers, sweet, red",
    "celery" does not describe "Cucumber, with peel"."""
    words = re.findall(r"[a-z]+", canonical.lower())
    if not words:
        return False
    head = words[-1]
    return bool(re.search(r"(?<![a-z])" + re.escape(head[:max(4, len(head) - 2)]),
                          description.lower()))


def own_name(canonical: str, description: str) -> str:
    """The name a rationale gives the food: the rule's canonical name when it describes the
    food or names its class, else the food's own name from its SR28 description."""
    if canonical in CLASS_NAMES or not description or describes(canonical, description):
        return canonical
    return derived_name(description) or canonical


def name_pattern(text: str) -> re.Pattern[str]:
    body = re.escape(text.lower().strip())
    if body.endswith(r"\*"):
        body = body[:-2] + r"[a-z0-9'-]*"
    return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])")


# The medium a canned food is packed in is not the food: "Tomatoes, red, ripe, canned, packed
# in tomato juice" is a tomato, "Pineapple, canned, juice pack" a pineapple, "Tuna, canned in
# oil" a tuna (SR28 describes the medium after the food). A syrup stays: its sugar is added
# sugar in the food as eaten.
PACKING_MEDIUM = re.compile(r"(?i),?\s*(?:packed in|canned in|in)\s+(?:[a-z]+\s+){0,2}"
                            r"(?:juices?|water|oil|brine)\b(?:[^,]*)|"
                            r",?\s*(?:[a-z]+\s+){0,2}(?:juice|water|oil) pack\b")
# What SR28 says an entry also covers ("Bread, white, commercially prepared (includes soft
# bread crumbs)") is not what it is: white bread is no "bread crumbs".
INCLUDES = re.compile(r"(?i)\s*\((?:includes?|including)\b[^)]*\)")


@dataclass(frozen=True)
class Entry:
    """What the vocabulary says about one food."""

    canonical: str
    concepts: frozenset[str]
    rules: tuple[str, ...]  # labels of the matching rules, in file order


@dataclass(frozen=True)
class Rule:
    """One vocabulary rule (see the module docstring for the matching semantics)."""

    index: int
    canonical: str | None
    name_from_description: bool
    concepts: frozenset[str]
    ndb: frozenset[str]
    description_any: tuple[re.Pattern[str], ...]
    groups: frozenset[str]
    require_any: tuple[re.Pattern[str], ...]
    exclude_any: tuple[re.Pattern[str], ...]
    source: str

    @property
    def names(self) -> bool:
        return self.canonical is not None or self.name_from_description

    @property
    def label(self) -> str:
        name = self.canonical or ("(from description)" if self.name_from_description else "")
        return f"{self.index}:{name or '+'.join(sorted(self.concepts))}"

    def matches(self, ndb_no: str | None, description: str, group_code: str | None) -> bool:
        if ndb_no is not None and ndb_no in self.ndb:
            return True
        if not self.description_any and not self.groups:
            return False
        text = description.lower()
        if self.groups and (group_code or "") not in self.groups:
            return False
        if self.description_any and not any(p.search(text) for p in self.description_any):
            return False
        if self.require_any and not any(p.search(text) for p in self.require_any):
            return False
        return not any(p.search(text) for p in self.exclude_any)


def read_yaml(path: Path, what: str) -> Any:
    """A packaged YAML rules file, parsed; a missing or malformed one is a DataError."""
    if not path.is_file():
        raise DataError(path, f"{what} file not found", expected="a YAML file")
    try:
        return parse_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(path, f"not valid YAML: {exc}") from exc


def string_list(path: Path, field: str, value: Any) -> list[str]:
    """``value`` as a list of non-empty strings (None -> [])."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise DataError(path, "must be a list of non-empty strings", field=field, value=value)
    return value


def _parse_rule(path: Path, index: int, raw: Any) -> Rule:
    where = f"rules[{index}]"
    if not isinstance(raw, dict):
        raise DataError(path, "rule must be a mapping", field=where, value=raw)
    unknown = set(raw) - _RULE_KEYS
    if unknown:
        raise DataError(path, "unknown rule key", field=where, value=sorted(unknown)[0],
                        expected=", ".join(sorted(_RULE_KEYS)))
    canonical = raw.get("canonical")
    if canonical is not None and (not isinstance(canonical, str) or not canonical.strip()):
        raise DataError(path, "canonical must be a non-empty string", field=f"{where}.canonical",
                        value=canonical)
    from_description = raw.get("name_from_description", False)
    if not isinstance(from_description, bool) or (from_description and canonical is not None):
        raise DataError(path, "name_from_description must be true or false, and not given with "
                        "canonical", field=f"{where}.name_from_description", value=from_description)
    concepts = string_list(path, f"{where}.concepts", raw.get("concepts"))
    for concept in concepts:
        if concept not in CONCEPTS:
            raise DataError(path, f"rule {index}: unknown concept {concept!r}",
                            field=f"{where}.concepts", value=concept,
                            expected="a nutrireason.fam.kb.CONCEPTS entry")
    if canonical is None and not from_description and not concepts:
        raise DataError(path, "rule names no canonical food and no concept", field=where)
    source = raw.get("source")
    if not isinstance(source, str) or not source.strip():
        raise DataError(path, "every rule needs a source", field=f"{where}.source", value=source)
    match = raw.get("match")
    if not isinstance(match, dict) or not match or set(match) - _MATCH_KEYS:
        raise DataError(path, "match must be a mapping of ndb / description_any / groups",
                        field=f"{where}.match", value=match)
    ndb = string_list(path, f"{where}.match.ndb", match.get("ndb"))
    groups = string_list(path, f"{where}.match.groups", match.get("groups"))
    for code in [*ndb, *groups]:
        if not code.isdigit():
            raise DataError(path, "codes must be digit strings (quote them in YAML)",
                            field=f"{where}.match", value=code)

    def patterns(values: list[str]) -> tuple[re.Pattern[str], ...]:
        return tuple(name_pattern(v) for v in values)

    return Rule(
        index=index,
        canonical=canonical.strip().lower() if canonical else None,
        name_from_description=from_description,
        concepts=frozenset(concepts),
        ndb=frozenset(ndb),
        description_any=patterns(string_list(path, f"{where}.match.description_any",
                                          match.get("description_any"))),
        groups=frozenset(groups),
        require_any=patterns(string_list(path, f"{where}.require_any", raw.get("require_any"))),
        exclude_any=patterns(string_list(path, f"{where}.exclude_any", raw.get("exclude_any"))),
        source=source,
    )


@dataclass(frozen=True)
class Vocabulary:
    """The ordered rule list, with lookups of SR28 foods."""

    path: Path
    rules: tuple[Rule, ...]
    _memo: dict[tuple, Entry] = field(default_factory=dict, init=False, repr=False,
                                      compare=False, hash=False)

    @classmethod
    def load(cls, path: str | Path | None = None) -> Vocabulary:
        """Read and validate the vocabulary (the packaged file when ``path`` is None)."""
        path = Path(path) if path is not None else vocabulary_path()
        raw = read_yaml(path, "vocabulary")
        if not isinstance(raw, dict) or not isinstance(raw.get("rules"), list):
            raise DataError(path, "top level must be a mapping with a 'rules' list", field="rules")
        return cls(path, tuple(_parse_rule(path, i, r) for i, r in enumerate(raw["rules"])))

    def lookup(self, ndb_no: str | None, description: str | None,
               group_code: str | None) -> Entry:
        """Canonical name, concepts and matching rules for one SR28 food (memoised: the
        vocabulary is immutable)."""
        key = (ndb_no, description, group_code)
        if key not in self._memo:
            self._memo[key] = self._scan(ndb_no, description, group_code)
        return self._memo[key]

    def _scan(self, ndb_no: str | None, description: str | None,
              group_code: str | None) -> Entry:
        text = INCLUDES.sub("", PACKING_MEDIUM.sub("", description or ""))
        canonical: str | None = None
        concepts: set[str] = set()
        labels: list[str] = []
        for rule in self.rules:
            if rule.names and canonical is not None:
                continue  # a later naming rule is an alternative, not more facts
            if not rule.matches(ndb_no, text, group_code):
                continue
            labels.append(rule.label)
            concepts |= rule.concepts
            if canonical is None and rule.names:
                canonical = own_name(rule.canonical, text) if rule.canonical else \
                    derived_name(text)
        return Entry(canonical or fallback_name(text), frozenset(concepts), tuple(labels))

    def names(self, ndb_no: str | None, description: str | None, group_code: str | None) -> bool:
        """Whether a naming rule (not the fallback) names this food."""
        text = description or ""
        return any(r.names and r.matches(ndb_no, text, group_code) for r in self.rules)

    def coverage(self, recipes_jsonl: str | Path, sr28_foods: Any = None,
                 top: int = 25) -> dict[str, Any]:
        """How much of a recipe build the vocabulary covers, counted over ingredient lines.

        ``sr28_foods`` (the SR28 foods table) supplies group codes; without it group-only
        rules cannot match and the figures are lower bounds.
        """
        path = Path(recipes_jsonl)
        if not path.is_file():
            raise DataError(path, "recipe build not found", expected="a recipes.jsonl file")
        groups: dict[str, str] = {}
        if sr28_foods is not None:
            groups = dict(zip(sr28_foods["ndb_no"], sr28_foods["group_code"], strict=True))
        lines = with_food = named = with_concept = 0
        canonicals: set[str] = set()
        unmapped: Counter[tuple[str, str]] = Counter()
        cache: dict[str, tuple[Entry, bool]] = {}
        with path.open(encoding="utf-8") as handle:
            for number, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    recipe = json.loads(text)
                except json.JSONDecodeError as exc:
                    raise DataError(path, f"line {number} is not JSON: {exc.msg}") from exc
                for ingredient in recipe.get("ingredients") or []:
                    lines += 1
                    ndb = ingredient.get("ndb_no")
                    if not ndb:
                        continue
                    with_food += 1
                    if ndb not in cache:
                        desc = ingredient.get("sr28_description") or ""
                        group = groups.get(ndb)
                        cache[ndb] = (self.lookup(ndb, desc, group), self.names(ndb, desc, group))
                    entry, is_named = cache[ndb]
                    canonicals.add(entry.canonical)
                    named += is_named
                    with_concept += bool(entry.concepts)
                    if not is_named:
                        unmapped[(ndb, ingredient.get("sr28_description") or "")] += 1
        share = (lambda n: round(n / with_food, 4)) if with_food else (lambda n: 0.0)
        return {
            "lines": lines,
            "lines_with_food": with_food,
            "lines_named": named,
            "lines_with_concept": with_concept,
            "named_share": share(named),
            "concept_share": share(with_concept),
            "distinct_canonical": len(canonicals),
            "top_unmapped": [
                {"ndb_no": ndb, "description": desc, "lines": n}
                for (ndb, desc), n in unmapped.most_common(top)
            ],
        }

