"""Every registered benchmark as an inspect_ai task (``nutrireason/<benchmark>``).

    inspect eval nutrireason/ngqa --model mockllm/model -T task=binary -T level=complex \\
        -T method=kaping -T limit=5
    inspect eval nutrireason/fam --model mockllm/model -T task=dish -T mode=cot-ki -T limit=5

Nothing here re-implements the benchmark: the samples are the items of a built benchmark
(``nutrireason ngqa build`` / ``fam build``; ``-T build=DIR`` names another build folder), the
solver runs the project's own method (:func:`nutrireason.methods.base.get_method`) with inspect's
model as its :class:`~nutrireason.methods.base.Generator` (a method that calls the model several
times, ToG or a FAM ranking, makes several calls within one sample, each kept in the sample's
messages), and the scorer turns the answer into the project's
:class:`~nutrireason.schema.Record` and scores it with
:func:`nutrireason.scoring.score.score_records`. The task's metrics are that function's group
metrics over all the sample records (corpus-level ones such as micro F1 or BLEU included), so
they equal ``nutrireason score`` on the same answers. Each sample's score value holds the
project's per-sample values (``scores.jsonl``), its metadata the record.

Differences from ``nutrireason run``: inspect does the model calls (no response cache of the
project's, inspect's retries), a failed call is an inspect sample error (not scored, as an
error record is not), and ``json_mode``, ``grammar``, ``repeat_penalty`` and ``min_p`` are not
passed to the model (inspect's ``GenerateConfig`` has no such field). With several epochs the
metrics read each sample's first epoch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    Content,
    ContentImage,
    ContentText,
    GenerateConfig,
    get_model,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from nutrireason.errors import DataError
from nutrireason.interop.builds import default_build
from nutrireason.methods.base import declared, get_method
from nutrireason.models.types import (
    ChatRequest,
    GenerationSettings,
    Message,
    ModelResponse,
    TextPart,
    Usage,
)
from nutrireason.schema import (
    BenchmarkSpec,
    MethodSpec,
    Record,
    all_meta_keys,
    benchmark_names,
    get_benchmark,
    record_key,
    spec_for_task,
)
from nutrireason.scoring.score import score_records
from nutrireason.storage import read_jsonl

STORE_KEY = "nutrireason"  # where the solver leaves the method's answer in the sample store
_ROLES = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


# --------------------------------------------------------------------------- tasks


def inspect_task(benchmark: str) -> Any:
    """The inspect task ``nutrireason/<benchmark>`` of a registered benchmark: its ``task``
    (the first by default), ``level`` (the default level, where it has levels), the answering
    ``method`` (by default the method its ``mode`` and ``input`` name where it has prompting
    modes, else the method it declares as default), ``build`` folder and ``limit``."""
    spec = get_benchmark(benchmark)

    @task(name=benchmark)
    def benchmark_inspect_task(task: str | None = None, level: str | None = None,
                               method: str | None = None, mode: str | None = None,
                               input: str | None = None, build: str | None = None,
                               limit: int | None = None) -> Task:
        level = (level or spec.default_level) if spec.levels else (level or "")
        path = item_file(spec, build, task or spec.tasks[0].option, level)
        return benchmark_task(path, method or default_method(spec, mode, input), limit)

    benchmark_inspect_task.__doc__ = f"{spec.title} as an inspect task."
    return benchmark_inspect_task


def default_method(spec: BenchmarkSpec, mode: str | None, input_mode: str | None) -> str:
    """The method a task of ``spec`` answers with when none is named: its prompting ``mode``
    with its ``input`` where the benchmark has modes, else its declared default method."""
    if spec.join_method is None:
        given = [name for name, value in (("mode", mode), ("input", input_mode)) if value]
        if given:
            raise DataError(None, f"{spec.title} has no {given[0]}s", field=given[0],
                            value=mode or input_mode)
        return (declared(spec.name, default=True) or ["prompt"])[0]
    mode = mode or next(iter(spec.modes))
    input_mode = input_mode or spec.inputs[0]
    if mode not in spec.modes:
        raise DataError(None, f"unknown {spec.title} mode {mode!r}", field="mode", value=mode,
                        expected=f"one of {', '.join(spec.modes)}")
    if input_mode not in spec.inputs:
        raise DataError(None, f"unknown {spec.title} input {input_mode!r}", field="input",
                        value=input_mode, expected=f"one of {', '.join(spec.inputs)}")
    return spec.join_method(mode, input_mode)


def registered_tasks() -> dict[str, Any]:
    """The inspect task of every registered benchmark, by benchmark name."""
    return {name: inspect_task(name) for name in benchmark_names()}


def __getattr__(name: str) -> Any:
    """``from nutrireason.interop.inspect_tasks import ngqa``: a registered benchmark's task."""
    if name in benchmark_names():
        return inspect_task(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def item_file(spec: BenchmarkSpec, build: str | Path | None, task: str, level: str = "") -> Path:
    """The items of ``task`` (and ``level``) in the build folder ``build``, by default the
    data home's build of the benchmark; an unknown task or level is a DataError naming it."""
    folder = Path(build) if build is not None else default_build(spec.name)
    return spec.file(folder, task, level)


def benchmark_task(path: Path, method: str, limit: int | None = None) -> Task:
    """The first ``limit`` items of ``path`` (all when None) answered by ``method``."""
    answerer = get_method(method)  # an unknown method fails here, before any sample runs
    items = read_jsonl(path, "benchmark items file",
                       "a benchmark's build (`nutrireason <benchmark> build`), or -T "
                       "build=DIR")
    samples = [item_sample(item) for item in items[:limit]]
    return Task(dataset=MemoryDataset(samples, name=path.stem, location=str(path)),
                solver=answer_with(answerer.name), scorer=project_scorer(),
                metadata={"benchmark_file": str(path), "method": answerer.name})


# --------------------------------------------------------------------------- dataset


def item_sample(item: dict[str, Any]) -> Sample:
    """One item as a sample: its id, a question to show, its gold answer, the item itself."""
    return Sample(id=str(item["id"]), input=display_text(item),
                  target=target_text(item.get("gold", item.get("answer"))), metadata=item)


def display_text(item: dict[str, Any]) -> str:
    """What a sample shows as its input (its task's one-line question); the method builds the
    real prompt from the item."""
    found = spec_for_task(str(item.get("task") or ""))
    if found is not None:
        return found[1].item_question(item)
    return str(item.get("question") or item.get("prompt") or item.get("id"))


def target_text(gold: Any) -> str:
    return gold if isinstance(gold, str) else json.dumps(gold, ensure_ascii=False)


# --------------------------------------------------------------------------- solver


class InspectGenerator:
    """The project's ``Generator`` over inspect's active model. Each call's messages and the
    model's reply are appended to the sample's messages; the last reply is the sample output."""

    def __init__(self, state: TaskState) -> None:
        self.state = state
        self.responses: list[str] = []

    async def generate(self, request: ChatRequest) -> ModelResponse:
        messages = [inspect_message(m) for m in request.messages]
        output = await get_model().generate(messages, config=generate_config(request.settings))
        if not self.responses:
            self.state.messages = []
        self.state.messages.extend([*messages, output.message])
        self.state.output = output
        self.responses.append(output.completion)
        usage = output.usage
        return ModelResponse(
            text=output.completion, model=output.model,
            finish_reason=FINISH_REASONS.get(output.stop_reason, output.stop_reason),
            reasoning=_reasoning(output.message),
            usage=Usage(prompt_tokens=usage.input_tokens if usage else 0,
                        completion_tokens=usage.output_tokens if usage else 0,
                        reasoning_tokens=getattr(usage, "reasoning_tokens", None)
                        if usage else None))


# inspect's stop reasons under the names the reading layer knows: cut off is "length"
FINISH_REASONS = {"max_tokens": "length", "model_length": "length"}


def _reasoning(message: Any) -> str | None:
    """The text of the reply's reasoning parts (inspect keeps a provider's reasoning apart
    from the completion), or None."""
    content = getattr(message, "content", None)
    if not isinstance(content, list):
        return None
    parts = [getattr(p, "reasoning", "") for p in content if getattr(p, "type", "") ==
             "reasoning"]
    joined = "\n\n".join(p for p in parts if p)
    return joined or None


def inspect_message(message: Message) -> ChatMessage:
    """A project chat message as inspect's (text and image parts kept)."""
    if isinstance(message.content, str):
        content: str | list[Content] = message.content
    else:
        content = [ContentText(text=p.text) if isinstance(p, TextPart)
                   else ContentImage(image=p.image_url.url, detail=p.image_url.detail or "auto")
                   for p in message.content]
    return _ROLES[message.role](content=content)


def generate_config(settings: GenerationSettings) -> GenerateConfig:
    """The method's generation settings that inspect's ``GenerateConfig`` can carry."""
    return GenerateConfig(temperature=settings.temperature, max_tokens=settings.max_tokens,
                          stop_seqs=settings.stop, seed=settings.seed, top_p=settings.top_p,
                          top_k=settings.top_k, presence_penalty=settings.presence_penalty,
                          frequency_penalty=settings.frequency_penalty)


@solver
def answer_with(method: str) -> Solver:
    """Answer the sample's item with the project's method ``method``; the answer goes to the
    sample store under :data:`STORE_KEY`."""
    answerer = get_method(method)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        generator = InspectGenerator(state)
        prediction = await answerer.answer(state.metadata, generator)
        state.store.set(STORE_KEY, {
            "method": answerer.name, "params": dict(answerer.params),
            "gold": answerer.gold(state.metadata), "parsed": prediction.parsed,
            "parse_ok": prediction.parse_ok, "retrieved": prediction.retrieved,
            "extra": prediction.extra, "responses": generator.responses})
        return state

    return solve


# --------------------------------------------------------------------------- scoring


def sample_record(state: TaskState) -> Record:
    """The project's record of an answered sample (what ``nutrireason run`` would write)."""
    item = state.metadata
    answer = state.store.get(STORE_KEY)
    found = spec_for_task(str(item.get("task", "")))
    keys = found[0].meta_keys if found else all_meta_keys()
    method, model = answer["method"], str(state.model)
    return Record(
        key=record_key(str(item["id"]), method, model), item_id=str(item["id"]), method=method,
        model=model, status="ok", parsed=answer["parsed"], parse_ok=answer["parse_ok"],
        gold=answer["gold"], retrieved=answer["retrieved"], extra=answer["extra"],
        responses=answer["responses"], n_calls=len(answer["responses"]),
        meta={k: item[k] for k in keys if k in item},
        method_spec={"name": MethodSpec.parse(method).name, "params": answer["params"]})


@metric(name="nutrireason")
def project_metrics() -> Metric:
    """The group metrics of ``nutrireason score`` over the samples' records."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        records = [Record.model_validate(s.score.metadata["record"]) for s in scores
                   if s.score.metadata and "record" in s.score.metadata]
        return group_metrics(records)

    return compute


def group_metrics(records: list[Record]) -> dict[str, float]:
    """Each metric's value (retrieval ones as ``retrieval_<name>``) of the records' scoring
    group; with several groups (levels) the names start with ``<level>/``."""
    groups = score_records(records, bootstrap=0)["groups"]
    out: dict[str, float] = {}
    for group in groups:
        prefix = f"{group['level']}/" if len(groups) > 1 else ""
        found = dict(group["metrics"])
        found |= {f"retrieval_{k}": v for k, v in (group["retrieval"] or {}).items()}
        out |= {prefix + name: m["value"] for name, m in found.items()}
    return out


@scorer(metrics=[project_metrics()])
def project_scorer() -> Scorer:
    """Scores a sample as ``nutrireason score`` does: its value is the per-sample metric values,
    its metadata the record and whether the answer is right."""

    async def score(state: TaskState, target: Target) -> Score:
        record = sample_record(state)
        sample = score_records([record], bootstrap=0).samples[0]
        return Score(value=dict(sample.values), answer=answer_text(record.parsed),
                     explanation=state.output.completion if state.output else None,
                     metadata={"record": record.model_dump(mode="json"),
                               "correct": sample.correct, "parse_ok": record.parse_ok})

    return score


def answer_text(parsed: Any) -> str:
    if parsed is None or isinstance(parsed, str):
        return parsed or ""
    return json.dumps(parsed, ensure_ascii=False)
