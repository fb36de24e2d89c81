"""Recipe records (FAM-Bench Appendix C) and what the build adds to them."""

from __future__ import annotations

import html
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class RecipeRecord(BaseModel):
    """A normalised recipe as a user's corpus or a bundle provides it."""

    model_config = ConfigDict(extra="allow")

    id: str
    title: str
    source: str | None = None
    url: str | None = None
    image: str | None = Field(default=None, description="path or URL of a dish photo")
    meal_type: list[str] = Field(default_factory=list)
    dietary_tags: list[str] = Field(default_factory=list)
    cuisine: list[str] = Field(default_factory=list)
    category: str | None = None
    servings: float | None = None
    serving_size: str | None = None
    ingredients: list[str] = Field(min_length=1)
    instructions: list[str] = Field(default_factory=list)
    nutrition: dict[str, Any] | None = Field(
        default=None, description="published nutrition per serving, as given by the source")
    notes: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _published(cls, value: Any) -> Any:
        """``published`` (the field name of recipe-scrapers-style validation files) is the
        recipe's own published nutrition when ``nutrition`` is absent."""
        if isinstance(value, dict) and value.get("nutrition") is None and \
                isinstance(value.get("published"), dict):
            value = {**value, "nutrition": value["published"]}
        return value

    @field_validator("servings", mode="before")
    @classmethod
    def _servings(cls, value: Any) -> float | None:
        """A number or a yield text ("serves 4-6", "Makes 12 bites", "2 loaves"); a
        non-positive or absurd count is an error naming the value."""
        from nutrireason.recipes.servings import servings_from

        return servings_from(value)

    @field_validator("ingredients")
    @classmethod
    def _lines(cls, lines: list[str]) -> list[str]:
        cleaned = [plain_text(line) for line in lines]
        if not any(cleaned):
            raise ValueError("every ingredient line is empty")
        return cleaned

    @field_validator("title")
    @classmethod
    def _title(cls, title: str) -> str:
        return plain_text(title)

    @field_validator("instructions")
    @classmethod
    def _steps(cls, steps: list[str]) -> list[str]:
        return [text for text in (plain_text(step) for step in steps) if text]


# Wiki references and markup a page leaves in its text: <ref name=x>...</ref>, <ref .../>,
# other tags, bold and italic quotes (two or more apostrophes), [[link|label]] and [[link]].
_REFERENCE = re.compile(r"(?is)<ref\b[^>]*/>|<ref\b[^>]*>.*?</ref>")
_TAG = re.compile(r"(?s)</?[A-Za-z][^<>]{0,200}>")
_WIKI_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_WIKI_QUOTES = re.compile(r"'{2,}")


def plain_text(text: Any) -> str:
    """``text`` as a reader sees it: HTML entities decoded (``&frac12;`` -> ½, ``&#189;``),
    wiki references, tags and markup removed, white space collapsed."""
    value = html.unescape(html.unescape(str(text)))  # "&amp;frac12;": escaped twice
    value = _REFERENCE.sub(" ", value)
    value = _TAG.sub(" ", value)
    value = _WIKI_LINK.sub(r"\1", value)
    value = _WIKI_QUOTES.sub("", value)
    return " ".join(value.split())


class ResolvedIngredient(BaseModel):
    """One ingredient line, parsed, matched to an SR28 food and weighed."""

    line: str
    kind: str = Field(description="quantified | unquantified | header")
    quantity: float | None = None
    unit: str | None = None
    food: str | None = None
    prep: list[str] = Field(default_factory=list)
    states: list[str] = Field(default_factory=list, description="cooked, canned, drained, ...")
    rules: list[str] = Field(default_factory=list, description="parsing rules that fired")
    ndb_no: str | None = None
    sr28_description: str | None = None
    match_score: float | None = None
    match_method: str | None = None
    grams: float | None = None
    grams_method: str | None = None
    yield_factor: float | None = Field(
        default=None, description="cooked grams per raw gram applied to reach raw grams")
    estimated_grams: float | None = Field(
        default=None, description="unresolved lines only: a generic-density estimate of the "
        "line's mass, used to judge how much of the recipe is unresolved")
    unknown_nutrients: list[str] = Field(
        default_factory=list, description="nutrients the SR28 entry does not give for this "
        "line: a low-sodium food SR28 has only in its salted form leaves sodium unknown")
    problem: str | None = None


class RecipeNutrition(BaseModel):
    """The 16 nutrients per 100 g and per serving, and the share of mass each is known for."""

    total_grams: float
    per_100g: dict[str, float | None]
    per_serving: dict[str, float | None] | None
    coverage: dict[str, float]
    nutrient_tags: list[str]
    dietary_tags: list[str]


class ResolvedRecipe(BaseModel):
    """A recipe after the build: kept with nutrition, or excluded with a reason."""

    record: RecipeRecord
    ingredients: list[ResolvedIngredient]
    food_category: str
    kept: bool
    exclusion: str | None = None
    flags: list[str] = Field(default_factory=list,
                             description="kept but implausible: reasons to review")
    nutrition: RecipeNutrition | None = None
