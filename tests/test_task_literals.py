"""No module outside a benchmark's own package names its tasks or levels: what a task does
(how its answers are read, checked, scored, exported and asked of a person) is on its spec
(:class:`nutrireason.schema.TaskSpec`), so a task changes in one package.

Every string literal of every ``.py`` under ``src/nutrireason`` is compared, whole, with the
task names, ``--task`` aliases and levels of every registered benchmark; a benchmark's own
package (the package of the module that registers it) may name them.
"""

from __future__ import annotations

import ast
from pathlib import Path

from nutrireason.schema import _FACTORIES, benchmark_names, get_benchmark

SRC = Path(__file__).resolve().parents[1] / "src" / "nutrireason"
# (file under src/nutrireason, word) -> why the word there is not the task or level
NOT_A_TASK = {
    ("recipes/parse.py", "standard"): "a size word of recipe lines ('2 standard eggs')",
}


def owned_words() -> dict[str, set[str]]:
    """Per benchmark package (``ngqa``): the task names, aliases and levels it owns."""
    owned: dict[str, set[str]] = {}
    for name in benchmark_names():
        spec = get_benchmark(name)
        package = _FACTORIES[name].__module__.split(".")[1]
        words = {*spec.levels, *(t.name for t in spec.tasks),
                 *(alias for t in spec.tasks for alias in t.aliases)}
        owned.setdefault(package, set()).update(words)
    return owned


def literals(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string constant in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_task_and_level_names_stay_in_their_benchmark_package():
    owned = owned_words()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        where = path.relative_to(SRC).as_posix()
        package = where.split("/")[0]
        foreign = set().union(*(words for owner, words in owned.items() if owner != package))
        found += [f"{where}:{line}: {text!r}" for line, text in literals(path)
                  if text in foreign and (where, text) not in NOT_A_TASK]
    assert not found, "task or level names outside their benchmark's package:\n" + \
        "\n".join(found)


def test_the_check_sees_a_task_name(tmp_path):
    """The check is not empty: the built-in benchmarks own words, and a literal is found."""
    owned = owned_words()
    assert {"ngqa", "fam"} <= owned.keys() and "binary" in owned["ngqa"]
    sample = tmp_path / "sample.py"
    sample.write_text('if task == "binary":\n    pass\n', encoding="utf-8")
    assert (1, "binary") in literals(sample)


def test_every_exception_is_still_needed():
    for where, word in NOT_A_TASK:
        assert any(text == word for _, text in literals(SRC / where)), (where, word)
