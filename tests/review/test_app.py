"""The review web app over HTTP: token, CSRF, no uploads, escaping, decisions saved at once,
filters and progress; and a server killed mid-review loses no saved decision."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from nutrireason.review.app import ReviewState, create_app  # noqa: E402
from nutrireason.review.items import load_items  # noqa: E402
from nutrireason.review.store import ReviewStore  # noqa: E402
from tests.review.conftest import XSS  # noqa: E402

FORM = {"content-type": "application/x-www-form-urlencoded"}


ACCOUNTS = {"Ana": "reviewer", "Ben": "reviewer", "<b>Eve</b>": "reviewer",
            "Chris": "adjudicator"}


def _state(small_pool, tmp_path, token=None) -> ReviewState:
    pool, recipes = small_pool
    items = load_items(pool / "annotations.jsonl", recipes / "recipes.jsonl")
    return ReviewState(items, ReviewStore(tmp_path / "reviews.sqlite"), token,
                       reviewers=ACCOUNTS)


def csrf_of(page: str) -> str:
    """The CSRF value a page's forms carry (it lives only in the page, never in a cookie)."""
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def _signed_in(client: TestClient, name: str = "Ana") -> str:
    """Open the home page (sets the HttpOnly session cookie) and enter a name; returns the
    CSRF value of the page's form."""
    csrf = csrf_of(client.get("/").text)
    reply = client.post("/reviewer", content=f"name={name}&csrf={csrf}", headers=FORM,
                        follow_redirects=False)
    assert reply.status_code == 303
    return csrf


def test_a_decision_is_saved_and_the_next_entry_follows(small_pool, tmp_path):
    state = _state(small_pool, tmp_path)
    client = TestClient(create_app(state))
    csrf = _signed_in(client)
    page = client.get("/next")
    assert page.status_code == 200 and 'id="entry" data-key="pasta-bake::osteoporosis"' in page.text
    reply = client.post("/item/0", headers=FORM, follow_redirects=False,
                        content=f"csrf={csrf}&action=correct&ingredients=cheddar&note=too+salty")
    assert reply.status_code == 303 and reply.headers["location"].startswith("/next")
    saved = state.store.decisions()
    assert [(d.item, d.reviewer, d.action, d.label) for d in saved] == [
        ("pasta-bake::osteoporosis", "Ana", "correct", "NotRec")]
    assert saved[0].before == {"label": "Rec", "ingredients": ["cheddar"],
                               "group": "osteoporosis"}
    assert saved[0].after["note"] == "too salty"
    following = client.get(reply.headers["location"])
    assert 'data-key="pasta-bake::celiac_disease"' in following.text  # unreviewed only
    progress = following.text.split('data-condition="osteoporosis"')[1].split("</tr>")[0]
    assert '"done">1<' in progress and '"left">0<' in progress


def test_rationale_picks_only_the_recipes_foods(small_pool, tmp_path):
    state = _state(small_pool, tmp_path)
    client = TestClient(create_app(state))
    csrf = _signed_in(client)
    client.post("/item/3", headers=FORM, content=f"csrf={csrf}&action=rationale"
                "&ingredients=onion&ingredients=lentils&ingredients=uranium")
    decision = state.store.decisions()[0]
    assert decision.after["ingredients"] == ["lentils", "onion"]  # recipe order; no uranium
    assert decision.label == "Rec"


def test_exclusion_needs_a_listed_reason(small_pool, tmp_path):
    state = _state(small_pool, tmp_path)
    client = TestClient(create_app(state))
    csrf = _signed_in(client)
    bad = client.post("/item/1", headers=FORM, content=f"csrf={csrf}&action=exclude"
                      "&exclusion=bored")
    assert bad.status_code == 400 and "listed reasons" in bad.text
    good = client.post("/item/1", headers=FORM, follow_redirects=False,
                       content=f"csrf={csrf}&action=exclude&exclusion=hidden+ingredient")
    assert good.status_code == 303
    assert [d.after["exclusion"] for d in state.store.decisions()] == ["hidden ingredient"]


def test_everything_rendered_is_escaped(small_pool, tmp_path):
    client = TestClient(create_app(_state(small_pool, tmp_path)))
    _signed_in(client, name="<b>Eve</b>")
    page = client.get("/item/0").text
    assert XSS not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>Eve</b>" not in page and "&lt;b&gt;Eve&lt;/b&gt;" in page
    reply = client.get("/item/0")
    assert "script-src 'self'" in reply.headers["content-security-policy"]


def test_csrf_and_form_type_are_checked(small_pool, tmp_path):
    state = _state(small_pool, tmp_path)
    client = TestClient(create_app(state))
    csrf = _signed_in(client)
    forged = client.post("/item/0", headers=FORM, content="csrf=guess&action=confirm&label=Rec")
    assert forged.status_code == 403
    missing = client.post("/item/0", headers=FORM, content="action=confirm&label=Rec")
    assert missing.status_code == 403
    upload = client.post("/item/0", files={"file": ("x.txt", b"data")},
                         data={"csrf": csrf, "action": "confirm"})
    assert upload.status_code == 415
    assert state.store.decisions() == []


def test_a_token_is_checked_on_every_request(small_pool, tmp_path):
    token = "s3cret-token-for-tests"
    client = TestClient(create_app(_state(small_pool, tmp_path, token)))
    assert client.get("/").status_code == 403
    assert client.get("/static/review.js").status_code == 403
    assert client.get("/?token=wrong-token-value").status_code == 403
    assert client.get(f"/?token={token}").status_code == 200
    assert client.get("/").status_code == 200  # the cookie now carries it


def test_static_files_are_a_fixed_list(small_pool, tmp_path):
    client = TestClient(create_app(_state(small_pool, tmp_path)))
    assert client.get("/static/review.js").status_code == 200
    assert client.get("/static/..%2Fapp.py").status_code == 404
    assert client.get("/static/app.py").status_code == 404


def test_a_non_loopback_host_needs_a_token():
    from nutrireason.errors import DataError
    from nutrireason.pipeline.review_commands import check_host

    check_host("127.0.0.1", None)
    check_host("localhost", None)
    with pytest.raises(DataError, match="--token"):
        check_host("0.0.0.0", None)
    check_host("0.0.0.0", "long-enough-token")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(port: int, process: subprocess.Popen, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if process.poll() is not None:
            raise AssertionError(process.stdout.read() if process.stdout else "server died")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError("server did not start")


@contextlib.contextmanager
def review_server(args: list[str], port: int, seconds: float = 60) -> Iterator[None]:
    """`nutrireason review serve ARGS --port PORT` as a process, killed with SIGKILL (no clean
    shutdown) when the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-m", "nutrireason", "review", "serve", "--port", str(port), *args],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "COLUMNS": "100"})
    try:
        _wait(port, process, seconds)
        yield
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)


def test_a_killed_server_loses_no_saved_decision(small_pool, tmp_path):
    import httpx

    from nutrireason.review.accounts import write_reviewers

    pool, recipes = small_pool
    db, port = tmp_path / "reviews.sqlite", _free_port()
    write_reviewers(tmp_path, {"Ana": "reviewer"})
    with review_server(["--annotations", str(pool), "--recipes", str(recipes), "--db", str(db)],
                       port), httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
        csrf = csrf_of(client.get("/").text)
        client.post("/reviewer", content=f"name=Ana&csrf={csrf}", headers=FORM)
        for index in range(4):
            reply = client.post(f"/item/{index}", headers=FORM,
                                content=f"csrf={csrf}&action=confirm")
            assert reply.status_code in (200, 303)
    store = ReviewStore(db)
    assert [d.item for d in store.decisions()] == [
        "pasta-bake::osteoporosis", "pasta-bake::celiac_disease", "pasta-bake::hypertension",
        "lentil-soup::hypertension"]
    store.close()


def test_review_export_and_stats_commands(small_pool, tmp_path):
    from typer.testing import CliRunner

    from nutrireason.cli import app

    store = ReviewStore(tmp_path / "r.sqlite")
    for who, label in (("ana", "Rec"), ("ben", "NotRec")):
        store.save("fam", "pasta-bake::osteoporosis", who, "confirm" if label == "Rec"
                   else "correct", {"label": "Rec", "ingredients": []},
                   {"label": label, "ingredients": [], "note": ""})
    store.close()
    runner = CliRunner()
    exported = runner.invoke(app, ["review", "export", str(tmp_path / "out"), "--db",
                                   str(tmp_path / "r.sqlite")])
    assert exported.exit_code == 0, exported.output
    assert (tmp_path / "out" / "reviews.jsonl").is_file()
    shown = runner.invoke(app, ["review", "stats", "--db", str(tmp_path / "r.sqlite")])
    assert shown.exit_code == 0 and "Cohen's kappa ana / ben" in shown.output
    missing = runner.invoke(app, ["review", "stats", "--db", str(tmp_path / "none.sqlite")])
    assert missing.exit_code == 1 and "no review database" in missing.output
    assert not Path(tmp_path / "none.sqlite").exists()


def test_review_export_never_replaces_a_folder_it_did_not_write(small_pool, tmp_path):
    from typer.testing import CliRunner

    from nutrireason.cli import app

    store = ReviewStore(tmp_path / "r.sqlite")
    store.save("fam", "pasta-bake::osteoporosis", "ana", "confirm",
               {"label": "Rec", "ingredients": []}, {"label": "Rec", "ingredients": [],
                                                     "note": ""})
    store.close()
    runner = CliRunner()
    db = ["--db", str(tmp_path / "r.sqlite")]
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    (project / "main.py").write_text("print('keep me')\n")
    refused = runner.invoke(app, ["review", "export", str(project), *db])
    assert refused.exit_code == 1 and "already holds files" in refused.output
    assert "--overwrite" in refused.output
    assert (project / "main.py").read_text() == "print('keep me')\n" and (project / ".git").is_dir()
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    assert runner.invoke(app, ["review", "export", str(a_file), *db]).exit_code == 1
    assert a_file.read_text() == "mine"
    # an earlier export is replaced whole; --overwrite replaces anything
    out = tmp_path / "out"
    assert runner.invoke(app, ["review", "export", str(out), *db]).exit_code == 0
    again = runner.invoke(app, ["review", "export", str(out), *db])
    assert again.exit_code == 0, again.output
    forced = runner.invoke(app, ["review", "export", str(project), "--overwrite", *db])
    assert forced.exit_code == 0, forced.output
    assert sorted(p.name for p in project.iterdir()) == ["manifest.json", "reviews.jsonl"]


def test_reviewer_accounts_are_added_by_command_and_required_to_serve(small_pool, tmp_path):
    from typer.testing import CliRunner

    from nutrireason.cli import app
    from nutrireason.review.accounts import load_reviewers

    runner = CliRunner()
    db = ["--db", str(tmp_path / "reviews" / "reviews.sqlite")]
    pool, recipes = small_pool
    serve = ["review", "serve", "--annotations", str(pool), "--recipes", str(recipes), *db]
    refused = runner.invoke(app, serve)
    assert refused.exit_code == 1 and "no reviewer list" in refused.output
    assert "review add-reviewer" in refused.output
    for args in (["Ana Lopes"], ["Chris Ode", "--role", "adjudicator"]):
        added = runner.invoke(app, ["review", "add-reviewer", *args, *db])
        assert added.exit_code == 0, added.output
    assert load_reviewers(tmp_path / "reviews") == {"Ana Lopes": "reviewer",
                                                    "Chris Ode": "adjudicator"}
    wrong = runner.invoke(app, ["review", "add-reviewer", "Dee", "--role", "boss", *db])
    assert wrong.exit_code == 1 and "unknown role" in wrong.output
    (tmp_path / "reviews" / "reviewers.yaml").write_text("reviewers:\n  - {name: Ana}\n"
                                                        "  - {name: Ana}\n")
    with pytest.raises(Exception, match="listed twice"):
        load_reviewers(tmp_path / "reviews")


def test_only_listed_reviewers_sign_in_and_an_adjudicator_sees_every_decision(small_pool,
                                                                             tmp_path):
    state = _state(small_pool, tmp_path)
    client = TestClient(create_app(state))
    page = client.get("/").text
    assert '<option value="Chris">Chris (adjudicator)</option>' in page
    csrf = csrf_of(page)
    refused = client.post("/reviewer", content=f"name=Mallory&csrf={csrf}", headers=FORM)
    assert refused.status_code == 400 and "reviewer list" in refused.text
    for who, action in (("Ana", "confirm"), ("Ben", "correct")):
        client.cookies.clear()
        csrf = _signed_in(client, who)
        client.post("/item/0", headers=FORM, content=f"csrf={csrf}&action={action}"
                    f"&note=by+{who}")
    assert state.disagreements() == {"pasta-bake::osteoporosis"}
    client.cookies.clear()
    csrf = _signed_in(client, "Chris")
    page = client.get("/item/0").text
    assert page.count('class="other"') == 2 and "by Ana" in page and "by Ben" in page
    client.post("/item/0", headers=FORM, content=f"csrf={csrf}&action=confirm")
    assert state.disagreements() == set()  # settled
    assert state.store.decisions()[-1].role == "adjudicator"
