"""The methods of recipe nutrient estimation: plain (the recipe and the question) and CoT
(the same, asked to reason ingredient by ingredient first). One call each; the answer is read
as a number (:mod:`nutrireason.methods.quantity`)."""

from __future__ import annotations

from typing import Any

from nutrireason.methods.base import Generator, Method, MethodInfo, Prediction, register_method
from nutrireason.methods.quantity import read_quantity
from nutrireason.methods.reading import read_response
from nutrireason.models.types import ChatRequest, Message
from nutrireason.schema import spec_for_task

SYSTEM = "You are a registered dietitian who estimates the nutrition of recipes."
STEPS = ("Think step by step: estimate what each ingredient line adds, add them up, then "
         "divide by the servings.")


def prompt(item: dict[str, Any], steps: bool) -> str:
    """The user turn: the recipe, its servings, the question and the answer's form."""
    found = spec_for_task(str(item.get("task")))
    task = found[1] if found is not None else None
    lines = "\n".join(f"- {line}" for line in item.get("lines") or [])
    ask = task.item_question(item) if task is not None else str(item.get("question") or "")
    form = task.answer_format if task is not None else 'JSON {"value": <number>}'
    return (f"Recipe: {item.get('title')}\nServings: {item.get('servings'):g}\n"
            f"Ingredients:\n{lines}\n\n{ask}\n" + (f"{STEPS}\n" if steps else "") +
            f"End your answer with {form}.")


class NutrientPlain(Method):
    """The recipe and the question, answered in one call."""

    name = "nutrients-plain"
    info = MethodInfo(benchmark="nutrients", demo=True, exported=True, default=True)
    steps = False

    def messages(self, item: dict[str, Any]) -> list[Message]:
        return [Message(role="system", content=SYSTEM),
                Message(role="user", content=prompt(item, self.steps))]

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        response = await backend.generate(ChatRequest(messages=self.messages(item),
                                                      settings=self.settings))
        reading = read_response(response, read_quantity)
        return Prediction(reading.value, reading.ok, extra={"reading": reading.audit()})


class NutrientCot(NutrientPlain):
    """The same, asked to reason ingredient by ingredient before the answer."""

    name = "nutrients-cot"
    info = MethodInfo(benchmark="nutrients", demo=True, exported=True)
    steps = True


register_method("nutrients-plain")(NutrientPlain)
register_method("nutrients-cot")(NutrientCot)
