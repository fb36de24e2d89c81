"""The ``human`` method: a person answers each item in a browser (``nutrireason human serve``).

The run engine calls :meth:`HumanMethod.answer` for one item at a time; the method puts the
item on the :class:`Desk` and waits until the participant's page hands back an answer, which
becomes the record's parsed answer in the same shape a model's parsed answer has (so ``score``
and ``report`` treat people and models alike).

Time on an item runs from the moment its page is first shown (:meth:`Desk.show`, kept per item
id on the server, so a reload does not restart it) to the answer: the record's
``extra.seconds_on_item``. In the dish-level task the person ticks recipe lines; the parsed
answer cites the canonical ingredient names of those lines (:func:`cited_names`), the names the
gold rationale uses, and ``extra.ticked_lines`` keeps the lines themselves.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from nutrireason.errors import DataError
from nutrireason.methods.base import Generator, Method, Prediction, register_method
from nutrireason.methods.reading import found
from nutrireason.models.types import GenerationSettings
from nutrireason.schema import answer_kind

LETTERS = ("A", "B", "C", "D")
DECISIONS = ("recommend", "not_recommend")
YES_NO = ("Yes", "No")


@dataclass
class Desk:
    """Where the engine puts the item being answered and the page hands the answer back."""

    total: int = 0
    answered: int = 0
    finished: bool = False
    item: dict[str, Any] | None = None
    shown: dict[str, tuple[int, float]] = field(default_factory=dict)  # id: (epoch ms, monotonic)
    _asked_at: float = 0.0
    _answer: asyncio.Future | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def ask(self, item: dict[str, Any]) -> dict[str, Any] | str:
        """Put ``item`` on the desk (its page times it from :meth:`show`) and wait for its
        answer."""
        self._answer = asyncio.get_running_loop().create_future()
        self.item, self._asked_at = item, time.monotonic()
        self._notify()
        try:
            return await self._answer
        finally:
            self.item, self._answer = None, None
            self.answered += 1
            self._notify()

    def submit(self, item_id: str, answer: dict[str, Any] | str) -> None:
        """The page's answer to the item on the desk (an answer to another item is refused:
        a stale page after a reload)."""
        if self.item is None or self._answer is None or self._answer.done():
            raise DataError(None, "no item is waiting for an answer", field="item_id",
                            value=item_id)
        if self.item.get("id") != item_id:
            raise DataError(None, "the answer is for another item (reload the page)",
                            field="item_id", value=item_id, expected=str(self.item.get("id")))
        self._answer.set_result(check_answer(self.item, answer))

    def show(self, item_id: str) -> int:
        """When the item was first shown (epoch milliseconds); its first showing is now."""
        if item_id not in self.shown:
            self.shown[item_id] = (round(time.time() * 1000), time.monotonic())
        return self.shown[item_id][0]

    def seconds_on(self, item_id: str) -> float:
        """Seconds since the item was first shown (since it was asked, if it never was)."""
        start = self.shown[item_id][1] if item_id in self.shown else self._asked_at
        return time.monotonic() - start

    def finish(self) -> None:
        self.finished = True
        self._notify()

    async def wait(self, seconds: float) -> None:
        """Until an item is on the desk, the run is over, or ``seconds`` pass."""
        if self.item is not None or self.finished:
            return
        self._changed.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._changed.wait(), seconds)

    def _notify(self) -> None:
        self._changed.set()


def task_of(item: dict[str, Any]) -> str:
    """The item's task (its answer shape decides the form and the check)."""
    return str(item.get("task", ""))


def check_answer(item: dict[str, Any], answer: dict[str, Any] | str) -> dict[str, Any] | str:
    """The answer in the shape the item's scorer reads, or a DataError naming the field."""
    task = task_of(item)
    kind = answer_kind(task)
    if kind == "yes_no":
        if answer not in YES_NO:
            raise DataError(None, "answer Yes or No", field="answer", value=answer)
        return answer
    if not isinstance(answer, dict):
        raise DataError(None, "a structured answer is required", field="answer", value=answer)
    if kind == "decision":
        if answer.get("decision") not in DECISIONS:
            raise DataError(None, "choose recommend or not recommend", field="decision",
                            value=answer.get("decision"))
        return {"decision": answer["decision"],
                "ingredients": [str(i) for i in answer.get("ingredients") or []]}
    if kind == "ranking":
        ranking = list(answer.get("ranking") or [])
        if sorted(ranking) != list(LETTERS):
            raise DataError(None, "rank each of the four dishes once", field="ranking",
                            value=ranking, expected="A, B, C, D in some order")
        return {"ranking": ranking}
    raise DataError(None, "this task has no human form", field="task", value=task)


class HumanMethod(Method):
    """Answers come from the participant at the :class:`Desk`; no model is called."""

    name = "human"

    def __init__(self, desk: Desk, settings: GenerationSettings | None = None) -> None:
        super().__init__(settings)
        self.desk = desk

    async def answer(self, item: dict[str, Any], backend: Generator) -> Prediction:
        answer = await self.desk.ask(item)
        seconds = self.desk.seconds_on(str(item.get("id")))
        parsed, extra = answer, {}
        if answer_kind(task_of(item)) == "decision" and isinstance(answer, dict):
            lines = list(answer["ingredients"])
            parsed = {**answer, "ingredients": cited_names(item, lines)}
            extra["ticked_lines"] = lines
        # A person answers on a form: nothing to set apart or cut off, read by the form itself
        # (recorded as every answer's reading is, so score counts its rule beside the models').
        reading = found(parsed, "form")
        return Prediction(parsed, True, extra={
            "seconds_on_item": round(seconds, 3), **extra,
            "reading": {**reading.audit(), "form": "human"}})


def cited_names(item: dict[str, Any], lines: list[str]) -> list[str]:
    """The ingredient names the ticked recipe ``lines`` stand for, as the gold rationale names
    them: each line's canonical name from the item's ``gold["ingredients"]`` (its food phrase
    when the line matched no canonical ingredient, the line itself when the item has no such
    row), distinct, in ticked order."""
    rows = (item.get("gold") or {}).get("ingredients") or []
    by_line: dict[str, dict[str, Any]] = {}
    for row in rows:
        if isinstance(row, dict):
            by_line.setdefault(str(row.get("line")), row)
    names: dict[str, None] = {}
    for line in lines:
        row = by_line.get(line, {})
        names[str(row.get("canonical") or row.get("food") or line)] = None
    return list(names)


def register_desk(desk: Desk) -> None:
    """Make ``--method human`` answer at ``desk`` (``human serve`` does this)."""
    register_method(HumanMethod.name, lambda settings=None: HumanMethod(desk, settings))
