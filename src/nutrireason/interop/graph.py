"""The NGQA knowledge graph as GraphML, for Gephi, Cytoscape or any graph tool.

Nodes carry ``type`` (user, food, ingredient, nutrient_tag, ...) and ``label`` (the name the
questions use: a food's name, not its id); edges carry ``relation`` (has, belongs to, need).
"""

from __future__ import annotations

from pathlib import Path

import networkx as nx

from nutrireason.errors import DataError
from nutrireason.interop.builds import default_build
from nutrireason.storage import atomic_path


def export_graphml(build: Path | None, out: Path) -> tuple[int, int]:
    """Write the graph of the NGQA build folder ``build`` (default: the data home's) to the
    GraphML file ``out`` (atomically); return (nodes, edges)."""
    from nutrireason.ngqa.build import load_graph

    build = Path(build) if build is not None else default_build("ngqa")
    for name in ("nodes.parquet", "edges.parquet"):
        if not (build / "graph" / name).is_file():
            raise DataError(build / "graph" / name, "not found: not an NGQA build folder",
                            expected="the output of `nutrireason ngqa build`")
    graph = load_graph(build)
    with atomic_path(out) as tmp:
        nx.write_graphml(graph, tmp, encoding="utf-8")
    return graph.number_of_nodes(), graph.number_of_edges()
