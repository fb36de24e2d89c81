"""Atomic writes: a failure never leaves a half-written artifact behind."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from nutrireason.errors import DataError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file gets under the process umask (0o644 under the usual 0o022)."""
    return 0o666 & ~_umask()


def dir_mode() -> int:
    """The mode a new folder gets under the process umask (0o755 under the usual 0o022)."""
    return 0o777 & ~_umask()


@contextmanager
def atomic_path(target: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; rename it over ``target`` only on success.
    The artifact gets the umask's permissions (``mkstemp`` alone would leave it 0600)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(target), suffix=".tmp",
                               dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        if tmp_path.exists():
            tmp_path.chmod(file_mode())
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def read_text_utf8(path: str | Path, what: str = "file") -> str:
    """A text input decoded as UTF-8 (a BOM is dropped); bytes that are not UTF-8 give a
    DataError naming the file, the byte offset and an encoding that would decode it."""
    path = Path(path)
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        hint = _encoding_hint(data)
        raise DataError(path, f"{what} is not UTF-8: byte 0x{data[exc.start]:02x} at offset "
                        f"{exc.start} cannot be decoded", expected=f"UTF-8 text{hint}") from None


def _encoding_hint(data: bytes) -> str:
    for encoding in ("cp1252", "latin-1"):
        try:
            data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return f" (the file decodes as {encoding}: convert it, e.g. `iconv -f {encoding} " \
            "-t utf-8`)"
    return ""


OVERWRITE_HINT = "a new or empty folder, or --overwrite to replace it"


def check_target_folder(target: str | Path, overwrite: bool = False,
                        earlier: Callable[[Path], bool] | None = None,
                        expected: str = OVERWRITE_HINT) -> None:
    """Refuse to replace what is at ``target``: a file, or a folder that holds anything, unless
    it is this command's own earlier output (``earlier(target)``) or ``overwrite`` is given. A
    DataError names the path and says what to do (``expected``); nothing is written."""
    target = Path(target)
    if not target.exists() and not target.is_symlink():
        return
    if target.is_symlink() or not target.is_dir():
        raise DataError(target, "is a file, not a folder; nothing was written",
                        expected="a new or empty folder")
    if overwrite or not any(target.iterdir()) or (earlier is not None and earlier(target)):
        return
    raise DataError(target, "already holds files; nothing was written", expected=expected)


@contextmanager
def write_folder(target: str | Path, overwrite: bool = False,
                 earlier: Callable[[Path], bool] | None = None,
                 expected: str = OVERWRITE_HINT) -> Iterator[Path]:
    """The one way a command writes a whole folder: refuse what is at ``target`` (see
    :func:`check_target_folder`), then fill a fresh folder that takes its place only when
    whole (:func:`atomic_folder`)."""
    check_target_folder(target, overwrite, earlier, expected)
    with atomic_folder(target) as folder:
        yield folder


@contextmanager
def atomic_folder(target: str | Path) -> Iterator[Path]:
    """Yield a fresh folder beside ``target`` to fill; on success it takes ``target``'s place
    (an existing ``target`` is moved aside, and removed once the new folder is in; it comes
    back if that fails). On an error the fresh folder is removed and ``target`` is left as it
    was; the temporaries a killed write left beside ``target`` are removed by the next write.
    The folder gets the umask's permissions (``mkdtemp`` alone would leave it 0700)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(target)
    fresh = Path(tempfile.mkdtemp(prefix=_temporary_prefix(target), suffix=".tmp",
                                  dir=target.parent))
    try:
        yield fresh
        fresh.chmod(dir_mode())
        _swap_in(fresh, target)
    finally:
        if fresh.exists():
            shutil.rmtree(fresh, ignore_errors=True)


def _temporary_prefix(target: Path) -> str:
    """Temporaries beside ``target`` are named ``.<name>.<pid>.<random>.tmp`` (``.old`` for a
    folder moved aside), so a later write can tell a killed writer's from a live one's."""
    return f".{target.name}.{os.getpid()}."


_TEMPORARY = re.compile(r"\.(?P<pid>\d+)\.[^.]+\.tmp(?:\.old)?$")


def remove_stale_temporaries(target: str | Path) -> list[Path]:
    """Remove the temporaries beside ``target`` (files or folders) that a write killed before
    it finished left behind: those whose writing process is gone. Return what was removed."""
    target = Path(target)
    prefix = f".{target.name}"
    removed = []
    try:
        beside = list(target.parent.iterdir())
    except OSError:
        return removed
    for path in beside:
        if not path.name.startswith(prefix):
            continue
        found = _TEMPORARY.match(path.name[len(prefix):])
        if found is None or process_alive(int(found["pid"])):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def process_alive(pid: Any) -> bool:
    """Whether ``pid`` is a running process on this host (one we may not signal counts)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


def _swap_in(fresh: Path, target: Path) -> None:
    if not target.exists():
        os.rename(fresh, target)
        return
    old = fresh.with_name(f"{fresh.name}.old")
    os.rename(target, old)
    try:
        os.rename(fresh, target)
    except BaseException:
        os.rename(old, target)
        raise
    shutil.rmtree(old, ignore_errors=True)


def write_text_atomic(target: str | Path, text: str) -> Path:
    """Write ``text`` to ``target`` atomically (UTF-8)."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)


def write_json_atomic(target: str | Path, data: Any, strict: bool = True) -> Path:
    """Write ``data`` as stable, indented JSON atomically; ``strict`` writes NaN and infinite
    numbers as null (see :func:`write_jsonl_atomic`)."""
    if strict:
        data = finite(data)
    return write_text_atomic(target, json.dumps(data, indent=2, sort_keys=True, default=str,
                                                allow_nan=not strict) + "\n")


def write_parquet_atomic(target: str | Path, frame: pd.DataFrame) -> Path:
    """Write a DataFrame to Parquet atomically, without the pandas index."""
    with atomic_path(target) as tmp:
        frame.to_parquet(tmp, index=False)
    return Path(target)


def write_jsonl_atomic(target: str | Path, rows: Iterable[Any], strict: bool = True) -> Path:
    """One JSON object per line (keys sorted, UTF-8 kept), written atomically. ``strict``
    lines are strict JSON: a NaN or infinite number (SR28's "not measured") is written as
    null; otherwise it is written as ``NaN``, which Python's and pydantic's readers take back."""
    if strict:
        rows = (finite(row) for row in rows)
    return write_text_atomic(target, "".join(
        json.dumps(row, ensure_ascii=False, sort_keys=True, allow_nan=not strict) + "\n"
        for row in rows))


def finite(value: Any) -> Any:
    """``value`` with every NaN or infinite float (in dicts and lists too) replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load`` with libyaml's C parser where PyYAML has it (the reviewed map loads
    in 0.2 s instead of 1.6 s, to the same data; the same safe constructors), else the
    pure-Python one."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_jsonl(path: str | Path, what: str, missing: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file, blank lines skipped. A missing file is a DataError
    "<what> not found" expecting ``missing`` (what to run first); a bad line names its
    number."""

    path = Path(path)
    if not path.is_file():
        raise DataError(path, f"{what} not found", expected=missing)
    rows = []
    for number, line in enumerate(read_text_utf8(path, what).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise DataError(path, f"line {number} is not JSON: {exc.msg}") from exc
    return rows


def read_json_object(path: str | Path) -> dict[str, Any]:
    """A JSON file holding one object (a manifest); bad JSON or another value is a DataError
    naming the file."""
    path = Path(path)
    try:
        data = json.loads(read_text_utf8(path, "JSON file"))
    except ValueError as exc:
        raise DataError(path, f"not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise DataError(path, "not a JSON object", expected="a JSON object")
    return data


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def input_fingerprints(paths: list[Path]) -> list[dict[str, str]]:
    """``[{"name", "sha256"}]`` for the files an artifact was built from, in order."""
    return [{"name": Path(p).name, "sha256": sha256_file(p)} for p in paths]


def up_to_date(manifest: Path, inputs: list[dict[str, str]], **settings: Any) -> bool:
    """True when ``manifest`` records exactly these inputs and settings (so the build that
    wrote it would write the same files again)."""
    if not manifest.is_file():
        return False
    try:
        recorded = json.loads(manifest.read_text(encoding="utf-8"))
    except ValueError:
        return False
    return recorded.get("inputs") == inputs and all(
        recorded.get(key) == value for key, value in settings.items())


def scrub(text: str) -> str:
    """Remove credentials from text: a URL's ``user:password@`` part, and the value of every
    ``*API_KEY*`` / ``*TOKEN*`` environment variable."""
    text = re.sub(r"://[^/@\s]+@", "://***@", text)
    for name, value in os.environ.items():
        upper = name.upper()
        if value and len(value) >= 8 and ("API_KEY" in upper or "TOKEN" in upper):
            text = text.replace(value, "***")
    return text
