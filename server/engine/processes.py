"""Child processes the engine starts (shell commands, hooks): each in its own
process group, so that stopping one stops everything it started."""

from __future__ import annotations

import os
import signal
import sys

from anyio.abc import ByteReceiveStream, Process


def kill_group(process: Process) -> None:
    """Kill ``process`` and its whole group; a group already gone is fine."""
    try:
        if sys.platform == "win32":
            process.kill()
        else:
            os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class CappedOutput:
    """What a child wrote to one pipe, kept up to ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.cut = False  # more was written than kept

    async def drain(self, stream: ByteReceiveStream) -> None:
        # Keep reading past the cap so the child never blocks on a full pipe.
        async for chunk in stream:
            room = self.limit - len(self.data)
            if len(chunk) > room:
                self.cut = True
            if room > 0:
                self.data.extend(chunk[:room])

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")
