"""Data-derived paths stay inside their folder; URLs are never fetched.

A recipe's ``image`` field or its id could name a file outside the images folder of
``fam build --images DIR``; ``run fam --input text+image`` would then base64-encode that file into
the request and the records. Now the build refuses such a recipe (DataError naming it and the
value), instances carry the folder (``images_root``) and the method reads nothing outside it
(a non-retryable "bad_request" item error naming the item and the value).
"""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from nutrireason.cli import app
from nutrireason.errors import DataError
from nutrireason.fam.build import build_fam
from nutrireason.fam.instances import confined_image, find_image, has_images
from nutrireason.methods.fam import image_url
from nutrireason.models.errors import ModelError
from nutrireason.models.scripted import register
from nutrireason.models.types import ChatRequest
from nutrireason.runs import RunConfig, run
from nutrireason.runs.records import RECORDS_FILE
from tests.methods.test_fam_methods import CABBAGE, dish_item, png, rank_item

REC = "recommend"
SECRET = b"\x89PNG\r\n\x1a\n secret bytes that must never be sent"  # image-like on purpose


@pytest.fixture
def folders(tmp_path) -> tuple[Path, Path]:
    """(images folder with soup.png and sub/cake.png, a secret PNG-looking file outside it)."""
    images = tmp_path / "data" / "images"
    (images / "sub").mkdir(parents=True)
    (images / "soup.png").write_bytes(png("soup"))
    (images / "sub" / "cake.png").write_bytes(png("cake"))
    secret = tmp_path / "secret.png"
    secret.write_bytes(SECRET)
    return images, secret


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


# --------------------------------------------------------------------------- the build


def test_images_inside_the_folder_are_found(folders):
    images, _ = folders
    root = images.resolve()
    assert find_image("soup", {}, images) == str(root / "soup.png")
    assert find_image("x", {"image": "sub/cake.png"}, images) == str(root / "sub" / "cake.png")
    assert find_image("x", {"image": str(root / "sub" / "cake.png")}, images) == str(
        root / "sub" / "cake.png")
    assert find_image("x", {"image": "missing.png"}, images) is None
    assert find_image("soup", {}, None) is None  # no folder: no image at all


@pytest.mark.parametrize("value", ["../../../../../../../../etc/passwd", "../secret.png",
                                   "sub/../../../secret.png", "/etc/passwd"])
def test_an_image_field_leading_out_of_the_folder_is_refused(folders, value):
    images, _ = folders
    with pytest.raises(DataError) as info:
        find_image("evil-pie", {"image": value}, images)
    error = info.value
    assert "'evil-pie'" in str(error) and error.field == "image" and error.value == value


@pytest.mark.parametrize("recipe_id", ["../secret", "../../elsewhere", "/etc/passwd",
                                       "sub/../../secret"])
def test_a_recipe_id_leading_out_of_the_folder_is_refused(folders, recipe_id):
    images, secret = folders
    with pytest.raises(DataError) as info:
        find_image(recipe_id, {}, images)
    assert info.value.field == "id" and info.value.value == recipe_id
    assert repr(recipe_id) in str(info.value)
    assert secret.read_bytes() == SECRET


def test_a_symlink_escaping_the_folder_is_refused(folders):
    images, secret = folders
    (images / "pie.png").symlink_to(secret)
    with pytest.raises(DataError, match="'pie'.*outside the images folder"):
        find_image("pie", {}, images)
    (images / "link.png").symlink_to(secret)
    with pytest.raises(DataError, match="'tart'") as info:
        find_image("tart", {"image": "link.png"}, images)
    assert info.value.value == "link.png"
    (images / "escape").symlink_to(secret.parent, target_is_directory=True)
    with pytest.raises(DataError, match="'flan'"):
        find_image("flan", {"image": "escape/secret.png"}, images)


@pytest.mark.parametrize("value", ["http://127.0.0.1:9/pie.png", "https://example.org/pie.png",
                                   "file:///etc/passwd", "ftp://example.org/x.png",
                                   "data:image/png;base64,AAAA"])
def test_a_url_image_is_never_fetched(folders, no_network, value):
    images, _ = folders
    assert find_image("pie", {"image": value}, images) is None
    # a folder image for the id still wins
    assert find_image("soup", {"image": value}, images) == str(images.resolve() / "soup.png")


# --------------------------------------------------------------------------- the method


def test_image_url_reads_only_inside_the_instance_folder(folders, no_network):
    images, secret = folders
    root = str(images.resolve())
    url = image_url(str(images / "soup.png"), "dish-00001", root)
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == (images / "soup.png").read_bytes()
    assert image_url("sub/cake.png", "dish-00001", root).startswith("data:image/png;base64,")
    (images / "pie.png").symlink_to(secret)
    (images / "notes.png").write_text("root:x:0:0:root:/root:/bin/bash\n")
    refused = {
        "../secret.png": "outside the images folder",
        str(secret): "outside the images folder",
        "pie.png": "outside the images folder",  # a symlink leading out
        "https://example.org/x.png": "a URL",
        "file:///etc/passwd": "a URL",
        "notes.png": "not a JPEG, PNG, WebP or GIF file",
    }
    for value, reason in refused.items():
        with pytest.raises(ModelError) as info:
            image_url(value, "dish-00042", root)
        error = info.value
        assert error.kind == "bad_request" and not error.retryable
        assert "dish-00042" in str(error) and repr(value) in str(error) and reason in str(error)


def test_without_an_images_folder_no_image_is_read(folders):
    images, secret = folders
    for value in (str(images / "soup.png"), "soup.png", str(secret)):
        with pytest.raises(ModelError, match="no images folder"):
            image_url(value, "d", None)


def test_has_images_applies_the_same_confinement(folders):
    images, secret = folders
    root = str(images.resolve())
    good = {"task": "fam_dish", "image": str(images / "soup.png"), "images_root": root}
    assert has_images(good)
    assert not has_images(good | {"image": str(secret)})
    assert not has_images(good | {"image": "https://example.org/x.png"})
    rank = rank_item(images={k: "soup.png" for k in "ABCD"}) | {"images_root": root}
    assert has_images(rank)
    rank["images"]["C"] = "../secret.png"
    assert not has_images(rank)
    with pytest.raises(ValueError, match="outside"):
        confined_image("../secret.png", root)


def test_a_run_records_refused_images_as_item_errors_and_sends_nothing(folders, tmp_path):
    images, secret = folders
    root = str(images.resolve())
    sent: list[ChatRequest] = []
    register("path-confinement-spy", lambda r: sent.append(r) or '{"decision": "recommend"}')
    items = [dish_item(1, CABBAGE, "hypertension", REC, ["cabbage"], image="../secret.png"),
             dish_item(2, CABBAGE, "hypertension", REC, ["cabbage"],
                       image="https://example.org/x.png"),
             rank_item(images={"A": "soup.png", "B": "soup.png", "C": str(secret),
                               "D": "soup.png"})]
    for item in items:
        item["images_root"] = root
    bench = tmp_path / "items.jsonl"
    bench.write_text("".join(json.dumps(i) + "\n" for i in items))
    run(RunConfig(benchmark=bench, out=tmp_path / "run", methods=["fam-baseline[text+image]"],
                  models=["scripted/path-confinement-spy"], concurrency=1, cache=False,
                  progress=False, images=images))
    assert sent == []
    records = {r["item_id"]: r for r in map(json.loads,
                                             (tmp_path / "run" / RECORDS_FILE).read_text()
                                             .splitlines())}
    expected = {"dish-00001": "'../secret.png'", "dish-00002": "'https://example.org/x.png'",
                "rank-00001": repr(str(secret))}
    for item_id, value in expected.items():
        record = records[item_id]
        assert record["status"] == "error" and record["error"]["kind"] == "bad_request"
        assert item_id in record["error"]["message"] and value in record["error"]["message"]
        assert record["n_calls"] == 0
    stored = (tmp_path / "run" / RECORDS_FILE).read_text()
    assert base64.b64encode(SECRET).decode()[:24] not in stored and "secret bytes" not in stored


# --------------------------------------------------------------------------- end to end


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _pool_ids(fam_pool: Path) -> list[str]:
    return [a["recipe_id"] for a in _lines(fam_pool / "annotations.jsonl")
            if not a["excluded"] and (a["rec"] or a["not_rec"])]


def _tampered(tmp_path: Path, fam_pool: Path, recipe_build: Path, victim: str,
              image: str | None = None, new_id: str | None = None) -> tuple[Path, Path]:
    """Copies of the pool and the recipes with one recipe's image field or id changed."""
    recipes = _lines(recipe_build / "recipes.jsonl")
    annotations = _lines(fam_pool / "annotations.jsonl")
    for recipe in recipes:
        if recipe["record"]["id"] == victim:
            if image is not None:
                recipe["record"]["image"] = image
            if new_id is not None:
                recipe["record"]["id"] = new_id
    for annotation in annotations:
        if new_id is not None and annotation["recipe_id"] == victim:
            annotation["recipe_id"] = new_id
    return (_write_lines(tmp_path / "pool" / "annotations.jsonl", annotations),
            _write_lines(tmp_path / "recipes" / "recipes.jsonl", recipes))


def test_the_build_refuses_an_image_field_leading_out(fam_pool, recipe_build, sr28, tmp_path):
    images = tmp_path / "data" / "images"
    images.mkdir(parents=True)
    victim = _pool_ids(fam_pool)[0]
    value = "../../../../../../../../../../etc/passwd"
    pool, recipes = _tampered(tmp_path, fam_pool, recipe_build, victim, image=value)
    out = tmp_path / "bench"
    result = CliRunner().invoke(app, ["fam", "build", "--annotations", str(pool.parent),
                                      "--recipes", str(recipes.parent), "--out", str(out),
                                      "--images", str(images), "--dish-size", "20",
                                      "--rank-size", "8"])
    assert result.exit_code == 1
    message = " ".join(result.output.split())
    assert repr(victim) in message and value in message and "outside the images folder" in message
    assert not (out / "manifest.json").exists()


def test_the_build_refuses_a_recipe_id_leading_out(fam_pool, recipe_build, sr28, tmp_path):
    images = tmp_path / "data" / "images"
    images.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere.png"
    elsewhere.write_bytes(SECRET)
    new_id = "../../elsewhere"
    pool, recipes = _tampered(tmp_path, fam_pool, recipe_build, _pool_ids(fam_pool)[0],
                              new_id=new_id)
    with pytest.raises(DataError) as info:
        build_fam(pool, recipes, sr28, tmp_path / "bench", dish_size=20, rank_size=8,
                  images=images)
    assert info.value.field == "id" and info.value.value == new_id
    assert repr(new_id) in str(info.value)


def test_a_url_image_field_is_ignored_by_the_build(fam_pool, recipe_build, sr28, tmp_path,
                                                     no_network):
    images = tmp_path / "data" / "images"
    images.mkdir(parents=True)
    ids = _pool_ids(fam_pool)
    pool, recipes = _tampered(tmp_path, fam_pool, recipe_build, ids[0],
                              image="file:///etc/passwd")
    build_fam(pool, recipes, sr28, tmp_path / "bench", dish_size=20, rank_size=8, images=images)
    items = _lines(tmp_path / "bench" / "dish.jsonl")
    assert all(item["image"] is None for item in items)


def build_with_images(fam_pool: Path, recipe_build: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(images folder, benchmark folder): `fam build --images` with a PNG per pool recipe."""
    images = tmp_path / "data" / "images"
    images.mkdir(parents=True)
    for recipe_id in _pool_ids(fam_pool):
        (images / f"{recipe_id}.png").write_bytes(png(recipe_id))
    out = tmp_path / "bench"
    built = CliRunner().invoke(app, ["fam", "build", "--annotations", str(fam_pool),
                                     "--recipes", str(recipe_build), "--out", str(out),
                                     "--images", str(images), "--dish-size", "20",
                                     "--rank-size", "8"])
    assert built.exit_code == 0, built.output
    return images, out


def test_images_in_the_folder_reach_the_model_as_data_urls(fam_pool, recipe_build, tmp_path):
    images, out = build_with_images(fam_pool, recipe_build, tmp_path)
    items = _lines(out / "dish.jsonl")
    root = images.resolve()
    assert all(item["images_root"] == str(root) for item in items)
    assert all(Path(item["image"]).parent == root for item in items)
    seen: list[str] = []

    def answer(request: ChatRequest) -> str:
        for part in request.messages[-1].content:
            if getattr(part, "type", None) == "image_url":
                seen.append(part.image_url.url)
        return '{"decision": "recommend", "rationale_ingredients": []}'

    register("path-confinement-e2e", answer)
    result = CliRunner().invoke(app, ["run", "fam", "--task", "dish", "--input", "text+image",
                                      "--benchmark-dir", str(out), "--out",
                                      str(tmp_path / "run"), "--limit", "3", "--no-progress",
                                      "--no-cache", "--model", "scripted/path-confinement-e2e"])
    assert result.exit_code == 0, result.output
    assert len(seen) == 3 and all(url.startswith("data:image/png;base64,") for url in seen)
    assert sorted(base64.b64decode(url.split(",", 1)[1]) for url in seen) == sorted(
        png(item["recipe_id"]) for item in items[:3])
    records = _lines(tmp_path / "run" / RECORDS_FILE)
    assert [r["status"] for r in records] == ["ok"] * 3


# --------------------------------------------------------------------------- forged images_root


def test_a_forged_images_root_in_the_benchmark_file_is_never_used(folders, tmp_path):
    """An edited item says ``images_root: /`` and names a file outside the run's folder: the
    run replaces the item's folder with its own (here none, then the real one) and sends
    nothing outside it."""
    images, secret = folders
    sent: list[ChatRequest] = []
    register("forged-root-spy", lambda r: sent.append(r) or '{"decision": "recommend"}')
    item = dish_item(1, CABBAGE, "hypertension", REC, ["cabbage"], image=str(secret))
    item["images_root"] = "/"
    bench = tmp_path / "items.jsonl"
    bench.write_text(json.dumps(item) + "\n")
    for root, reason in ((None, "no images folder"), (images, "outside the images folder")):
        out = tmp_path / f"run-{reason.split()[0]}"
        run(RunConfig(benchmark=bench, out=out, methods=["fam-baseline[text+image]"],
                      models=["scripted/forged-root-spy"], concurrency=1, cache=False,
                      progress=False, images=root))
        record = json.loads((out / RECORDS_FILE).read_text())
        assert record["status"] == "error" and reason in record["error"]["message"]
    assert sent == []


def test_run_takes_the_images_folder_from_the_build_not_from_an_edited_item(
        fam_pool, recipe_build, tmp_path):
    images, out = build_with_images(fam_pool, recipe_build, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "private.png").write_bytes(png("private"))
    items = _lines(out / "dish.jsonl")
    items[0] |= {"images_root": str(elsewhere), "image": str(elsewhere / "private.png")}
    _write_lines(out / "dish.jsonl", items)
    command = ["run", "fam", "--task", "dish", "--input", "text+image", "--benchmark-dir",
               str(out), "--limit", "2", "--no-progress", "--no-cache", "--model",
               "scripted/echo"]
    result = CliRunner().invoke(app, [*command, "--out", str(tmp_path / "run")])
    message = " ".join(result.output.split())
    assert result.exit_code == 1 and "1 of 2 items have no local image file" in message
    assert items[0]["id"] in message and not (tmp_path / "run").exists()
    # --images names the folder explicitly: the forged item is still outside it
    result = CliRunner().invoke(app, [*command, "--out", str(tmp_path / "run"),
                                      "--images", str(images)])
    assert result.exit_code == 1 and "1 of 2 items" in " ".join(result.output.split())
    # an --images folder that does not exist is named
    result = CliRunner().invoke(app, [*command, "--out", str(tmp_path / "run"),
                                      "--images", str(tmp_path / "nowhere")])
    assert result.exit_code == 1 and "images folder not found" in result.output
