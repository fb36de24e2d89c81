"""`run --repeats K`: K answers per item at temperature above 0, each its own cache entry and
seed; `score` keeps an item's repeats in one cluster and says how often they agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.models.scripted import register
from nutrireason.models.types import GenerationSettings
from nutrireason.runs import RunConfig, run
from nutrireason.scoring import score_run

SAMPLING = GenerationSettings(temperature=0.7, seed=11)


def _items(path: Path, count: int = 6) -> Path:
    lines = [{"id": f"q{i}", "task": "binary", "level": "sparse", "food": f"F{i}",
              "question": f"Is F{i} right? seed", "triples": [], "answer": "Yes",
              "user_id": f"u{i % 2}", "signal": [], "conditions": [], "diets": []}
             for i in range(count)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _by_seed(request) -> str:
    """Yes on odd seeds, No on even ones: the answer shows which seed was sent."""
    return "Yes" if request.settings.seed % 2 else "No"


def test_repeats_at_temperature_zero_are_refused(tmp_path):
    with pytest.raises(DataError, match="temperature"):
        run(RunConfig(benchmark=_items(tmp_path / "items.jsonl"), out=tmp_path / "run",
                      methods=["plain"], models=["scripted/echo"], repeats=2, progress=False))
    assert not (tmp_path / "run" / "records.jsonl").exists()


def test_each_repeat_is_its_own_sample_seed_and_cache_entry(tmp_path):
    register("by_seed", _by_seed)
    items = _items(tmp_path / "items.jsonl")
    config = RunConfig(benchmark=items, out=tmp_path / "run", methods=["plain"],
                       models=["scripted/by_seed"], repeats=3, settings=SAMPLING,
                       progress=False, cache_path=tmp_path / "cache.sqlite")
    summary = run(config)
    assert (summary.planned, summary.ok, summary.cache_hits) == (18, 18, 0)
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").open()]
    keys = {r["key"] for r in records}
    assert {"q0::plain::scripted/by_seed", "q0::plain::scripted/by_seed::r2",
            "q0::plain::scripted/by_seed::r3"} <= keys and len(keys) == 18
    first = {r["key"]: r for r in records}
    seeds = [first[f"q0::plain::scripted/by_seed{s}"]["requests"][0]["settings"]["seed"]
             for s in ("", "::r2", "::r3")]
    assert seeds == [11, 12, 13]
    assert [first[f"q0::plain::scripted/by_seed{s}"]["parsed"] for s in ("", "::r2", "::r3")] \
        == ["Yes", "No", "Yes"]
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["repeats"] == 3
    # a second run folder with the same cache answers every repeat from its own entry
    again = run(RunConfig(**{**config.__dict__, "out": tmp_path / "again"}))
    assert again.cache_hits == 18 and again.model_calls == 0
    repeated = {json.loads(line)["key"]: json.loads(line)["parsed"]
                for line in (tmp_path / "again" / "records.jsonl").open()}
    assert repeated == {key: r["parsed"] for key, r in first.items()}


def test_score_clusters_repeats_and_reports_agreement(tmp_path):
    register("by_seed", _by_seed)
    run(RunConfig(benchmark=_items(tmp_path / "items.jsonl"), out=tmp_path / "run",
                  methods=["plain"], models=["scripted/by_seed"], repeats=3, settings=SAMPLING,
                  progress=False, cache=False))
    group = score_run(tmp_path / "run", bootstrap=50, cluster="item")["groups"][0]
    # every item: Yes, No, Yes -> no item agrees with itself; 6 clusters of 3
    assert group["repeats"] == {"items": 6, "answers_per_item": 3.0, "agreement": 0.0}
    assert group["clusters"] == {"by": "item", "count": 6, "largest": 3}
    assert group["metrics"]["accuracy"]["value"] == pytest.approx(2 / 3)
    # each item's mean is 2/3: resampling items cannot move the accuracy
    assert group["metrics"]["accuracy"]["low"] == pytest.approx(2 / 3)
    assert group["metrics"]["accuracy"]["high"] == pytest.approx(2 / 3)
