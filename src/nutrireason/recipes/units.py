"""Units turned into one another (pint): the bottom of ``recipes/``, read by the parser's
plausibility checks and by the weighing."""

from __future__ import annotations

from functools import lru_cache

import pint

SLICER_TO_PINT = {"fluid ounce": "fluid_ounce"}


@lru_cache(maxsize=1)
def _units() -> pint.UnitRegistry:
    return pint.UnitRegistry()


@lru_cache(maxsize=1024)
def _factor(unit: str, target: str) -> float:
    registry = _units()
    source = SLICER_TO_PINT.get(unit, unit)
    return float((1 * registry(source)).to(registry(target)).magnitude)


def convert(quantity: float, unit: str, target: str) -> float:
    """``quantity`` in ``unit`` expressed in ``target`` (pint unit names)."""
    return quantity * _factor(unit, target)
