"""Package imports follow the flow of DESIGN.md: each top-level unit of ``nutrireason`` imports
only the units upstream of it.

Every ``.py`` under ``src/nutrireason`` is parsed with :mod:`ast`; every import (module level
or inside a function, absolute or relative) that targets ``nutrireason`` is mapped to the
top-level unit it reaches and checked against :data:`ALLOWED`. Imports under
``if TYPE_CHECKING:`` are skipped: they never run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

PACKAGE = "nutrireason"
SRC = Path(__file__).resolve().parents[1] / "src" / PACKAGE

# reasoning: a model output's reasoning set apart from its final answer, pure text rules that
# the backends, methods, the run engine and the report's sample browser all apply; workers:
# the initializer that ends a pool's worker processes with their parent
LEAVES = frozenset({"errors", "paths", "storage", "schema", "reviewfile", "options", "reasoning",
                    "workers"})
ANYTHING = None  # a unit that may import every other unit
# The package itself (``from nutrireason import __version__``): Python imports it before any
# submodule, so naming it adds no dependency; test_the_package_root_stays_a_leaf keeps it light.
ROOT = "__init__"

# unit -> the units it may import (besides itself). Leaf units come first in the flow; see
# DESIGN.md for why each arrow points the way it does.
ALLOWED: dict[str, frozenset[str] | None] = {
    "errors": frozenset(),
    "paths": frozenset({"errors"}),
    "storage": frozenset({"errors"}),
    "schema": frozenset({"errors"}),
    "reviewfile": frozenset({"errors", "storage"}),  # the reviews file format every build reads
    "options": frozenset(),  # setting(): a dataclass field the CLI offers as an option
    "reasoning": frozenset(),
    "workers": frozenset(),
    "standards": LEAVES,
    # models never asks sources/bundles: a model file's path is passed in, or (llamacpp/smollm2)
    # found under paths.bundles_dir() where `data pull` unpacks it
    "models": LEAVES,
    "sources": LEAVES | {"standards"},
    "recipes": LEAVES | {"standards", "sources"},
    # how results are shown (tables, figures, a report section): under the benchmarks, whose
    # report sections build on it, and the report, which loads those sections by their specs
    "display": LEAVES,
    "ngqa": LEAVES | {"standards", "sources", "recipes", "display"},
    # fam may ask a model (through models/) but never runs the engine or a method; its report
    # section uses scoring's intervals
    "fam": LEAVES | {"standards", "sources", "recipes", "models", "display", "scoring"},
    "methods": LEAVES | {"standards", "sources", "models", "ngqa", "fam"},
    "runs": LEAVES | {"models", "methods", "standards"},
    # pure metrics over records: no models, no raw data, no run engine
    "scoring": LEAVES | {"standards"},
    # display facts come from schema's benchmark registry and the methods' declarations (a
    # method's sentence on its statistics), never from fam/ngqa: a benchmark's section is
    # loaded by the name its spec declares
    "report": LEAVES | {"standards", "scoring", "runs", "review", "display", "methods"},
    # orchestration: every stage, but not the entry points
    "pipeline": frozenset({"errors", "paths", "storage", "schema", "reviewfile", "options",
                           "standards", "display",
                           "models", "sources",
                           "recipes", "ngqa", "fam", "methods", "runs", "scoring", "report",
                           "review"}),
    # the review app reads the FAM pool and the NGQA build (its evidence tables) and writes
    # the reviews file both builds read back
    "review": LEAVES | {"standards", "fam", "ngqa"},
    # adapters for other tools (datasets, inspect_ai, lm-eval): read builds, reuse the methods
    # and scoring; never the CLI, the pipeline or the report
    "interop": LEAVES | {"standards", "models", "ngqa", "fam", "methods", "runs", "scoring"},
    "demo": ANYTHING,
    "cli": ANYTHING,
    "__main__": ANYTHING,
    "__init__": ANYTHING,
}


# A benchmark package beyond the built-in two (a unit whose module registers a benchmark):
# its spec, items, build stage, methods and report section, on the same foundation.
BENCHMARK_PACKAGE = LEAVES | {"standards", "sources", "recipes", "models", "display", "scoring",
                              "methods", "pipeline"}


def benchmark_units() -> set[str]:
    """The units of the package whose modules register a benchmark."""
    from nutrireason.schema import _FACTORIES, benchmark_names

    benchmark_names()
    return {module.split(".")[1] for module in (f.__module__ for f in _FACTORIES.values())
            if module.startswith(f"{PACKAGE}.") and module.count(".") >= 2}


def rule_of(unit: str) -> frozenset[str] | None:
    """The units ``unit`` may import: its own rule, or a benchmark package's."""
    if unit in ALLOWED:
        return ALLOWED[unit]
    return BENCHMARK_PACKAGE if unit in benchmark_units() else frozenset()


def unit_of(path: Path) -> str:
    """The top-level unit a source file belongs to (``fam/kb.py`` -> ``fam``)."""
    parts = path.relative_to(SRC).with_suffix("").parts
    return parts[0]


def module_of(path: Path) -> list[str]:
    """The dotted module name of a file, as parts (``__init__`` names its package)."""
    parts = [PACKAGE, *path.relative_to(SRC).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import node, anywhere in the tree, except those only run for type checkers."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)  # the body never runs
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def targets(path: Path, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """The dotted ``nutrireason`` modules an import reaches (other packages are skipped)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == PACKAGE:
                yield alias.name
        return
    if node.level == 0:
        base = (node.module or "").split(".")
    else:
        package = module_of(path)
        if path.name != "__init__.py":
            package = package[:-1]
        if node.level > 1:
            package = package[: len(package) - (node.level - 1)]
        base = package + (node.module.split(".") if node.module else [])
    if not base or base[0] != PACKAGE:
        return
    if len(base) == 1:
        # ``from nutrireason import fam``: each name is a unit (or a name of __init__)
        for alias in node.names:
            yield f"{PACKAGE}.{alias.name}" if (SRC / alias.name).exists() or (
                SRC / f"{alias.name}.py").exists() else PACKAGE
        return
    yield ".".join(base)


def target_unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def edges() -> Iterator[tuple[Path, int, str, str, str]]:
    """(file, line, imported module, importing unit, imported unit) for every import."""
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        unit = unit_of(path)
        for node in _imports(tree):
            for module in targets(path, node):
                yield path, node.lineno, module, unit, target_unit(module)


def test_every_unit_has_a_rule() -> None:
    units = {unit_of(p) for p in SRC.rglob("*.py")}
    missing = sorted(units - ALLOWED.keys() - benchmark_units())
    assert not missing, f"top-level units with no import rule in ALLOWED: {missing}"


def test_imports_follow_the_flow() -> None:
    violations = []
    for path, line, module, unit, target in edges():
        if target in (unit, ROOT):
            continue
        allowed = rule_of(unit)
        if allowed is ANYTHING or target in allowed:
            continue
        violations.append((path.relative_to(SRC.parent).as_posix(), line,
                           f"imports {module} (unit {unit} may not import unit {target})"))
    assert not violations, "imports against the flow:\n" + "\n".join(
        f"{where}:{line} {what}" for where, line, what in sorted(violations))


def test_unit_graph_has_no_cycle() -> None:
    graph = nx.DiGraph()
    for _path, _line, _module, unit, target in edges():
        if target != unit and target != ROOT:
            graph.add_edge(unit, target)
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, "import cycles between units: " + "; ".join(
        " -> ".join([*c, c[0]]) for c in cycles)


def test_the_package_root_stays_a_leaf() -> None:
    """Every import of a submodule runs ``nutrireason/__init__.py`` first, so what it imports
    every unit imports: leaf units only."""
    imported = {target for path, _l, _m, unit, target in edges()
                if unit == ROOT and path.parent == SRC}
    assert imported <= LEAVES, f"nutrireason/__init__.py imports {sorted(imported - LEAVES)}"


def test_parser_sees_nested_relative_and_guarded_imports() -> None:
    """The walker itself: function-level and relative imports count, TYPE_CHECKING does not."""
    source = (
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from . import kb\n"
        "from ..runs import engine\n"
        "if TYPE_CHECKING:\n"
        "    from nutrireason.report import html\n"
        "def f():\n"
        "    import nutrireason.scoring.metrics\n"
    )
    path = SRC / "fam" / "example.py"
    tree = ast.parse(source)
    found = [m for node in _imports(tree) for m in targets(path, node)]
    assert sorted(found) == ["nutrireason.fam", "nutrireason.runs", "nutrireason.scoring.metrics"]
