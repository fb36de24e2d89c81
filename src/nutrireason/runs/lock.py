"""An exclusive lock on a run folder, held for a whole run (resume and ``--retry-errors`` too).

The lock is ``run.lock`` in the run folder, taken with ``fcntl.flock``; it holds the owner's pid,
host and start time so a refused process can name the holder. The kernel drops a ``flock`` when
its process dies (even by SIGKILL), so a lock file left by a dead process is simply taken over.
On a filesystem without ``flock`` support the pid in the file decides: a live pid on this host
holds the folder, anything else is stale.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from nutrireason.errors import DataError
from nutrireason.storage import process_alive

LOCK_FILE = "run.lock"
_UNSUPPORTED = (errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL)


class RunLocked(DataError):
    """Another live process holds the run folder."""

    def __init__(self, out_dir: Path, holder: dict[str, Any]) -> None:
        self.holder = holder
        pid = holder.get("pid", "unknown")
        host = holder.get("host", "an unknown host")
        since = holder.get("started_at")
        when = f" since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))}" \
            if isinstance(since, (int, float)) else ""
        super().__init__(out_dir, f"another run holds this folder (pid {pid} on {host}{when}); "
                         "nothing was run or written",
                         expected=f"one run per folder: wait for pid {pid} to finish or stop it, "
                         "or use another --out")


def owner() -> dict[str, Any]:
    """This process as a lock or manifest owner."""
    return {"pid": os.getpid(), "host": socket.gethostname(), "started_at": time.time()}


def holder_alive(holder: dict[str, Any] | None) -> bool:
    """Whether a recorded owner may still be running (another host's pid cannot be checked)."""
    if not holder:
        return False
    if holder.get("host") != socket.gethostname():
        return True
    return process_alive(holder.get("pid"))


def read_holder(out_dir: Path) -> dict[str, Any] | None:
    """The owner written in a run folder's lock file, or None when there is none."""
    try:
        text = (out_dir / LOCK_FILE).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    return _parse(text.encode("utf-8"))


def _parse(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class RunLock:
    """``with RunLock(out_dir):`` holds the folder; a second holder gets :class:`RunLocked`.

    ``previous`` is the owner a stale lock file named (a process that died holding it), if any.
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = out_dir
        self.path = out_dir / LOCK_FILE
        self.previous: dict[str, Any] | None = None
        self._fd: int | None = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

    def acquire(self) -> None:
        """Take the lock or raise :class:`RunLocked` naming the holder; writes nothing if
        refused."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        while self._fd is None:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                self._lock(fd)
            except BaseException:
                os.close(fd)
                raise
            if _same_file(fd, self.path):
                self._own(fd)
            else:  # the holder removed the file while we opened it: try the new one
                os.close(fd)

    def _lock(self, fd: int) -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLocked(self.out_dir, _read_fd(fd) or {}) from None
        except OSError as exc:
            if exc.errno not in _UNSUPPORTED:
                raise
            holder = _read_fd(fd)
            if holder and holder_alive(holder) and holder.get("pid") != os.getpid():
                raise RunLocked(self.out_dir, holder) from None

    def _own(self, fd: int) -> None:
        self.previous = _read_fd(fd, tries=1)
        data = json.dumps(owner()).encode("utf-8")
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        self._fd = fd

    def release(self) -> None:
        """Remove the lock file and drop the lock (the file first, so no one locks a file
        that is about to disappear)."""
        if self._fd is None:
            return
        if _same_file(self._fd, self.path):
            self.path.unlink(missing_ok=True)
        os.close(self._fd)
        self._fd = None


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (on_disk.st_dev, on_disk.st_ino) == (opened.st_dev, opened.st_ino)


def _read_fd(fd: int, tries: int = 5) -> dict[str, Any] | None:
    """The owner in an open lock file; a holder that has just locked may not have written yet."""
    for attempt in range(tries):
        data = os.pread(fd, 4096, 0)
        if data.strip():
            return _parse(data)
        if attempt < tries - 1:
            time.sleep(0.02)
    return None
