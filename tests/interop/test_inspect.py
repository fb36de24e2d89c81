"""The inspect_ai tasks: run with inspect on a mock model, their scores equal what
``nutrireason run`` + ``nutrireason score`` give for the same model answers.

The mock model answers from an answer book: each distinct prompt gets the next answer of a
fixed cycle the first time inspect sends it; the project's run engine then asks a scripted
backend that reads the same book (and fails on a prompt inspect never sent). So both sides see
the same answers to the same prompts, whatever order inspect ran the samples in.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from tests.interop.conftest import need

SCORER = "project_scorer"


@pytest.fixture(autouse=True)
def _inspect_installed() -> None:
    need("inspect_ai")


class AnswerBook:
    """Model answers by prompt: a new prompt gets the next answer of the cycle, a prompt seen
    before its first answer again; once ``closed``, a new prompt is a test failure."""

    def __init__(self, answers: Iterable[str]) -> None:
        self.cycle = itertools.cycle(answers)
        self.by_prompt: dict[str, str] = {}
        self.closed = False

    def answer(self, prompt: str) -> str:
        if prompt not in self.by_prompt:
            assert not self.closed, f"the project run sent a prompt inspect did not: {prompt[:200]}"
            self.by_prompt[prompt] = next(self.cycle)
        return self.by_prompt[prompt]


def prompt_key(messages: Iterable[tuple[str, str]]) -> str:
    return "\n".join(f"{role}: {text}" for role, text in messages)


def run_inspect(task: Any, book: AnswerBook, log_dir: Path) -> Any:
    """One inspect eval of ``task`` (5 samples) on a mock model answering from ``book``."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def reply(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        output = ModelOutput.from_content("mockllm", book.answer(
            prompt_key((m.role, m.text) for m in messages)))
        output.usage = ModelUsage(input_tokens=1, output_tokens=1)  # no tiktoken download
        return output

    model = get_model("mockllm/model", custom_outputs=reply, memoize=False)
    [log] = inspect_eval(task, model=model, limit=5, log_dir=str(log_dir), display="none")
    assert log.status == "success", log.error
    book.closed = True
    return log


def run_project(items: Path, method: str, book: AnswerBook, out: Path) -> Any:
    """``nutrireason run`` (5 items, a scripted model reading ``book``) then ``score``."""
    from nutrireason.models.scripted import register
    from nutrireason.runs.engine import RunConfig, run
    from nutrireason.scoring.score import score_run

    name = f"inspect-book-{out.parent.name}"
    register(name, lambda request: book.answer(
        prompt_key((m.role, m.text()) for m in request.messages)))
    summary = run(RunConfig(benchmark=items, out=out, methods=[method],
                            models=[f"scripted/{name}"], limit=5, progress=False, cache=False))
    assert summary.total_ok == 5
    return score_run(out, bootstrap=0)


def project_metrics(scores: Any) -> dict[str, float]:
    [group] = scores["groups"]
    assert group["n"] == 5
    found = {name: m["value"] for name, m in group["metrics"].items()}
    found |= {f"retrieval_{k}": m["value"] for k, m in (group["retrieval"] or {}).items()}
    return found


def inspect_metrics(log: Any) -> dict[str, float]:
    [score] = [s for s in log.results.scores if s.name == SCORER]
    return {name: m.value for name, m in score.metrics.items()}


def check_same_scores(log: Any, scores: Any) -> dict[str, float]:
    """inspect's metrics and per-sample values equal the project's; returns the metrics."""
    assert Path(log.location).is_file()
    expected = project_metrics(scores)
    assert inspect_metrics(log) == pytest.approx(expected, abs=1e-12)
    assert sorted(inspect_metrics(log)) == sorted(expected)
    per_item = {s.item_id: s for s in scores.samples}
    assert sorted(str(s.id) for s in log.samples) == sorted(per_item)
    for sample in log.samples:
        score = sample.scores[SCORER]
        assert score.value == pytest.approx(per_item[str(sample.id)].values, abs=1e-12)
        assert score.metadata["correct"] == per_item[str(sample.id)].correct
    return expected


def test_ngqa_binary_kaping_scores_match_nutrireason_score(ngqa_build: Path,
                                                           tmp_path: Path) -> None:
    from nutrireason.interop.inspect_tasks import ngqa

    book = AnswerBook(["Yes", "No", "I cannot say.", "No", "Answer: Yes"])
    log = run_inspect(ngqa(task="binary", level="complex", method="kaping",
                           build=str(ngqa_build)), book, tmp_path / "logs")
    scores = run_project(ngqa_build / "complex" / "binary.jsonl", "kaping", book,
                         tmp_path / "run")
    metrics = check_same_scores(log, scores)
    assert metrics["unparseable_rate"] == pytest.approx(0.2)  # the answers did vary
    assert "retrieval_f1" in metrics
    assert log.samples[0].messages[0].role == "system"  # the method's prompt, not the question


def test_ngqa_multilabel_scores_match_nutrireason_score(ngqa_build: Path,
                                                        tmp_path: Path) -> None:
    from nutrireason.interop.inspect_tasks import ngqa

    book = AnswerBook(["Answer: low_carb, high_sodium", "Answer: high_sugar", "no idea",
                       "Answer: low_carb", "Answer: low_sodium, high_sugar, low_protein"])
    log = run_inspect(ngqa(task="multilabel", level="standard", method="plain",
                           build=str(ngqa_build)), book, tmp_path / "logs")
    scores = run_project(ngqa_build / "standard" / "multi_label.jsonl", "plain", book,
                         tmp_path / "run")
    metrics = check_same_scores(log, scores)
    assert metrics["unparseable_rate"] == pytest.approx(0.2)


def test_fam_dish_cot_ki_scores_match_nutrireason_score(fam_build: Path, tmp_path: Path) -> None:
    from nutrireason.interop.inspect_tasks import fam

    book = AnswerBook([
        '{"decision": "not_recommend", "rationale_ingredients": ["cheese", "salt"]}',
        '{"decision": "recommend", "rationale_ingredients": ["lentils"]}',
        "I am not sure.",
        '{"decision": "not_recommend", "rationale_ingredients": ["sugar", "butter"]}',
        '{"decision": "recommend", "rationale_ingredients": []}'])
    log = run_inspect(fam(task="dish", mode="cot-ki", build=str(fam_build)), book,
                      tmp_path / "logs")
    scores = run_project(fam_build / "dish.jsonl", "fam-cot-ki", book, tmp_path / "run")
    metrics = check_same_scores(log, scores)
    assert metrics["unparseable_rate"] == pytest.approx(0.2)
    assert "rationale_micro_f1" in metrics  # a corpus-level metric, not a mean of samples


def test_reasoning_outputs_score_as_nutrireason_score(ngqa_build: Path, fam_build: Path,
                                                     tmp_path: Path) -> None:
    """Drafts in the thinking, harmony channels and an answer cut off inside the thinking:
    inspect reads them as ``nutrireason score`` does (the final answer only; cut off is
    unparseable)."""
    from nutrireason.interop.inspect_tasks import fam, ngqa

    book = AnswerBook(["<think>I have to answer Yes or No. Yes?</think>\n\nNo",
                       "<think>The user is diabetic, so it might be no. Let me double-check",
                       "<|channel|>analysis<|message|>No?<|end|><|start|>assistant"
                       "<|channel|>final<|message|>Yes<|return|>",
                       "Sodium is high.\n</think>\n\nNo", "<think></think>**Yes**"])
    log = run_inspect(ngqa(task="binary", level="sparse", method="cot-zero",
                           build=str(ngqa_build)), book, tmp_path / "logs")
    scores = run_project(ngqa_build / "sparse" / "binary.jsonl", "cot-zero", book,
                         tmp_path / "run")
    assert check_same_scores(log, scores)["unparseable_rate"] == pytest.approx(0.2)

    book = AnswerBook(['<think>{"decision": "recommend"}</think>\n{"decision": '
                       '"not_recommend", "rationale_ingredients": ["butter"]}',
                       "<think>Hmm</think>\nI would recommend it in moderation.",
                       '<think>{"decision": "not_recommend"',
                       '{"decision": "recommend"}\nOn reflection: {"decision": "not_recommend"}',
                       "Not suitable: too much salt."])
    log = run_inspect(fam(task="dish", mode="baseline", build=str(fam_build)), book,
                      tmp_path / "fam-logs")
    scores = run_project(fam_build / "dish.jsonl", "fam-baseline", book, tmp_path / "fam-run")
    assert check_same_scores(log, scores)["unparseable_rate"] == pytest.approx(0.2)


def test_bad_parameters_are_clear_errors(ngqa_build: Path, tmp_path: Path) -> None:
    from nutrireason.errors import DataError, NutriReasonError
    from nutrireason.interop.inspect_tasks import fam, ngqa

    with pytest.raises(DataError, match=r"unknown ngqa level 'hardest'.*sparse"):
        ngqa(level="hardest", build=str(ngqa_build))
    with pytest.raises(DataError, match="unknown ngqa task 'essay'"):
        ngqa(task="essay", build=str(ngqa_build))
    with pytest.raises(NutriReasonError, match="unknown method 'magic'"):
        ngqa(method="magic", build=str(ngqa_build))
    with pytest.raises(DataError, match="unknown FAM-Bench mode 'telepathy'"):
        fam(mode="telepathy")
    missing = tmp_path / "no-build"
    with pytest.raises(DataError, match=f"{missing}.*not found"):
        ngqa(build=str(missing))
