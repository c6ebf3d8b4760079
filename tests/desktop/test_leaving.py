"""The window's process leaves once everything is written, even when pywebview
left a thread waiting forever on the closed window (each case in a process of
its own: it may end the process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(ROOT)!r})\n{code}"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )


def test_a_thread_stuck_on_the_closed_window_does_not_keep_the_process() -> None:
    result = run(
        "import threading\n"
        "from desktop.leaving import leave_past_stuck_threads\n"
        "threading.Thread(target=threading.Event().wait, name='stuck').start()\n"
        "print('written before leaving', end='')\n"
        "leave_past_stuck_threads(3, grace=0.2)\n"
        "print('never here')\n"
    )
    assert (result.returncode, result.stdout) == (3, "written before leaving")


def test_threads_that_finish_in_time_are_waited_for() -> None:
    result = run(
        "import threading, time\n"
        "from desktop.leaving import leave_past_stuck_threads\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), print('finished'))).start()\n"
        "leave_past_stuck_threads(3, grace=30)\n"
        "print('returned')\n"
    )
    assert (result.returncode, result.stdout.split()) == (0, ["finished", "returned"])
