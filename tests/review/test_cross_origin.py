"""Forged decisions from another port of the same host are refused (headless Chromium).

A reviewer signs in on the review app; a page served from another port of 127.0.0.1 (cookies are
shared across ports, and SameSite treats them as the same site) then reads what cookies it can
and posts a correction to the app in the reviewer's browser. The session cookie is HttpOnly, the
CSRF value lives only in the app's own pages, and a post whose Origin is another port is refused:
nothing reaches the database.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("fastapi")
uvicorn = pytest.importorskip("uvicorn")
from fastapi.testclient import TestClient  # noqa: E402

from nutrireason.review.app import ReviewState, create_app  # noqa: E402
from nutrireason.review.items import load_items  # noqa: E402
from nutrireason.review.store import ReviewStore  # noqa: E402
from tests.report.test_html import CHROMIUM, _playwright  # noqa: E402
from tests.review.conftest import served_app  # noqa: E402
from tests.review.test_app import FORM, _signed_in  # noqa: E402

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

ATTACK = """<!doctype html><html><body>
<form id="forged" method="post" action="{target}/item/0">
<input name="csrf" id="csrf"><input name="action" value="correct">
<input name="ingredients" value="cheddar"><input name="note" value="forged by another port">
</form>
<p id="seen"></p>
<script>
var found = document.cookie.match(/(?:^|; )(?:nr_csrf|nr_session)=([^;]+)/);
document.getElementById("seen").textContent = document.cookie;
document.getElementById("csrf").value = found ? found[1] : "unknown";
document.getElementById("forged").submit();
</script></body></html>"""


def _state(small_pool, tmp_path) -> ReviewState:
    pool, recipes = small_pool
    items = load_items(pool / "annotations.jsonl", recipes / "recipes.jsonl")
    return ReviewState(items, ReviewStore(tmp_path / "reviews.sqlite"),
                       reviewers={"Ana": "reviewer", "Victim": "reviewer"})


def _attack_server(page: str) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - stdlib name
            body = page.encode("utf-8")
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    threading.Timer(120, server.shutdown).start()  # stops by itself
    return server


def test_a_post_from_another_port_is_refused_in_chromium(small_pool, tmp_path):
    sync_playwright = _playwright()
    state = _state(small_pool, tmp_path)
    with served_app(create_app(state)) as target:
        _forge_from_another_port(sync_playwright, target)
    assert [d for d in state.store.decisions() if d.reviewer == "Victim"] == []
    state.store.close()


def _forge_from_another_port(sync_playwright, target: str) -> None:
    """The victim signs in at ``target``, then opens the forging page of another port."""
    attack = _attack_server(ATTACK.format(target=target))
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
            try:
                context = browser.new_context()
                tab = context.new_page()
                tab.goto(target + "/")
                tab.select_option("#name", "Victim")
                tab.click("#start")
                tab.wait_for_selector("#entry")
                assert any(c["name"] == "nr_session" and c["httpOnly"]
                           for c in context.cookies())
                evil = context.new_page()
                with evil.expect_navigation(url=f"{target}/item/0"):
                    evil.goto(f"http://127.0.0.1:{attack.server_address[1]}/")
                assert "cross-origin request refused" in evil.content()
            finally:
                browser.close()
    finally:
        attack.shutdown()


def test_a_valid_token_from_another_origin_is_still_refused(small_pool, tmp_path):
    client = TestClient(create_app(_state(small_pool, tmp_path)))
    csrf = _signed_in(client)
    for origin in ("http://127.0.0.1:1", "null"):
        forged = client.post("/item/0", headers=FORM | {"origin": origin},
                             content=f"csrf={csrf}&action=confirm")
        assert forged.status_code == 403 and "cross-origin" in forged.text
    own = client.post("/item/0", headers=FORM | {"origin": "http://testserver"},
                      content=f"csrf={csrf}&action=confirm", follow_redirects=False)
    assert own.status_code in (200, 303)


def test_a_cookie_cannot_carry_a_longer_or_odd_reviewer_name(small_pool, tmp_path):
    state = _state(small_pool, tmp_path)
    client = TestClient(create_app(state))
    csrf = _signed_in(client)
    for forged in ("x" * 3025, "Ana\x01", "Mallory", "ana"):
        client.cookies.delete("nr_reviewer")
        client.cookies.set("nr_reviewer", forged)
        client.post("/item/0", headers=FORM, content=f"csrf={csrf}&action=confirm",
                    follow_redirects=False)
    assert state.store.decisions() == []  # no listed reviewer: nothing saved
    client.cookies.delete("nr_reviewer")
    client.cookies.set("nr_reviewer", "Ana")
    client.post("/item/0", headers=FORM, content=f"csrf={csrf}&action=confirm")
    assert [d.reviewer for d in state.store.decisions()] == ["Ana"]
    state.store.close()
