"""lm-evaluation-harness tasks for the single-call methods (``nutrireason export lm-eval DIR``).

:func:`export_lm_eval` writes one task YAML per (benchmark, task, level, method), two group
YAMLs, a README and a ``utils.py`` whose hooks are the functions below, so that::

    lm_eval --tasks nutrireason_ngqa_binary_complex_plain --include_path DIR --model ...

runs NutriReason's own prompts, answer parsing and scoring; nothing is copied into DIR.

* Data: each YAML reads a built benchmark file by absolute path with the ``text`` builder, one
  raw JSON line per doc, so no Arrow schema inference touches an item (it would add ``null``
  for keys an item lacks, and the prompt would show them). :func:`docs_for` parses the line
  and adds ``id``, ``method``, ``system``, ``prompt`` and ``target`` (the gold, as JSON).
* Prompt: the method's own request, captured by running ``method.answer`` against a backend
  that records it; ``system`` becomes lm-eval's ``description`` (a system message with
  ``--apply_chat_template``; without a chat template it heads the prompt, followed by a blank
  line), ``prompt`` the user turn.
* Parsing: ``method.answer`` again, with the model's reply as the answer to its first call.
* Scoring: :func:`process_results` builds the :class:`~nutrireason.schema.Record` that
  ``nutrireason run`` would write and scores it with
  :func:`~nutrireason.scoring.score.score_records`. A metric that is a mean of per-sample
  values (accuracy, ROUGE, MRR ...) is returned per sample and averaged by lm-eval (which adds
  a standard error); every other metric (precision / recall / F1, BLEU, rationale F1, CTC,
  retrieval) carries the sample's record and is computed over all of them by
  :func:`corpus_metric`, so lm-eval's numbers are ``nutrireason score``'s on the same answers.

Left out: Think-on-Graph (``tog``, several calls per question) and the model-free ``oracle``
and ``fam-reference``; FAM image inputs; BERTScore (needs torch). A ``fam_rank`` sample here
is the ranking call alone: the four dish-level calls that cross-task consistency needs are
not made, so ``ctc_coverage`` is 0 and ``ctc`` 0. FAM-Bench's JSON mode has no lm-eval
counterpart.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from nutrireason.errors import DataError
from nutrireason.fam.spec import split_method_name
from nutrireason.interop.builds import default_build
from nutrireason.methods.base import Method, Prediction, declared, get_method, method_infos
from nutrireason.models.types import ChatRequest, GenerationSettings, Message, ModelResponse
from nutrireason.schema import (
    BenchmarkSpec,
    Record,
    all_meta_keys,
    benchmark_names,
    get_benchmark,
    record_key,
    spec_for_task,
)
from nutrireason.scoring.metrics import retrieval_table
from nutrireason.scoring.score import score_records
from nutrireason.storage import check_target_folder, write_folder

PREFIX = "nutrireason"



def left_out() -> dict[str, str]:
    """Methods the export leaves out, by their declared reason: names that share a reason
    are listed together."""
    by_reason: dict[str, list[str]] = {}
    for name, info in method_infos().items():
        if info.left_out:
            by_reason.setdefault(info.left_out, []).append(name)
    return {", ".join(names): why for why, names in by_reason.items()}


# the methods that declare themselves exported (one model call per sample, the prompt from the
# item alone)
NGQA_METHODS = tuple(declared("ngqa", exported=True))
FAM_MODES = tuple(split_method_name(name)[0] for name in declared("fam", exported=True))
LEFT_OUT = left_out()
MODEL = "lm-eval"  # the model name the scored records carry
LOWER_IS_BETTER = ("unparseable_rate",)
README_HEAD = "# NutriReason lm-evaluation-harness tasks"
RETRIEVAL = tuple(f"retrieval_{name}" for name in retrieval_table([], []).point())


@dataclass(frozen=True)
class TaskEntry:
    """One exported lm-eval task: its name, the method, and the item file it reads."""

    name: str
    benchmark: str
    method: str
    label: str  # the method as the task name shows it (FAM: the mode)
    data: Path
    probe: dict[str, Any]  # the file's first item: which metrics the task reports


# --------------------------------------------------------------------------- the hooks


class _Replay:
    """A backend that records every request and answers the first with ``reply``, later
    calls (FAM ranking's dish-level calls) with an empty text."""

    def __init__(self, reply: str = "") -> None:
        self.reply = reply
        self.requests: list[ChatRequest] = []

    async def generate(self, request: ChatRequest) -> ModelResponse:
        self.requests.append(request)
        return ModelResponse(text=self.reply if len(self.requests) == 1 else "")


def _answer(method: Method, item: dict[str, Any], reply: str) -> tuple[Prediction, _Replay]:
    backend = _Replay(reply)
    return asyncio.run(method.answer(item, backend)), backend


def prompt_messages(method: Method, item: dict[str, Any]) -> list[Message]:
    """The messages ``method`` sends first for ``item`` (its only call for the exported
    methods), exactly as ``nutrireason run`` would."""
    return _answer(method, item, "")[1].requests[0].messages


def _system_and_prompt(messages: list[Message]) -> tuple[str, str]:
    system = "\n\n".join(m.text() for m in messages if m.role == "system")
    prompt = "\n\n".join(m.text() for m in messages if m.role != "system")
    return system, prompt


def _doc_fields(method: Method, line: str) -> dict[str, Any]:
    item = json.loads(line)
    system, prompt = _system_and_prompt(prompt_messages(method, item))
    return {"id": str(item.get("id", "")), "method": method.name,
            "system": f"{system}\n\n" if system else "", "prompt": prompt,
            "target": json.dumps(method.gold(item), ensure_ascii=False)}


def docs_for(method_name: str) -> Callable[[Any], Any]:
    """lm-eval ``process_docs`` for ``method_name``: each raw JSON line of the ``text``
    builder gains the fields the task YAML reads (prompt, system, target, ...). lm-eval asks
    several times per run; the dataset seen last (same fingerprint) is not mapped again."""
    method = get_method(method_name)
    seen: dict[str, Any] = {}

    def process_docs(dataset: Any) -> Any:
        key = getattr(dataset, "_fingerprint", None)
        if key in seen:
            return seen[key]
        kept = dataset.filter(lambda doc: bool(doc["text"].strip()), keep_in_memory=True,
                              load_from_cache_file=False)
        docs = kept.map(lambda doc: _doc_fields(method, doc["text"]), keep_in_memory=True,
                        load_from_cache_file=False)
        if key is not None:
            seen.clear()  # one dataset kept: a group run must not hold every task's docs
            seen[key] = docs
        return docs

    return process_docs


def _meta(item: dict[str, Any]) -> dict[str, Any]:
    found = spec_for_task(str(item.get("task", "")))
    keys = found[0].meta_keys if found else all_meta_keys()
    return {k: item[k] for k in keys if k in item}


def answer_record(method: Method, item: dict[str, Any], reply: str) -> Record:
    """The record ``nutrireason run`` would write for ``item`` had the model said ``reply``."""
    prediction, _ = _answer(method, item, reply)
    return Record(key=record_key(str(item["id"]), method.name, MODEL), item_id=str(item["id"]),
                  method=method.name, model=MODEL, status="ok", parsed=prediction.parsed,
                  parse_ok=prediction.parse_ok, gold=method.gold(item),
                  retrieved=prediction.retrieved, meta=_meta(item), responses=[reply])


def metric_names(record: Record) -> tuple[list[str], list[str]]:
    """(per-sample mean metrics, corpus metrics) that ``nutrireason score`` reports for a
    record like this one (the same for every record of its task and method)."""
    scores = score_records([record], bootstrap=0)
    means = [k for k in scores.samples[0].values if not k.startswith("retrieval_")]
    corpus = [k for k in scores["groups"][0]["metrics"] if k not in means]
    if record.retrieved is not None:
        corpus += list(RETRIEVAL)
    return means, corpus


def _payload(record: Record) -> dict[str, Any]:
    keep = {"key", "item_id", "method", "model", "status", "parsed", "parse_ok", "gold",
            "retrieved", "meta"}
    return record.model_dump(mode="json", include=keep)


_METHODS: dict[str, Method] = {}


def _method(name: str) -> Method:
    if name not in _METHODS:
        _METHODS[name] = get_method(name)
    return _METHODS[name]


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, Any]:
    """lm-eval ``process_results``: the sample's mean metrics as numbers, each corpus metric
    as the sample's record (for :func:`corpus_metric`)."""
    record = answer_record(_method(doc["method"]), json.loads(doc["text"]), results[0])
    means, corpus = metric_names(record)
    values = score_records([record], bootstrap=0).samples[0].values
    payload = _payload(record)
    return {**{k: values[k] for k in means}, **dict.fromkeys(corpus, payload)}


def corpus_metric(name: str) -> Callable[[Sequence[dict[str, Any]]], float]:
    """lm-eval aggregation for metric ``name``: ``nutrireason score``'s value on all the
    samples' records (NaN for a retrieval metric when no sample has retrieval signal)."""

    def aggregate(items: Sequence[dict[str, Any]]) -> float:
        records = [Record.model_validate(item) for item in items]
        group = score_records(records, bootstrap=0)["groups"][0]
        found = dict(group["metrics"])
        found.update({f"retrieval_{k}": v for k, v in (group["retrieval"] or {}).items()})
        return float(found[name]["value"]) if name in found else float("nan")

    aggregate.__name__ = f"corpus_{name}"
    return aggregate


# --------------------------------------------------------------------------- the export


def _first_item(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise DataError(path, "benchmark file missing from the build",
                        expected="a complete build (run the benchmark's build again)")
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                return json.loads(line)
    raise DataError(path, "benchmark file holds no item")


def _check_build(spec: BenchmarkSpec, build: Path) -> Path:
    build = build.expanduser().resolve()
    if not build.is_dir():
        raise DataError(build, f"no {spec.title} build in this folder",
                        expected=f"the output of `nutrireason {spec.name} build`")
    return build


def benchmark_entries(spec: BenchmarkSpec, build: Path) -> list[TaskEntry]:
    """A benchmark's tasks: task x level x exported method, in that order. A task is named
    ``nutrireason_<benchmark>_<task>[_<level>]_<method or mode>``: by its item file's name
    where the benchmark has levels, else by its ``--task`` name; a method by its prompting
    mode where the benchmark has modes."""
    build = _check_build(spec, build)
    entries = []
    for task in spec.tasks:
        for level in spec.levels or ("",):
            path = spec.file(build, task.name, level)
            probe = _first_item(path)
            for method in declared(spec.name, exported=True):
                label = spec.split_method(method)[0] if spec.split_method else method
                words = [PREFIX, spec.name, task.name if spec.levels else task.option,
                         level, label]
                entries.append(TaskEntry("_".join(w for w in words if w), spec.name, method,
                                         label, path, probe))
    return entries


class _Function(str):
    """A YAML ``!function`` reference."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(_Function,
                        lambda dumper, value: dumper.represent_scalar("!function", str(value)))


def hook_name(prefix: str, name: str) -> str:
    """A Python name for a hook in utils.py: ``docs_fam_cot_ki``, ``corpus_f1``."""
    return f"{prefix}_{name.replace('-', '_')}"


def generation_kwargs(settings: GenerationSettings) -> dict[str, Any]:
    """The method's generation settings as lm-eval's ``generation_kwargs``."""
    temperature = settings.temperature or 0.0
    kwargs: dict[str, Any] = {"until": list(settings.stop or []),
                              "do_sample": temperature > 0, "temperature": temperature}
    if settings.max_tokens:
        kwargs["max_gen_toks"] = settings.max_tokens
    return kwargs


def task_config(entry: TaskEntry) -> dict[str, Any]:
    """One task's YAML, as a dict."""
    method = get_method(entry.method)
    means, corpus = metric_names(answer_record(method, entry.probe, ""))
    metrics = [_metric(name, "mean") for name in means]
    metrics += [_metric(name, _Function(f"utils.{hook_name('corpus', name)}"))
                for name in corpus]
    return {
        "task": entry.name, "tag": [f"{PREFIX}_{entry.benchmark}_{entry.label}"],
        "dataset_path": "text", "dataset_kwargs": {"data_files": {"test": str(entry.data)}},
        "test_split": "test",
        "process_docs": _Function(f"utils.{hook_name('docs', entry.method)}"),
        "output_type": "generate_until", "description": "system",
        "doc_to_text": "prompt", "doc_to_target": "target",
        "process_results": _Function("utils.process_results"),
        "generation_kwargs": generation_kwargs(method.settings),
        "metric_list": metrics, "metadata": {"version": 1.0, "method": entry.method}}


def _metric(name: str, aggregation: str) -> dict[str, Any]:
    return {"metric": name, "aggregation": aggregation,
            "higher_is_better": name not in LOWER_IS_BETTER}


def utils_text(methods: Sequence[str], corpus: Sequence[str]) -> str:
    """The ``utils.py`` beside the YAMLs: names of NutriReason's hooks, nothing else."""
    lines = ['"""lm-eval hooks for the NutriReason tasks in this folder, written by',
             "`nutrireason export lm-eval`: prompts, answer parsing and scoring are NutriReason's",
             'own (nutrireason.interop.lm_eval_export); this file only names them."""',
             "", "from nutrireason.interop.lm_eval_export import corpus_metric, docs_for",
             "from nutrireason.interop.lm_eval_export import process_results  # noqa: F401",
             ""]
    lines += [f"{hook_name('docs', m)} = docs_for({m!r})" for m in methods]
    lines += [f"{hook_name('corpus', c)} = corpus_metric({c!r})" for c in corpus]
    return "\n".join(lines) + "\n"


def readme_text(entries: Sequence[TaskEntry]) -> str:
    """What the folder holds, how to run it, and what was left out."""
    left_out = "\n".join(f"* `{name}`: {why}" for name, why in LEFT_OUT.items())
    return f"""{README_HEAD}

Written by `nutrireason export lm-eval`: {len(entries)} tasks, one per (benchmark, task,
level, single-call method), and the groups `{PREFIX}_ngqa` and `{PREFIX}_fam`. Prompts, answer
parsing and scoring are NutriReason's own (`utils.py` imports them from
`nutrireason.interop.lm_eval_export`), so `nutrireason` must be importable where lm-eval runs.
The YAMLs read the built benchmark files by absolute path.

    lm_eval --tasks {entries[0].name if entries else PREFIX} --include_path THIS_FOLDER \\
        --model MODEL --model_args ... --apply_chat_template --limit 5

Use `--apply_chat_template` for chat models: the method's system prompt then goes as a
system message. Metrics match `nutrireason score` on the same answers; precision / recall /
F1, BLEU, rationale F1, CTC and retrieval are corpus-level (no standard error).

Not exported:

{left_out}
* BERTScore (needs torch); FAM-Bench's JSON mode (no lm-eval counterpart).
* `fam_rank` makes the ranking call only: the four dish-level calls of cross-task consistency
  are not made, so `ctc` and `ctc_coverage` are 0 here.
"""


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


def render(entries: Sequence[TaskEntry]) -> dict[str, str]:
    """Every file of the export by name."""
    files: dict[str, str] = {}
    corpus: dict[str, None] = {}
    for entry in entries:
        config = task_config(entry)
        corpus.update((m["metric"], None) for m in config["metric_list"]
                      if isinstance(m["aggregation"], _Function))
        files[f"{entry.name}.yaml"] = _dump(config)
    for benchmark in dict.fromkeys(e.benchmark for e in entries):
        group = f"{PREFIX}_{benchmark}"
        files[f"{group}.yaml"] = _dump({"group": group, "task": [
            e.name for e in entries if e.benchmark == benchmark], "metadata": {"version": 1.0}})
    methods = list(dict.fromkeys(e.method for e in entries))
    files["utils.py"] = utils_text(methods, list(corpus))
    files["README.md"] = readme_text(entries)
    return files


REPLACEABLE = "a new or empty folder, an earlier lm-eval export, or --overwrite to replace it"


def is_lm_eval_export(out: Path) -> bool:
    """``out`` is an earlier lm-eval export (its README says so)."""
    readme = out / "README.md"
    return readme.is_file() and readme.read_text(encoding="utf-8").startswith(README_HEAD)


def _write_folder(out: Path, files: dict[str, str], overwrite: bool = False) -> list[Path]:
    """Write ``files`` into a fresh folder that then replaces ``out``."""
    with write_folder(out, overwrite, earlier=is_lm_eval_export,
                      expected=REPLACEABLE) as folder:
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
    return [out / name for name in files]


def export_lm_eval(out: Path, builds: dict[str, Path] | None = None,
                   overwrite: bool = False) -> list[Path]:
    """Write the lm-eval task folder ``out`` for the registered benchmarks' builds: those
    given in ``builds`` (benchmark name -> folder, each must be a build), the data home's for
    the others that have one. Returns the files written. ``out`` must be absent, empty or an
    earlier export (anything with ``overwrite``); it is replaced whole, and an error leaves
    it as it was."""
    out = Path(out).expanduser().resolve()
    check_target_folder(out, overwrite, earlier=is_lm_eval_export, expected=REPLACEABLE)
    given = {name: path for name, path in (builds or {}).items() if path is not None}
    entries = []
    for name in benchmark_names():
        build = given.get(name) or default_build(name)
        if name in given or (build / "manifest.json").is_file():
            entries += benchmark_entries(get_benchmark(name), build)
    if not entries:
        raise DataError(None, "no benchmark build to export", expected="a build of a "
                        "registered benchmark (`nutrireason <benchmark> build`)")
    return _write_folder(out, render(entries), overwrite)
