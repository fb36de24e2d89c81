"""The types every stage shares: run records, per-sample scores, method specs and the benchmark
registry.

A leaf module: it imports the standard library, pydantic and :mod:`nutrireason.errors` only, so
every package may import it without importing against the flow. Each benchmark registers one
:class:`BenchmarkSpec` (``ngqa/spec.py``, ``fam/spec.py``) that the CLI, the engine, scoring and
the report look up; nothing else names a benchmark's levels, tasks or tags.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from nutrireason.errors import DataError, NutriReasonError

RECORDS_FILE = "records.jsonl"
SCORES_FILE = "scores.jsonl"
METRICS_FILE = "metrics.json"
GROUP_KEYS = ("method", "model", "task", "level")  # what names one group of metrics.json


# --------------------------------------------------------------------------- records


class Record(BaseModel):
    """Everything about one sample: ids, prompt, raw output, parsed answer, gold, cost, error.

    ``extra`` holds what a method reports beyond the answer (parse mode, ToG's pruning calls);
    it never overrides a field above. Records written before ``extra`` existed carried those
    keys at the top level; they still load (``extra="allow"``).
    """

    model_config = ConfigDict(extra="allow")

    key: str
    item_id: str
    method: str
    model: str
    status: Literal["ok", "error"]
    parsed: Any = None
    parse_ok: bool = False
    gold: Any = None
    requests: list[dict[str, Any]] = Field(default_factory=list)
    responses: list[str] = Field(default_factory=list)
    raw: list[Any] = Field(default_factory=list)
    retrieved: list[Any] | None = None
    usage: dict[str, int] = Field(default_factory=dict)
    latency_s: float = 0.0
    wall_s: float = 0.0
    n_calls: int = 0
    cache_hits: int = 0
    attempts: int = 0
    error: dict[str, Any] | None = None
    finished_at: float = 0.0
    meta: dict[str, Any] = Field(default_factory=dict)
    method_spec: dict[str, Any] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    # figures the method reports per answer to be pooled per group (ToG's model calls): scoring
    # averages each over a group's answered records, the report writes the method's sentence
    method_stats: dict[str, float | int | bool] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)  # generation settings sent
    # per model call, in order: why it stopped ("stop", "length": cut off) and its reasoning
    # (think blocks, analysis channel or the server's reasoning field), set apart from the answer
    finish_reasons: list[str | None] = Field(default_factory=list)
    reasoning: list[str] = Field(default_factory=list)

    @property
    def reading(self) -> dict[str, Any]:
        """How the answer was read (``extra["reading"]``: rule, reason, form), {} if unknown."""
        found = self.extra.get("reading")
        return found if isinstance(found, dict) else {}

    @property
    def task(self) -> str:
        return str(self.meta.get("task") or "unknown")

    @property
    def level(self) -> str:
        return str(self.meta.get("level") or "")


def record_key(item_id: str, method: str, model: str) -> str:
    """The identity of a sample within a run."""
    return f"{item_id}::{method}::{model}"


def read_records_bytes(data: bytes, path: Path,
                       conflicts: list[str] | None = None) -> dict[str, Record]:
    """Parse complete JSONL lines (the last record of a key wins); a malformed line is an error
    naming file and line. ``conflicts`` gets a line for each key answered twice with different
    answers (see :func:`answers_differ`), so the caller can report what the last-wins rule
    decided."""
    records: dict[str, Record] = {}
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = Record.model_validate_json(line)
        except ValueError as exc:
            raise DataError(path, f"line {number} is not a valid record: {exc}") from exc
        earlier = records.get(record.key)
        if conflicts is not None and earlier is not None and answers_differ(earlier, record):
            conflicts.append(f"{record.key!r} (line {number}: parsed {record.parsed!r}; an "
                             f"earlier line: parsed {earlier.parsed!r})")
        records[record.key] = record
    return records


def answers_differ(one: Record, other: Record) -> bool:
    """Two finished records of one sample that give different answers (errors give none)."""
    return one.status == other.status == "ok" and (
        (one.parsed, one.parse_ok, one.responses) != (other.parsed, other.parse_ok,
                                                      other.responses))


def read_records(path: str | Path) -> list[Record]:
    """Every record of a run (a run directory or its records.jsonl), last per key."""
    path = Path(path)
    if path.is_dir():
        path = path / RECORDS_FILE
    if not path.is_file():
        raise DataError(path, "no records file", expected="a run directory from `nutrireason run`")
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    return list(read_records_bytes(data[:end], path).values())


# --------------------------------------------------------------------------- per-sample scores


class SampleScore(BaseModel):
    """One line of ``scores.jsonl``: how one record scored.

    ``correct`` is True / False where the task defines a right answer (binary, multi-label
    exact match, FAM dish decision, FAM top-1), None for an error record or a task without
    one; ``values`` holds the per-sample metric values the task defines (F1, ROUGE, ...).
    """

    key: str
    item_id: str
    method: str
    model: str
    task: str
    level: str
    status: Literal["ok", "error"]
    parse_ok: bool
    correct: bool | None = None
    values: dict[str, float] = Field(default_factory=dict)


def read_scores(path: str | Path) -> dict[str, SampleScore]:
    """``scores.jsonl`` of a run directory (or the file itself) by record key."""
    path = Path(path)
    if path.is_dir():
        path = path / SCORES_FILE
    if not path.is_file():
        raise DataError(path, "no scores file", expected="a run scored by `nutrireason score`")
    scores: dict[str, SampleScore] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            score = SampleScore.model_validate_json(line)
        except ValueError as exc:
            raise DataError(path, f"line {number} is not a valid score: {exc}") from exc
        scores[score.key] = score
    return scores


def scores_for(run_dir: str | Path, records: list[Record]) -> dict[str, SampleScore]:
    """A run's scores.jsonl by record key, checked to hold exactly one score per record."""
    run_dir = Path(run_dir)
    path = run_dir / SCORES_FILE
    if not path.is_file():
        raise DataError(path, f"no {SCORES_FILE} (runs scored before per-sample scores were "
                              f"written lack it); run `nutrireason score {run_dir}` first")
    scores = read_scores(path)
    keys = {record.key for record in records}
    missing = [record.key for record in records if record.key not in scores]
    extra = [key for key in scores if key not in keys]
    if missing or extra:
        problem = f"record {missing[0]!r} has no score" if missing else \
            f"score {extra[0]!r} has no record"
        raise DataError(path, f"out of date with {RECORDS_FILE} ({problem}; {len(missing)} "
                              f"unscored, {len(extra)} without a record); run "
                              f"`nutrireason score {run_dir}` again")
    return scores


# --------------------------------------------------------------------------- method specs


class MethodSpec(BaseModel):
    """A method and its parameters, as in ``--method tog:width=3,depth=2``."""

    model_config = ConfigDict(frozen=True)

    name: str
    params: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> MethodSpec:
        """``name`` or ``name:key=value,key=value``; values read as JSON where they can be
        (``3`` is an int, ``true`` a bool), else kept as strings."""
        name, _, rest = text.strip().partition(":")
        if not name:
            raise DataError(None, f"method {text!r} has no name", field="--method",
                                   value=text, expected="NAME or NAME:KEY=VALUE,...")
        params: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in rest.split(","))):
            key, sep, value = part.partition("=")
            if not sep or not key.strip():
                raise DataError(None, f"method parameter {part!r} is not KEY=VALUE",
                                       field="--method", value=text,
                                       expected="NAME:KEY=VALUE,KEY=VALUE")
            params[key.strip()] = _value(value.strip())
        return cls(name=name, params=params)

    @property
    def label(self) -> str:
        """The name a run records: ``name`` alone without parameters, else
        ``name:key=value,...`` with the keys sorted."""
        if not self.params:
            return self.name
        return self.name + ":" + ",".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
                                          for k, v in sorted(self.params.items()))


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


# --------------------------------------------------------------------------- benchmarks


class MetricColumn(NamedTuple):
    """One metric column of a task in the paper's results table."""

    metric: str  # the name in metrics.json
    label: str  # the column header
    percent: bool = False  # shown as a percentage (FAM-Bench Table 1)


class Breakdown(NamedTuple):
    """One per-sample breakdown of a benchmark's scores: the value (or values, from a list)
    of a meta field, each scored apart. ``fields``: the meta keys read, the first one set
    wins; ``name``: the column, the metrics.json key and ``compare --by`` name; ``file``: the
    CSV written into the run folder."""

    name: str
    fields: tuple[str, ...]
    file: str

    def values(self, meta: dict[str, Any]) -> list[str]:
        """The distinct non-empty values a record with ``meta`` counts under, in order."""
        for key in self.fields:
            found = meta.get(key)
            if found:
                items = found if isinstance(found, list | tuple) else [found]
                return [str(v) for v in dict.fromkeys(items) if v not in (None, "")]
        return []


# The shapes an answer can take. A task declares one (:attr:`TaskSpec.answer`); how an answer
# of that shape is read, checked against the gold, scored and asked of a person is decided by
# the shape, so no module outside a benchmark's own package names its tasks.
ANSWER_KINDS = {
    "yes_no": "Yes or No",
    "tag_set": "a set of labels from the benchmark's vocabulary",
    "sentence": "Yes or No and the reasons, in one sentence",
    "decision": "recommend or not_recommend, with the ingredients that decide it",
    "ranking": "the option letters from best to worst",
    "quantity": "a number in the task's unit",
}


@dataclass(frozen=True)
class TaskSpec:
    """One task of a benchmark.

    ``name`` is what records carry (``meta.task``); ``option`` what ``--task`` takes; ``file``
    the item file's name inside a build (``{level}`` is replaced by the level); ``answer`` the
    shape of its answers (:data:`ANSWER_KINDS`), which picks the rules that read them and the
    metric table in :mod:`nutrireason.scoring`; ``aliases`` other ``--task`` spellings;
    ``clusters`` the meta keys whose value groups samples that are not independent (NGQA: the
    user, or the food; FAM-Bench: the recipe, or a ranking item's dish set), default first.
    The report's layout of the task comes from here too: its paper-table ``columns`` under
    ``table_title``; ``headline``, the metric a task is compared on across inputs (headed
    ``headline_label``) and against ``human_paper``, the paper's human baseline; ``shown``, the
    per-sample values (scores.jsonl) the HTML report shows beside each outcome. What the
    methods need: ``answer_format``, a well-formed answer in words (what the answer extractor
    asks for); ``prompt_note``, the line a prompt ends with; ``question``, the question of an
    item in one line, for a reader who sees only the final answer; ``scored_call``, which of a
    multi-call method's replies holds the answer (``first`` or ``last``). ``pooled``: the
    paper's table pools the task over a model's input variants (FAM-Bench Table 1).
    ``human``: the ``human serve --task`` value of a task people can answer (empty: none).
    A ``quantity`` task's ``unit`` names what its numbers are in ("g", "kcal") and its
    ``tolerance`` the distance from the gold within which an answer is right (Acc@7.5 g).
    """

    name: str
    option: str
    label: str
    file: str
    answer: str
    short: str = ""
    aliases: tuple[str, ...] = ()
    item_model: type[BaseModel] | None = None  # the fields an item of this task carries
    columns: tuple[MetricColumn, ...] = ()
    table_title: str = ""
    headline: str = ""
    headline_label: str = ""
    human_paper: float | None = None
    shown: tuple[tuple[str, str], ...] = ()
    # The record meta keys that name the unit a task's samples cluster in (the first is the
    # default of `score`), for clustered intervals, `compare` and `power`.
    clusters: tuple[str, ...] = ()
    answer_format: str = ""
    prompt_note: str = ""
    question: Callable[[dict[str, Any]], str] | None = None
    scored_call: Literal["first", "last"] = "last"
    pooled: bool = False
    human: str = ""
    unit: str = ""
    tolerance: float | None = None
    # the demo: how many of the benchmark's demo methods it runs on this task (0: all; a
    # ranking item of five calls runs in the first only) and the seconds one sample takes
    # with the bundled model on 2 cores (for its estimate)
    demo_methods: int = 0
    demo_seconds: float = 1.0

    def __post_init__(self) -> None:
        if self.answer not in ANSWER_KINDS:
            raise NutriReasonError(f"task {self.name!r} declares the answer {self.answer!r}; "
                                   f"one of {', '.join(ANSWER_KINDS)}")
        if self.answer == "quantity" and (self.tolerance is None or self.tolerance < 0):
            raise NutriReasonError(f"task {self.name!r} answers a quantity and declares no "
                                   "tolerance (the distance within which an answer is right)")

    def item_question(self, item: dict[str, Any]) -> str:
        """The question of ``item`` in one line (its ``question`` field where the task has no
        ``question`` function)."""
        return self.question(item) if self.question else str(item.get("question") or "")


@dataclass(frozen=True)
class BenchmarkSpec:
    """What every stage needs to know about one benchmark."""

    name: str
    title: str
    build_dir: str  # the build's folder under the data home's ``builds/``
    tasks: tuple[TaskSpec, ...]
    levels: tuple[str, ...] = ()
    default_level: str = ""  # the level commands use when none is given
    level_labels: dict[str, str] = field(default_factory=dict)
    meta_keys: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()  # an answer vocabulary (NGQA's tags), in answer order
    breakdowns: tuple[Breakdown, ...] = ()  # what scores are broken down by, besides level
    # Prompting modes (name -> display label, in table order; the first is ``--mode``'s
    # default), input variants, how a method name splits into (mode, input) and back
    # (FAM-Bench: ``fam-cot-ki[image]``), and the modes ``--mode all`` stands for.
    modes: dict[str, str] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()
    split_method: Callable[[str], tuple[str, str]] | None = None
    join_method: Callable[[str, str], str] | None = None
    paper_modes: tuple[str, ...] = ()
    # ``module:function`` of what the benchmark adds to a report (a
    # ``nutrireason.display.section.SectionBuilder``), loaded only when a report is built;
    # "" for none
    report: str = ""
    # what the tasks' default cluster is, in words (a report's note on clustered intervals)
    cluster_unit: str = ""
    demo_max_tokens: int = 128  # the demo's answer budget for this benchmark's tasks

    def task(self, name: str) -> TaskSpec:
        """The task named ``name`` (its record name, option or an alias)."""
        for task in self.tasks:
            if name in (task.name, task.option, *task.aliases):
                return task
        known = ", ".join(t.option for t in self.tasks)
        raise DataError(None, f"unknown {self.name} task {name!r}", field="--task", value=name,
                               expected=f"one of {known}")

    def check_level(self, level: str) -> str:
        if self.levels and level not in self.levels:
            raise DataError(None, f"unknown {self.name} level {level!r}", field="--level",
                                   value=level, expected=f"one of {', '.join(self.levels)}")
        return level

    def file(self, directory: Path, task: str, level: str = "") -> Path:
        """The item file of ``task`` (and ``level``) inside a build folder."""
        spec = self.task(task)
        if self.levels:
            self.check_level(level)
        return directory / spec.file.format(level=level)

    def level_label(self, level: str) -> str:
        return self.level_labels.get(level, level.capitalize())


_FACTORIES: dict[str, Callable[[], BenchmarkSpec]] = {}
_SPECS: dict[str, BenchmarkSpec] = {}
# Looked up per record (engine, scoring): the benchmark that owns each task name, and the union
# of meta keys; both cleared when a benchmark registers.
_TASK_OWNER: dict[str, str | None] = {}
_META_KEYS: list[tuple[str, ...]] = []
# Modules whose import registers the built-in benchmarks; imported on first lookup, as are
# the ``nutrireason.benchmarks`` entry points of other packages.
_BENCHMARK_MODULES = ("nutrireason.ngqa.spec", "nutrireason.fam.spec",
                      "nutrireason.nutrients.spec")
_loaded = False


def register_benchmark(name: str) -> Callable[[Callable[[], BenchmarkSpec]],
                                              Callable[[], BenchmarkSpec]]:
    """Decorator: the function builds the spec of benchmark ``name`` on first lookup."""
    def wrap(factory: Callable[[], BenchmarkSpec]) -> Callable[[], BenchmarkSpec]:
        _FACTORIES[name] = factory
        _SPECS.pop(name, None)
        _TASK_OWNER.clear()
        _META_KEYS.clear()
        return factory
    return wrap


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in _BENCHMARK_MODULES:
        importlib.import_module(module)
    for entry in entry_points(group="nutrireason.benchmarks"):
        entry.load()


def benchmark_names() -> list[str]:
    """Every registered benchmark: the built-in ones in :data:`_BENCHMARK_MODULES` order
    (whichever was imported first), then the others in registration order."""
    _load_all()
    order = {module: i for i, module in enumerate(_BENCHMARK_MODULES)}
    return sorted(_FACTORIES, key=lambda name: order.get(_FACTORIES[name].__module__,
                                                          len(order)))


def get_benchmark(name: str) -> BenchmarkSpec:
    """The spec of benchmark ``name``."""
    _load_all()
    if name not in _FACTORIES:
        raise DataError(None, f"unknown benchmark {name!r}", field="benchmark", value=name,
                               expected=f"one of {', '.join(_FACTORIES)}")
    if name not in _SPECS:
        spec = _FACTORIES[name]()
        if spec.name != name:
            raise NutriReasonError(f"benchmark registered as {name!r} calls itself {spec.name!r}")
        _SPECS[name] = spec
    return _SPECS[name]


def spec_for_task(task: str) -> tuple[BenchmarkSpec, TaskSpec] | None:
    """The benchmark and task whose records carry ``meta.task == task``, or None."""
    if task not in _TASK_OWNER:
        _TASK_OWNER[task] = next((name for name in benchmark_names()
                                  if any(t.name == task for t in get_benchmark(name).tasks)),
                                 None)
    owner = _TASK_OWNER[task]
    if owner is None:
        return None
    spec = get_benchmark(owner)
    return spec, next(t for t in spec.tasks if t.name == task)


def task_spec(task: str) -> TaskSpec | None:
    """The spec of the registered task whose records carry ``meta.task == task``, or None."""
    found = spec_for_task(task)
    return found[1] if found else None


def answer_kind(task: str) -> str | None:
    """The answer shape of a registered task (:data:`ANSWER_KINDS`), or None."""
    found = task_spec(task)
    return found.answer if found else None


def check_item(item: dict[str, Any]) -> None:
    """Refuse an item that names a registered benchmark's task (its ``task`` field) but does
    not fit that task's item model; the error names the field and what was wrong."""
    from pydantic import ValidationError

    owner = spec_for_task(item["task"]) if isinstance(item.get("task"), str) else None
    if owner is None or owner[1].item_model is None:
        return
    spec, task = owner
    try:
        task.item_model.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "item"
        value = first.get("input")
        raise DataError(None, f"not a {spec.title} {task.name} item ({exc.error_count()} "
                        f"problem(s)): {first['msg']}", field=where,
                        value=value if isinstance(value, str | int | float) else None) from None


def breakdowns_of(tasks: Iterable[str] | None = None) -> tuple[Breakdown, ...]:
    """The breakdowns the benchmarks owning ``tasks`` declare (every registered benchmark's
    when ``tasks`` is None), each name once, in registration order; an unregistered task adds
    none."""
    owners = None if tasks is None else \
        {found[0].name for task in tasks if (found := spec_for_task(task))}
    found: dict[str, Breakdown] = {}
    for name in benchmark_names():
        if owners is None or name in owners:
            for breakdown in get_benchmark(name).breakdowns:
                found.setdefault(breakdown.name, breakdown)
    return tuple(found.values())


def all_meta_keys() -> tuple[str, ...]:
    """The item fields any registered benchmark copies into records, in first-seen order."""
    if not _META_KEYS:
        keys: dict[str, None] = {}
        for name in benchmark_names():
            keys.update(dict.fromkeys(get_benchmark(name).meta_keys))
        _META_KEYS.append(tuple(keys))
    return _META_KEYS[0]
