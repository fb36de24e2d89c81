"""Graded outputs: model outputs with the answer a careful grader takes, to check the readers.

A corpus is a YAML list of cases::

    - id: bin-think-01
      task: binary            # binary | multi_label | text_generation | fam_dish | fam_rank
      form: think_closed      # the form of output it stands for (free text, for the tables)
      output: "<think>...</think>\\n\\nNo"
      reasoning_content: null # the server's separate reasoning field, if any
      finish_reason: stop     # stop | length
      dishes: null            # fam_rank: {A: title, B: title, C: title, D: title}
      expect: {ok: true, answer: "No", verdict: null, reason: null}
      why: the final answer after </think> is No

:func:`read_case` reads a case as a run would; :func:`agrees` compares the reading with the
grader's: same ok; for an answer, the same value (tags as a set, a text answer by its verdict
and its words, a dish decision and, when the grader lists them, the cited ingredients as a
set, a ranking as the same letters in order); for no answer, the same reason.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from nutrireason.errors import DataError
from nutrireason.methods.answers import option_titles, read_whole
from nutrireason.methods.reading import Reading
from nutrireason.schema import answer_kind


def load_graded(path: str | Path) -> list[dict[str, Any]]:
    """The cases of a graded corpus; a malformed case is a DataError naming the file, the
    case and the field."""
    path = Path(path)
    try:
        cases = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise DataError(path, f"cannot read the graded corpus: {exc}") from None
    if not isinstance(cases, list):
        raise DataError(path, "a graded corpus is a YAML list of cases")
    for number, case in enumerate(cases):
        where = f"[{number}]"
        if not isinstance(case, dict):
            raise DataError(path, "a case is a mapping", field=where, value=case)
        task = case.get("task")
        if not isinstance(task, str) or answer_kind(task) is None:
            raise DataError(path, "task is a registered benchmark's task", field=f"{where}.task",
                            value=task)
        expect = case.get("expect")
        if not isinstance(expect, dict) or not isinstance(expect.get("ok"), bool):
            raise DataError(path, "expect needs ok: true or false", field=f"{where}.expect",
                            value=expect)
    return cases


def read_case(case: dict[str, Any]) -> Reading:
    """The case's output read as ``nutrireason run`` reads it."""
    text = case.get("output") or ""
    return read_whole(answer_kind(case["task"]) or "", text, option_titles(case),
                      case.get("reasoning_content"), case.get("finish_reason"))


def _words(text: Any) -> list[str]:
    return re.findall(r"[a-z0-9_]+", str(text or "").lower())


def agrees(case: dict[str, Any], reading: Reading) -> tuple[bool, str]:
    """(whether the reading is the grader's, what differs)."""
    expect = case["expect"]
    if reading.ok != expect["ok"]:
        return False, f"ok {reading.ok} ({reading.reason}), grader {expect['ok']}"
    if not reading.ok:
        same = reading.reason == expect.get("reason")
        return same, "" if same else f"reason {reading.reason}, grader {expect.get('reason')}"
    kind, want, got = answer_kind(case["task"]), expect.get("answer"), reading.value
    if kind == "tag_set":
        same = set(got or []) == set(want or [])
    elif kind == "sentence":
        verdict = expect.get("verdict") or (_words(want)[:1] or [""])[0].capitalize()
        same = _words(got)[:1] == [verdict.lower()] and _words(got) == _words(want)
    elif kind == "decision":
        same = got.get("decision") == want.get("decision") and (
            "ingredients" not in want or
            {i.lower().strip() for i in got.get("ingredients") or []} ==
            {i.lower().strip() for i in want.get("ingredients") or []})
    elif kind == "ranking":
        same = got.get("ranking") == [str(x).upper() for x in want]
    else:
        same = got == want
    return same, "" if same else f"read {got!r} by {reading.rule}, grader {want!r}"


def grade(cases: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Reading, bool, str]]:
    """Every case read and compared: (case, reading, agrees, what differs)."""
    rows = []
    for case in cases:
        reading = read_case(case)
        same, detail = agrees(case, reading)
        rows.append((case, reading, same, detail))
    return rows
