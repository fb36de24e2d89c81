"""The human-baseline web app (``nutrireason human serve``): one held-out item at a time, in
the benchmark's own input (the question a model is asked and the dish or dishes it sees; no
gold, no provenance), with a timer. Answers go to the run engine through the desk (see
:mod:`nutrireason.methods.human_desk`), which writes them as run records.

The desk is passed in (``item``, ``total``, ``answered``, ``finished``, ``wait(seconds)``,
``show(item_id)``, ``submit(item_id, answer)``); ``view(item)`` turns an item into what the page
shows. The timer counts from the item's first showing, kept by the desk: the page carries it as
``data-started`` (epoch ms) beside the server's clock ``data-now``, so a reload (or a browser
clock that is off) does not restart it (``static/human.js``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from nutrireason.errors import DataError
from nutrireason.review.app import add_security, form_value, templates
from nutrireason.schema import answer_kind

LETTERS = ("A", "B", "C", "D")


def create_human_app(desk: Any, participant: str, view: Callable[[dict], dict[str, Any]],
                     token: str | None = None) -> FastAPI:
    env = templates()
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    add_security(app, token)

    def page(request: Request, status: int = 200, **values: Any) -> HTMLResponse:
        html = env.get_template("human.html").render(
            csrf=request.state.csrf, participant=participant, total=desk.total,
            answered=desk.answered, **values)
        return HTMLResponse(html, status_code=status)

    def shown(item: dict[str, Any]) -> dict[str, Any]:
        """The page's values for ``item``: its view and its timer (first shown, now)."""
        started, now = desk.show(item["id"]), round(time.time() * 1000)
        return {"item_id": item["id"], "view": view(item), "started": started, "now": now,
                "elapsed": clock(now - started)}

    @app.get("/", response_class=HTMLResponse)
    async def current(request: Request) -> Any:
        await desk.wait(5)
        if desk.item is None:
            return page(request, finished=desk.finished, waiting=not desk.finished)
        return page(request, **shown(desk.item))

    @app.post("/answer")
    async def answer(request: Request) -> Any:  # on the loop: it completes the desk's future
        form = request.state.form
        item = desk.item
        try:
            if item is None:
                raise DataError(None, "no item is waiting for an answer", field="item_id")
            desk.submit(form_value(form, "item_id"), answer_of(item, form))
        except DataError as exc:
            return page(request, 400, error=str(exc), **(shown(item) if item else {}))
        return RedirectResponse("/", status_code=303)

    return app


def clock(milliseconds: int) -> str:
    """Minutes and seconds, as the timer shows them ("2:05")."""
    seconds = max(0, milliseconds) // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


def answer_of(item: dict[str, Any], form: dict[str, list[str]]) -> dict[str, Any] | str:
    """The form's answer in the item's task shape (checked again by the desk)."""
    task = item.get("task")
    kind = answer_kind(str(task))
    if kind == "yes_no":
        return form_value(form, "answer")
    if kind == "decision":
        lines = list(item.get("dish", {}).get("ingredients") or [])
        cited = [line for line in lines if line in form.get("ingredients", [])]
        return {"decision": form_value(form, "decision"), "ingredients": cited}
    if kind == "ranking":
        places = {}
        for letter in LETTERS:
            value = form_value(form, f"rank-{letter}")
            if not value.isdigit():
                raise DataError(None, f"give dish {letter} a place", field=f"rank-{letter}",
                                value=value or None, expected="1, 2, 3 or 4")
            places[letter] = int(value)
        if sorted(places.values()) != [1, 2, 3, 4]:
            raise DataError(None, "give each place (1 to 4) to one dish", field="ranking",
                            value=places)
        return {"ranking": sorted(LETTERS, key=lambda letter: places[letter])}
    raise DataError(None, "this task has no human form", field="task", value=task)
