"""Another Sparrow process with a run going, driven line by line from a test:
it makes the run's row and lock as ``sparrow run`` does, then writes to the
run's transcript exactly the bytes it is sent (a partial line included)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

WRITER = """
import os, sys
from pathlib import Path
from server.core.paths import resolve_paths
from server.engine.store import Store
paths = resolve_paths().ensure()
store = Store(paths.database)
run_id, surface = sys.argv[1:3]
session = store.create_session("/w", "a task elsewhere")
transcript = paths.transcript(run_id)
store.create_run(run_id=run_id, session_id=session, workspace="/w", task="a task elsewhere",
                 model="script", transcript=transcript, surface=surface)
out = open(transcript, "ab", buffering=0)
print("ready", flush=True)
for line in sys.stdin.buffer:
    command, _, data = line.rstrip(b"\\n").partition(b" ")
    if command == b"write":
        out.write(data.replace(b"\\\\n", b"\\n"))
    elif command == b"finish":
        store.finish_run(run_id, status="completed", reason="done", turns=1)
    elif command == b"die":
        os._exit(0)
    print("ok", flush=True)
"""


class Foreign:
    def __init__(self, run_id: str, surface: str = "cli", home: Path | None = None) -> None:
        self.run_id = run_id
        self.process = subprocess.Popen(
            [sys.executable, "-c", WRITER, run_id, surface],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=os.environ
            | {"PYTHONPATH": str(ROOT)}
            | ({"SPARROW_HOME": str(home)} if home else {}),
        )
        assert self._reply() == "ready"

    def _reply(self) -> str:
        assert self.process.stdout is not None
        return self.process.stdout.readline().decode().strip()

    def _send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command.encode() + b"\n")
        self.process.stdin.flush()

    def write(self, text: str) -> None:
        """Append ``text`` to the transcript (its newlines written as "\\n")."""
        self._send("write " + text.replace("\n", "\\n"))
        assert self._reply() == "ok"

    def finish(self) -> None:
        self._send("finish")
        assert self._reply() == "ok"

    def die(self) -> None:
        self._send("die")
        self.process.wait(timeout=30)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()
