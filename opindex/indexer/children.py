"""How a build's child processes (the extraction workers, the link step's call-graph process) tie themselves to
the writing process: they die with it and do not keep its build lock."""
from __future__ import annotations

import os
import sys


def join_parent(parent: int | None, lock_fd: int | None) -> None:
    """Worker start: die with the writing process, let go of the build lock."""
    if lock_fd is not None:
        try:
            os.close(lock_fd)  # flock belongs to the open file: a worker's copy would keep the index locked
        except OSError:
            pass
    if parent is None or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG: killed when the writing process dies
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it died before the prctl took effect
        os._exit(1)
