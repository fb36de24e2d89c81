"""Domain knowledge as validated data files: thresholds, indicators, condition maps, habits.

Every number lives in ``standards/data/*.yaml`` with its source; this package only loads and
validates them. A malformed file is rejected with a :class:`~nutrireason.errors.DataError` that
names the file, the key path and the problem.
"""

from nutrireason.standards.loader import (
    Bundle,
    Condition,
    HabitItem,
    Nutrient,
    Standards,
    load_bundles,
    load_standards,
    standards_dir,
)

__all__ = [
    "Bundle",
    "Condition",
    "HabitItem",
    "Nutrient",
    "Standards",
    "load_bundles",
    "load_standards",
    "standards_dir",
]
