"""No loop between modules: every import of the package (at module level or inside a function,
absolute or relative; not those only run for type checkers) is an edge from the importing
module to the module it names, and the graph has no cycle. A loop hidden by a lazy import is a
loop all the same."""

from __future__ import annotations

import ast

import networkx as nx

from tests.test_import_direction import SRC, _imports, module_of, targets


def module_graph() -> nx.DiGraph:
    """Module -> the modules it imports; ``from package import module`` reaches the module."""
    modules = {".".join(module_of(path)) for path in SRC.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for path in sorted(SRC.rglob("*.py")):
        source = ".".join(module_of(path))
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            for target in targets(path, node):
                named = {f"{target}.{a.name}" for a in node.names} & modules \
                    if isinstance(node, ast.ImportFrom) else set()
                for module in named or {target}:
                    if module in modules and module != source:
                        graph.add_edge(source, module)
    return graph


def loops(graph: nx.DiGraph) -> list[list[str]]:
    return [sorted(group) for group in nx.strongly_connected_components(graph)
            if len(group) > 1]


def test_no_import_loop_anywhere():
    assert loops(module_graph()) == []


def test_the_graph_sees_a_loop_through_a_lazy_import():
    graph = nx.DiGraph([("a", "b"), ("b", "a"), ("c", "a")])
    assert loops(graph) == [["a", "b"]]
    # lines reads the reviewed names inside a function: still an edge
    assert ("nutrireason.recipes.lines", "nutrireason.recipes.rules") in module_graph().edges
