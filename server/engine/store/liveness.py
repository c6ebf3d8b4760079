"""Whether the process of a 'running' run still runs it.

A pid alone cannot say: a dead run's pid may belong to another process by now
(after a reboot, or a long uptime). So each run holds an exclusive ``flock`` on
its own lock file, ``<state>/live/<run-id>.lock``, for as long as it runs. The
kernel drops the lock when the process dies, however it dies (SIGKILL, power
cut, a crash), so a lock another process can take means the run is over. The
file also says which process runs it and from which surface, for the window to
tell the user where its approvals are answered and for a cancel to reach it.

A run with no lock file (recorded before there were any, or on a platform
without ``flock``) falls back to asking whether its pid exists.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: the pid is all there is
    fcntl = None  # type: ignore[assignment]

# The locks this process holds, by path: process-wide, since a lock belongs to
# the process (a second Store on the same database must see its own runs alive).
_HELD: dict[str, int] = {}


def pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    return True


class RunLocks:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def path(self, run_id: str) -> Path:
        return self.folder / f"{run_id}.lock"

    def hold(self, run_id: str, surface: str) -> None:
        """Lock ``run_id`` as run by this process until ``release``.

        Locked under a temporary name and renamed into place: another process never
        finds the file unlocked while its run is going."""
        if fcntl is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        final = self.path(run_id)
        temporary = final.with_name(f"{final.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            owner = {"pid": os.getpid(), "surface": surface}
            os.write(fd, json.dumps(owner).encode())
            os.replace(temporary, final)
        except OSError:
            os.close(fd)
            with contextlib.suppress(OSError):
                temporary.unlink()
            return  # no lock: the pid check stands in for it
        _HELD[str(final)] = fd

    def release(self, run_id: str) -> None:
        final = str(self.path(run_id))
        fd = _HELD.pop(final, None)
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(final)
        os.close(fd)

    def alive(self, run_id: str, pid: int) -> bool:
        """Whether the process that runs ``run_id`` (pid ``pid`` when it started) still does."""
        final = self.path(run_id)
        if str(final) in _HELD:
            return True
        if fcntl is None:
            return pid_alive(pid)
        try:
            fd = os.open(final, os.O_RDWR)
        except FileNotFoundError:
            return pid_alive(pid)
        except OSError:
            return True  # cannot tell: never end a run that may be going
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return True
        else:
            # Ours now, so nobody else runs it: the file is stale.
            with contextlib.suppress(OSError):
                os.unlink(final)
            return False
        finally:
            os.close(fd)

    def owner(self, run_id: str) -> dict[str, Any] | None:
        """What the lock file says of the process running ``run_id``: {"pid", "surface"}."""
        try:
            data = json.loads(self.path(run_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) else None
