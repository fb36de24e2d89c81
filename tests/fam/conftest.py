"""The FAM-Bench annotation pool and instances built once from the real offline recipe build."""

from __future__ import annotations

from pathlib import Path

import pytest

from nutrireason.fam.build import build_fam
from nutrireason.fam.pool import build_pool, read_recipes


@pytest.fixture(scope="session")
def fam_pool(recipe_build, sr28, tmp_path_factory) -> Path:
    """``fam annotate`` over the whole offline recipe build (rules only)."""
    pool_dir = tmp_path_factory.mktemp("pool")
    build_pool(read_recipes(recipe_build / "recipes.jsonl"), sr28, pool_dir)
    return pool_dir


@pytest.fixture(scope="session")
def real_build(fam_pool, recipe_build, sr28, tmp_path_factory) -> Path:
    """``fam build`` (both splits) from that pool."""
    out = tmp_path_factory.mktemp("fam")
    build_fam(fam_pool / "annotations.jsonl", recipe_build / "recipes.jsonl", sr28, out)
    return out
