"""The repository speaks to its users: a short README whose quick start runs, a documentation
site that builds strictly with a command reference covering every command, and no development
record in the repository's text."""

from __future__ import annotations

import importlib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from nutrireason.cli import app
from tests.conftest import new_home

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_LINES = 250
# The words issue or session followed by a number (optionally "#"): history belongs in git and
# the changelog. The examples below are assembled, so that this file does not match itself.
HISTORY = re.compile(r"\b(?:issue|session)s?\s+#?\d+", re.IGNORECASE)
SCANNED = ("src", "tests", "docs", "benchmarks", "examples", "scripts")
TEXT_SUFFIXES = {".py", ".md", ".yaml", ".yml", ".txt", ".toml", ".sh", ".j2", ".html",
                 ".cfg", ".json"}


def _text_files() -> list[Path]:
    files = [README, ROOT / "pyproject.toml", ROOT / "mkdocs.yml", ROOT / "CHANGELOG.md"]
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and ".egg-info" not in str(path) \
                    and "__pycache__" not in path.parts and path.stat().st_size < 2_000_000 \
                    and path != Path(__file__).resolve():
                files.append(path)
    return files


def test_no_development_record_in_the_repository_text():
    found = []
    for path in _text_files():
        for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                      .splitlines(), start=1):
            if HISTORY.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}")
    assert found == [], "\n".join(found[:40])


def test_the_history_pattern_catches_what_it_should():
    for word, number in (("see issue", " 21"), ("Session", " 8 measured"), ("issues", " #4"),
                         ("session", "  12")):
        assert HISTORY.search(word + number), word + number
    for text in ("an issue with the data", "a browser session", "session cookie 8a"):
        assert not HISTORY.search(text), text


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, len(lines)


def _script(name: str):
    """A module of ``scripts/`` (they are not a package)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _commands_in(block: str) -> list[str]:
    """The `nutrireason ...` commands of a bash block (split as the docs check splits them)."""
    return [c for c in _script("docs_check").split_commands(block)
            if c.startswith("nutrireason")]


def _quick_start() -> list[list[str]]:
    """The commands of the README's "Evaluate your model" block, one argument list each."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Evaluate your model", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    return [shlex.split(command)[1:] for command in _commands_in(block)]


def test_readme_quick_start_runs_against_the_scripted_backend(tmp_path, stage_home,
                                                             monkeypatch):
    """Build, run, score and report exactly as the README says, with `scripted/echo` in place
    of the endpoint and a data home whose bundles are present (so `data pull` finds them all
    there is nothing to fetch; it is replaced by `data status`)."""
    home = new_home(tmp_path, stage_home / "builds")
    monkeypatch.setenv("NUTRIREASON_HOME", str(home))
    monkeypatch.chdir(tmp_path)
    commands = _quick_start()
    assert [c[0] for c in commands] == ["data", "ngqa", "run", "score", "report"]
    runner = CliRunner(env={"COLUMNS": "200"})
    for words in commands:
        if words[:2] == ["data", "pull"]:
            words = ["data", "status"]
        words = ["scripted/echo" if w.startswith("openai-compatible/") else w for w in words]
        result = runner.invoke(app, words)
        assert result.exit_code == 0, (words, result.output)
    records = (tmp_path / "runs" / "my-model" / "records.jsonl").read_text().splitlines()
    assert len(records) == 2 * 50  # two methods, --limit 50
    assert (tmp_path / "report" / "report.html").is_file()


def _documented_commands() -> list[tuple[Path, str]]:
    """Every `nutrireason ...` command in a bash block of the README and the docs pages."""
    found = []
    for path in [README, *sorted((ROOT / "docs").rglob("*.md"))]:
        for block in _script("docs_check").bash_blocks(path):
            found += [(path, command) for command in _commands_in(block)]
    return found


def test_every_documented_command_and_option_exists():
    """Each command the README and the docs show names a real command, and every `--option`
    it uses is one that command has (options drift when a command changes)."""
    root = typer.main.get_command(app)
    problems = []
    documented = _documented_commands()
    for path, text in documented:
        words = shlex.split(text)[1:]
        command = root
        while words and words[0] in getattr(command, "commands", {}):
            command = command.commands[words.pop(0)]
        if getattr(command, "commands", None) and words and not words[0].startswith("-"):
            problems.append(f"{path.name}: no command {words[0]!r}: {text}")
            continue
        options = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        options |= {o for p in root.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        problems += [f"{path.name}: {word} is not an option: {text}" for word in words
                     if word.startswith("--") and word.split("=")[0] not in options]
    assert len(documented) > 100
    assert problems == [], "\n".join(problems)


def test_cli_reference_covers_every_command():
    page = _script("docs_hooks").cli_reference()
    root = typer.main.get_command(app)
    for name, command in root.commands.items():
        assert f"## `nutrireason {name}`" in page
        for sub in getattr(command, "commands", {}):
            assert f"## `nutrireason {name} {sub}`" in page
    assert "`--difference`" in page and "`--by`" in page  # options come from the commands


def test_docs_check_runs_every_offline_command_and_says_why_not_the_others():
    """scripts/docs_check.py (run by scripts/test.sh after the tests) runs what it can: the
    commands it leaves out each have a reason, and what it runs needs no network."""
    check = _script("docs_check")
    commands = check.documented_commands()
    left_out = {c.text: check.why_not_run(c.text) for c in commands if check.why_not_run(c.text)}
    ran = [check.offline_words(c.text) for c in commands if c.text not in left_out]
    assert len(ran) >= 80 and len(left_out) <= len(ran) // 2, (len(ran), len(left_out))
    for words in ran:
        assert words[0] == "nutrireason", words
        assert not any(re.match(r"'?(openai|openai-compatible)/", w) for w in words), words
        if words[1] == "run":
            assert words[words.index("--limit") + 1] == check.RUN_LIMIT, words
    assert left_out["nutrireason review serve"] == "starts a server that waits for a person"
    assert "nutrireason data pull" in left_out
    # an optional part in brackets is dropped, not a reason to leave the command out
    assert "nutrireason fam build" in {c.text for c in commands if c.page.endswith("fam.md")}
    words = check.offline_words(
        "nutrireason run items.jsonl --out runs/vllm --model 'openai-compatible/q@http://h/v1'")
    assert words[-6:] == ["--model", "scripted/echo", "--limit", "2", "--max-tokens", "128"]


def test_docs_site_builds_strictly(tmp_path):
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("the docs extra is not installed (scripts/test.sh installs it)")
        pytest.skip("mkdocs is not installed (pip install -e '.[docs]')")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                             "-d", str(tmp_path / "site")], cwd=ROOT, capture_output=True,
                            text=True, env=os.environ | {"NO_MKDOCS_2_WARNING": "1"},
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()


def test_one_version_everywhere():
    """`--version`, pyproject, CITATION.cff and the changelog's latest release agree."""
    from nutrireason import __version__

    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(rf'^version = "{re.escape(__version__)}"$', pyproject, re.M)
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(rf"^version: {re.escape(__version__)}$", citation, re.M)
    releases = re.findall(r"^## \[(\d[^\]]*)\]", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert releases and releases[0] == __version__
    result = CliRunner().invoke(app, ["--version"])
    assert result.output.strip() == f"nutrireason {__version__}"
