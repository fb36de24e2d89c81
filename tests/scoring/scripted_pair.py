"""Two scripted runs on one small NGQA-style item file, for `compare`, `power` and the
report's comparison section: model A and model B answer alike except on one level."""

from __future__ import annotations

import json
from pathlib import Path

from nutrireason.models.scripted import register
from nutrireason.runs import RunConfig, run
from nutrireason.scoring import score_run, write_scores

LEVELS = ("sparse", "standard", "complex")
USERS = 60  # per level; each user is asked QUESTIONS questions
QUESTIONS = 5
# Which questions each scripted model gets wrong, by level: (user, question) -> wrong.
# Model A is wrong on every 4th user's first two questions at every level; model B makes the
# same mistakes, and on "complex" also on every user's third question (20 points worse there,
# clustered by user: the mistake repeats for each user).


def _items(path: Path) -> Path:
    lines = []
    for level in LEVELS:
        for user in range(USERS):
            for question in range(QUESTIONS):
                food = f"Food-{level}-{user}-{question}"
                lines.append({"id": f"{level}-{user}-{question}", "task": "binary",
                              "level": level, "food": food, "question": f"Is {food} right?",
                              "triples": [], "answer": "Yes", "user_id": f"user{user}",
                              "signal": [], "conditions": ["diabetes" if user % 2 else
                                                           "hypertension"], "diets": []})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _wrong(text: str, model: str) -> bool:
    level, user, question = text.split("Food-", 1)[1].split(" ", 1)[0].split("-")
    base = int(user) % 4 == 0 and int(question) < 2
    return base or (model == "b" and level == "complex" and question == "2")


def _reply(model: str):
    def reply(request) -> str:
        return "No" if _wrong(request.messages[-1].text(), model) else "Yes"
    return reply


def make_runs(tmp: Path) -> tuple[Path, Path]:
    """Runs A and B (scored) under ``tmp``."""
    items = _items(tmp / "items.jsonl")
    out = []
    for model in ("a", "b"):
        register(f"compare_{model}", _reply(model))
        folder = tmp / f"run_{model}"
        run(RunConfig(benchmark=items, out=folder, methods=["plain"],
                      models=[f"scripted/compare_{model}"], cache=False, progress=False))
        write_scores(folder, score_run(folder, bootstrap=200))
        out.append(folder)
    return out[0], out[1]
