"""The FAM-Bench annotation loop wired to the run engine.

:mod:`nutrireason.fam.proposals` holds the loop's logic (items, the rule check, the decision)
and takes each model pass as an injected :class:`~nutrireason.fam.proposals.PassRunner`; fam
never imports the engine, since the engine's methods import fam. This module supplies the
engine's pass and the entry points that use it: :func:`build_pool` (``fam annotate
--proposer``), :func:`annotation_loop` and :func:`run_proposals` (``fam propose``, the proposal
step alone).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from nutrireason.fam import pool
from nutrireason.fam import proposals as fam_proposals
from nutrireason.fam.annotate import Thresholds
from nutrireason.fam.kb import ConditionKB, load_kb
from nutrireason.fam.proposals import (
    METHOD,
    LoopInterrupted,
    PassResult,
    Proposer,
    outcome_of,
)
from nutrireason.models.types import GenerationSettings
from nutrireason.paths import builds_dir
from nutrireason.pipeline.stage import recipe_corpus
from nutrireason.runs import RunConfig, RunSummary, run
from nutrireason.schema import read_records
from nutrireason.sources.sr28 import Sr28
from nutrireason.storage import write_text_atomic


def _items_text(items: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(i, ensure_ascii=False, sort_keys=True) + "\n" for i in items)


def engine_pass(name: str, items: list[dict[str, Any]], proposer: Proposer,
                limit: int | None = None) -> PassResult:
    """Run (or resume) one pass in ``<work_dir>/<name>-<digest>``, the digest covering the
    items, the model and the settings; raises :class:`LoopInterrupted` when interrupted."""
    text = _items_text(items)
    settings = proposer.settings() | {"model": proposer.model, "pass": name}
    digest = hashlib.sha256((text + json.dumps(settings, sort_keys=True)).encode()).hexdigest()
    run_dir = proposer.work_dir / f"{name}-{digest[:12]}"
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text_atomic(run_dir / "items.jsonl", text)
    summary = run(RunConfig(
        benchmark=run_dir / "items.jsonl", out=run_dir, methods=[METHOD],
        models=[proposer.model], limit=limit, concurrency=proposer.concurrency,
        retry_errors=proposer.retry_errors, progress=proposer.progress,
        settings=GenerationSettings(temperature=0.0, max_tokens=proposer.max_tokens)))
    if summary.interrupted:
        raise LoopInterrupted(f"the {name} pass was interrupted; run the same command again to "
                              "resume")
    wanted = {str(i["id"]) for i in (items if limit is None else items[:limit])}
    outcomes = {r.item_id: outcome_of(r) for r in read_records(run_dir)
                if r.model == proposer.model and r.item_id in wanted}
    return PassResult(run_dir, outcomes, model_calls=summary.model_calls,
                      cache_hits=summary.cache_hits)


def annotation_loop(recipes: list[dict[str, Any]], annotations: list[dict[str, Any]],
                    kb: dict[str, ConditionKB], proposer: Proposer,
                    log: Callable[[str], Any] = lambda _: None
                    ) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, int]]:
    """:func:`nutrireason.fam.proposals.annotation_loop` with the run engine's passes."""
    return fam_proposals.annotation_loop(recipes, annotations, kb, proposer, engine_pass, log)


def run_proposals(model: str, recipes: Path | None = None, out: Path | None = None, *,
                  limit: int | None = None, concurrency: int = 8,
                  max_tokens: int = 1024) -> tuple[Path, RunSummary]:
    """The proposal step alone (``fam propose``): one engine run of the ``fam-propose`` method
    over every kept recipe of a ``recipes build`` (default: the last build), written to ``out``
    (default ``builds/fam/proposals``, its items beside it); re-running resumes.
    Returns (run directory, engine summary)."""
    corpus = pool.read_recipes(recipe_corpus(recipes))
    target = out or builds_dir() / "fam" / "proposals"
    items = fam_proposals.write_items(fam_proposals.proposal_items(corpus, load_kb()),
                                      target.parent / f"{target.name}-items.jsonl")
    summary = run(RunConfig(benchmark=items, out=target, methods=[METHOD], models=[model],
                            limit=limit, concurrency=concurrency,
                            settings=GenerationSettings(temperature=0.0,
                                                        max_tokens=max_tokens)))
    return target, summary


def build_pool(recipes: list[dict[str, Any]], sr28: Sr28, out: Path,
               thresholds: Thresholds | None = None,
               inputs: list[Path] | None = None,
               proposals: Mapping[str, Mapping[str, Any] | None] | None = None,
               proposer: Proposer | None = None, proposals_from: str | None = None,
               log: Callable[[str], Any] = lambda _: None) -> dict[str, Any]:
    """:func:`nutrireason.fam.pool.build_pool` with the run engine's passes, so that
    ``proposer`` runs the annotation loop (``fam annotate --proposer``)."""
    return pool.build_pool(recipes, sr28, out, thresholds=thresholds, inputs=inputs,
                           proposals=proposals, proposer=proposer,
                           proposals_from=proposals_from, log=log, run_pass=engine_pass)


__all__ = ["LoopInterrupted", "PassResult", "Proposer", "annotation_loop", "build_pool",
           "engine_pass", "run_proposals"]
