"""Both benchmarks built once from the real offline bundles, for the interop tests, and a skip
(with the reason) where the optional `interop` extra is not installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def need(module: str) -> None:
    """Skip with a clear reason when an optional interop package is not installed."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (install the extra: "
                    "pip install -e '.[interop]'; scripts/test.sh does)",
                    allow_module_level=True)


@pytest.fixture(scope="session")
def fam_build(real_build) -> Path:
    """A FAM-Bench benchmark folder (``fam annotate`` then ``fam build``) from the real bundles
    (the session's ``real_build``, shared with the FAM-Bench tests)."""
    return real_build
