"""What ``nutrireason run`` evaluates: the item files of a registered benchmark's tasks (and
levels) in a build, the FAM-Bench method names for prompting modes, and the image check.

``--task``, ``--level`` and ``--mode`` take one value, a comma list, a repeated option or
``all``; every chosen (task, level) file runs in one run folder."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.options import CONCURRENCY, LIMIT, REQUIRED, setting
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
    picked_levels = choices(levels or [spec.default_level or spec.levels[0]], list(spec.levels),
                            "--level")
    return [benchmark_file(benchmark, task, level, directory)
            for task in picked for level in picked_levels]


def mode_methods(benchmark: str, modes: list[str] | None, input_mode: str) -> list[str]:
    """Method names for a benchmark's prompting modes (``all``: the paper's modes; none given:
    the first mode) and an input mode; a mode whose method is a reference answers from text."""
    from nutrireason.methods.base import method_info

    spec = get_benchmark(benchmark)
    if input_mode not in spec.inputs:
        raise DataError(None, f"unknown input mode {input_mode!r}",
                        expected="--input " + "|".join(spec.inputs))
    assert spec.join_method is not None
    names = []
    for mode in choices(modes or [next(iter(spec.modes))], list(spec.modes), "--mode",
                        every=list(spec.paper_modes)):
        text = spec.join_method(mode, spec.inputs[0])
        reference = (info := method_info(text)) is not None and info.reference
        names.append(text if reference else spec.join_method(mode, input_mode))
    return names


def default_methods(benchmark: str, modes: list[str] | None, input_mode: str) -> list[str]:
    """The methods a run uses when ``--method`` is not given: the chosen prompting modes of a
    benchmark that has modes, else the methods a benchmark declares as its default, else the
    generic ``prompt`` (a JSONL file of prompts)."""
    from nutrireason.methods.base import declared

    if benchmark not in benchmark_names():
        return ["prompt"]
    if get_benchmark(benchmark).join_method is not None:
        return mode_methods(benchmark, modes, input_mode)
    return declared(benchmark, default=True) or ["prompt"]


def build_images(path: Path) -> Path | None:
    """The images folder the build of the benchmark file ``path`` was made with (``settings.
    images`` of the ``manifest.json`` beside it), or None."""
    manifest = path.parent / "manifest.json"
    try:
        settings = json.loads(manifest.read_text(encoding="utf-8")).get("settings") or {}
    except (OSError, ValueError, AttributeError):
        return None
    images = settings.get("images") if isinstance(settings, dict) else None
    return Path(images) if isinstance(images, str) and images else None


def run_images(paths: list[Path], images: Path | None) -> Path | None:
    """The images folder of a run: ``--images``, else the one every benchmark file's build
    names (builds that name different folders need --images)."""
    if images is not None:
        if not images.is_dir():
            raise DataError(images, "images folder not found", field="--images",
                            expected="a folder of <recipe id>.jpg/.png/.webp files")
        return images
    found = {build_images(path) for path in paths}
    if len(found) > 1:
        raise DataError(paths[0].parent, "the builds name different images folders",
                        field="--images", expected="--images DIR for this run")
    return found.pop() if found else None


def check_images(path: Path, offset: int, limit: int | None, images: Path | None) -> None:
    """Image inputs need a local image inside ``images`` for every dish of the selected
    items."""
    from nutrireason.fam.instances import has_images
    from nutrireason.runs.benchmark import load_benchmark
    from nutrireason.runs.engine import trust_images

    items = load_benchmark(path).select(offset, limit)
    trust_images(items, images)
    missing = [item["id"] for item in items if not has_images(item)]
    if missing:
        raise DataError(path, f"{len(missing)} of {len(items)} items have no local image "
                        f"file (first: {missing[0]})", field="image",
                        expected="instances built with `nutrireason fam build --images DIR`, "
                        "or --input text")


@dataclass
class RunRequest:
    """Everything ``nutrireason run`` is asked: the benchmark's files, methods x models, the
    generation settings and the engine's. Each field is the command's option of that name."""

    benchmark: str = setting("`ngqa` (with --task and --level), `fam` (with --task, --mode, "
                             "--input) or a JSONL file of items.", REQUIRED, argument=True)
    out: Path = setting("Run directory (records.jsonl + manifest.json).", REQUIRED)
    task: list[str] | None = setting(
        "NGQA: binary (default), multilabel, textgen; FAM-Bench: dish (default), rank; a comma "
        "list, repeated, or `all`. Every chosen task (and level) runs in this one folder.")
    level: list[str] | None = setting(
        "NGQA level: sparse, standard (default), complex; a comma list, repeated, or `all`. "
        "--offset and --limit apply to each (task, level).")
    benchmark_dir: Path | None = setting(
        "A built NGQA or FAM-Bench directory (default: the last build).")
    mode: list[str] | None = setting(
        "FAM-Bench prompting mode: baseline, cot, ki, cot-ki, ki-limits, cot-ki-limits (KI with "
        "the nutrient limits) or reference; a comma list, repeated, or `all` (the paper's four: "
        "baseline, cot, ki, cot-ki).")
    input_mode: str = setting("Input: text, text+image or image.", "text", "--input")
    method: list[str] | None = setting(
        "Method: plain, kaping, cot-zero, cot-bag, tog, oracle (NGQA) or prompt; repeatable.")
    model: list[str] | None = setting(
        "Provider string (required), e.g. openai/gpt-4o-mini, llamacpp/smollm2, scripted/echo "
        "(no model, for plumbing); `none` for methods that need no model (oracle, --mode "
        "reference); repeatable.")
    concurrency: int = setting(CONCURRENCY, 8, min=1)
    limit: int | None = setting(LIMIT, min=0)
    offset: int = setting("Skip this many items first.", 0, min=0)
    gen: list[str] | None = setting(
        "Generation setting KEY=VALUE, repeatable: temperature, max_tokens, top_p, top_k, "
        "min_p, repeat_penalty, presence_penalty, frequency_penalty, seed, stop (repeat or a "
        "JSON list); overrides the matching option below. A setting the model's backend "
        "cannot honour is refused by name; what is sent is recorded in the manifest and "
        "every record.")
    shard: str | None = setting(
        "Run shard K of N (`2/4`): items split by a hash of their id, after --offset/--limit; "
        "`nutrireason merge` joins the shards' folders.")
    seed: int | None = setting("Sampling seed sent to the model.")
    temperature: float = setting("Sampling temperature.", 0.0)
    repeats: int = setting("Answers per item, method and model (needs --temperature above "
                           "0); `score` clusters an item's repeats and reports how often "
                           "they agree.", 1, min=1)
    max_tokens: int = setting("Output token budget.", 512, min=1)
    json_mode: bool = setting("Ask for a JSON object answer.", False)
    cache: bool = setting("Reuse cached responses.", True)
    retry_errors: bool = setting("On resume, run the errored samples again.", False)
    max_attempts: int = setting("Attempts per model call.", 5, min=1)
    allow_errors: str | None = setting(
        "Exit 0 even if up to N samples (`5`) or P % of them (`2%`) ended in an error; by "
        "default any error exits 1, and a run whose every sample errored always does.")
    progress: bool = setting("Show a progress bar (on stderr).", True)
    json_summary: bool = setting(
        "Print only a JSON summary on stdout (counts, status, run folder), for scripts.",
        False, "--json")
    extractor: str | None = setting(
        "A provider string: a second model reads the final answers no rule could read (never "
        "those cut off, refused or hedged); both readings are recorded and `score` reports "
        "the metrics both ways. Off by default.")
    images: Path | None = setting(
        "Folder of the dish images for --input text+image or image (default: the folder the "
        "FAM-Bench build was made with, from its manifest). An item's own images_root is "
        "never used.")

    def generation(self) -> Any:
        """The :class:`~nutrireason.models.types.GenerationSettings` sent to every model:
        the options, overridden by ``--gen KEY=VALUE``."""
        from nutrireason.models.settings import parse_gen
        from nutrireason.models.types import GenerationSettings

        return GenerationSettings(**{"temperature": self.temperature,
                                     "max_tokens": self.max_tokens, "seed": self.seed,
                                     "json_mode": self.json_mode} | parse_gen(self.gen or []))


def plan_run(request: RunRequest, progress: bool) -> Any:
    """The :class:`~nutrireason.runs.RunConfig` of ``nutrireason run``: the benchmark's files,
    the methods (default per benchmark), the models (``none`` for model-free methods), the
    image check for image inputs, the generation and engine settings."""
    from nutrireason.models.retry import RetryPolicy
    from nutrireason.runs import RunConfig
    from nutrireason.runs.policy import resolve_models
    from nutrireason.runs.shard import Shard

    r = request
    names = r.method or default_methods(r.benchmark, r.mode, r.input_mode)
    paths = benchmark_files(r.benchmark, r.task, r.level, r.benchmark_dir)
    images = run_images(paths, r.images)
    if r.input_mode != "text":
        for path in paths:
            check_images(path, r.offset, r.limit, images)
    return RunConfig(benchmark=paths if len(paths) > 1 else paths[0], out=r.out, methods=names,
                     models=resolve_models(r.model, names),
                     retry=RetryPolicy(max_attempts=r.max_attempts), settings=r.generation(),
                     concurrency=r.concurrency, limit=r.limit, offset=r.offset, cache=r.cache,
                     retry_errors=r.retry_errors, shard=Shard.parse(r.shard) if r.shard else None,
                     progress=progress, check_items=r.benchmark in benchmark_names(),
                     extractor=r.extractor, images=images, repeats=r.repeats)
