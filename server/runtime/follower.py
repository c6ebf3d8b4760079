"""Runs of other Sparrow processes, followed live.

A ``sparrow run`` in a terminal writes the same store and transcripts as the
app. The app notices such runs by polling SQLite's ``PRAGMA data_version``
(one cheap statement; it changes only when another connection commits), then
tails each one's transcript from a kept offset (only the bytes appended since,
only complete lines) and publishes its events on the app's bus exactly as a
live run's, until its ``run_finished``. A followed run whose process dies is
ended here (interrupted) rather than at the next start, so the window says so
at once.

Idle, with nothing followed, this costs one statement every ``IDLE_POLL``."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from typing import Any

import anyio

from server.core.events import FINAL_STATUSES, Event, EventDecodeError, RunFinished, event_from_dict
from server.engine.channel import RunHistory
from server.engine.store import RunInfo
from server.monitor.tail import Tail
from server.runtime.runs import RunManager

log = logging.getLogger(__name__)

IDLE_POLL = 0.5  # seconds between looks at the database
TAIL_POLL = 0.1  # between looks at followed transcripts: what a live view lags at most
ALIVE_CHECK = 2.0  # between checks that a followed run's process still lives
# Rows are stamped by their own process's clock when made: look this far back
# for runs that committed after a newer one.
CLOCK_SLACK = 10.0
CANCEL_REASON = "cancelled from the Sparrow app"


@dataclass(frozen=True)
class Elsewhere:
    """Who runs a run of another process, and what the app can do about it."""

    pid: int
    surface: str

    @property
    def can_cancel(self) -> bool:
        # `sparrow run` runs one run and cancels it on SIGUSR1; an app runs many.
        return self.surface == "cli" and self.pid > 0 and hasattr(signal, "SIGUSR1")

    @property
    def note(self) -> str:
        who = f"pid {self.pid}" if self.pid else "pid unknown"
        if self.surface == "cli":
            return (
                f"Started by `sparrow run` in a terminal ({who}): its approvals are "
                "answered at that terminal; Cancel here stops it there."
            )
        return f"Runs in another Sparrow process ({who}): answer its approvals and cancel it there."

    def to_dict(self) -> dict[str, Any]:
        return {
            "pid": self.pid,
            "surface": self.surface,
            "can_cancel": self.can_cancel,
            "note": self.note,
        }


@dataclass
class _Followed:
    info: RunInfo
    tail: Tail
    history: RunHistory = field(default_factory=RunHistory)
    finished: bool = False


class RunFollower:
    def __init__(self, runs: RunManager, *, alive_every: float = ALIVE_CHECK) -> None:
        self._runs = runs
        self._alive_every = alive_every
        self._store = runs.store
        self._followed: dict[str, _Followed] = {}
        self._seen: dict[str, float] = {}  # run id -> created_at, of runs met since `_since`
        self._since: float | None = None  # None: the first look, at every run going
        self._version: int | None = None
        self._checked_alive = 0.0
        runs.follower = self

    @property
    def following(self) -> list[str]:
        return list(self._followed)

    async def run(self) -> None:
        while True:
            try:
                self.poll()
            except Exception:
                # A locked database or an unreadable file now: the next look tries again.
                # Following is a view of other processes' work: it never takes the app down.
                log.exception("following runs of other processes failed this time")
            await anyio.sleep(TAIL_POLL if self._followed else IDLE_POLL)

    def poll(self) -> None:
        """One look: new runs elsewhere, then what their transcripts gained."""
        version = self._store.data_version()
        if version != self._version:
            self._version = version
            self._discover()
        now = time.monotonic()
        check_alive = now - self._checked_alive >= self._alive_every
        if check_alive:
            self._checked_alive = now
        for followed in list(self._followed.values()):
            run_id = followed.info.id
            # A run whose process died ends now: the closing lands in its transcript.
            if check_alive:
                self._store.close_if_dead(run_id)
            self._read(followed)

    def _discover(self) -> None:
        found = self._store.runs_elsewhere(self._since)
        self._since = time.time() - CLOCK_SLACK
        for run_id, created in list(self._seen.items()):
            if created < self._since:
                del self._seen[run_id]
        for info in found:
            if info.id in self._seen or self._runs.is_live(info.id):
                continue
            self._seen[info.id] = info.created_at
            self._follow(info)
        for followed in list(self._followed.values()):
            row = self._store.get_run(followed.info.id)
            if row is None or row.status in FINAL_STATUSES:
                # Its row is final: what is left of the transcript is all there will be.
                self._read(followed)
                self._end(followed)

    def _follow(self, info: RunInfo) -> _Followed:
        followed = _Followed(info=info, tail=Tail(info.transcript))
        self._followed[info.id] = followed
        self._read(followed)
        return followed

    def _read(self, followed: _Followed) -> None:
        if followed.finished:
            return
        tail = followed.tail
        if tail.offset < 0 and not tail.start_at_beginning():
            return  # no transcript yet
        try:
            size = os.stat(tail.path).st_size
        except OSError:
            return
        if size < tail.offset:
            self._end(followed)  # rewritten under us: its file is the record now
            return
        if size < tail.offset + tail.scanned:
            tail.scanned = 0  # a torn last line was cut (the run was closed as interrupted)
        if size == tail.offset + tail.scanned:
            return
        tail.scan_forward(lambda line: self._line(followed, line))
        if followed.finished:
            self._end(followed)

    def _line(self, followed: _Followed, line: bytes) -> None:
        if followed.finished:
            return
        try:
            event = event_from_dict(json.loads(line))
        except (ValueError, EventDecodeError):
            return  # a reader skips what it cannot read, as a replay does
        if event.run_id != followed.info.id:
            return
        followed.history(event)
        self._runs.bus.publish(event)
        if isinstance(event, RunFinished):
            followed.finished = True

    def _end(self, followed: _Followed) -> None:
        followed.finished = True
        self._followed.pop(followed.info.id, None)

    # --- what the app asks of a run elsewhere -----------------------------------

    def events(self, run_id: str) -> list[Event] | None:
        """The events of a followed run so far; None when it is not followed.

        A run going elsewhere that was not noticed yet is followed from now on, so
        that what a client is sent next continues exactly what this returns."""
        followed = self._followed.get(run_id)
        if followed is None and run_id not in self._seen:
            info = self._store.get_run(run_id)
            if info is None or info.status != "running" or self.elsewhere(info) is None:
                return None
            self._seen[run_id] = info.created_at
            followed = self._follow(info)
            if followed.finished:
                return None  # read to its end: the transcript has it all
        return list(followed.history.events) if followed is not None else None

    def elsewhere(self, info: RunInfo) -> Elsewhere | None:
        """Who runs ``info`` when another process does; None when this one does, or none."""
        if info.status != "running" or self._runs.is_live(info.id):
            return None
        owner = self._store.locks.owner(info.id) or {}
        pid, surface = owner.get("pid"), owner.get("surface")
        if pid == os.getpid():
            return None  # this process's, though not the manager's
        return Elsewhere(
            pid=pid if isinstance(pid, int) else 0,
            surface=surface if isinstance(surface, str) else "",
        )

    def cancel(self, run_id: str) -> bool:
        """Ask the process of ``run_id`` to cancel it; False when it cannot be asked."""
        info = self._store.get_run(run_id)
        where = self.elsewhere(info) if info is not None else None
        if where is None or not where.can_cancel:
            return False
        # Only while its lock says the run still goes: never signal a stranger.
        if not self._store.locks.alive(run_id, where.pid):
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(where.pid, signal.SIGUSR1)
            return True
        return False
