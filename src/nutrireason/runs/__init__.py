"""The run engine: plan, execute with bounded concurrency, per-sample records, resume.

The names below load on first use, so that importing one module of the package (the report
reads ``runs.merge``) does not load the engine, the methods and the models.
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"Benchmark": "benchmark", "load_benchmark": "benchmark", "RunConfig": "engine",
          "RunSummary": "engine", "run": "engine", "run_async": "engine", "Record": "records",
          "read_records": "records"}

__all__ = ["Benchmark", "Record", "RunConfig", "RunSummary", "load_benchmark", "read_records",
           "run", "run_async"]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
