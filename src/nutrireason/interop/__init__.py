"""The benchmarks where researchers already work: Hugging Face datasets with a card
(:mod:`.hf`), inspect_ai tasks (:mod:`.inspect_tasks`), lm-evaluation-harness task export
(:mod:`.lm_eval_export`) and the NGQA graph as GraphML (:mod:`.graph`).

Each needs the optional extra ``interop`` (``pip install 'nutrireason[interop]'``); importing
this package needs nothing beyond the core.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.interop.builds import default_build
from nutrireason.options import REQUIRED, setting

__all__ = ["GraphmlExport", "HfExport", "LmEvalExport", "default_build"]


@dataclass
class HfExport:
    """What ``export hf`` is asked."""

    builds: list[Path] | None = setting("Built benchmark folders (default: the NGQA and "
                                        "FAM-Bench builds in the data home).", argument=True)
    out: Path = setting("A new folder for the dataset.", Path("nutrireason-hf"))
    overwrite: bool = setting("Replace whatever folder is at OUT.", False)

    def run(self) -> Any:
        """The export (its ``configs``), by :func:`~nutrireason.interop.hf.export_hf`."""
        from nutrireason.interop.hf import default_builds, export_hf

        return export_hf(list(self.builds) if self.builds else default_builds(), self.out,
                         self.overwrite)


@dataclass
class LmEvalExport:
    """What ``export lm-eval`` is asked."""

    out: Path = setting("A new folder for the task files.", REQUIRED, argument=True)
    ngqa_build: Path | None = setting("NGQA build (default: the data home's).")
    fam_build: Path | None = setting("FAM-Bench build (default: the data home's).")
    build: list[str] | None = setting("Any registered benchmark's build, as NAME=DIR; "
                                      "repeatable (default: the data home's builds).")
    overwrite: bool = setting("Replace whatever folder is at OUT (an earlier lm-eval export "
                              "is replaced without it).", False)

    def builds(self) -> dict[str, Path | None]:
        """The builds asked for by name: ``--build NAME=DIR``, then the named options."""
        from nutrireason.errors import DataError
        from nutrireason.schema import benchmark_names

        found: dict[str, Path | None] = {}
        for text in self.build or []:
            name, sep, folder = text.partition("=")
            if not sep or not folder or name not in benchmark_names():
                raise DataError(None, "not a registered benchmark's build", field="--build",
                                value=text, expected=f"NAME=DIR, NAME one of "
                                                     f"{', '.join(benchmark_names())}")
            found[name] = Path(folder)
        return found | {name: path for name, path in (("ngqa", self.ngqa_build),
                                                       ("fam", self.fam_build)) if path}

    def run(self) -> list[Path]:
        """The files written (:func:`~nutrireason.interop.lm_eval_export.export_lm_eval`)."""
        from nutrireason.interop.lm_eval_export import export_lm_eval

        return export_lm_eval(self.out, self.builds(), self.overwrite)


@dataclass
class GraphmlExport:
    """What ``export graphml`` is asked."""

    build: Path | None = setting("NGQA build (default: the data home's).", argument=True)
    out: Path = setting("GraphML file to write.", Path("ngqa-graph.graphml"))

    def run(self) -> tuple[int, int]:
        """(nodes, edges) written (:func:`~nutrireason.interop.graph.export_graphml`)."""
        from nutrireason.interop.graph import export_graphml

        return export_graphml(self.build, self.out)
