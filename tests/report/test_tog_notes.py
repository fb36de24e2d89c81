"""ToG's calls per question reach the efficiency table beside the bounds."""

from __future__ import annotations

from nutrireason.display.groups import groups_frame
from nutrireason.ngqa.report import efficiency_table
from nutrireason.report.tables import method_notes


def group(method: str, n: int, stats: dict | None, level: str = "standard") -> dict:
    return {"method": method, "model": "scripted/x", "task": "binary", "level": level,
            "n": n, "errors": 0, "error_rate": 0.0, "metrics": {},
            "efficiency": {"calls_per_sample": 1.0, "prompt_tokens": 0.0,
                           "completion_tokens": 0.0, "latency_s": 0.0},
            "retrieval": None, "method_stats": stats}


def test_the_efficiency_table_notes_tog_calls_beside_the_bounds():
    tog = {"tog_calls": 3.0, "tog_stopped_early": 0.25, "tog_depth_reached": 2.0,
           "tog_bound": 7, "tog_authors_bound": 34}
    metrics = [{"run": "r", "groups": [
        group("plain", 4, None),
        group("tog", 30, tog),
        group("tog", 10, tog | {"tog_calls": 5.0, "tog_stopped_early": 0.75}, "complex")]}]
    frame = groups_frame(metrics)
    notes = efficiency_table(frame, method_notes(frame)).notes
    (line,) = [n for n in notes if n.startswith("tog")]
    # weighted by n: (30 * 3 + 10 * 5) / 40 = 3.5 calls; (30 * .25 + 10 * .75) / 40 = 37.5 %
    assert line.startswith("tog (scripted/x): 3.50 model calls per answered question")
    assert "early in 38%" in line and "at most 7 here" in line and "34 by the ToG authors'" in line
    assert not [n for n in notes if n.startswith("plain")]
