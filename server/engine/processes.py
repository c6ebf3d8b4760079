"""Child processes the engine starts (shell commands, hooks): each in its own
process group, so that stopping one stops everything it started."""

from __future__ import annotations

import os
import signal
import sys

from anyio.abc import Process


def kill_group(process: Process) -> None:
    """Kill ``process`` and its whole group; a group already gone is fine."""
    try:
        if sys.platform == "win32":
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
