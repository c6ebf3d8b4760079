"""One writer per workspace, across threads and processes.

The desktop app and a CLI run may checkpoint the same workspace at once, so
the lock is an OS file lock on ``<key>.lock`` beside the shadow repository:
``fcntl.flock`` on POSIX. flock belongs to an open file description, so two
threads of one process that each open the file exclude each other too.
Windows has no flock: ``msvcrt.locking`` on the first byte of the file, retried
until it is granted (it gives up after about 10 s per call), plays the same role.
The lock is released when the file is closed, also when the process dies.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _acquire(fd: int) -> None:
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_LOCK, 1)
                return
            except OSError:
                time.sleep(0.05)

    def _release(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _acquire(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextmanager
def workspace_lock(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of ``path`` (created if missing) for the block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd)
        try:
            yield
        finally:
            _release(fd)
    finally:
        os.close(fd)
