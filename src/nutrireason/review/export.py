"""``review export``: each reviewer's last decision per entry as a versioned reviews folder
(``reviews.jsonl`` + ``manifest.json`` with the file's sha256), the format
:mod:`nutrireason.reviewfile` reads."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from nutrireason.review.store import ReviewStore
from nutrireason.reviewfile import FORMAT, REVIEWS, VERSION
from nutrireason.storage import (
    check_target_folder,
    sha256_file,
    write_folder,
    write_json_atomic,
    write_jsonl_atomic,
)


def export_reviews(store: ReviewStore, out: Path, benchmark: str = "fam",
                   overwrite: bool = False) -> dict[str, Any]:
    """Write each reviewer's last decision per entry to ``out``: a new or empty folder, an
    earlier reviews export (replaced whole), or anything with ``overwrite``; anything else is
    refused before a decision is read."""
    check_target_folder(out, overwrite, earlier=is_reviews_export)
    rows = [{"benchmark": d.benchmark, "item": d.item, "reviewer": d.reviewer, "role": d.role,
             "at": d.at, "action": d.action, "before": d.before, **_after(d.after)}
            for d in sorted(store.latest(benchmark).values(), key=lambda d: d.id)]
    with write_folder(out, overwrite, earlier=is_reviews_export) as folder:
        write_jsonl_atomic(folder / REVIEWS, rows)
        manifest = {"format": FORMAT, "version": VERSION, "benchmark": benchmark,
                    "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                    "decisions": len(rows), "items": len({r["item"] for r in rows}),
                    "reviewers": sorted({r["reviewer"] for r in rows}),
                    "adjudicators": sorted({r["reviewer"] for r in rows
                                            if r["role"] == "adjudicator"}),
                    "sha256": sha256_file(folder / REVIEWS)}
        write_json_atomic(folder / "manifest.json", manifest)
    return manifest


def is_reviews_export(folder: Path) -> bool:
    """``folder`` holds exactly what an earlier ``review export`` wrote."""
    names = {p.name for p in folder.iterdir()}
    if names != {REVIEWS, "manifest.json"}:
        return False
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT


def _after(after: dict[str, Any]) -> dict[str, Any]:
    return {"label": after.get("label"), "ingredients": list(after.get("ingredients") or []),
            "exclusion": after.get("exclusion"), "note": after.get("note") or ""}
