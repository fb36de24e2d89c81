"""Scoring: per-sample records -> metrics with bootstrap intervals (``metrics.json``)."""

from nutrireason.scoring.score import score_records, score_run, write_scores

__all__ = ["score_records", "score_run", "write_scores"]
