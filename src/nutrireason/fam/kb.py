"""The FAM-Bench condition knowledge base: one validated YAML file per condition.

Each file in ``standards/data/fam_kb/`` lists, for one condition, the foods and food concepts
that are beneficial, to limit and to avoid, dietary-tag hints, nutrient vetoes computed from a
dish's own nutrition, and the references the lists rest on. Concepts come from the closed
vocabulary :data:`CONCEPTS` (the FAM-Bench release's concept set plus ``added_sugars`` and
``saturated_fat_rich_foods``). A malformed file is rejected with a
:class:`~nutrireason.errors.DataError` naming the file, the key path and the problem.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from nutrireason.errors import DataError
from nutrireason.paths import data_home
from nutrireason.sources.sr28 import EXTRA_NUTRIENTS
from nutrireason.standards import load_standards
from nutrireason.standards.loader import Number, Source, StrictModel, load_model, standards_dir

# Nutrients a limit may name that the dish's own foods give, not SR28 directly: free sugars
# (WHO 2015: the sugars of added sugars, honey, syrups, sweets and fruit juices; not the
# sugars of milk, fruit or vegetables), read by nutrireason.fam.dish.
DERIVED_NUTRIENTS = {"free_sugars": "g"}
# The SR28 nutrient a derived one is made of (kept per ingredient in the instance evidence).
DERIVED_FROM = {"free_sugars": "sugar"}

# The closed concept vocabulary: the FAM-Bench release's concepts plus the last two.
CONCEPTS: tuple[str, ...] = (
    "acidic_trigger_foods",
    "alcohol",
    "berries",
    "caffeinated_beverages",
    "calcium_rich_foods",
    "cruciferous_vegetables",
    "fast_food",
    "fish_seafood",
    "fried_foods",
    "fruits",
    "full_fat_dairy",
    "gluten_containing_grains",
    "healthy_unsaturated_fats",
    "high_fat_meals",
    "high_fiber_foods",
    "high_oxalate_foods",
    "high_phosphorus_foods",
    "high_potassium_foods",
    "high_purine_animal_foods",
    "high_sodium_foods",
    "high_sugar_desserts",
    "highly_processed_foods",
    "iron_rich_foods",
    "lactose_containing_dairy",
    "leafy_greens",
    "lean_proteins",
    "legumes",
    "low_fat_dairy",
    "low_fat_meals",
    "low_fiber_foods",
    "lower_sodium_meals",
    "magnesium_rich_foods",
    "non_starchy_vegetables",
    "nuts_seeds",
    "omega_3_rich_foods",
    "orange_yellow_vegetables",
    "potassium_salt_substitutes",
    "poultry",
    "processed_meats",
    "red_meat",
    "refined_grains",
    "spicy_trigger_foods",
    "sugar_sweetened_beverages",
    "ultra_processed_snack_foods",
    "vegetables",
    "vitamin_c_rich_produce",
    "whole_grains",
    "added_sugars",
    "saturated_fat_rich_foods",
)

# The conditions FAM-Bench evaluates; each has ``fam_kb/<id>.yaml``.
CONDITION_IDS: tuple[str, ...] = (
    "hypertension",
    "type_2_diabetes",
    "chronic_kidney_disease",
    "gerd",
    "nafld",
    "ibs",
    "osteoporosis",
    "stroke",
    "cardiovascular_disease",
    "obesity",
    "gout",
    "celiac_disease",
    "iron_deficiency_anemia",
)

SideName = Literal["beneficial", "limit", "avoid"]
SIDES: tuple[SideName, ...] = ("beneficial", "limit", "avoid")
Group = Literal[
    "cardiometabolic", "gastrointestinal", "hepatic", "renal", "musculoskeletal", "hematologic"
]
# What a reference can back: a side's foods or concepts, the tag hints or the nutrient limits.
Supports = Literal[
    "beneficial.foods",
    "beneficial.concepts",
    "limit.foods",
    "limit.concepts",
    "avoid.foods",
    "avoid.concepts",
    "dietary_tag_hints",
    "nutrient_limits",
    "recommend_requires",
]


def _known_concept(concept: str) -> str:
    if concept not in CONCEPTS:
        raise ValueError(f"unknown concept {concept!r}; expected a kb.CONCEPTS entry")
    return concept


Concept = Annotated[str, AfterValidator(_known_concept)]
Food = Annotated[str, Field(min_length=1)]


def _distinct(values: list[str], what: str) -> list[str]:
    seen: set[str] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise ValueError(f"duplicate {what} {value!r} (entry {index})")
        seen.add(value)
    return values


class Side(StrictModel):
    """One side of a condition's advice: plain food names and vocabulary concepts."""

    foods: list[Food] = Field(default_factory=list)
    concepts: list[Concept] = Field(default_factory=list)

    @field_validator("foods")
    @classmethod
    def _unique_foods(cls, foods: list[str]) -> list[str]:
        return _distinct(foods, "food")

    @field_validator("concepts")
    @classmethod
    def _unique_concepts(cls, concepts: list[str]) -> list[str]:
        return _distinct(concepts, "concept")


class NutrientLimit(StrictModel):
    """A veto from the dish's own nutrition: a ``max`` (or ``min``) per serving or per 100 g."""

    nutrient: str
    max: Number | None = None
    min: Number | None = None
    unit: str
    per: Literal["serving", "100g"]
    source: Source

    @model_validator(mode="after")
    def _one_bound(self) -> NutrientLimit:
        if (self.max is None) == (self.min is None):
            raise ValueError("give exactly one of 'max' or 'min'")
        return self

    def violated_by(self, amount: float) -> bool:
        """True when ``amount`` (in ``unit``, on this limit's basis) breaks the limit."""
        if self.max is not None:
            return amount > self.max
        return self.min is not None and amount < self.min


class Reference(StrictModel):
    name: Annotated[str, Field(min_length=1)]
    url: Annotated[str, Field(pattern=r"^https?://\S+$")] | None = None
    supports: list[Supports] = Field(min_length=1)


class ReleaseEntry(StrictModel):
    """The FAM-Bench release's lists for one condition (``condition_rules.json``, CC BY 4.0):
    the ``<side>_foods`` and ``<side>_concepts`` fields, copied as released."""

    value: str
    beneficial: Side
    limit: Side
    avoid: Side
    dietary_tag_hints: list[str] = Field(default_factory=list)

    def side(self, name: SideName) -> Side:
        """The named side."""
        return {"beneficial": self.beneficial, "limit": self.limit, "avoid": self.avoid}[name]


DeviationSide = Literal["beneficial", "limit", "avoid", "nutrient_limits", "recommend_requires"]
NUTRIENT_SIDES = ("nutrient_limits", "recommend_requires")


class Deviation(StrictModel):
    """One departure from the release, with why and on what authority."""

    change: Literal["added", "removed", "moved"]
    side: DeviationSide
    moved_from: SideName | None = None
    food: str | None = None
    concept: str | None = None
    nutrient: str | None = None
    reason: Source
    source: Source

    @model_validator(mode="after")
    def _one_item(self) -> Deviation:
        if sum(v is not None for v in (self.food, self.concept, self.nutrient)) != 1:
            raise ValueError("name exactly one of 'food', 'concept' or 'nutrient'")
        if (self.nutrient is not None) != (self.side in NUTRIENT_SIDES):
            raise ValueError("'nutrient' goes with side 'nutrient_limits' or "
                             "'recommend_requires' and only there")
        if (self.change == "moved") != (self.moved_from is not None):
            raise ValueError("'moved_from' goes with change 'moved' and only there")
        return self

    @property
    def kind(self) -> str:
        return "food" if self.food is not None else "concept" if self.concept else "nutrient"

    @property
    def item(self) -> str:
        return self.food or self.concept or self.nutrient or ""


class NotEvidence(StrictModel):
    """A food one of a side's concepts covers that the condition's guidance does not count on
    that side: onion and garlic are vegetables, yet reflux guidance names them as triggers, so
    they are no support for a GERD recommendation (they are no evidence against it either)."""

    food: Food
    side: SideName
    reason: Source
    source: Source


class ConditionKB(StrictModel):
    """One condition's knowledge-base entry (``fam_kb/<id>.yaml``): the release's lists, the
    lists used, and every departure between the two (checked on load)."""

    id: str
    label: str
    group: Group
    # The FAM-Bench release's lists: required for the paper's 13 conditions; a condition added
    # beyond them (one more file, see ``load_kb``) has none and so no deviations either.
    release: ReleaseEntry | None = None
    beneficial: Side
    limit: Side
    avoid: Side
    deviations: list[Deviation] = Field(default_factory=list)
    # When given (the reason and its source), an avoid-list food counts in any amount, a trace
    # too (gluten for celiac disease); otherwise a trace amount is not evidence.
    avoid_any_amount: Source | None = None
    dietary_tag_hints: list[str] = Field(default_factory=list)
    nutrient_limits: list[NutrientLimit] = Field(default_factory=list)
    # What a recommended dish's nutrition must meet: a ``min`` per serving (iron for anaemia)
    # or a ``max`` (energy density for obesity); otherwise the dish is no support for the
    # condition, whatever foods it holds.
    recommend_requires: list[NutrientLimit] = Field(default_factory=list)
    not_evidence: list[NotEvidence] = Field(default_factory=list)
    references: list[Reference] = Field(min_length=1)
    derived_from: Source
    review: Source

    @field_validator("limit", "avoid")
    @classmethod
    def _one_side_each(cls, side: Side, info: ValidationInfo) -> Side:
        # Each concept sits on one side only; earlier sides are already in ``info.data``.
        for earlier in SIDES[: SIDES.index(info.field_name)]:  # type: ignore[arg-type]
            other = info.data.get(earlier)
            if other is None:
                continue
            for index, concept in enumerate(side.concepts):
                if concept in other.concepts:
                    raise ValueError(
                        f"concept {concept!r} ({info.field_name}.concepts[{index}]) is also on "
                        f"the {earlier} side; a concept belongs to one side only"
                    )
        return side

    def side(self, name: SideName) -> Side:
        """The named side."""
        return {"beneficial": self.beneficial, "limit": self.limit, "avoid": self.avoid}[name]

    def side_of(self, concept: str) -> SideName | None:
        """Which side lists ``concept``: "beneficial", "limit", "avoid", or None."""
        for name in SIDES:
            if concept in self.side(name).concepts:
                return name
        return None

    def counts(self, food: str, side: SideName) -> bool:
        """Whether ``food`` (a canonical name) is evidence on ``side`` when its lists cover it."""
        return not any(e.food == food and e.side == side for e in self.not_evidence)

    def concepts(self, *names: SideName) -> list[str]:
        """The concepts on the named sides (all sides when none are named), in file order."""
        return [c for name in names or SIDES for c in self.side(name).concepts]


def _changes(entry: ConditionKB) -> tuple[set[tuple], set[tuple]]:
    """(added, removed) as (side, kind, item) between the release and the lists used."""
    added: set[tuple] = set()
    removed: set[tuple] = set()
    if entry.release is None:
        return added, removed
    for name in SIDES:
        for kind in ("foods", "concepts"):
            ours = set(getattr(entry.side(name), kind))
            theirs = set(getattr(entry.release.side(name), kind))
            added |= {(name, kind[:-1], item) for item in ours - theirs}
            removed |= {(name, kind[:-1], item) for item in theirs - ours}
    added |= {("nutrient_limits", "nutrient", n.nutrient) for n in entry.nutrient_limits}
    added |= {("recommend_requires", "nutrient", n.nutrient) for n in entry.recommend_requires}
    return added, removed


def unlisted_departures(entry: ConditionKB) -> list[str]:
    """Departures from the release without a deviation, and deviations without a departure."""
    added, removed = _changes(entry)
    listed_added: set[tuple] = set()
    listed_removed: set[tuple] = set()
    for deviation in entry.deviations:
        key = (deviation.side, deviation.kind, deviation.item)
        if deviation.change in ("added", "moved"):
            listed_added.add(key)
        if deviation.change == "removed":
            listed_removed.add(key)
        if deviation.moved_from is not None:
            listed_removed.add((deviation.moved_from, deviation.kind, deviation.item))
    problems = [f"{side}.{kind} {item!r} added" for side, kind, item in
                sorted(added - listed_added)]
    problems += [f"{side}.{kind} {item!r} removed" for side, kind, item in
                 sorted(removed - listed_removed)]
    problems += [f"deviation {side}.{kind} {item!r} lists no change" for side, kind, item in
                 sorted((listed_added - added) | (listed_removed - removed))]
    return problems


def kb_dir() -> Path:
    """The directory holding the packaged condition files."""
    return standards_dir() / "fam_kb"


def added_kb_dir() -> Path:
    """Where a user adds conditions without touching the package:
    ``<data home>/standards/fam_kb/<id>.yaml``."""
    return data_home() / "standards" / "fam_kb"


def kb_files(directory: str | Path | None = None) -> list[Path]:
    """Every condition file :func:`load_kb` reads: the paper's 13 in their order, then the
    added ones (other files in ``directory`` and, for the packaged KB, in
    :func:`added_kb_dir`) sorted by id."""
    root = Path(directory) if directory is not None else kb_dir()
    if not root.is_dir():
        raise DataError(root, "knowledge-base directory not found", expected="a directory")
    paper = [root / f"{condition_id}.yaml" for condition_id in CONDITION_IDS]
    added = [p for p in root.glob("*.yaml") if p.stem not in CONDITION_IDS]
    if directory is None and added_kb_dir().is_dir():
        for path in added_kb_dir().glob("*.yaml"):
            if path.stem in CONDITION_IDS or path.stem in {p.stem for p in added}:
                raise DataError(path, "a condition with this id exists already",
                                field="id", value=path.stem,
                                expected="a new condition id (file name)")
            added.append(path)
    return paper + sorted(added, key=lambda p: p.stem)


def nutrient_units() -> dict[str, str]:
    """Nutrient -> its unit (g, mg, kcal ...): the standards' nutrients, SR28's extra ones
    and the derived ones."""
    units = {n.id: n.unit for n in load_standards().nutrients.nutrients}
    units |= {name: unit for name, (_, unit) in EXTRA_NUTRIENTS.items()}
    return units | DERIVED_NUTRIENTS


def load_kb(directory: str | Path | None = None) -> dict[str, ConditionKB]:
    """Load and check every condition file (:func:`kb_files`): the paper's 13 must be there
    with their release lists; an added condition is one more file of the same shape."""
    units = nutrient_units()
    kb: dict[str, ConditionKB] = {}
    for path in kb_files(directory):
        condition_id = path.stem
        entry = load_model(path, ConditionKB)
        if entry.release is None and condition_id in CONDITION_IDS:
            raise DataError(path, "a FAM-Bench condition needs the release's lists",
                            field="release", expected="the release block of condition_rules.json")
        if entry.id != condition_id:
            raise DataError(path, "id does not match the file name", field="id", value=entry.id,
                            expected=condition_id)
        _check_limits(path, entry, units)
        problems = unlisted_departures(entry)
        if problems:
            raise DataError(path, "the lists depart from the release without a deviation "
                            "entry, or a deviation names no departure: " + "; ".join(problems),
                            field="deviations")
        kb[condition_id] = entry
    return kb


def _check_limits(path: Path, entry: ConditionKB, units: dict[str, str]) -> None:
    seen: set[tuple[str, str, str, str]] = set()
    listed = [("nutrient_limits", index, limit)
              for index, limit in enumerate(entry.nutrient_limits)] + \
        [("recommend_requires", index, limit)
         for index, limit in enumerate(entry.recommend_requires)]
    for field, index, limit in listed:
        where = f"{field}[{index}]"
        if field == "recommend_requires" and limit.min is not None and limit.per != "serving":
            raise DataError(path, "a 'min' requirement is per serving", field=where,
                            value=limit.nutrient)
        if limit.nutrient not in units:
            raise DataError(path, "unknown nutrient", field=f"{where}.nutrient",
                            value=limit.nutrient, expected=f"one of {', '.join(units)}")
        if limit.unit != units[limit.nutrient]:
            raise DataError(path, "unit does not match nutrients.yaml", field=f"{where}.unit",
                            value=limit.unit, expected=units[limit.nutrient])
        key = (field, limit.nutrient, limit.per, "max" if limit.max is not None else "min")
        if key in seen:
            raise DataError(path, "duplicate nutrient limit", field=where, value=limit.nutrient)
        seen.add(key)
