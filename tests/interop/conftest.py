"""Both benchmarks built once from the real offline bundles, for the interop tests, and a skip
(with the reason) where the optional `interop` extra is not installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd
import pytest


def need(module: str) -> None:
    """Skip with a clear reason when an optional interop package is not installed."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (install the extra: "
                    "pip install -e '.[interop]'; scripts/test.sh does)",
                    allow_module_level=True)


@pytest.fixture(scope="session")
def ngqa_build(nhanes_bundle_dirs, recipe_build, tmp_path_factory) -> Path:
    """An NGQA benchmark folder (``ngqa build``) from the real bundles."""
    from nutrireason.ngqa.build import build_benchmark
    from nutrireason.ngqa.users import annotate_users
    from nutrireason.recipes.foods import FoodTables
    from nutrireason.sources.nhanes_bundle import read_nhanes_bundle

    users = annotate_users(read_nhanes_bundle(*nhanes_bundle_dirs)).users
    foods = FoodTables(pd.read_parquet(recipe_build / "foods.parquet"),
                       pd.read_parquet(recipe_build / "food_ingredients.parquet"))
    out = tmp_path_factory.mktemp("ngqa")
    build_benchmark(users, foods, out, seed=0)
    return out


@pytest.fixture(scope="session")
def fam_build(real_build) -> Path:
    """A FAM-Bench benchmark folder (``fam annotate`` then ``fam build``) from the real bundles
    (the session's ``real_build``, shared with the FAM-Bench tests)."""
    return real_build
