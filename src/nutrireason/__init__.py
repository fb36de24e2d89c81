"""NutriReason: benchmarks for health-aware nutrition reasoning (NGQA and FAM-Bench)."""

from nutrireason.errors import DataError, NutriReasonError

__version__ = "0.2.0"
__all__ = ["DataError", "NutriReasonError", "__version__"]
