"""The review commands' library side: open the store, load the entries, check the host and
token, export, statistics text."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.options import HOST, PORT, RECIPES, REQUIRED, TOKEN, setting
from nutrireason.pipeline.stage import recipe_corpus, upstream_file

# help texts the review commands' settings share
DB = "Review database (default: <data home>/reviews)."
BENCHMARK = "fam (pool entries) or ngqa (questions)."


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_host(host: str, token: str | None) -> None:
    """A host other than loopback needs a token (every request is checked against it)."""
    if not is_loopback(host) and not token:
        raise DataError(None, f"serving on {host} (not loopback) needs --token", field="--token",
                        expected=f"e.g. --token {secrets.token_urlsafe(16)}")
    if token is not None and len(token) < 12:
        raise DataError(None, "the token is too short", field="--token",
                        expected="at least 12 characters")


@dataclass
class ReviewServer:
    """What ``review serve`` is asked: where to listen, the token, and what to review."""

    host: str = setting(HOST, "127.0.0.1")
    port: int = setting(PORT, 8765, min=1, max=65535)
    token: str | None = setting(TOKEN)
    benchmark: str = setting(BENCHMARK, "fam")
    annotations: Path | None = setting("FAM-Bench: a `fam annotate` directory.")
    recipes: Path | None = setting(RECIPES)
    ngqa_build: Path | None = setting("NGQA: an `ngqa build` directory.")
    db: Path | None = setting(DB)

    def open(self) -> Any:
        """The app's state, after the host and token are checked: FAM-Bench pool entries or
        NGQA questions, and the decisions database."""
        from nutrireason.review.accounts import load_reviewers
        from nutrireason.review.app import ReviewState
        from nutrireason.review.items import load_items
        from nutrireason.review.ngqa_items import load_ngqa_items
        from nutrireason.review.store import ReviewStore, default_store_path

        check_host(self.host, self.token)
        if self.benchmark == "ngqa":
            source = upstream_file("ngqa", self.ngqa_build, "questions.parquet")
            items = load_ngqa_items(source)
        elif self.benchmark == "fam":
            source = upstream_file("fam-annotate", self.annotations, "annotations.jsonl")
            corpus = recipe_corpus(self.recipes)
            names, derived = recipe_readers()
            items = load_items(source, corpus, names, derived)
        else:
            raise DataError(None, "unknown benchmark", field="--benchmark",
                            value=self.benchmark, expected="fam | ngqa")
        if not items:
            raise DataError(source, "nothing to review", expected="a finished build")
        store = ReviewStore(self.db or default_store_path())
        return ReviewState(items, store, self.token, benchmark=self.benchmark,
                           reviewers=load_reviewers(store.path.parent))


def canonical_namer() -> Callable[[dict[str, Any]], list[str]]:
    """Recipe -> each line's canonical ingredient name (the FAM vocabulary over SR28, as the
    annotation pool names rationale ingredients); "" for a line without an SR28 food."""
    return recipe_readers()[0]


def recipe_readers() -> tuple[Callable[[dict[str, Any]], list[str]],
                              Callable[[dict[str, Any]], dict[str, float | None]]]:
    """(:func:`canonical_namer`'s names, the nutrients per 100 g a recipe table lacks and the
    rules read, summed over the weighed lines: total fat), reading each recipe's ingredients
    once for both."""
    from nutrireason.fam.annotate import recipe_ingredients
    from nutrireason.fam.pool import food_table
    from nutrireason.fam.vocabulary import Vocabulary
    from nutrireason.pipeline.stages import read_sr28_bundle

    vocabulary, foods = Vocabulary.load(), food_table(read_sr28_bundle())
    seen: dict[str, Any] = {}

    def ingredients(recipe: dict[str, Any]) -> Any:
        key = recipe["record"]["id"]
        if key not in seen:
            seen.clear()  # the loader asks for names, then nutrients, recipe by recipe
            seen[key] = recipe_ingredients(recipe, vocabulary, foods)
        return seen[key]

    def names(recipe: dict[str, Any]) -> list[str]:
        known = {i.line: i.canonical for i in ingredients(recipe)}
        return [known.get(item.get("line"), "") for item in recipe.get("ingredients") or []]

    def derived(recipe: dict[str, Any]) -> dict[str, float | None]:
        weighed = [(i.grams, i.nutrients.get("total_fat")) for i in ingredients(recipe)
                   if i.grams]
        total = sum(grams for grams, _ in weighed)
        known = [(grams, float(value)) for grams, value in weighed
                 if value is not None and value == value]
        if not total or not known:
            return {"total_fat": None}
        return {"total_fat": sum(grams * value for grams, value in known) / total}

    return names, derived


@contextlib.contextmanager
def existing_store(db: Path | None) -> Iterator[Any]:
    """The decisions database ``review serve`` wrote (refused, not created, when absent)."""
    from nutrireason.review.store import ReviewStore, default_store_path

    path = db or default_store_path()
    if not path.is_file():
        raise DataError(path, "no review database", expected="decisions saved by `review serve`")
    store = ReviewStore(path)
    try:
        yield store
    finally:
        store.close()


@dataclass
class ReviewStats:
    """What ``review stats`` is asked: the decisions of one benchmark in a review database."""

    db: Path | None = setting(DB)
    benchmark: str = setting(BENCHMARK, "fam")

    def run(self) -> dict[str, Any]:
        return stats(self.db, self.benchmark)


@dataclass(kw_only=True)
class ReviewExport(ReviewStats):
    """What ``review export`` is asked: the folder to write, from which decisions."""

    out: Path = setting("A new folder for reviews.jsonl + manifest.json (an earlier reviews "
                        "export there is replaced; anything else is refused).", REQUIRED,
                        argument=True)
    overwrite: bool = setting("Replace whatever folder is at OUT.", False)

    def run(self) -> dict[str, Any]:
        return export(self.db, self.out, self.benchmark, self.overwrite)


@dataclass(kw_only=True)
class ReviewerAdd:
    """What ``review add-reviewer`` is asked: a name, its role, which review folder."""

    name: str = setting("The reviewer's name as it will appear in every decision.", REQUIRED,
                        argument=True)
    role: str = setting("reviewer (decides entries) or adjudicator (settles disagreements).",
                        "reviewer")
    db: Path | None = setting(DB)

    def run(self) -> dict[str, str]:
        from nutrireason.review.accounts import add_reviewer
        from nutrireason.review.store import default_store_path

        return add_reviewer((self.db or default_store_path()).parent, self.name, self.role)


def export(db: Path | None, out: Path, benchmark: str = "fam",
           overwrite: bool = False) -> dict[str, Any]:
    from nutrireason.review.export import export_reviews, is_reviews_export
    from nutrireason.storage import check_target_folder

    check_target_folder(out, overwrite, earlier=is_reviews_export)
    with existing_store(db) as store:
        return export_reviews(store, out, benchmark, overwrite)


def stats(db: Path | None, benchmark: str = "fam") -> dict[str, Any]:
    from nutrireason.review.stats import review_stats

    with existing_store(db) as store:
        return review_stats(store.latest(benchmark))


def stats_lines(result: dict[str, Any]) -> list[str]:
    """``review stats`` as plain text lines."""
    lines = [f"{result['decisions']} decisions on {result['items']} entries by "
             f"{len(result['reviewers'])} reviewer(s): {', '.join(result['reviewers'])}",
             "decisions by kind: " + json.dumps(result["kinds"]),
             f"rationale edits (label kept, other ingredients ticked): "
             f"{result['rationale_edits']}; entries settled by an adjudicator: "
             f"{result['adjudicated']}",
             "per condition (decisions, label kept, rationale edits, kinds):"]
    for name, row in result["conditions"].items():
        lines.append(f"  {name:<24} {row['decisions']:>5}  {row['label_kept_rate']:6.1%}  "
                     f"{row['rationale_edits']:>4}  {json.dumps(row['kinds'])}")
    agreement = result["inter_reviewer"]
    for pair in agreement["pairs"]:
        lines.append(f"Cohen's kappa {' / '.join(pair['reviewers'])}: "
                     f"{_number(pair['cohen_kappa'])} on {pair['items']} shared entries "
                     f"(raw agreement {_number(pair['agreement'], '.1%')})")
    if agreement["fleiss_items"]:
        lines.append(f"Fleiss' kappa, all reviewers: {_number(agreement['fleiss_kappa'])} on "
                     f"{agreement['fleiss_items']} entries every reviewer decided")
    rules = result["rules_vs_experts"]
    lines.append(f"rules vs experts: agreement {_number(rules['agreement'], '.1%')}, Cohen's "
                 f"kappa {_number(rules['cohen_kappa'])} over {rules['decisions']} decisions")
    return lines


def _number(value: float | None, form: str = ".3f") -> str:
    return "undefined" if value is None else format(value, form)
