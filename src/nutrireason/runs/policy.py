"""What ``nutrireason run`` accepts and how it ends: the model it needs, the errors it tolerates.

- ``--model`` is required; methods that need no model (the NGQA oracle, the FAM-Bench
  reference) run with ``--model none`` (or with no ``--model`` at all), which stands for
  ``scripted/none``: a backend that refuses every call, so nothing is silently answered by a
  stand-in model.
- A run exits non-zero when any of its samples ended in an error, unless ``--allow-errors N``
  or ``--allow-errors P%`` accepts that many; a run whose every sample errored always fails.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nutrireason.errors import DataError
from nutrireason.methods.base import method_info
from nutrireason.runs.engine import RunSummary
from nutrireason.runs.manifest import effective_status

NO_MODEL = "scripted/none"
MODEL_EXAMPLES = ("e.g. --model openai/gpt-4o-mini, --model llamacpp/smollm2, or --model "
                  "scripted/echo to try the plumbing without a model; methods that need no "
                  "model (oracle, fam-reference) run with --model none")
_ALLOWANCE = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<percent>%?)\s*$")


def asks_model(method: str) -> bool:
    """The method calls a model (its declaration; an unknown method is taken to: the run
    refuses it by name later)."""
    info = method_info(method)
    return info is None or info.needs_model


def resolve_models(models: list[str] | None, methods: list[str]) -> list[str]:
    """The provider strings to run: ``--model`` as given, ``none`` -> ``scripted/none``;
    no ``--model`` is an error unless every method needs no model."""
    needing = [m for m in methods if asks_model(m)]
    if not models:
        if needing:
            raise DataError(None, f"--model is required (method {needing[0]!r} asks a model)",
                            expected=MODEL_EXAMPLES)
        return [NO_MODEL]
    if "none" in models and needing:
        raise DataError(None, f"--model none answers nothing, but method {needing[0]!r} asks a "
                        "model", expected=MODEL_EXAMPLES)
    return [NO_MODEL if spec == "none" else spec for spec in dict.fromkeys(models)]


@dataclass(frozen=True)
class ErrorAllowance:
    """How many errored samples a run may end with: a count, or a percentage of the planned
    samples (rounded down)."""

    count: int = 0
    percent: float | None = None

    @classmethod
    def parse(cls, text: str | None) -> ErrorAllowance:
        """``"5"`` -> 5 samples; ``"2%"`` -> 2 % of the planned samples; None -> none."""
        if text is None:
            return cls()
        match = _ALLOWANCE.match(text)
        if match is None or (not match["percent"] and "." in match["number"]):
            raise DataError(None, f"--allow-errors {text!r} is not a count or a percentage",
                            expected="e.g. --allow-errors 5 or --allow-errors 2%")
        if not match["percent"]:
            return cls(count=int(match["number"]))
        percent = float(match["number"])
        if percent > 100:
            raise DataError(None, f"--allow-errors {text!r} is over 100 %",
                            expected="a percentage from 0% to 100%")
        return cls(percent=percent)

    def allowed(self, planned: int) -> int:
        """The number of errored samples accepted out of ``planned``."""
        if self.percent is None:
            return self.count
        return math.floor(planned * self.percent / 100 + 1e-9)

    def __str__(self) -> str:
        return f"{self.percent:g}%" if self.percent is not None else str(self.count)


def error_verdict(summary: RunSummary, allowance: ErrorAllowance) -> str | None:
    """Why a finished run should exit non-zero, or None when its errors are accepted."""
    errors, planned = summary.total_errors, summary.planned
    if not errors:
        return None
    if summary.total_ok == 0 and summary.missing == 0:
        return (f"every sample ({errors} of {planned}) ended in an error; the records are kept "
                f"in {summary.out}")
    allowed = allowance.allowed(planned)
    if errors <= allowed:
        return None
    return (f"{errors} of {planned} samples ended in an error (allowed: {allowed}; "
            f"--allow-errors N or P% accepts some); the records are kept in {summary.out}, "
            "--retry-errors runs them again")


def summary_lines(summary: RunSummary) -> list[str]:
    """What ``nutrireason run`` prints at the end: this invocation, then the whole folder."""
    state = "interrupted; run the same command again to resume" if summary.interrupted \
        else "done"
    unparsed = (f" ({summary.unparsed} unparseable, {summary.unparsed / summary.ok:.1%}: "
                f"{summary.truncated} cut off, {summary.refusals} refusals)") if summary.ok else ""
    return [f"{state}: {summary.ok} ok{unparsed}, {summary.errors} errors, "
            f"{summary.skipped} already done of {summary.planned}; {summary.model_calls} model "
            f"calls, {summary.cache_hits} cache hits, {summary.wall_s:.1f} s -> {summary.out}",
            f"run {summary.status}: {summary.total_ok} ok, {summary.total_errors} errors, "
            f"{summary.missing} not run of {summary.planned}", *truncation_warnings(summary),
            *conflict_warnings(summary),
            *([f"note: {summary.cache_note}"] if summary.cache_note else [])]


def conflict_warnings(summary: RunSummary) -> list[str]:
    """A warning when the folder's records.jsonl answers a sample twice differently."""
    if not summary.conflicts:
        return []
    count = len(summary.conflicts)
    return [f"warning: {summary.out / 'records.jsonl'} answers {count} sample"
            f"{'s' if count != 1 else ''} twice with different answers (first: "
            f"{summary.conflicts[0]}); the last line of each is the one scored and the manifest "
            "lists them under conflicting_records: check how the file was edited or joined"]


TRUNCATION_WARN = 0.05  # share of a group's answers cut off above which a run warns


def truncation_warnings(summary: RunSummary) -> list[str]:
    """A warning per (method, model, task) of this invocation with more than 5 % of its
    answers cut off at the token limit, naming the ``--max-tokens`` to raise."""
    lines = []
    for group, (cut, n) in sorted(summary.truncated_by_group.items()):
        if n and cut / n > TRUNCATION_WARN:
            lines.append(f"warning: {group}: {cut} of {n} answers ({cut / n:.0%}) were cut off "
                         "at the token limit and count as unparseable; raise --max-tokens "
                         "(a reasoning model needs room to think) and run again into a new "
                         "--out")
    return lines


def status_note(run_dir: Path, manifest: dict[str, Any] | None) -> str | None:
    """A line for ``nutrireason score`` when the run it scores is not complete, else None."""
    status = effective_status(manifest)
    if manifest is None or status in (None, "complete", "finished"):
        return None
    counts = manifest.get("counts") or {}
    detail = (f" ({counts['ok']} ok, {counts['error']} errors, {counts['missing']} not run of "
              f"{counts['planned']})") if {"ok", "error", "missing", "planned"} <= set(counts) \
        else ""
    if status == "running":
        owner = manifest.get("owner") or {}
        return (f"a run (pid {owner.get('pid', 'unknown')}) is still writing {run_dir}; the "
                "metrics cover the records written so far")
    return (f"the run in {run_dir} is {status}{detail}; errors count in error_rate, never as "
            "answers, and samples not run are left out")
