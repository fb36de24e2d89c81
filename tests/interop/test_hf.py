"""`export hf` gives one loadable config per (level, task) and per
FAM-Bench task, with one explicit schema (same columns and order in JSONL and Parquet, nulls not
missing keys) and a dataset card whose YAML parses; the graph's food nodes carry their names
and the graph exports as GraphML."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.errors import DataError
from nutrireason.interop.graph import export_graphml
from nutrireason.interop.hf import export_hf
from tests.interop.conftest import need

NGQA_CONFIGS = [f"{level}_{task}" for level in ("sparse", "standard", "complex")
                for task in ("binary", "multi_label", "text_generation")]


@pytest.fixture(scope="module")
def exported(ngqa_build, fam_build, tmp_path_factory) -> Path:
    need("datasets")  # the card's features are written with datasets
    out = tmp_path_factory.mktemp("hf") / "dataset"
    export_hf([ngqa_build, fam_build], out)
    return out


def source_lines(build: Path, config: str) -> list[dict]:
    if config in ("dish", "rank"):
        path = build / f"{config}.jsonl"
    else:
        level, task = config.split("_", 1)
        path = build / level / f"{task}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_every_config_loads_with_datasets(exported, ngqa_build, fam_build, tmp_path):
    need("datasets")
    import datasets

    datasets.disable_progress_bars()
    for config in [*NGQA_CONFIGS, "dish", "rank"]:
        build = fam_build if config in ("dish", "rank") else ngqa_build
        rows = source_lines(build, config)
        loaded = datasets.load_dataset(str(exported), config, split="test",
                                       cache_dir=str(tmp_path / "cache"))
        assert loaded.num_rows == len(rows) > 0, config
        assert loaded[0]["id"] == rows[0]["id"], config
        assert "Json" not in repr(loaded.features), config


def test_a_dish_without_servings_is_null_not_an_opaque_feature(exported, fam_build, tmp_path):
    need("datasets")
    import datasets

    loaded = datasets.load_dataset(str(exported), "dish", split="test",
                                   cache_dir=str(tmp_path / "cache"))
    assert loaded.features["dish"]["servings"] == datasets.Value("float64")
    rows = source_lines(fam_build, "dish")
    without = [i for i, row in enumerate(rows) if "servings" not in row["dish"]]
    with_servings = [i for i, row in enumerate(rows) if "servings" in row["dish"]]
    assert without and with_servings  # the build has both kinds of dish
    assert loaded[without[0]]["dish"]["servings"] is None
    assert loaded[with_servings[0]]["dish"]["servings"] == \
        pytest.approx(rows[with_servings[0]]["dish"]["servings"])


@pytest.mark.parametrize("config", ["complex_multi_label", "dish", "rank"])
def test_jsonl_and_parquet_have_the_same_columns_order_and_values(exported, config):
    def strict(constant: str) -> None:
        raise AssertionError(f"{constant} in the JSONL is not JSON")

    table = pq.read_table(exported / "data" / config / "test.parquet")
    lines = [json.loads(line, parse_constant=strict) for line in
             (exported / "jsonl" / f"{config}.jsonl").read_text().splitlines()]
    assert len(lines) == table.num_rows
    assert all(list(line) == table.column_names for line in lines)
    assert lines[:20] == table.slice(0, 20).to_pylist()


def test_ngqa_configs_share_one_schema_per_task(exported):
    for task in ("binary", "multi_label", "text_generation"):
        schemas = {level: pq.read_schema(exported / "data" / f"{level}_{task}" / "test.parquet")
                   for level in ("sparse", "standard", "complex")}
        first = schemas["sparse"]
        assert all(schema.equals(first) for schema in schemas.values()), task
    binary = pq.read_schema(exported / "data" / "complex_binary" / "test.parquet")
    assert binary.field("answer").type == pa.string()
    multi = pq.read_schema(exported / "data" / "complex_multi_label" / "test.parquet")
    assert multi.field("answer").type == pa.list_(pa.string())


def test_the_card_parses_and_names_configs_licences_and_citations(exported):
    need("huggingface_hub")
    from huggingface_hub import DatasetCard

    card = DatasetCard.load(exported / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-sa-4.0"
    assert [c["config_name"] for c in data["configs"]] == [*NGQA_CONFIGS, "dish", "rank"]
    assert {i["config_name"] for i in data["dataset_info"]} == {*NGQA_CONFIGS, "dish", "rank"}
    text = card.text
    for needed in ("public domain", "CC BY-SA", "Wikibooks", "NHANES", "Standard Reference",
                   "arXiv:2412.15547", "arXiv:2605.31410", "sha256", "Known differences"):
        assert needed in text, needed


def test_an_existing_folder_is_refused_and_left_alone(fam_build, tmp_path):
    out = tmp_path / "taken"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    with pytest.raises(DataError, match="already holds files"):
        export_hf([fam_build], out)
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]


def test_an_unknown_item_field_is_named_and_nothing_is_written(fam_build, tmp_path):
    build = tmp_path / "fam"
    build.mkdir()
    (build / "manifest.json").write_text((fam_build / "manifest.json").read_text())
    rows = source_lines(fam_build, "dish")[:3]
    rows[1]["surprise"] = 1
    (build / "dish.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (build / "rank.jsonl").write_text((fam_build / "rank.jsonl").read_text())
    with pytest.raises(DataError) as caught:
        export_hf([build], tmp_path / "out")
    assert "dish.jsonl" in str(caught.value) and "surprise" in str(caught.value)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fam"]


def test_export_hf_through_the_cli(fam_build, tmp_path):
    need("datasets")
    out = tmp_path / "fam-dataset"
    result = CliRunner().invoke(app, ["export", "hf", str(fam_build), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / "data").iterdir()) == ["dish", "rank"]
    result = CliRunner().invoke(app, ["export", "hf", str(fam_build), "--out", str(out)])
    assert result.exit_code == 1 and "already holds files" in " ".join(result.output.split())
    (out / "stale.txt").write_text("from before")
    result = CliRunner().invoke(app, ["export", "hf", str(fam_build), "--out", str(out),
                                      "--overwrite"])
    assert result.exit_code == 0, result.output
    assert not (out / "stale.txt").exists() and (out / "README.md").is_file()


def test_food_nodes_carry_the_name_the_questions_use(ngqa_build, tmp_path):
    out = tmp_path / "graph.graphml"
    nodes, edges = export_graphml(ngqa_build, out)
    graph = nx.read_graphml(out)
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (nodes, edges)
    items = source_lines(ngqa_build, "complex_binary")[:50]
    for item in items:
        node = graph.nodes[f"food:{item['food_id']}"]
        assert node["type"] == "food" and node["label"] == item["food"]
    kinds = {data["type"] for _, data in graph.nodes(data=True)}
    assert {"user", "food", "ingredient", "nutrient_tag", "health_condition"} <= kinds
    assert {data["relation"] for *_, data in graph.edges(data=True)} >= {"has", "need"}


def test_export_graphml_and_lm_eval_through_the_cli(ngqa_build, fam_build, tmp_path):
    out = tmp_path / "graph.graphml"
    result = CliRunner().invoke(app, ["export", "graphml", str(ngqa_build), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert nx.read_graphml(out).number_of_nodes() > 1000
    tasks = tmp_path / "tasks"
    result = CliRunner().invoke(app, ["export", "lm-eval", str(tasks), "--ngqa-build",
                                      str(ngqa_build), "--fam-build", str(fam_build)])
    assert result.exit_code == 0, result.output
    assert (tasks / "nutrireason_ngqa_binary_complex_plain.yaml").is_file()
    result = CliRunner().invoke(app, ["export", "graphml", str(tmp_path / "nowhere")])
    assert result.exit_code == 1 and "not an NGQA build folder" in " ".join(result.output.split())
