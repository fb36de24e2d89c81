"""The human-baseline web app (``nutrireason human serve``): one held-out item at a time, in
the benchmark's own input (the question a model is asked and the dish or dishes it sees; no
gold, no provenance), with a timer. Answers go to the run engine through the desk (see
:mod:`nutrireason.methods.human`), which writes them as run records.

The desk is passed in (``item``, ``total``, ``answered``, ``finished``, ``wait(seconds)``,
``submit(item_id, answer)``); ``view(item)`` turns an item into what the page shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from nutrireason.errors import DataError
from nutrireason.review.app import _one, add_security, templates

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

    @app.get("/", response_class=HTMLResponse)
    async def current(request: Request) -> Any:
        await desk.wait(5)
        if desk.item is None:
            return page(request, finished=desk.finished, waiting=not desk.finished)
        return page(request, item_id=desk.item["id"], view=view(desk.item))

    @app.post("/answer")
    async def answer(request: Request) -> Any:  # on the loop: it completes the desk's future
        form = request.state.form
        item = desk.item
        try:
            if item is None:
                raise DataError(None, "no item is waiting for an answer", field="item_id")
            desk.submit(_one(form, "item_id"), answer_of(item, form))
        except DataError as exc:
            values = {"item_id": item["id"], "view": view(item)} if item else {}
            return page(request, 400, error=str(exc), **values)
        return RedirectResponse("/", status_code=303)

    return app


def answer_of(item: dict[str, Any], form: dict[str, list[str]]) -> dict[str, Any] | str:
    """The form's answer in the item's task shape (checked again by the desk)."""
    task = item.get("task")
    if task == "binary":
        return _one(form, "answer")
    if task == "fam_dish":
        lines = list(item.get("dish", {}).get("ingredients") or [])
        cited = [line for line in lines if line in form.get("ingredients", [])]
        return {"decision": _one(form, "decision"), "ingredients": cited}
    if task == "fam_rank":
        places = {}
        for letter in LETTERS:
            value = _one(form, f"rank-{letter}")
            if not value.isdigit():
                raise DataError(None, f"give dish {letter} a place", field=f"rank-{letter}",
                                value=value or None, expected="1, 2, 3 or 4")
            places[letter] = int(value)
        if sorted(places.values()) != [1, 2, 3, 4]:
            raise DataError(None, "give each place (1 to 4) to one dish", field="ranking",
                            value=places)
        return {"ranking": sorted(LETTERS, key=lambda letter: places[letter])}
    raise DataError(None, "this task has no human form", field="task", value=task)
