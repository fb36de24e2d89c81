"""The run engine: plan, execute with bounded concurrency, per-sample records, resume."""

from nutrireason.runs.benchmark import Benchmark, load_benchmark
from nutrireason.runs.engine import RunConfig, RunSummary, run, run_async
from nutrireason.runs.records import Record, read_records

__all__ = ["Benchmark", "Record", "RunConfig", "RunSummary", "load_benchmark", "read_records",
           "run", "run_async"]
