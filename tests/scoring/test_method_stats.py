"""A method's statistics reach metrics.json through one field: scoring pools every record's
``method_stats`` per group without knowing their names, and the report writes the sentence
the method declares (``MethodInfo.stats_note``)."""

from __future__ import annotations

from nutrireason.display.groups import groups_frame
from nutrireason.methods import base
from nutrireason.methods.base import MethodInfo, PromptMethod
from nutrireason.ngqa.report import efficiency_table
from nutrireason.report.tables import method_notes
from nutrireason.scoring.score import score_records
from tests.scoring.test_sample_scores import rec


def with_stats(index: int, stats: dict, *, status: str = "ok", method: str = "counting"):
    record = rec("binary", index, "Yes", "Yes", method=method, status=status)
    return record.model_copy(update={"method_stats": stats})


def test_scoring_pools_the_statistics_of_the_answered_records():
    records = [with_stats(0, {"calls": 2, "bound": 9, "stopped": True}),
               with_stats(1, {"calls": 5, "bound": 9, "stopped": False}),
               with_stats(2, {"calls": 4, "bound": 9, "stopped": False}),
               # an error record's figures never count
               with_stats(3, {"calls": 100, "bound": 9, "stopped": True}, status="error"),
               with_stats(4, {}, method="plain")]
    groups = {g["method"]: g for g in score_records(records, bootstrap=0)["groups"]}
    # calls: (2 + 5 + 4) / 3; stopped: 1 of 3; the bound, the same on every record, as it is
    assert groups["counting"]["method_stats"] == {"calls": 11 / 3, "bound": 9,
                                                  "stopped": 1 / 3}
    assert groups["plain"]["method_stats"] is None


def test_a_figure_that_differs_in_type_is_averaged():
    records = [with_stats(0, {"depth": 2}), with_stats(1, {"depth": 2.0})]
    (group,) = score_records(records, bootstrap=0)["groups"]
    assert group["method_stats"] == {"depth": 2.0} and isinstance(
        group["method_stats"]["depth"], float)


def test_the_report_writes_the_declared_sentence_pooled_over_groups(monkeypatch):
    monkeypatch.setattr(base, "_METHODS", dict(base._METHODS))
    monkeypatch.setattr(base, "_INFO", dict(base._INFO))
    base.register_method("counting-test", PromptMethod, MethodInfo(
        stats_note="{calls:.1f} calls, stopped in {stopped:.0%}, bound {bound:.0f}"))

    def group(level: str, n: int, stats: dict) -> dict:
        return {"method": "counting-test", "model": "scripted/x", "task": "binary",
                "level": level, "n": n, "errors": 0, "metrics": {},
                "efficiency": {"calls_per_sample": 1.0}, "method_stats": stats}

    frame = groups_frame([{"groups": [
        group("sparse", 10, {"calls": 2.0, "stopped": 0.5, "bound": 9}),
        group("complex", 30, {"calls": 4.0, "stopped": 0.1, "bound": 9})]}])
    # calls (10 * 2 + 30 * 4) / 40 = 3.5; stopped (10 * .5 + 30 * .1) / 40 = 20 %
    notes = method_notes(frame)
    assert notes == {("counting-test", "scripted/x"): "3.5 calls, stopped in 20%, bound 9"}
    assert "counting-test (scripted/x): 3.5 calls, stopped in 20%, bound 9" in \
        efficiency_table(frame, notes).notes


def test_a_method_without_a_sentence_gets_no_note():
    frame = groups_frame([{"groups": [{
        "method": "plain", "model": "m", "task": "binary", "level": "sparse", "n": 3,
        "errors": 0, "metrics": {}, "method_stats": {"calls": 1.0}}]}])
    assert method_notes(frame) == {}


def test_tog_statistics_travel_from_the_method_to_metrics_json(tmp_path):
    """End to end: ToG's answer carries its statistics, the engine writes them on the record,
    scoring pools them and the report's sentence reads them."""
    import json

    from nutrireason.runs import RunConfig, run
    from nutrireason.schema import read_records
    from tests.test_extending import NGQA_ITEM

    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps(NGQA_ITEM) + "\n", encoding="utf-8")
    summary = run(RunConfig(benchmark=items, out=tmp_path / "run", methods=["tog"],
                            models=["scripted/yes"], cache=False, progress=False))
    assert summary.ok == 1
    (record,) = read_records(tmp_path / "run")
    assert record.method_stats["tog_calls"] == record.extra["tog_calls"] >= 1
    assert record.method_stats["tog_bound"] == record.extra["tog_call_bounds"][
        "this_implementation"]
    (group,) = score_records([record], bootstrap=0)["groups"]
    assert group["method_stats"] == record.method_stats
    (note,) = method_notes(groups_frame([{"groups": [group]}])).values()
    assert note.startswith(f"{record.method_stats['tog_calls']:.2f} model calls per answered")
