"""A second model that reads the answers the rules cannot read (``nutrireason run --extractor``).

Off by default. For a sample whose final answer no rule could read (reason ``no_answer``; never
for an answer cut off, a refusal or a hedge), the extractor model is shown the question and
that final answer only (never the reasoning) and asked to write the answer in the task's
shortest form, or ``NONE``; its reply is read by the same task rules. The record keeps both
readings: ``parsed`` / ``parse_ok`` stay the rules' reading, ``extra["extractor"]`` holds the
extractor's, and ``score`` reports the metrics both ways (``with_extractor`` in metrics.json).
This is the checker model of OpenAI's simple-evals, kept apart from the main score.
"""

from __future__ import annotations

from typing import Any

from nutrireason.methods.answers import reader_for_task
from nutrireason.methods.base import Generator
from nutrireason.methods.reading import Reading, final_text, read_response
from nutrireason.models.types import ChatRequest, GenerationSettings, Message
from nutrireason.schema import answer_kind, task_spec

SYSTEM = ("You extract answers. You are given a question and the final answer another model "
          "wrote. Write that model's answer in the requested form, adding nothing of your "
          "own. If the answer declines, does not commit or gives no answer, reply NONE.")
SETTINGS = GenerationSettings(temperature=0.0, max_tokens=256)


def extractable(task: str) -> bool:
    """A registered task whose spec says what a well-formed answer looks like."""
    spec = task_spec(task)
    return spec is not None and bool(spec.answer_format)


def extraction_request(task: str, item: dict[str, Any], final: str) -> ChatRequest:
    """The extractor's one request for ``final`` (a final answer, reasoning left out)."""
    spec = task_spec(task)
    if spec is None or not spec.answer_format:
        raise ValueError(f"task {task!r} declares no answer format to extract")
    prompt = (f"Question:\n{spec.item_question(item)}\n\nThe model's final answer:\n<<<\n"
              f"{final}\n>>>\n\nWrite the model's answer as {spec.answer_format}, or NONE.")
    return ChatRequest(messages=[Message(role="system", content=SYSTEM),
                                 Message(role="user", content=prompt)], settings=SETTINGS)


async def extract(task: str, item: dict[str, Any], final: str, backend: Generator) -> Reading:
    """The extractor's reading of ``final`` (one call)."""
    response = await backend.generate(extraction_request(task, item, final))
    if final_text(response).strip().strip(".").upper() == "NONE":
        return Reading(None, False, "none", "no_answer")
    reading = read_response(response, reader_for_task(task, item))
    if reading.ok and answer_kind(task) == "decision":
        # the extractor writes the decision only: the model's ingredients are not in it
        return Reading({"decision": reading.value["decision"], "ingredients": []}, True,
                       reading.rule, None, reading.form)
    return reading
