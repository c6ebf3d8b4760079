"""Leaving the process once the window is closed and everything is written.

pywebview answers each call the page makes into Python in a thread of its own,
not a daemon, and hands the answer back with ``evaluate_js``, which waits for
the page without a time limit. A call in flight when the window closes (the
page saying it is ready, say) then waits forever, and the interpreter waits
for that thread before it exits: the app stayed in the process list with its
window gone. Such threads hold nothing of ours by then (the server is stopped,
transcripts and state are written), so the process leaves past them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time

GRACE_SECONDS = 2.0  # for threads that are merely finishing


def leave_past_stuck_threads(code: int, grace: float = GRACE_SECONDS) -> None:
    """Return when every other non-daemon thread ends within ``grace``; otherwise
    flush what is buffered and end the process now with ``code``."""
    deadline = time.monotonic() + grace
    for thread in _others():
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = [thread.name for thread in _others() if thread.is_alive()]
    if not stuck:
        return
    log = logging.getLogger(__name__)
    log.info("leaving past threads that wait on the closed window: %s", ", ".join(stuck))
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        # A closed pipe: nothing more can be said there.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _others() -> list[threading.Thread]:
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t is not current and not t.daemon]
