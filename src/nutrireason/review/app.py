"""The review web app (``nutrireason review serve``): FastAPI, Jinja2 templates and one small
script, all served from the package (no CDN, no external asset).

Security: it binds 127.0.0.1 unless told otherwise, and a non-loopback host needs a token,
checked on every request (``?token=`` once, then a cookie); every form carries a CSRF token
that must match the browser's cookie; Jinja2 escapes everything it renders; only URL-encoded
forms are read (no uploads). Each decision is committed to SQLite before the reply.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from jinja2 import Environment, FileSystemLoader, select_autoescape

from nutrireason.errors import DataError
from nutrireason.review.accounts import ADJUDICATOR, check_name, load_reviewers
from nutrireason.review.items import BENCHMARK, ReviewItem
from nutrireason.review.stats import category
from nutrireason.review.store import ReviewStore, latest_of
from nutrireason.reviewfile import EXCLUSION_REASONS, LABELS

HERE = Path(__file__).parent
STATIC = {"review.js": "text/javascript", "human.js": "text/javascript",
          "review.css": "text/css"}
FILTERS = ("condition", "label", "status")
STATUSES = ("unreviewed", "all", "disagreements")
CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " \
      "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"


@dataclass
class ReviewState:
    """What the app serves: the entries in a fixed order, the store, the optional token and
    the reviewer accounts (name -> role; default: ``reviewers.yaml`` beside the database)."""

    items: list[ReviewItem]
    store: ReviewStore
    token: str | None = None
    benchmark: str = BENCHMARK
    reviewers: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if self.reviewers is None:
            self.reviewers = load_reviewers(self.store.path.parent)
        self.conditions = sorted({i.condition for i in self.items})
        self.labels = LABELS[self.benchmark]
        self.reasons = EXCLUSION_REASONS[self.benchmark]
        self._totals = Counter(i.condition for i in self.items)
        self._condition_of = {i.key: i.condition for i in self.items}

    def role(self, reviewer: str) -> str:
        return (self.reviewers or {}).get(reviewer, "")

    def decided(self, reviewer: str) -> dict[str, Any]:
        """item key -> this reviewer's last decision (one read of the store)."""
        return {item: d for (item, who), d in self.store.latest(self.benchmark).items()
                if who == reviewer}

    def on_item(self, key: str) -> list[Any]:
        """Every reviewer's last decision on one entry, oldest first (read for it alone)."""
        latest = latest_of(self.store.decisions(self.benchmark, item=key))
        return sorted(latest.values(), key=lambda d: (d.at, d.id))

    def disagreements(self) -> set[str]:
        """Entries the reviewers decided differently that no adjudicator has settled."""
        seen: dict[str, set[str]] = {}
        settled = set()
        for (item, _), decision in self.store.latest(self.benchmark).items():
            if decision.role == ADJUDICATOR:
                settled.add(item)
            else:
                seen.setdefault(item, set()).add(category(decision))
        return {item for item, found in seen.items() if len(found) > 1} - settled

    def matching(self, decided: dict[str, Any], filters: dict[str, str]) -> list[int]:
        """Indexes of the entries the filters keep, in order (``decided``: the reviewer's)."""
        status = filters.get("status") or "unreviewed"
        disputed = self.disagreements() if status == "disagreements" else set()
        return [index for index, item in enumerate(self.items)
                if (not filters.get("condition") or item.condition == filters["condition"])
                and (not filters.get("label") or item.label == filters["label"])
                and not (status == "unreviewed" and item.key in decided)
                and not (status == "disagreements" and item.key not in disputed)]

    def progress(self, decided: dict[str, Any]) -> list[dict[str, Any]]:
        done = Counter(self._condition_of[k] for k in decided if k in self._condition_of)
        return [{"condition": c, "done": done[c], "left": self._totals[c] - done[c]}
                for c in self.conditions]


def following(found: list[int], after: int | None) -> int | None:
    """The first index in ``found`` after ``after`` (wrapping to the first), or None."""
    if not found:
        return None
    if after is None:
        return found[0]
    return next((index for index in found if index > after), found[0])


def templates() -> Environment:
    """The package's Jinja2 templates, escaping everything they render."""
    return Environment(loader=FileSystemLoader(HERE / "templates"),
                       autoescape=select_autoescape(["html", "j2"]), keep_trailing_newline=True)


SESSION_COOKIE = "nr_session"
REVIEWER_COOKIE = "nr_reviewer"


def reviewer_name(value: str | None) -> str:
    """A reviewer's name as stored (:func:`~.accounts.check_name`); ""
    (not signed in) for anything else, wherever it is read."""
    try:
        return check_name(value or "")
    except DataError:
        return ""


def _same_origin(request: Request) -> bool:
    """An ``Origin`` (or, without one, a ``Referer``) header names this very server: scheme,
    host and port. A request with neither (not from a browser page) passes."""
    here = f"{request.url.scheme}://{request.headers.get('host', '')}"
    origin = request.headers.get("origin")
    if origin is not None:
        return origin == here
    referer = request.headers.get("referer")
    return referer is None or referer == here or referer.startswith(here + "/")


def add_security(app: FastAPI, token: str | None) -> None:
    """Token (when set) on every request; on every POST a same-origin URL-encoded form (no
    uploads) whose CSRF field is the server's signature of the browser's session (parsed into
    ``request.state.form``); a strict CSP. The session cookie is HttpOnly and the CSRF value
    lives only in the page, so a page served from another port of the same host (cookies are
    shared across ports) can read neither; an ``Origin`` from another port is refused."""
    secret = secrets.token_bytes(32)

    def csrf_for(session: str) -> str:
        return hmac.new(secret, session.encode("utf-8"), "sha256").hexdigest()

    @app.middleware("http")
    async def guard(request: Request, call_next: Any) -> Any:
        if token is not None:
            given = request.query_params.get("token") or request.cookies.get("nr_token") or ""
            if not hmac.compare_digest(given, token):
                return Response("a valid token is required", status_code=403,
                                media_type="text/plain")
        if request.method == "POST":
            if not _same_origin(request):
                return Response("cross-origin request refused", status_code=403,
                                media_type="text/plain")
            kind = request.headers.get("content-type", "").split(";")[0].strip()
            if kind != "application/x-www-form-urlencoded":
                return Response("only URL-encoded forms are accepted", status_code=415,
                                media_type="text/plain")
            form = parse_qs((await request.body()).decode("utf-8"), keep_blank_values=True)
            sent, session = form_value(form, "csrf"), request.cookies.get(SESSION_COOKIE) or ""
            if not session or not hmac.compare_digest(sent, csrf_for(session)):
                return Response("CSRF check failed: reload the page", status_code=403,
                                media_type="text/plain")
            request.state.form = form
        response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        # same-origin: the browser names this page's origin on its own form posts (with
        # no-referrer it sends "Origin: null", which cannot be told from a forged post)
        response.headers["Referrer-Policy"] = "same-origin"
        if token is not None and request.query_params.get("token"):
            response.set_cookie("nr_token", token, httponly=True, samesite="strict")
        if request.cookies.get(SESSION_COOKIE) != request.state.session:
            response.set_cookie(SESSION_COOKIE, request.state.session, httponly=True,
                                samesite="strict")
        return response

    @app.middleware("http")
    async def csrf_value(request: Request, call_next: Any) -> Any:
        session = request.cookies.get(SESSION_COOKIE) or ""
        if not re.fullmatch(r"[A-Za-z0-9_-]{32}", session):
            session = secrets.token_urlsafe(24)
        request.state.session = session
        request.state.csrf = csrf_for(session)
        return await call_next(request)

    @app.get("/static/{name}")
    def static(name: str) -> Any:
        if name not in STATIC:  # a fixed list: no path from the request reaches the disk
            return Response("not found", status_code=404, media_type="text/plain")
        return Response((HERE / "static" / name).read_text(encoding="utf-8"),
                        media_type=STATIC[name])


def create_app(state: ReviewState) -> FastAPI:
    """The FastAPI application over ``state`` (fastapi is the ``review`` extra)."""
    env = templates()
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    add_security(app, state.token)

    def page(request: Request, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        html = env.get_template(name).render(csrf=request.state.csrf, **values)
        return HTMLResponse(html, status_code=status)

    def reviewer_of(request: Request) -> str:
        name = reviewer_name(request.cookies.get(REVIEWER_COOKIE))
        return name if state.role(name) else ""

    def sign_in(request: Request, status: int = 200, error: str | None = None) -> HTMLResponse:
        return page(request, "name.html", status, reviewers=state.reviewers, error=error)

    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> Any:
        if not reviewer_of(request):
            return sign_in(request)
        return RedirectResponse("/next", status_code=303)

    @app.post("/reviewer")
    def set_reviewer(request: Request) -> Any:
        name = reviewer_name(form_value(request.state.form, "name"))
        if not state.role(name):
            return sign_in(request, 400, "Choose your name from the reviewer list.")
        response = RedirectResponse("/next", status_code=303)
        response.set_cookie(REVIEWER_COOKIE, name, httponly=True, samesite="strict")
        return response

    def screen(request: Request, name: str, reviewer: str, decided: dict[str, Any],
               filters: dict[str, str], status: int = 200, **values: Any) -> HTMLResponse:
        """A page with the filters and the reviewer's progress above it."""
        return page(request, name, status, reviewer=reviewer, role=state.role(reviewer),
                    filters=filters, query=_query(filters), progress=state.progress(decided),
                    done=len(decided), total=len(state.items), conditions=state.conditions,
                    labels=state.labels, statuses=STATUSES, reasons=state.reasons, **values)

    def item_screen(request: Request, index: int, reviewer: str, decided: dict[str, Any],
                    filters: dict[str, str], status: int = 200, **values: Any) -> HTMLResponse:
        item = state.items[index]
        decision = decided.get(item.key)
        shown = state.role(reviewer) == ADJUDICATOR or filters.get("status") == "disagreements"
        picker, unnamed = _picker(item)
        return screen(request, "item.html", reviewer, decided, filters, status, item=item,
                      index=index, options=_options(item), decision=decision, picker=picker,
                      unnamed=unnamed, skip=_query(filters, after=index),
                      ticked=_ticked(item, decision), others=state.on_item(item.key)
                      if shown else [], other=_other(item.label, state.labels),
                      left=len(state.matching(decided, filters)), **values)

    @app.get("/next")
    def next_item(request: Request) -> Any:
        reviewer = reviewer_of(request)
        if not reviewer:
            return RedirectResponse("/", status_code=303)
        filters, decided = _filters(request.query_params, state.labels), state.decided(reviewer)
        after = form_value(request.query_params, "after")
        index = following(state.matching(decided, filters),
                          int(after) if after.isdigit() else None)
        if index is None:
            return screen(request, "done.html", reviewer, decided, filters)
        return RedirectResponse(f"/item/{index}?{_query(filters)}", status_code=303)

    @app.get("/item/{index}", response_class=HTMLResponse)
    def show_item(request: Request, index: int) -> Any:
        reviewer = reviewer_of(request)
        if not reviewer:
            return RedirectResponse("/", status_code=303)
        filters, decided = _filters(request.query_params, state.labels), state.decided(reviewer)
        if not 0 <= index < len(state.items):
            return screen(request, "done.html", reviewer, decided, {}, 404, missing=index)
        return item_screen(request, index, reviewer, decided, filters)

    @app.post("/item/{index}")
    def decide(request: Request, index: int) -> Any:
        reviewer = reviewer_of(request)
        if not reviewer or not 0 <= index < len(state.items):
            return RedirectResponse("/", status_code=303)
        item, form = state.items[index], request.state.form
        action = form_value(form, "action")
        chosen = [i for i in _options(item) if i in form.get("ingredients", [])]
        after = {"label": None if action == "exclude" else
                 _other(item.label, state.labels) if action == "correct" else item.label,
                 "ingredients": chosen,
                 "exclusion": (form_value(form, "exclusion") or None)
                 if action == "exclude" else None,
                 "note": form_value(form, "note")[:2000]}
        filters = _filters(form, state.labels)
        try:
            state.store.save(state.benchmark, item.key, reviewer, action, item.proposed,
                             after, state.role(reviewer))
        except DataError as exc:
            return item_screen(request, index, reviewer, state.decided(reviewer), filters, 400,
                               error=exc.problem)
        return RedirectResponse(f"/next?{_query(filters, after=index)}", status_code=303)

    @app.post("/undo")
    def undo(request: Request) -> Any:
        """Undo the reviewer's last decision and show its entry again."""
        reviewer = reviewer_of(request)
        if not reviewer:
            return RedirectResponse("/", status_code=303)
        filters = _filters(request.state.form, state.labels)
        undone = state.store.undo_last(state.benchmark, reviewer)
        where = next((i for i, item in enumerate(state.items)
                      if undone is not None and item.key == undone.item), None)
        if where is None:
            return RedirectResponse(f"/next?{_query(filters)}", status_code=303)
        return RedirectResponse(f"/item/{where}?{_query(filters)}", status_code=303)

    return app


def form_value(form: Any, key: str) -> str:
    values = form.get(key) if hasattr(form, "get") else None
    if isinstance(values, list):
        return values[0] if values else ""
    return values or ""


def _filters(source: Any, labels: tuple[str, ...]) -> dict[str, str]:
    found = {key: form_value(source, key) for key in FILTERS}
    if found["status"] not in STATUSES:
        found["status"] = "unreviewed"
    if found["label"] not in labels:
        found["label"] = ""
    return found


def _other(label: str, labels: tuple[str, ...]) -> str:
    """The label a correction gives (the benchmarks' labels are binary)."""
    return labels[1] if label == labels[0] else labels[0]


def _query(filters: dict[str, str], after: int | None = None) -> str:
    values = {k: v for k, v in filters.items() if v}
    return urlencode(values | ({"after": after} if after is not None else {}))


def _ticked(item: ReviewItem, decision: Any) -> list[str]:
    """The ingredients ticked on the page: the reviewer's saved ones on a revisit, else the
    rules' proposal."""
    if decision is None:
        return list(item.ingredients)
    return list(decision.after.get("ingredients") or [])


def _picker(item: ReviewItem) -> tuple[list[tuple[str, list[str]]], list[str]]:
    """([(ingredient name, the recipe lines it names)] in :func:`_options` order, the lines
    that name no ingredient): the rationale picker shows each name beside its lines."""
    lines: dict[str, list[str]] = {}
    unnamed = []
    for line, food in item.line_foods:
        if food:
            lines.setdefault(food, []).append(line)
        else:
            unnamed.append(line)
    return [(name, lines.get(name, [])) for name in _options(item)], \
        (unnamed if item.foods else [])


def _options(item: ReviewItem) -> list[str]:
    """Ingredient names a rationale may cite: the proposed ones, then each line's food."""
    return list(dict.fromkeys([*item.ingredients, *(f for f in item.foods if f)]))


def serve(state: ReviewState, host: str, port: int) -> None:  # pragma: no cover - blocking
    """Run the app with uvicorn until interrupted."""
    import uvicorn

    uvicorn.run(create_app(state), host=host, port=port, log_level="warning")
