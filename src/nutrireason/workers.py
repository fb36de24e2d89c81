"""Worker processes that end with the process that started them.

A pool's workers wait on a queue; when the parent is killed (``kill -9``, an out-of-memory
kill) nobody closes that queue and the workers would wait for ever. Every pool the toolkit
starts passes :func:`end_with_parent` as its initializer: on Linux the kernel sends the worker
SIGKILL when its parent dies (``PR_SET_PDEATHSIG``), and everywhere a watch thread ends the
worker once its parent process is gone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.5


def end_with_parent(parent: int) -> None:
    """Pool initializer (``initargs=(os.getpid(),)``): this worker ends when ``parent`` does."""
    _ask_kernel()
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="end-with-parent",
                     daemon=True).start()


def _ask_kernel() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl: the watch thread still ends the worker
        pass


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)
