"""What ``nutrireason run`` evaluates: the item files of a registered benchmark's tasks (and
levels) in a build, the FAM-Bench method names for prompting modes, and the image check.

``--task``, ``--level`` and ``--mode`` take one value, a comma list, a repeated option or
``all``; every chosen (task, level) file runs in one run folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.paths import builds_dir
from nutrireason.schema import benchmark_names, get_benchmark


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


PAPER_MODES = ("baseline", "cot", "ki", "cot-ki")  # FAM-Bench's four; `--mode all`


def choices(values: list[str] | None, known: list[str], option: str,
            every: list[str] | None = None) -> list[str]:
    """The values of a list option: commas split, repeats dropped, ``all`` for ``every``
    (default: all ``known``); an unknown value is refused naming the option."""
    chosen: list[str] = []
    for value in values or []:
        for part in filter(None, (v.strip() for v in value.split(","))):
            names = list(every or known) if part == "all" else [part]
            for name in names:
                if name not in known:
                    raise DataError(None, f"unknown {option} value {name!r}", field=option,
                                    value=name, expected=", ".join([*known, "all"]))
                if name not in chosen:
                    chosen.append(name)
    return chosen


def benchmark_files(benchmark: str, tasks: list[str] | None, levels: list[str] | None,
                    directory: Path | None) -> list[Path]:
    """The item files of every chosen (task, level) of a registered benchmark, tasks first
    then levels in the benchmark's order; a JSONL path stands for itself."""
    if benchmark not in benchmark_names():
        return [Path(benchmark)]
    spec = get_benchmark(benchmark)
    options = [t.option for t in spec.tasks]
    aliases = {alias: t.option for t in spec.tasks for alias in (t.name, *t.aliases)}
    wanted = [aliases.get(v.strip(), v.strip()) for value in tasks or [options[0]]
              for v in value.split(",")]
    picked = choices(wanted, options, "--task")
    if not spec.levels:
        if levels:
            raise DataError(None, f"{spec.title} has no levels", field="--level",
                            value=",".join(levels))
        return [benchmark_file(benchmark, task, "", directory) for task in picked]
    picked_levels = choices(levels or ["standard"], list(spec.levels), "--level")
    return [benchmark_file(benchmark, task, level, directory)
            for task in picked for level in picked_levels]


def fam_methods(modes: list[str] | None, input_mode: str) -> list[str]:
    """Method names for FAM-Bench prompting modes (``all``: the paper's four) and an input
    mode."""
    from nutrireason.fam.spec import INPUTS, method_name
    from nutrireason.methods.fam import MODES

    if input_mode not in INPUTS:
        raise DataError(None, f"unknown input mode {input_mode!r}",
                        expected="--input " + "|".join(INPUTS))
    names = []
    for mode in choices(modes or ["baseline"], [*MODES, "reference"], "--mode",
                        every=list(PAPER_MODES)):
        if mode == "reference":
            names.append("fam-reference")
        else:
            names.append(method_name(mode, input_mode))
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


def plan_run(benchmark: str, out: Path, *, tasks: list[str] | None,
             levels: list[str] | None, benchmark_dir: Path | None, methods: list[str] | None,
             modes: list[str] | None, input_mode: str, models: list[str] | None,
             max_attempts: int = 5, **engine: Any) -> Any:
    """The :class:`~nutrireason.runs.RunConfig` of ``nutrireason run``: the benchmark's files,
    the methods (default per benchmark), the models (``none`` for model-free methods), the
    image check for image inputs; ``engine`` holds the engine settings as they are."""
    from nutrireason.models.retry import RetryPolicy
    from nutrireason.runs import RunConfig
    from nutrireason.runs.policy import resolve_models

    names = methods or default_methods(benchmark, modes, input_mode)
    paths = benchmark_files(benchmark, tasks, levels, benchmark_dir)
    if benchmark == "fam" and input_mode != "text":
        for path in paths:
            check_images(path, engine.get("offset", 0), engine.get("limit"))
    return RunConfig(benchmark=paths if len(paths) > 1 else paths[0], out=out, methods=names,
                     models=resolve_models(models, names),
                     retry=RetryPolicy(max_attempts=max_attempts), **engine)
