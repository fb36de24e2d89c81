"""Fixtures for the recipe tests: the real SR28 bundle and a resolver over it."""

from __future__ import annotations

import pytest

from nutrireason.recipes.build import Resolver
from nutrireason.sources.sr28 import read_sr28
from tests.conftest import real_bundle


@pytest.fixture(scope="session")
def sr28():
    return read_sr28(real_bundle("usda-sr28") / "sr28")


@pytest.fixture(scope="session")
def resolver(sr28):
    return Resolver.from_sr28(sr28)
