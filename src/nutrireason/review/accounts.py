"""Reviewer accounts: the people who may sign in to ``review serve``, each with a role, kept
in ``reviewers.yaml`` beside the review database (``review add-reviewer`` writes it)::

    reviewers:
      - {name: Ana Lopes, role: reviewer}
      - {name: Chris Ode, role: adjudicator}

A reviewer decides entries; an adjudicator's decision settles an entry the reviewers disagree
on (builds apply it). Names are picked from this list at sign-in, never typed, so one person
is one reviewer in every statistic.
"""

from __future__ import annotations

from pathlib import Path

from nutrireason.errors import DataError
from nutrireason.storage import parse_yaml, read_text_utf8, write_text_atomic

REVIEWERS_FILE = "reviewers.yaml"
ROLES = ("reviewer", "adjudicator")
REVIEWER, ADJUDICATOR = ROLES
MAX_NAME = 80


def reviewers_path(folder: Path) -> Path:
    return folder / REVIEWERS_FILE


def check_name(name: str, where: str | Path = "reviewer") -> str:
    """A reviewer's name as stored: stripped, 1 to 80 characters, no control characters."""
    clean = name.strip()
    if not clean or len(clean) > MAX_NAME or any(ord(c) < 32 or ord(c) == 127 for c in clean):
        raise DataError(where, "a reviewer name is 1 to 80 characters without control "
                        "characters", field="name", value=name)
    return clean


def load_reviewers(folder: Path) -> dict[str, str]:
    """Name -> role, in file order; a missing or malformed list is refused, naming the file,
    the entry and the field."""
    path = reviewers_path(folder)
    if not path.is_file():
        raise DataError(path, "no reviewer list", expected="reviewers added with `nutrireason "
                        "review add-reviewer NAME [--role adjudicator]`")
    data = parse_yaml(read_text_utf8(path, "reviewer list"))
    entries = data.get("reviewers") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise DataError(path, "the list names no reviewer", field="reviewers",
                        expected="a list of {name, role}")
    roles: dict[str, str] = {}
    for index, entry in enumerate(entries):
        field = f"reviewers[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise DataError(path, "an entry needs a name", field=f"{field}.name", value=entry)
        name = check_name(entry["name"], path)
        role = entry.get("role", REVIEWER)
        if role not in ROLES:
            raise DataError(path, "unknown role", field=f"{field}.role", value=role,
                            expected=" | ".join(ROLES))
        if name in roles:
            raise DataError(path, "a reviewer is listed twice", field=f"{field}.name",
                            value=name)
        roles[name] = role
    return roles


def add_reviewer(folder: Path, name: str, role: str = REVIEWER) -> dict[str, str]:
    """Add ``name`` with ``role`` to the list (created when absent; a listed name gets the new
    role); returns the whole list."""
    if role not in ROLES:
        raise DataError(None, "unknown role", field="--role", value=role,
                        expected=" | ".join(ROLES))
    clean = check_name(name, "--name")
    roles = load_reviewers(folder) if reviewers_path(folder).is_file() else {}
    roles[clean] = role
    write_reviewers(folder, roles)
    return roles


def write_reviewers(folder: Path, roles: dict[str, str]) -> Path:
    import yaml

    folder.mkdir(parents=True, exist_ok=True)
    entries = [{"name": name, "role": role} for name, role in roles.items()]
    return write_text_atomic(reviewers_path(folder), yaml.safe_dump(
        {"reviewers": entries}, sort_keys=False, allow_unicode=True))
