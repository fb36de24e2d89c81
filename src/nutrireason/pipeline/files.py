"""What ``nutrireason run`` evaluates: the item file of a registered benchmark's task (and
level) in a build, the FAM-Bench method names for prompting modes, and the image check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.paths import builds_dir
from nutrireason.schema import benchmark_names, get_benchmark


def default_task(benchmark: str) -> str | None:
    """The first task of a registered benchmark (None for a JSONL path)."""
    if benchmark not in benchmark_names():
        return None
    return get_benchmark(benchmark).tasks[0].option


def benchmark_file(benchmark: str, task: str, level: str, directory: Path | None) -> Path:
    """A registered benchmark's built file for ``task`` / ``level``; anything else is taken
    as a JSONL path of items."""
    if benchmark not in benchmark_names():
        return Path(benchmark)
    spec = get_benchmark(benchmark)
    path = spec.file(directory or builds_dir() / spec.build_dir, task, level)
    if not path.is_file():
        raise DataError(path, f"{spec.title} benchmark file not found",
                        expected=f"run `nutrireason {spec.name} build` first")
    return path


def fam_methods(modes: list[str] | None, input_mode: str) -> list[str]:
    """Method names for FAM-Bench prompting modes and an input mode."""
    from nutrireason.fam.spec import INPUTS, method_name
    from nutrireason.methods.fam import MODES

    if input_mode not in INPUTS:
        raise DataError(None, f"unknown input mode {input_mode!r}",
                        expected="--input " + "|".join(INPUTS))
    names = []
    for mode in modes or ["baseline"]:
        if mode == "reference":
            names.append("fam-reference")
        elif mode in MODES:
            names.append(method_name(mode, input_mode))
        else:
            raise DataError(None, f"unknown FAM-Bench mode {mode!r}",
                            expected="--mode " + "|".join([*MODES, "reference"]))
    return names


def default_methods(benchmark: str, modes: list[str] | None, input_mode: str) -> list[str]:
    """The methods a run uses when ``--method`` is not given."""
    if benchmark == "fam":
        return fam_methods(modes, input_mode)
    return ["plain"] if benchmark == "ngqa" else ["prompt"]


def check_images(path: Path, offset: int, limit: int | None) -> None:
    """Image inputs need a local image for every dish of the selected items."""
    from nutrireason.fam.instances import has_images
    from nutrireason.runs.benchmark import load_benchmark

    items = load_benchmark(path).select(offset, limit)
    missing = [item["id"] for item in items if not has_images(item)]
    if missing:
        raise DataError(path, f"{len(missing)} of {len(items)} items have no local image "
                        f"file (first: {missing[0]})", field="image",
                        expected="instances built with `nutrireason fam build --images DIR`, "
                        "or --input text")


def plan_run(benchmark: str, out: Path, *, task: str | None, level: str,
             benchmark_dir: Path | None, methods: list[str] | None, modes: list[str] | None,
             input_mode: str, models: list[str] | None, max_attempts: int = 5,
             **engine: Any) -> Any:
    """The :class:`~nutrireason.runs.RunConfig` of ``nutrireason run``: the benchmark's file,
    the methods (default per benchmark), the models (``none`` for model-free methods), the
    image check for image inputs; ``engine`` holds the engine settings as they are."""
    from nutrireason.models.retry import RetryPolicy
    from nutrireason.runs import RunConfig
    from nutrireason.runs.policy import resolve_models

    names = methods or default_methods(benchmark, modes, input_mode)
    path = benchmark_file(benchmark, task or default_task(benchmark) or "", level,
                          benchmark_dir)
    if benchmark == "fam" and input_mode != "text":
        check_images(path, engine.get("offset", 0), engine.get("limit"))
    return RunConfig(benchmark=path, out=out, methods=names,
                     models=resolve_models(models, names),
                     retry=RetryPolicy(max_attempts=max_attempts), **engine)
